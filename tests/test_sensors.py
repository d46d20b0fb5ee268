"""Power sensors at the boundary, no hardware: real logs replayed, fake sysfs trees, pynvml patched."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pynvml as real_pynvml
import pytest

from runner.sampler import SensorMeter
from runner.sensors import detect_meter, find_sensor
from runner.sensors.base import SensorError, SensorUnavailable
from runner.sensors.estimate import EstimateSensor
from runner.sensors.external import ExternalLogMeter, read_log
from runner.sensors.jetson import Ina3221Sensor
from runner.sensors.nvml import NvmlPermissionError, NvmlSensor
from runner.sensors.rapl import RaplSensor

FORMATS = Path(__file__).parent / "fixtures" / "formats"
NVIDIA_SMI = FORMATS / "nvidia_smi" / "fletcher-io-gtx1650_gpu_power.csv"
TEGRASTATS = FORMATS / "jetson" / "csc2231-jetson-nano_tegrastats.txt"
JTOP = FORMATS / "jetson" / "agentmesh-agx-orin_jtop_log.csv"


# --- replay of the real logs: right rail, right units, right totals --------------------------------

def test_replay_nvidia_smi_log_gtx1650() -> None:
    log = read_log(NVIDIA_SMI)
    assert (log.fmt, log.totals, log.boundary) == ("nvidia-smi", ["gpu0"], "gpu_board")
    assert len(log.trace("gpu0").t_s) == 80 and log.trace("gpu0").power_w[0] == 19.46  # "19.46 W": already W
    assert log.trace("gpu0").t_s[-1] == pytest.approx(0.918)  # 03:33:31.779 -> 03:33:32.697
    # awk over the file: trapezoid of power.draw [W] over the timestamps = 18.169350 J
    assert log.total_j() == pytest.approx(18.169350, abs=1e-5)
    # aligned by timestamp: a window covering the whole log gives the same total
    start = log.start_wall_s
    assert start is not None and log.energy_j(start, start + 0.918) == pytest.approx(18.169350, abs=1e-5)
    assert log.energy_j(start - 1, start + 0.5) is None  # the log does not cover that window


def test_replay_tegrastats_log_jetson_nano_uses_the_input_rail_only() -> None:
    log = read_log(TEGRASTATS)
    assert log.totals == ["POM_5V_IN"] and log.boundary == "jetson_module"
    assert {t.domain for t in log.traces} == {"POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"}
    assert log.trace("POM_5V_IN").power_w[:3] == [0.92, 1.537, 2.793]  # "POM_5V_IN 920/920": mW instant -> W
    # no times: samples 1 s apart (tegrastats' default)
    assert log.start_wall_s is None and log.trace("POM_5V_IN").t_s[-1] == 113
    # 114 samples; sum of POM_5V_IN = 505.788 W; trapezoid = sum - (first 0.920 + last 1.613) / 2 = 504.5215 J
    # (left sum 504.175 J). Never the sum of the three rails, which double-counts GPU and CPU.
    assert log.total_j() == pytest.approx(504.5215, abs=1e-6)


def test_replay_jtop_log_agx_orin_sums_its_rails_when_the_board_is_named() -> None:
    """AGX Orin has no input rail: module = GPU_SOC + CPU_CV + SYS_5V0 (energy.rails). This hand-rolled log names
    its columns CPU/GPU/System, so the board comes from the device name; without it, no energy."""
    bare = read_log(JTOP)
    assert bare.totals == [] and any("name the Jetson module" in n for n in bare.notes)
    log = read_log(JTOP, device="Jetson AGX Orin 64GB")
    assert log.totals == ["GPU", "CPU", "System"] and log.trace("System").power_w[0] == pytest.approx(4.327)  # mW
    assert log.trace("System").t_s[-1] == 30  # 17:06:56 -> 17:07:26
    # awk: trapezoid of CPU_Power_Inst + GPU_Power_Inst + System_Power_Inst (mW) over the timestamps = 260022 mW s
    # (System alone, one 5 V rail, was 140.634 J: under half)
    assert log.total_j() == pytest.approx(260.0215, abs=1e-4)
    assert "energy_sum_of_rails" in log.flags


def test_external_meter_aligns_the_log_to_the_window(tmp_path: Path) -> None:
    log = read_log(JTOP)
    assert log.start_wall_s is not None
    t0 = log.start_wall_s
    edges = iter([t0 + 11, t0 + 17])  # 17:07:07 .. 17:07:13: sums 7735 (07), 13247, 14047, 14047 (13) mW
    meter = ExternalLogMeter(JTOP, clock=lambda: next(edges), device="Jetson AGX Orin")
    with meter.window() as reading:
        pass
    # trapezoid: (7.735+13.247)/2*2 = 20.982, (13.247+14.047)/2*2 = 27.294, 14.047*2 = 28.094 -> 76.370 J
    assert reading.energy_j == pytest.approx(76.370)
    assert reading.boundary == "jetson_module" and reading.method == "sampled"
    assert "window_short_for_sensor" not in reading.flags
    assert {t.domain for t in reading.traces} == {"CPU", "GPU", "System"}


def test_wall_meter_csv_defaults_to_wall_and_interpolates_the_edges(tmp_path: Path) -> None:
    path = tmp_path / "meter.csv"
    path.write_text("timestamp,watts\n1000.0,100\n1001.0,100\n1002.0,200\n1003.0,200\n")
    edges = iter([1000.5, 1002.5])
    meter = ExternalLogMeter(path, clock=lambda: next(edges))
    with meter.window() as reading:
        pass
    # 0.5 s at 100 W + the ramp 100->200 over 1 s (150 J) + 0.5 s at 200 W = 50 + 150 + 100
    assert reading.energy_j == pytest.approx(300.0) and reading.boundary == "wall"
    stated = ExternalLogMeter(path, "system", clock=iter([1000.0, 1003.0]).__next__)
    with stated.window() as reading:
        pass
    assert reading.boundary == "system" and reading.energy_j == pytest.approx(100 + 150 + 200)


def test_a_log_without_times_cannot_be_aligned() -> None:
    meter = ExternalLogMeter(TEGRASTATS, clock=iter([1.0, 2.0]).__next__)
    with meter.window() as reading:
        pass
    assert reading.energy_j is None and "no timestamps" in (reading.missing_reason or "")


# --- INA3221 sysfs trees ------------------------------------------------------------------------

def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def nano_tree(root: Path, mw: tuple[int, int, int] = (2793, 76, 1222)) -> Path:
    """L4T r32 (Jetson Nano): ina3221x iio driver, power in mW."""
    iio = root / "sys/bus/i2c/drivers/ina3221x/6-0040/iio:device0"
    for n, (name, value) in enumerate(zip(("POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"), mw)):
        _write(iio / f"rail_name_{n}", name)
        _write(iio / f"in_power{n}_input", str(value))
    return root


def orin_tree(root: Path) -> Path:
    """L4T r35 (Orin NX/Nano style, AGX-style hwmon): in{N}_label, in{N}_input mV, curr{N}_input mA."""
    hw = root / "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"
    for n, (name, mv, ma) in enumerate((("VDD_IN", 5000, 1400), ("VDD_CPU_GPU_CV", 5000, 600),
                                        ("VDD_SOC", 5000, 300)), start=1):
        _write(hw / f"in{n}_label", name)
        _write(hw / f"in{n}_input", str(mv))
        _write(hw / f"curr{n}_input", str(ma))
    _write(hw / "in4_label", "NC")
    return root


def test_ina3221_nano_reads_pom_5v_in_in_watts(tmp_path: Path) -> None:
    sensor = Ina3221Sensor(nano_tree(tmp_path))
    assert sensor.total_domains() == ["POM_5V_IN"] and sensor.boundary == "jetson_module"
    assert sensor.read_power_w() == {"POM_5V_IN": 2.793, "POM_5V_GPU": 0.076, "POM_5V_CPU": 1.222}


def test_ina3221_orin_hwmon_picks_vdd_in_never_the_sum(tmp_path: Path) -> None:
    sensor = Ina3221Sensor(orin_tree(tmp_path))
    assert sensor.domains() == ["VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"]  # NC channel skipped
    assert sensor.total_domains() == ["VDD_IN"]
    assert sensor.read_power_w() == {"VDD_IN": 7.0, "VDD_CPU_GPU_CV": 3.0, "VDD_SOC": 1.5}  # mV x mA / 1e6
    meter = SensorMeter(sensor, rate_hz=50)
    with meter.window() as reading:
        time.sleep(0.25)
    assert reading.energy_j == pytest.approx(7.0 * reading.duration_s, rel=1e-9)  # not (7 + 3 + 1.5) x t
    assert reading.method == "sampled" and reading.boundary == "jetson_module"
    assert [t.boundary for t in reading.traces] == ["jetson_module", None, None]


def test_agx_orin_without_an_input_rail_sums_its_three_input_side_rails_never_vddq(tmp_path: Path) -> None:
    """AGX Orin (energy.rails board table): module = VDD_GPU_SOC + VDD_CPU_CV + VIN_SYS_5V0; VDDQ_VDD2_1V8AO is
    fed from VIN_SYS_5V0 and is not added; the run says it is a sum."""
    for dev, rails in (("1-0040", ("VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0")), ("1-0041", ("NC", "VDDQ_VDD2_1V8AO"))):
        hw = tmp_path / f"sys/bus/i2c/drivers/ina3221/{dev}/hwmon/hwmon1"
        for n, name in enumerate(rails, start=1):
            _write(hw / f"in{n}_label", name)
            _write(hw / f"in{n}_input", "5000")
            _write(hw / f"curr{n}_input", "500")  # 2.5 W each
    sensor = Ina3221Sensor(tmp_path)
    assert sensor.total_domains() == ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"]
    meter = SensorMeter(sensor, rate_hz=50)
    with meter.window() as reading:
        time.sleep(0.1)
    assert reading.energy_j == pytest.approx(3 * 2.5 * reading.duration_s, rel=1e-9)  # 3 rails x 2.5 W, not 4
    assert "energy_sum_of_rails" in reading.flags and reading.boundary == "jetson_module"
    assert len(reading.traces) == 4


def test_rails_of_no_known_board_give_no_energy_rather_than_a_guessed_sum(tmp_path: Path) -> None:
    hw = tmp_path / "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1"
    for n, name in enumerate(("VDD_GPU_SOC", "VDD_CPU_CV"), start=1):  # AGX Orin's VIN_SYS_5V0 is missing
        _write(hw / f"in{n}_label", name)
        _write(hw / f"in{n}_input", "5000")
        _write(hw / f"curr{n}_input", "500")
    meter = SensorMeter(Ina3221Sensor(tmp_path), rate_hz=50)
    with meter.window() as reading:
        time.sleep(0.05)
    assert reading.energy_j is None and "no module input rail" in (reading.missing_reason or "")
    assert len(reading.traces) == 2


def test_no_rails_means_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SensorUnavailable):
        Ina3221Sensor(tmp_path)


# --- RAPL ---------------------------------------------------------------------------------------

def rapl_tree(root: Path, package_uj: int, dram_uj: int, max_uj: int = 262143328850) -> Path:
    pkg = root / "sys/class/powercap/intel-rapl:0"
    _write(pkg / "name", "package-0")
    _write(pkg / "energy_uj", str(package_uj))
    _write(pkg / "max_energy_range_uj", str(max_uj))
    for sub, name, value in (("intel-rapl:0:0", "core", 5), ("intel-rapl:0:1", "dram", dram_uj)):
        _write(pkg / sub / "name", name)
        _write(pkg / sub / "energy_uj", str(value))
        _write(pkg / sub / "max_energy_range_uj", str(max_uj))
    return pkg


def test_rapl_package_and_dram_counter_wrap(tmp_path: Path) -> None:
    max_uj = 262143328850
    pkg = rapl_tree(tmp_path, max_uj - 1_000_000, 10_000_000)  # 1 J before the wrap
    sensor = RaplSensor(tmp_path)
    assert sensor.domains() == ["package-0", "dram-0"]  # core is inside the package: not added
    start = sensor.read_energy_j()
    _write(pkg / "energy_uj", "2000000")  # wrapped: 1 J + 1 uJ (the step to 0) + 2 J later
    _write(pkg / "intel-rapl:0:1/energy_uj", "12500000")
    end = sensor.read_energy_j()
    assert end["package-0"] - start["package-0"] == pytest.approx(3.000001)  # never negative (codecarbon#309)
    assert end["dram-0"] - start["dram-0"] == pytest.approx(2.5)
    assert (sensor.boundary, sensor.energy_method) == ("cpu_package", "counter")


def test_rapl_root_only_counter_is_unavailable_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = rapl_tree(tmp_path, 1, 1)
    real_read = Path.read_text

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == pkg / "energy_uj":  # mode 0400 root:root since Linux 5.10 (CVE-2020-8694)
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    with pytest.raises(SensorUnavailable, match="chmod a\\+r"):
        RaplSensor(tmp_path)


def test_detection_order_on_this_machine_falls_back_to_the_estimate(tmp_path: Path) -> None:
    detection = detect_meter("cpu", root=tmp_path)
    assert [s.split(":")[0] for s in detection.skipped] == ["nvml", "ina3221", "rapl"]
    assert detection.meter.boundary == "estimated" and detection.meter.method == "estimated"
    rapl_tree(tmp_path, 1000, 1000)
    assert isinstance(find_sensor("cpu", root=tmp_path), RaplSensor)  # RAPL before the estimate
    nano_tree(tmp_path)
    assert isinstance(find_sensor("cpu", root=tmp_path), Ina3221Sensor)  # Jetson before RAPL


def test_estimate_is_utilisation_times_tdp(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\n")
    sensor = EstimateSensor(tdp_w=65.0, proc_stat=stat)
    assert sensor.flags == [] and sensor.read_energy_j() == {"cpu": 0.0}
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(f"cpu  {100 + ticks} 0 100 {800 + ticks} 0 0 0 0 0 0\n")  # half busy over 2 x ticks jiffies
    cores = os.cpu_count() or 1
    wall_s = 2 * ticks / cores / ticks
    assert sensor.read_energy_j()["cpu"] == pytest.approx(65.0 * 0.5 * wall_s)
    assert "tdp_assumed" in EstimateSensor(proc_stat=stat).flags


# --- NVML, pynvml patched at the module boundary (autospec) -----------------------------------

@pytest.fixture
def nvml() -> Any:
    with mock.patch("runner.sensors.nvml.pynvml", autospec=True) as m:
        for name in dir(real_pynvml):  # exception classes and constants stay real
            if name.startswith(("NVMLError", "NVML_", "nvmlClocks")):
                setattr(m, name, getattr(real_pynvml, name))
        m.nvmlDeviceGetHandleByIndex.return_value = "handle0"
        m.nvmlDeviceGetPowerUsage.return_value = 150_000  # mW
        m.nvmlDeviceGetTotalEnergyConsumption.return_value = 1_000_000  # mJ
        m.nvmlDeviceGetClockInfo.side_effect = lambda h, clock: 1800 if clock == real_pynvml.NVML_CLOCK_SM else 7000
        m.nvmlDeviceGetCurrentClocksEventReasons.return_value = real_pynvml.nvmlClocksThrottleReasonSwPowerCap
        m.nvmlDeviceGetPowerManagementLimit.return_value = 170_000
        m.nvmlDeviceGetPowerManagementLimitConstraints.return_value = (100_000, 170_000)
        yield m


def test_nvml_counter_in_millijoules_and_power_in_milliwatts(nvml: Any) -> None:
    sensor = NvmlSensor(0)
    assert sensor.has_counter and sensor.energy_method == "counter" and sensor.boundary == "gpu_board"
    assert sensor.read_power_w() == {"gpu0": 150.0} and sensor.read_energy_j() == {"gpu0": 1000.0}
    assert sensor.period_s >= 0.05  # never polled faster than NVML updates
    nvml.nvmlDeviceGetHandleByIndex.assert_called_with(0)


def test_nvml_window_keeps_counter_and_sampled_and_flags_disagreement(nvml: Any) -> None:
    state = {"mj": 1_000_000.0, "t": time.monotonic()}

    def counter(handle: Any) -> float:  # 200 W by the counter, while polled power says 150 W
        return state["mj"] + 200_000 * (time.monotonic() - state["t"])

    nvml.nvmlDeviceGetTotalEnergyConsumption.side_effect = counter
    meter = SensorMeter(NvmlSensor(0))
    with meter.window() as reading:
        time.sleep(0.4)
    m = reading.metrics
    assert reading.method == "counter" and reading.energy_j == pytest.approx(200 * reading.duration_s, rel=0.05)
    assert m["energy_sampled_j"] == pytest.approx(150 * reading.duration_s, rel=1e-6)
    assert m["energy_disagreement_pct"] == pytest.approx(25, abs=2)
    assert "energy_counter_vs_sampled_disagree" in reading.flags
    assert m["gpu_clock_avg_mhz"] == 1800 and m["memory_clock_avg_mhz"] == 7000
    assert m["throttle_reasons"] == "sw_power_cap"
    assert m["sample_period_s"] == pytest.approx(0.1)


def test_nvml_without_counter_polls_power(nvml: Any) -> None:
    nvml.nvmlDeviceGetTotalEnergyConsumption.side_effect = real_pynvml.NVMLError_NotSupported()
    sensor = NvmlSensor(0)
    assert not sensor.has_counter and sensor.energy_method == "sampled"
    with SensorMeter(sensor).window() as reading:
        time.sleep(0.25)
    assert reading.method == "sampled" and reading.energy_j == pytest.approx(150 * reading.duration_s, rel=1e-6)
    assert "energy_counter_j" not in reading.metrics


def test_nvml_errors_are_translated_at_the_boundary(nvml: Any) -> None:
    nvml.nvmlInit.side_effect = real_pynvml.NVMLError_LibraryNotFound()
    with pytest.raises(SensorUnavailable):
        NvmlSensor(0)
    nvml.nvmlInit.side_effect = None
    nvml.nvmlDeviceGetPowerUsage.side_effect = real_pynvml.NVMLError_NoPermission()
    with pytest.raises(NvmlPermissionError) as info:
        NvmlSensor(0)
    assert isinstance(info.value.__cause__, real_pynvml.NVMLError_NoPermission)


def test_a_sensor_failing_mid_window_reports_missing_energy(nvml: Any) -> None:
    sensor = NvmlSensor(0)
    nvml.nvmlDeviceGetPowerUsage.side_effect = real_pynvml.NVMLError_GpuIsLost()
    with SensorMeter(sensor).window() as reading:
        time.sleep(0.05)
    assert reading.energy_j is None and "failed during the window" in (reading.missing_reason or "")


def test_real_nvml_is_absent_here() -> None:
    with pytest.raises(SensorError):
        NvmlSensor(0)
