"""Power and telemetry logs: one module per format, read from bytes, and their importers.

The runner (`--power-log`, `runner.sensors.external`), a log attached to imported runs
(`ingest.attach`) and a log imported on its own all read logs here, so the rail choice, the
units and the times are the same everywhere:

- `log`: the parsed log (`PowerLog`, `PowerLogError`) and what several formats share (CSV rows
  and time columns, rail units, the Jetson rail choice applying `energy.rails`);
- one module per format: `nvidia_smi`, `nvidia_smi_query` (`nvidia-smi -q` reports), `nvidia_smi_dmon`,
  `tegrastats`, `jtop` (jtop and other Jetson telemetry CSVs), `tegrastats_json`, `dcgm` (dcgmi dmon, field CSV),
  `gpu_power_csv` (one column per GPU), `meter` (a wall meter's time,watts CSV);
- `detect`: which format a file is (`sniff`) and `read_power_log`, which reads any of them;
- `standalone`: the importers of a log imported on its own (one standalone run with its traces).

The energy of a log is `energy`'s maths (`energy.trace`: the trapezoid rule, windows).
"""
