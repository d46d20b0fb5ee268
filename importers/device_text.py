"""How result files and their folders name a device: the GPU, Jetson, Apple chip or board names JouleBench knows by
their whole text (`device_from_path`: a folder `A100-80GB`, `RTX3090`, `jetson-nano`), the one such name a line
holds (`device_named`: 'desktop18 NVIDIA A30 GPU' -> 'NVIDIA A30'), and the kind of device a name is. A name is
never guessed from anything looser: what matches none of these is not stated."""

from __future__ import annotations

import re

_DEVICE_DIR = re.compile(
    r"^(nvidia[ _-]?)?("
    # the data-centre cards by name, not a letter and digits: folders named l1, v1, v10 or p2 are versions
    r"(tesla[ _-]?)?(a(2|10|16|30|40|100|800)|b(100|200|300)|h(20|100|200|800)|l(4|20|40)|k(10|20|40|80)"
    r"|p(4|40|100)|t4|v100)[a-z]?([ _-]?(sxm\d?|pcie|nvl|\d{2,3}gb?))*"
    r"|(rtx[ _-]?)?a(2000|4000|4500|5000|5500|6000)([ _-]?ada)?([ _-]?\d{2}gb?)?"  # the workstation cards
    r"|(apple[ _-]?|mac[ _-]?(studio|mini|book[ _-]?(pro|air)?|pro)[ _-]?)m[1-5]([ _-]?(pro|max|ultra))?"  # 'Mac
    # Studio M3 Ultra'
    r"|(raspberry[ _-]?pi|rpi)[ _-]?(3|4|5|400|500)([ _-]?model)?([ _-]?b\+?)?([ _-]?\d{1,2}[ _-]?gb)?"  # a board
    r"|rock[ _-]?5[ab]?|orange[ _-]?pi[ _-]?5([ _-]?(plus|pro|max))?"  # people run LLMs on; the RK3588 boards
    r"|(geforce[ _-]?)?(rtx|gtx)[ _-]?\d{3,4}([ _-]?(ti|super))?([ _-]?\d{1,2}gb?)?"
    r"|(quadro[ _-]?)?rtx[ _-]?a?\d{4}([ _-]?ada)?"
    r"|titan[ _-]?(rtx|v|xp?)"
    r"|(geforce[ _-]?)?(20|30|40|50)[5-9]0[ _-]?ti"  # '4060Ti': the Ti makes bare digits a card
    r"|rtx[ _-]?pro[ _-]?\d{4}([ _-]?blackwell)?"
    r"|g[bh]\d{2,3}|(nvidia[ _-]?)?dgx[ _-]?spark"  # the Grace superchips: GH200, GB200, GB10 (the DGX Spark)
    r"|(amd[ _-]?)?(instinct[ _-]?)?mi\d{2,3}[a-z]?"
    # AMD's cards and its laptop GPUs ('Radeon 8060S', 'Radeon 780M')
    r"|(amd[ _-]?)?radeon[ _-]?(rx[ _-]?)?\d{3,4}([ _-]?(xtx?|gre)|[sm])?|rx[ _-]?\d{4}([ _-]?(xtx?|gre))?"
    r"|(amd[ _-]?)?(radeon[ _-]?)?(ai[ _-]?pro[ _-]?)?r9[67]00d?"  # the Radeon AI PRO workstation cards
    r"|(intel[ _-]?)?(arc[ _-]?(pro[ _-]?)?[ab]\d{2,3}|gaudi[ _-]?\d?|data[ _-]?center[ _-]?gpu[ _-]?max[ _-]?\d{4})"
    r"|((jetson[ _-]?)?(agx[ _-]?)?(orin|xavier)|(jetson[ _-]?(agx[ _-]?)?|agx[ _-]?)thor)([ _-]?(nx|nano|agx))?"
    r"([ _-]?super)?([ _-]?\d{1,3}gb?)?([ _-]?dev(eloper)?[ _-]?kit)?"
    r"|jetson[ _-]?(nano|tx1|tx2)([ _-]?\d{1,2}gb?)?"
    # the edge boards' NPUs: Rockchip SoCs (RK3588, RK3576, RV1126B), Hailo modules, Google's Edge TPU
    r"|r[kv][ _-]?(1808|1106|1103|1126b?|35(88s?|76|68|66|62))"
    r"|hailo[ _-]?(8l?|10h?|15[hlm]?)|(google[ _-]?)?coral([ _-]?(usb|dev[ _-]?board|edge[ _-]?tpu))?"
    r"|edge[ _-]?tpu"
    r"|(google[ _-]?)?(cloud[ _-]?)?tpu[ _-]?v[2-9][a-z]?([ _-]?(pod|lite))?"  # Google's TPUs: 'TPU v6e', 'tpu-v5e'
    # the phones people run on-device models on, by their marketing names; their chips by Qualcomm's
    r"|(samsung[ _-]?)?galaxy[ _-]?(s|a|z[ _-]?fold|z[ _-]?flip|tab[ _-]?s)\d{1,2}([ _-]?(ultra|plus|\+|fe|edge))?"
    r"|(google[ _-]?)?pixel[ _-]?([3-9]|10)a?([ _-]?(pro|xl|pro[ _-]?xl|fold))?"
    r"|(apple[ _-]?)?iphone[ _-]?(1[1-7]|[89]|x[rs]?|se)([ _-]?(pro([ _-]?max)?|plus|mini|max|e))?"
    r"|(qualcomm[ _-]?)?snapdragon[ _-]?(8[ _-]?(s[ _-]?)?gen[ _-]?[1-5]|8[ _-]?elite|x[ _-]?(elite|plus)|\d{3})"
    r")$",
    re.IGNORECASE,
)


def device_from_path(dirs: tuple[str, ...]) -> str | None:
    """The innermost folder whose whole name is a device name (e.g. A100-80GB, RTX3090, jetson-nano)."""
    for part in reversed(dirs):
        if _DEVICE_DIR.match(part.strip()):
            return part.strip()
    return None


_SYSTEM = re.compile(r"(?i)(?:nvidia[ _-]?)?[dh]gx[ _-]?(?P<gpu>.{2,60})")


def gpu_of_system(name: str) -> str | None:
    """The GPU an NVIDIA system's name gives ('DGX-GB300', 'HGX H100' -> 'GB300', 'H100'); None for any other name."""
    m = _SYSTEM.fullmatch(name.strip()[:100])
    return m.group("gpu").strip() if m and device_from_path((m.group("gpu").strip(),)) else None


def device_in_file_name(name: str) -> str | None:
    """The one device a file's own name gives among its words ('H20-Qwen3-30B.csv', 'results_rtx4090_fp16.json' ->
    'rtx4090'): a user's upload keeps the name its writer gave it; None for none or for two ('a100_vs_h100.csv'), and
    for a Jetson ('agx-orin_jtop_log.csv' names a family of modules: the log's cores and memory tell which)."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0][:200]
    words = re.sub(r"[-_.\s]+", " ", stem)
    found = device_named(words)
    short = {w.lower() for w in words.split() if len(w) <= 3 and device_from_path((w,))}  # 'a30' beside 'a100'
    if found is None or kind_of_device(found) == "jetson" or short - {found.lower()}:
        return None
    return found


_SPAN_TRIM = "`*_,;:()[]\"'"
_MARKS = re.compile(r"\((?:R|TM|r|tm)\)|[®™]")


# an Apple chip by its variant alone, in a line ('Hardware: M4 Max'); never in a file's name, where 'm4-max' is as
# often a label of the writer's; a bare 'M3' names none
_APPLE_CHIP = re.compile(r"M[1-5] (?:Pro|Max|Ultra)")


# a CPU by its model name: 'AMD Ryzen 9 7900', 'Intel Core i7-12700K', 'Core Ultra 7 155H', 'Xeon Platinum 8480+',
# 'EPYC 9654', 'Threadripper PRO 7995WX', 'Graviton3'; a family alone ('Xeon', 'Ryzen') names none
_CPU_NAME = re.compile(
    r"(?i)(amd[ _-]?)?(ryzen[ _-]?[3579][ _-]?(pro[ _-]?)?\d{4}[a-z]{0,3}(3d)?"
    r"|ryzen[ _-]?ai[ _-]?(max\+?[ _-]?)?(pro[ _-]?)?([3579][ _-]?)?(hx[ _-]?)?\d{3}"
    r"|(ryzen[ _-]?)?threadripper[ _-]?(pro[ _-]?)?\d{4}[a-z]{0,2}|epyc[ _-]?\d[a-z\d]{2,3}[a-z]?)"
    r"|(intel[ _-]?)?((core[ _-]?)?i[3579][ _-]\d{4,5}[a-z]{0,3}\d?|core[ _-]?ultra[ _-]?[3579][ _-]?\d{3}[a-z]{0,2}"
    r"|xeon[ _-]?((platinum|gold|silver|bronze|max|cpu[ _-]?max)[ _-]?)?(\d{4}[a-z]{0,2}\+?|e[357][ _-]?\d{4}"
    r"([ _-]?v\d)?|w[3579][ _-]?\d{4}[a-z]?))|(aws[ _-]?)?graviton[ _-]?[2-4]e?|ampere[ _-]?altra([ _-]?max)?")


def device_named(text: str) -> str | None:
    """The one GPU or Jetson a line names (`device_from_path`'s names), the longest run of its words that is one:
    'desktop18 NVIDIA A30 GPU' -> 'NVIDIA A30'; None for none, or for two different ones. Where it names none, the
    one CPU it names by model ('Platform: AMD Ryzen 9 7900 12-Core Processor'): beside a GPU, the CPU is the host."""
    words = [w.strip(_SPAN_TRIM) for w in _MARKS.sub("", text).split()[:60]]  # 'Intel(R) Arc(TM) B390'
    found: list[str] = []
    cpus: list[str] = []
    for i in range(len(words)):
        for k in range(min(5, len(words) - i), 0, -1):
            span = " ".join(words[i:i + k]).strip()
            if k == 1 and len(span) <= 3 and span == span.lower():
                continue  # 't4' in running text is a label ('(t1)' .. '(t4)'); the GPU is written 'T4'
            if span and (device_from_path((span[:100],)) or _APPLE_CHIP.fullmatch(span[:20])):
                found.append(span)
                break
            if span and _CPU_NAME.fullmatch(span[:60]):
                cpus.append(span)
                break
    found = found or cpus
    if not found:
        return None
    longest = max(found, key=len)
    return longest if all(f in longest for f in found) else None


def names_a_cpu(name: str) -> bool:
    """Whether a device's name is a CPU's model ('AMD Ryzen 9 7900'), the host beside any GPU a text names."""
    return _CPU_NAME.search(name[:100]) is not None


def kind_of_device(name: str) -> str:
    low = re.sub(r"[-_]+", " ", name.lower())  # 'intel-arc-pro-b70'
    if any(k in low for k in ("jetson", "orin", "xavier", "tegra", "thor")) or re.search(r"\bnano\b", low):
        return "jetson"
    if any(k in low for k in ("intel", "epyc", "xeon", "ryzen", "threadripper", "core(tm)", "core ultra", "core i",
                              "arm", "cpu", "graviton", "ampere altra",
                              "raspberry", "rpi", "rock", "orange", "rk3", "rk1", "rv1", "hailo", "coral", "edge tpu",
                              "edgetpu", "pixel", "galaxy", "iphone", "snapdragon", "dimensity", "exynos", "kirin",
                              "helio")) and not any(
        k in low for k in ("nvidia", "radeon", "instinct", "gpu", "arc a", "arc b", "arc pro", "gaudi")
    ) and not re.search(r"\barc(?:\(tm\))?\b.{0,40}\bgraphics\b", low) or _CPU_NAME.fullmatch(low.strip()):
        return "cpu"  # 'Intel(R) Arc(tm) B580 Graphics' is a GPU; 'coreultra7 155h' a CPU
    return "gpu"


_COUNTED = re.compile(r"\s*(\d{1,4})\s*[x×]\s*(.{2,120}?)\s*")


def counted_device(cell: str) -> tuple[int, str] | None:
    """(the count, the device) of '2 x NVIDIA RTX 6000 Ada Generation (49140 MiB)': a count before a name that names
    a known GPU; None for anything else."""
    m = _COUNTED.fullmatch(cell or "")
    if m is None or int(m.group(1)) < 1 or (named := device_named(m.group(2))) is None:
        return None
    return int(m.group(1)), named


__all__ = ["counted_device", "device_from_path", "device_named", "kind_of_device", "names_a_cpu"]
