"""Tencent ncnn's `benchncnn` output (importers.benchncnn) on three real captures: a Markdown page of a Raspberry Pi
Zero 2 W with eight runs between shell output (a block without its header, rows without leading spaces, a row glued
to a code fence, a copy-pasted duplicate), ncnn's own benchmark/README.md of 2021 (forty-odd boards, Vulkan GPU runs,
old headers, a cut row) and a Raspberry Pi 5 page whose run picks Vulkan device 0 of two: one run a model a
benchncnn invocation, avg and max as latencies, the settings in the tag, the device only from the Vulkan line."""

from __future__ import annotations

from pathlib import Path

from importers import load
from tests.helpers import load_fixture, readers_of_other_fixtures, refusal

NCNN = Path(__file__).parent / "fixtures" / "formats" / "benchncnn"
ZERO2W = NCNN / "ncnn_benchmark_test-RaspberryPiZero2W.md"
README = NCNN / "ncnn-benchmark-README-2021-04.md"
PI5 = NCNN / "raspberrypi_dl-deploy_yolov5_with_ncnn-README.md"
HEADER = "loop_count = 4\nnum_threads = {t}\npowersave = 0\ngpu_device = {g}\ncooling_down = 1\n"
ROWS = ("          squeezenet  min =   12.34  max =   13.56  avg =   12.89\n"
        "     squeezenet_int8  min =   10.10  max =   10.90  avg =   10.50\n")


def _invocations(runs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for run in runs:
        out.setdefault(run["run_id"].split(":")[2], []).append(run)
    return out


def test_the_zero_2_w_page_one_run_a_model_an_invocation() -> None:
    runs, fmt, warnings = load_fixture(ZERO2W)
    assert fmt == "benchncnn" and len(runs) == 184
    blocks = list(_invocations(runs).values())
    assert [len(b) for b in blocks] == [19, 19, 35, 35, 19, 19, 19, 19]
    first = blocks[0][0]  # Bullseye 32-bit, 1 thread: 'squeezenet  min = 938.66  max = 945.04  avg = 940.61'
    assert first["config"]["model"] == "squeezenet"
    assert first["metrics"]["latency_avg_ms"] == 940.61 and first["metrics"]["latency_max_ms"] == 945.04
    assert "min 938.66 ms" in first["notes"] and "latency_p50_ms" not in first["metrics"]
    assert first["config"]["batch_size"] == 1 and first["config"]["measured_steps"] == 4
    assert first["config"]["mode"] == "infer" and first["config"]["engine"] == "ncnn"
    assert first["config"]["tag"] == "benchncnn 1 thread, powersave 0, gpu_device -1, cooling_down 1"
    assert first["device"] is None  # the heading's 'Raspberry Pi Zero 2 W' is no device name JouleBench knows
    resnet18 = next(r for r in blocks[1] if r["config"]["model"] == "resnet18")
    assert resnet18["metrics"]["latency_avg_ms"] == 723.40 and "4 threads" in resnet18["config"]["tag"]
    assert {r["config"]["tag"] for r in blocks[0]}.isdisjoint({r["config"]["tag"] for r in blocks[1]})
    int8 = blocks[0][1]
    assert int8["config"]["model"] == "squeezenet_int8" and int8["config"]["quantization"] == "int8"
    assert int8["config"]["precision"] is None and first["config"]["quantization"] is None
    vgg16 = next(r for r in blocks[2] if r["config"]["model"] == "vgg16")  # the swapping 512 MB board: kept as printed
    assert vgg16["metrics"]["latency_avg_ms"] == 70366.46 and vgg16["metrics"]["latency_max_ms"] == 77701.65
    assert blocks[3][-1]["config"]["model"] == "FastestDet" and blocks[3][-1]["metrics"]["latency_avg_ms"] == 77.09
    assert blocks[4][0]["metrics"]["latency_avg_ms"] == 215.46  # ' squeezenet  min =  215.12': lost its spaces
    assert blocks[5][-1]["config"]["model"] == "alexnet"
    assert blocks[5][-1]["metrics"]["latency_avg_ms"] == 334.87  # 'avg =  334.87```': glued to the fence
    gui = blocks[6][0]  # '$ ./benchncnn 4 4 0 -1 1' pasted without its header lines: the command line's settings
    assert gui["config"]["tag"] == "benchncnn 4 threads, powersave 0, gpu_device -1, cooling_down 1"
    assert "settings (the command line)" in gui["notes"] and gui["metrics"]["latency_avg_ms"] == 225.67
    assert blocks[7][0]["metrics"]["latency_avg_ms"] == 225.67 and "1 thread," in blocks[7][0]["config"]["tag"]
    assert any("repeat every row" in w and "both kept" in w for w in warnings)


def test_ncnns_readme_gpu_runs_take_their_vulkan_device_cpu_runs_none() -> None:
    runs, fmt, warnings = load_fixture(README)
    assert fmt == "benchncnn" and len(runs) == 1022  # 1023 rows, one of them cut
    blocks = list(_invocations(runs).values())
    commands = [b[0]["notes"].split(";")[0].removeprefix("benchncnn: ") for b in blocks]

    def runs_of(command: str, before: int = 0) -> dict[str, dict]:
        return {r["config"]["model"]: r for r in blocks[commands.index(command) - before]}

    quadro = runs_of("i@s:~/qtang/ncnn/benchmark$ ../build-vulkan/benchmark/benchncnn 256 1 0 1 0")
    assert quadro["squeezenet"]["device"]["name"] == "Quadro RTX 8000" and "gpu_device 1" in quadro["squeezenet"][
        "config"]["tag"]
    assert quadro["squeezenet"]["metrics"]["latency_avg_ms"] == 0.93 and quadro["squeezenet"]["config"][
        "measured_steps"] == 256
    mali = runs_of("HWEML:/data/local/tmp/ncnnbench $ ./benchncnn 4 1 2 0 1")
    assert mali["squeezenet"]["device"] == {"name": "Mali-G72", "kind": "gpu"}
    assert mali["squeezenet"]["metrics"]["latency_avg_ms"] == 25.16
    kirin_cpu = runs_of("HWEML:/data/local/tmp/ncnnbench $ ./benchncnn 8 4 2 -1 1")
    assert kirin_cpu["squeezenet"]["device"] is None  # the Mali-G72 it lists did not run it
    assert "[0 Mali-G72]) did not run it" in kirin_cpu["squeezenet"]["notes"]
    xavier = runs_of("$ ./benchncnn 8 1 0 0 1")
    assert xavier["yolov4-tiny"]["device"] == {"name": "NVIDIA Tegra Xavier (nvgpu)", "kind": "jetson"}
    assert xavier["yolov4-tiny"]["metrics"]["latency_avg_ms"] == 10.90
    assert "may be mostly the CPU's" in xavier["squeezenet_int8"]["notes"]
    xavier_cpu = runs_of("$ ./benchncnn 8 1 0 0 1", before=1)  # the Jetson's CPU run, its last row cut
    assert "yolov4-tiny" not in xavier_cpu and xavier_cpu["mobilenetv2_yolov3"]["metrics"]["latency_avg_ms"] == 7.37
    assert any("line 1392: yolov4-tiny" in w and "cut or altered row" in w for w in warnings)
    old = runs_of("root@msm8996:/data/local/tmp/ncnn # ./benchncnn 8 4 0")  # before gpu_device was printed
    assert old["squeezenet"]["metrics"]["latency_avg_ms"] == 23.63
    assert old["squeezenet"]["config"]["tag"] == "benchncnn 4 threads, powersave 0"
    hisilicon = runs_of("root@Hi3519:/ncnn-benchmark # taskset 2 ./benchncnn 8 1 0")
    assert hisilicon["squeezenet-int8"]["config"]["quantization"] == "int8"
    assert any("says cooling_down 0 but the tool printed 1" in w for w in warnings)


def test_the_pi_5_page_picks_vulkan_device_0_of_two() -> None:
    runs, fmt, _ = load_fixture(PI5)
    assert fmt == "benchncnn" and len(runs) == 11  # the page elides the rest of the run with '...'
    first = runs[0]
    assert first["device"] == {"name": "V3D 7.1.7", "kind": "gpu"}  # not [1 llvmpipe ...]
    assert first["metrics"]["latency_avg_ms"] == 123.12 and first["config"]["measured_steps"] == 10
    assert first["config"]["tag"] == "benchncnn 4 threads, powersave 0, gpu_device 0, cooling_down 1"  # '$(nproc)'
    assert "elides the rows" in runs[-1]["notes"] and runs[-1]["config"]["model"] == "efficientnet_b0"


def test_gpu_device_without_a_vulkan_line_and_a_software_vulkan_device() -> None:
    no_vulkan = "./benchncnn 10 4 0 0\n" + HEADER.format(t=4, g=0) + ROWS  # an ncnn built without Vulkan
    run = load(no_vulkan.encode(), "cpu-build.log")[0].runs[0]
    assert run["device"] is None and "without a Vulkan device line" in run["notes"]
    software = ("[0 llvmpipe (LLVM 15.0.6, 128 bits)]  queueC=0[1]  queueG=0[1]  queueT=0[1]\n"
                + HEADER.format(t=4, g=0) + ROWS)
    run = load(software.encode(), "llvmpipe.log")[0].runs[0]
    assert run["device"] == {"name": "llvmpipe (LLVM 15.0.6, 128 bits)", "kind": "cpu"}


def test_a_heading_gives_the_device_only_when_it_names_a_known_board() -> None:
    page = "# Raspberry Pi 4 Model B\n\n```\n$ ./benchncnn 4 4 0 -1 1\n" + HEADER.format(t=4, g=-1) + ROWS + "```\n"
    imported, _ = load(page.encode(), "pi4.md")
    assert imported.runs[0]["device"] == {"name": "Raspberry Pi 4 Model B", "kind": "cpu"}
    assert any("Markdown heading" in w for w in imported.warnings)
    gpu_heading = page.replace("Raspberry Pi 4 Model B", "NVIDIA GeForce RTX 3090")  # a CPU run under a GPU's name
    assert load(gpu_heading.encode(), "pc.md")[0].runs[0]["device"] is None


def test_a_capture_cut_before_its_rows_is_refused_and_a_cut_row_left_out() -> None:
    text = ZERO2W.read_text()
    header_only = text[: text.index("          squeezenet  min =  938.66")]
    said = refusal(header_only.encode(), "cut.md")
    assert "no benchncnn result row" in said and "cooling_down" in said
    cut_row = header_only + "          squeezenet  min =  938.66  max =  945.04  avg =  940.61\n squeezenet_int8  min"
    imported, _ = load(cut_row.encode(), "cut.md")
    assert len(imported.runs) == 1 and any("a cut benchncnn row" in w for w in imported.warnings)


def test_no_other_readers_fixture_is_taken() -> None:
    assert readers_of_other_fixtures({"benchncnn"}, {"benchncnn"}) == []
