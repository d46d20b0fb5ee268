"""`nvidia-smi dmon` output read as a power log: a real capture (tests/fixtures/formats/nvidia_smi, SOURCES.md)
and written captures of the options a user adds (`-o DT`, `-o T`, several GPUs, `pmon` by mistake).

Before this reader the real capture was refused as 'no benchmark figures'.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import Hints, load
from importers.powerlogs.detect import read_power_log, sniff
from joulebench.errors import ResultFileError

DMON = Path(__file__).parent / "fixtures/formats/nvidia_smi/llm-inference-benchmark-harness-dmon-4090-vllm-32c.txt"

DATED_TWO_GPUS = """\
#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem
#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %
 20260529   23:59:58      0    100     40      -     90     30
 20260529   23:59:58      1    200     41      -     95     31
 20260529   23:59:59      0    110     40      -     90     30
 20260529   23:59:59      1      -     41      -     95     31
#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem
#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %
 20260530   00:00:00      0    120     40      -     90     30
 20260530   00:00:00      1    220     41      -     95     31
 20260530   00:00:01      0    1
"""


def test_a_real_capture_without_times_is_one_trace_at_dmons_default_second() -> None:
    f = load(DMON.read_bytes(), "gpu_profile_32c_512tok.txt", hints=Hints())[0]
    assert f.format == "nvidia-smi-dmon"
    (run,) = f.runs
    trace = run["power_traces"][0]
    assert len(trace["t_s"]) == 98  # six repeated header pairs are no samples
    assert max(trace["power_w"]) == 332.0 and min(trace["power_w"]) == 15.0
    assert run["metrics"]["duration_s"] == 97.0
    # trapezoid over 1 s rounds: the sum of the 98 pwr cells less half the first and last (15 W, 16 W)
    assert run["metrics"]["energy_j"] == pytest.approx(16175.0)
    assert "sample_interval_assumed_1s" in run["flags"]
    assert run["device"] is None  # dmon numbers GPUs; the README's RTX 4090 is not in the file
    assert run["config"]["gpu_count"] == 1


def test_dated_rounds_of_two_gpus_across_midnight_and_a_cut_last_line() -> None:
    log = read_power_log(DATED_TWO_GPUS.encode())
    assert log.fmt == "nvidia-smi-dmon" and log.gpu_count == 2
    gpu0, gpu1 = log.traces
    assert gpu0.t_s == [0.0, 1.0, 2.0] and gpu0.power_w == [100.0, 110.0, 120.0]
    assert gpu1.t_s == [0.0, 2.0] and gpu1.power_w == [200.0, 220.0]  # its '-' round left out, said so
    assert any("'-'" in n for n in log.notes)
    assert log.started is not None and log.started.isoformat() == "2026-05-29T23:59:58"
    assert log.total_j() == pytest.approx((100 + 110) / 2 + (110 + 120) / 2 + (200 + 220) / 2 * 2)
    assert "sample_interval_assumed_1s" not in log.flags


def test_a_time_of_day_without_a_date_passes_midnight() -> None:
    text = ("#Time        gpu    pwr\n#HH:MM:SS    Idx      W\n"
            " 23:59:59      0     50\n 00:00:00      0     60\n 00:00:01      0     70\n")
    log = read_power_log(text.encode())
    assert log.traces[0].t_s == [0.0, 1.0, 2.0]
    assert log.started is None  # no date: no start time is claimed
    assert log.total_j() == pytest.approx(55 + 65)


def test_csv_format_and_a_shell_prompt_before_the_header() -> None:
    text = ("$ nvidia-smi dmon -s p --format csv\n# gpu, pwr, gtemp, mtemp\n# Idx, W, C, C\n"
            "    0,     69,     34,     45\n    0,     71,     35,     45\n")
    assert sniff(text) == "nvidia-smi-dmon"
    log = read_power_log(text.encode())
    assert log.traces[0].power_w == [69.0, 71.0]


def test_pmon_is_refused_naming_the_missing_power_column() -> None:
    text = ("# gpu        pid  type    sm   mem   enc   dec   command\n"
            "# Idx          #   C/G     %     %     %     %   name\n"
            "    0      12345     C    95    40     -     -   python\n")
    with pytest.raises(ResultFileError) as e:
        load(text.encode(), "pmon.txt", hints=Hints())
    assert "pwr" in str(e.value) and "pmon" in str(e.value)
