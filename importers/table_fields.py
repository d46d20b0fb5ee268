"""Which result field a column of any table is, from its name and its unit (joulebench.units).

A column is recognised by the quantity its unit measures (in the header: `Total Energy (Wh)`, `decode_tps`,
`prefill_gpu_median_ms`; or in its cells: `250 mW`) and by the words of its name, in English and in a few other
languages (`Energía`, `Potencia`, `Rendimiento`, `Latenz`, `Dauer`). A unit that does not fit what the name
says (`Energy per Token (W)`) is refused naming the column; a name that is a score (accuracy, BLEU) or a peak
or spread (max, min, std) is never read as a measurement. Labels (model, device, batch, precision, engine, ...)
are recognised by name only, in `table_labels`. `Field` says where a value goes and in which unit it is stored.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from joulebench import units
from joulebench.metrics import LATENCY_BY_BASE


@dataclass(frozen=True)
class Field:
    key: str  # the metrics (or config) key
    unit: str | None  # the unit it is stored in (None: a label or a count)
    section: str = "metrics"  # metrics | config | label


class FieldError(ValueError):
    """A column whose unit does not fit the field its name gives."""


# the common words of Chinese, Japanese and Korean reports' headers, as the English word they are read as
# ('输出Token吞吐量': output token throughput; '总Token吞吐量': total token throughput; '并发数': concurrency)
_CJK = {"吞吐量": "throughput", "吞吐": "throughput", "输出": "output", "输入": "input", "总": "total",
        "并发数": "concurrency", "并发": "concurrency", "延迟": "latency", "时延": "latency", "首": "first",
        "功耗": "power", "功率": "power", "能耗": "energy", "能量": "energy", "请求": "request", "平均": "mean",
        "中位数": "median", "峰值": "peak", "模型": "model", "批大小": "batch_size", "设备": "device",
        "処理量": "throughput", "スループット": "throughput", "レイテンシ": "latency", "消費電力": "power",
        "電力": "power", "トークン": "token", "合計": "total", "처리량": "throughput", "토큰": "token",
        "지연": "latency", "총": "total", "평균": "mean", "전력": "power", "에너지": "energy", "동시성": "concurrency",
        "모델": "model", "응답": "response", "시간": "time", "响应": "response", "时间": "time", "応答": "response",
        "時間": "time",
        # Traditional Chinese ('總 Token 吞吐量', '平均首字延遲 TTFT (ms)', '併發數 16', '測試指標')
        "輸出": "output", "輸入": "input", "總": "total", "併發數": "concurrency", "並發數": "concurrency",
        "併發": "concurrency", "並發": "concurrency", "延遲": "latency", "時延": "latency", "請求": "request",
        "設備": "device", "裝置": "device", "響應": "response", "測試": "test", "测试": "test", "指標": "metric",
        "指标": "metric", "提升": "improvement", "比例": "ratio", "中位": "median",
        "耗时": "time", "耗時": "time", "用时": "time", "用時": "time"}
_CJK_WORD = re.compile("|".join(sorted(map(re.escape, _CJK), key=len, reverse=True)))


# the statistics of Spanish, Portuguese, French, Italian and German headers, as the English word they are read as
# ('FPS Promedio', 'FPS Máximo', 'temps moyen', 'Mittelwert'); 'media' stays as it is: it is also a clip's word
_FOREIGN_STATS = {"promedio": "mean", "prom": "mean", "medio": "mean", "moyenne": "mean", "moyen": "mean",
               "mittelwert": "mean", "durchschnitt": "mean", "durchschnittlich": "mean", "maximo": "max",
               "maxima": "max", "massimo": "max", "minimo": "min", "minima": "min", "mediana": "median",
               "mediane": "median"}
_FOREIGN_STAT = re.compile(r"(?<![a-z])(?:" + "|".join(sorted(_FOREIGN_STATS, key=len, reverse=True)) + r")(?![a-z])",
                        re.IGNORECASE)


def _unaccented(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def english_stats(header: str) -> str:
    """A header with its statistic in English where another language names it ('FPS Promedio' -> 'FPS mean')."""
    if not _FOREIGN_STAT.search(bare := _unaccented(header)):
        return header
    return _FOREIGN_STAT.sub(lambda m: _FOREIGN_STATS[m.group().lower()], bare)


def plain(text: str) -> str:
    """Lower case without accents ('Energía' -> 'energia'), the common words of Chinese, Japanese and Korean
    headers in English ('并发数' -> 'concurrency'), and the statistics of a few European languages ('promedio' ->
    'mean')."""
    if _CJK_WORD.search(text):
        text = " ".join(_CJK_WORD.sub(lambda m: f" {_CJK[m.group()]} ", text).split())
    return english_stats(_unaccented(text.lower()))


def words_of(name: str) -> set[str]:
    words = {w for w in re.split(r"[^a-z0-9]+", plain(name)[:200]) if w}
    return words | {"first"} if "1st" in words else words  # '1st token avg latency (ms)': the time to first token


_ENERGY = {"energy", "energia", "energie", "consumption", "consumo", "verbrauch", "consommation", "joules"}
_POWER = {"power", "potencia", "leistung", "puissance", "potenza", "watts", "draw", "pwr"}
_LATENCY = {"latency", "lat", "latenz", "latencia", "latence", "latenza", "ttft", "tpot", "itl", "tbt", "e2e", "e2el",
            "response", "rtt", "delay", "gpu", "compute"}
WINDOW_WORDS = {"steady", "measured", "measurement", "window", "active"}  # the timed window, not the wall around it
_DURATION = {"steady", "duration", "time", "runtime", "elapsed", "wall", "dauer", "duracion", "duree", "durata",
             "tiempo", "zeit", "temps", "total", "seconds", "tempo", "parede"}
_TIME = {"time", "tiempo", "zeit", "temps", "tempo"}  # the word 'time' (a run's or, with a mean, an item's)
_RATE = {"throughput", "rendimiento", "durchsatz", "debit", "tps", "speed", "rate", "velocidad"}
_CAPACITY = {"total", "capacity", "free", "available", "installed", "size"}  # a memory size, not what a run used
_SCORES = {"accuracy", "acc", "f1", "bleu", "rouge", "score", "perplexity", "ppl", "wer", "cer", "map", "recall",
           "exactitud", "genauigkeit", "puntuacion"}
_SPREAD = {"max", "min", "peak", "std", "stdev", "stddev", "sd", "var", "variance", "cov", "cv", "idle", "limit",
           "cap", "tdp", "ci", "err", "error", "p1", "p5", "p10", "p25", "p75", "maximum", "minimum", "iqr", "spread",
           "range", "sem", "stderr", "mad", "fastest", "slowest", "best", "worst"}  # a spread (iqr, std, range) is
# never a mean or a percentile; the fastest or best of several setups is a comparison's, no run's
SPREAD = frozenset(_SPREAD)  # for readers of abbreviated names (importers.mapping): never a mean
_STATS = (("p50", "p50"), ("median", "p50"), ("med", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"),
          ("mean", "avg"), ("avg", "avg"), ("average", "avg"), ("media", "avg"), ("mittel", "avg"))
_PER_TOKEN = re.compile(r"(?<![a-z])per[ _-]?(?:[a-z]{1,20}[ _-]){0,2}tok|/tok|j_tok")  # per (output|completion) token
_LIMIT = {"limit", "cap", "pl", "powercap", "plimit"}  # 'power_limit_w', 'pl_w', 'cap (W)': the limit set on the device
# a figure set, not measured ('clock_target_mhz', 'power_requested_w'); a setting's column tells rows apart
SET_ON = frozenset({"target", "requested", "locked", "applied", "setpoint", "configured", "set", "lock"})
_OBJECTIVE = {"threshold", "thresholds", "slo", "slos", "sla", "objective", "deadline", "target"}
INPUT_MEDIA = frozenset({"audio", "video", "clip", "media", "recording", "speech", "wav"})  # its length: a setting
_SETTING = {"mode", "nvpmodel", "profile", "preset", "setting", "settings"}  # 'power_mode': the setting, not a power
_GENERATED = {"generated", "completion", "response", "decoded", "new", "output", "gerados", "generados", "generati",
              "generiert", "generes", "generees"}  # 'Tokens Generated': a count of output tokens
_NOT_A_COUNT = {"per", "mean", "avg", "average", "median", "p50", "p90", "p95", "p99", "rate"}  # a mean or a rate
_PER_OTHER = re.compile(r"(?<![a-z])per[ _-]?([a-z]{2,20})(?![a-z])")  # 'energy_per_work_j', 'energy per step (J)'
# 'energy_per_image', 'Energy/Img (mJ)': a figure of each item
_PER_ITEM = re.compile(r"(?<![a-z])per[ _-]?(request|req|sample|image|img|query|inference|item|prompt|run|frame)"
                       r"|/\s?(?:request|req|sample|image|img|query|inference|item|prompt|frame)s?(?![a-z])")


# a precision as tables and texts write it, to the one JouleBench stores ('float16', 'half': fp16)
PRECISIONS = {"fp32": "fp32", "float32": "fp32", "float": "fp32", "tf32": "tf32", "fp16": "fp16", "float16": "fp16",
               "half": "fp16", "bf16": "bf16", "bfloat16": "bf16", "amp_bf16": "bf16", "amp_fp16": "fp16"}
PRECISIONS |= {f"{lib}.{name}": p for lib in ("torch", "jnp", "np", "tf", "mx") for name, p in PRECISIONS.items()
               if not name.startswith("amp")}  # a framework's dtype as printed: 'torch.bfloat16', 'jnp.float32'
HEADING_DEVICE = "device (from a heading)"  # the column a text's tables get from the headings above them
HEADING_TAG = "tag (from the headings)"  # the headings above a text's tables (and its rows' names), as the tag
# a status column that says whether the run succeeded ('ok: yes / no'): 'no' is a failed run (importers.table_rows)
OK_COLUMNS = ("ok", "success", "succeeded", "passed", "pass", "completed_ok",
              "successful_runs", "successes", "success_count", "num_successful")  # a count: 0 is a failed row
# the statistic pandas' groupby().agg() appends to an aggregated column: 'latency_p95_ms_mean' is the mean over the
# repeats of latency_p95_ms, '_std' / '_min' / '_max' its spread, '_count' the number of repeats
_REPEAT_STATS = {"mean": "mean", "avg": "mean", "std": "spread", "stdev": "spread", "stddev": "spread",
                 "sem": "spread", "var": "spread", "min": "spread", "max": "spread", "count": "count"}


_COMPARISONS = {"ratio", "speedup", "improvement", "improve", "uplift", "slowdown", "diff", "difference", "vs",
                "versus", "relative", "normalized", "normalised"}
_NOT_MEASURED = {"cloud", "estimated", "estimate", "est", "predicted", "projected", "theoretical", "nominal", "rated",
                 "expected", "simulated", "modeled", "modelled"}
_SCOPE_AFTER = re.compile(r"(?P<base>.+?)[_\s.-]+(?P<scope>decode|prefill|prompt|total|global|overall|output|generation"
                          r"|gen|e2e|actual|measured|elapsed|wall|real)", re.IGNORECASE)  # 'measure_seconds_actual'

_TOKEN_COUNT = re.compile(r"(?:output|input|prompt|completion|generated)_tokens")


def repeat_stat(header: str) -> tuple[str, str] | None:
    """(the column aggregated, mean | spread | count) for a name whose unit is followed by the statistic of an
    aggregated table ('avg_power_w_mean', 'latency_mean_ms_std'); None for any other name."""
    text = header.strip()[:200]
    m = re.fullmatch(r"(?P<base>.+?)[_\s.-]+(?P<stat>[A-Za-z]{3,6})", text)
    if m is None or m.group("stat").lower() not in _REPEAT_STATS or units.header_unit(text)[1] is not None:
        return None
    if units.header_unit(m.group("base"))[1] is None and not (
            "." in text and _TOKEN_COUNT.fullmatch(m.group("base").rsplit(".", 1)[-1].lower())):
        return None  # a dotted record's 'output_tokens.mean' beside its '.std': the count's mean over repeats
    return m.group("base"), _REPEAT_STATS[m.group("stat").lower()]


# a statistic written after the unit ('ttft_ms_p50', 'latency_s_p99', 'tpot_ms_median'): the statistic of the column
# in that unit, over its requests (not over repeats, as an aggregated table's '_mean' is)
_AFTER_UNIT = {"p50": "p50", "median": "p50", "med": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}
_PERCENTILE = re.compile(r"p\d{1,3}")
# a rate over a power ('fps_per_watt', 'tokens/s/W', 'perf per watt'): items per joule at best, never a power
_PER_WATT = re.compile(r"(?:fps|tps|qps|ips|tok|sample|image|img|inference|frame|perf|throughput|flops|ops|/\s*s\b"
                       r"|per[ _-]?sec).*(?:per[ _-]?w(?:atts?)?|/\s*w(?:atts?)?)\s*\)?$")
_NET = {"net", "adjusted", "dynamic", "incremental", "marginal", "delta"}  # 'Net_Energy_J': the idle's share taken off
_PAUSE = {"cooldown", "cool", "sleep", "pause", "wait", "delay", "interval", "timeout", "rest", "gap"}


def stat_after_unit(header: str) -> tuple[str, str, units.Unit] | None:
    """(the name before the unit, the statistic, the unit) for a name whose unit is followed by a percentile or a
    median ('ttft_ms_p50': ('ttft', 'p50', ms)); None for any other name."""
    text = header.strip()[:200]
    m = re.fullmatch(r"(?P<base>.+?)[_\s.-]+(?P<stat>[pP]\d{1,3}|median|med|MEDIAN)", text)
    if m is None or units.header_unit(text)[1] is not None:
        return None
    name, unit, _ = units.header_unit(m.group("base"))
    alone = unit is not None and unit.kind in ("token_rate", "item_rate") and name == m.group("base").strip()
    if unit is None or name == m.group("base").strip() and not alone:  # 'tok/s p50': a rate's median, named by
        return None  # its unit alone
    if alone:
        name = ""
    return name, m.group("stat").lower(), unit


def unitless_energy(name: str) -> bool:
    """Whether a column names an energy or a power and states no unit ('avg_power_consumption',
    'energy_per_step_avg'): the figure is there, but mW and W, J and kWh cannot be told apart."""
    words = words_of(name)
    return (bool(words & (_ENERGY | _POWER)) and units.header_unit(name)[1] is None and repeat_stat(name) is None
            and not words & (_SETTING | _SCORES | _SPREAD))


def _stat(words: set[str]) -> str:
    return next((stat for word, stat in _STATS if word in words), "avg")


def _latency_field(words: set[str]) -> str | None:
    """ttft/tpot/itl/e2e_latency/latency and the statistic its words name; None for a max other than latency's."""
    stat = "max" if words & {"max", "maximum"} else _stat(words)
    base: str | None = next((b for b in ("ttft", "tpot", "itl") if b in words), None)
    if base is None and {"first", "token"} <= words:
        base = "ttft"
    if base is None and words & {"e2e", "e2el", "request", "end"}:  # vLLM's 'mean_e2el_ms'
        base = "e2e_latency"
    base = base or "latency"
    if stat == "max" and base != "latency":
        return None
    return LATENCY_BY_BASE[base].stat(stat).name


_BASELINE = {"baseline", "idle", "before", "initial"}  # memory or power before the run: not what it used
# what says a device memory figure is the run's ('gpu_mem_used_mb', 'peak_vram_gb', 'vram_load_gb'), not the card's size
_IN_USE = {"used", "use", "usage", "peak", "max", "maximum", "pk", "hwm", "alloc", "allocated", "reserved", "load",
           "loaded", "consumption", "consumed", "footprint", "occupied", "busy", "during", "inference", "train",
           "training", "run", "model"}


def _memory_field(words: set[str], unit: units.Unit) -> tuple[Field | None, units.Unit | None, str]:
    """Device memory used (a peak of it is what the run used: `peak_vram_mib`), a process's peak RSS; never the
    device's size, a baseline before the run or a spread."""
    if words & _CAPACITY:
        return None, None, "the device's memory size (total, free), not the memory the run used"
    if words & _BASELINE:
        return None, None, "a baseline (memory in use before the run), not the memory the run used"
    if words & (_SPREAD - {"max", "maximum", "peak"}):
        return None, None, "a spread or a minimum of memory"
    if words & {"gpu", "vram", "device"} and not words & _IN_USE:
        return None, None, "the device's memory, not said to be what the run used (no 'used', 'peak' or 'allocated')"
    if words & {"gpu", "vram", "device"}:
        return Field("mem_used_device_mb", "MB"), unit, ""
    if words & {"rss", "ram"} and words & {"peak", "max", "maximum", "pk", "hwm"}:
        return Field("mem_peak_rss_mb", "MB"), unit, ""
    return None, None, "a memory size not said to be the device's"


def setting_field(header: str, cell_unit: units.Unit | None = None) -> tuple[Field, units.Unit] | None:
    """(the setting, the unit of its values) for a column of a power limit set on the device ('power_limit_w', 'pl_w',
    'Power cap (W)', 'power_target_w'); None for any other column (the maximum or default limit a device allows is
    no setting of the run)."""
    name, unit, _ = units.header_unit(header)
    unit = unit or cell_unit
    words = words_of(header)
    if unit is None or unit.kind != "power" or not words & (_LIMIT | SET_ON):
        return None
    if words & (_SPREAD - _LIMIT) or words & {"default", "enforced_max", "allowed"}:
        return None
    return Field("power_limit_w", "W", "config"), unit


_CAMEL = re.compile(r"[a-z]{1,40}(?:[A-Z][a-z0-9]{0,40}){1,12}[A-Z]?"
                    r"|[A-Z][a-z]{1,40}(?:[A-Z][a-z0-9]{1,40}){2,12}[A-Z]?"  # 'CurSamplesPerSec': PascalCase
                    r"|[A-Z]{2,6}(?:[A-Z][a-z0-9]{2,40}){1,12}")  # 'GPUNum': an acronym, then words
_WORDS = re.compile(r"(?:[A-Z]{2,6}|[A-Z]?[a-z]{2,40})(?:[A-Z][a-z0-9]{2,40}){1,12}")  # words glued, each lowercase
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def uncamel(name: str) -> str:
    """A camelCase key's words apart, part by part of a dotted path ('metrics.averagePackagePowerW' ->
    'metrics.average_Package_Power_W'), and a header's glued words ('TimePerIter (s)'); a name with separators (a unit
    written 'power_mW') as it is."""
    if len(name) > 200 or not any(c.isupper() for c in name):
        return name
    if re.fullmatch(r"[\w.]+", name):  # a key, or a dotted path of keys
        return ".".join(_HUMP.sub("_", p) if _CAMEL.fullmatch(p) else p for p in name.split("."))
    return re.sub(r"[A-Za-z0-9_]+", lambda m: _HUMP.sub("_", m.group()) if _WORDS.fullmatch(m.group()) else m.group(),
                  name)  # a header's words: 'TimePerIter (s)' is 'Time_Per_Iter (s)', 'vLLM tok/s' as it is


# a time unit first, then what it is the time of: 'ms_per_iter', 's/it', 'sec_per_batch', 'ms/img'
_UNIT_EACH = re.compile(r"(?i)(?P<unit>ms|msec|s|sec|secs|us|µs)(?:[_\s]*/[_\s]*|[_\s]+per[_\s]+)"
                        r"(?P<what>iters?|iterations?|its?|steps?|batch(?:es)?|images?|imgs?|samples?|items?|frames?)")


_UNIT_FIRST = re.compile(r"(?i)(?P<base>[a-z][a-z_]{1,40}?)_(?P<unit>ms|s|us|sec|w|mw|j)\.(?P<part>[a-z][a-z_]{0,30})"
                         r"\.(?P<stat>mean|avg|median|p\d{1,2}|max|min|std)")
_WHOLE_PARTS = {"total", "e2e", "end_to_end", "overall", "all", "whole"}
_OVER_REPEATS = re.compile(r"(?i)(?:median|mean|avg|average)\.(?P<leaf>[^.]+)")
_APPLE_CHIP = re.compile(r"\bM[1-9]\s*(?:Pro|Max|Ultra)\b")


def measure_field(header: str, cell_unit: units.Unit | None = None) -> tuple[Field | None, units.Unit | None, str]:
    """(the field, the unit the column's values are in, why it is left out) for a measurement column.
    (None, None, reason) when the column is no measurement JouleBench stores; FieldError when its unit
    contradicts its name. `cell_unit` is the unit the column's cells carry when the header states none."""
    header = english_stats(uncamel(units.SPACED_SLASH.sub("/", header[:200])))  # 'Energy / token (J)': J/token
    header = _APPLE_CHIP.sub("Apple chip", header)  # 'M3 Max GPU 40-core': a chip's name, no maximum
    if (over := _OVER_REPEATS.fullmatch(header.strip())) is not None:  # 'median.mean_ttft_ms': the median over the
        return measure_field(over.group("leaf"), cell_unit)  # repeats of each figure, the figure as it is named
    if (nested := _UNIT_FIRST.fullmatch(header.strip())) is not None:  # 'latency_ms.total.mean': a figure's unit,
        if nested.group("part").lower() not in _WHOLE_PARTS:  # then its part: the whole, or one stage of it
            part, base = nested.group("part")[:20], nested.group("base")[:30]
            return None, None, f"one part ({part}) of the {base}, not the whole"
        return measure_field("{base}_{unit}.{stat}".format(**nested.groupdict()), cell_unit)
    if (each := _UNIT_EACH.fullmatch(header.strip())) is not None:  # 'ms_per_iter', 's/it': the time of one step
        header = f"time per {each.group('what')} ({each.group('unit')})"
    aggregated = repeat_stat(header)
    if aggregated is not None:
        base, stat = aggregated
        if stat != "mean":
            return None, None, ("a count of repeats" if stat == "count" else
                                f"the {header.strip()[len(base):].strip(' _.-')[:8]} over repeats (a spread)")
        field, unit, why = measure_field(base, cell_unit)
        return field, unit, (why if field is None else "the mean its name ends in (over repeats, frames or requests)")
    after = stat_after_unit(header)
    if after is not None:
        base, stat, stated = after
        if stat not in _AFTER_UNIT:
            return None, None, f"the {stat} of {base[:40]} (a percentile JouleBench does not store)"
        if stated.kind in ("token_rate", "item_rate") and _AFTER_UNIT[stat] != "p50":
            return None, None, f"the {stat} of a rate (JouleBench stores a rate's mean or median, no percentile)"
        if stated.kind == "time" and re.split(r"[\s._-]+", base.strip(" ._-").lower())[-1] in (
                "duration", "runtime", "elapsed", "wall"):
            return None, None, f"the {stat} of the runs' durations (over repeats), not a latency"  # 'duration_s_median'
        field, unit, why = measure_field(f"{base} {_AFTER_UNIT[stat]} ({stated.symbol})", cell_unit)
        of = f"the {stat} of {base[:40]}" if base.strip() else f"the {stat}"
        return field, unit, (why if field is None else f"{of} in {stated.symbol}")
    scope = _SCOPE_AFTER.fullmatch(header.strip()[:200])
    if scope is not None and units.header_unit(header)[1] is None and units.header_unit(scope.group("base"))[1]:
        # 'tokens_per_second_decode', 'tokens_per_second_total': the phase or scope the unit's figure is of
        return measure_field(f"{scope.group('scope')} {scope.group('base')}", cell_unit)
    if words_of(header) & _NOT_MEASURED:  # 'cloud_energy_J' = time x a 1500 W rating: a figure no one measured
        return None, None, "an estimate or a rating (cloud, estimated, predicted, theoretical), not a measurement"
    if words_of(header) & {"ttst", "ttsc"} or "second token" in plain(header):  # time to the second token
        return None, None, "the time to the second token (TTST), a figure JouleBench does not store"
    if "goodput" in words_of(header):
        return None, None, "the requests per second that met a latency target (a goodput), not the throughput"
    if _PER_WATT.search(plain(header)[:200]):  # 'fps_per_watt', 'tok/s/W': a rate over a power, an efficiency
        return None, None, "a rate per watt (an efficiency), not a power; JouleBench derives energy per item itself"
    name, unit, written = units.header_unit(header)
    unit = unit or cell_unit
    words = words_of(name) | words_of(header.split("(")[0])
    low = plain(header)
    if words & _COMPARISONS or "Δ" in header:  # 'tps_ratio', 'speedup_x': one setup's figure over another's
        return None, None, "a comparison between setups (a ratio or a difference), not a run's figure"
    if words & _SCORES or "%" in header:
        return None, None, "a score or a percentage"
    counted = words & {"tokens", "token", "tok", "toks"} and words & _GENERATED and "/" not in header
    if unit is None and counted and not words & (_SPREAD | (_NOT_A_COUNT - {"mean", "avg", "average"})):
        unit = units.UNITS["tokens"]  # 'Tokens Generated', 'completion_tokens': the output tokens counted
    if unit is None and words & {"len", "length"} and words & {"avg", "mean", "average"} and words & (
            _GENERATED | {"input", "prompt"}):
        unit = units.UNITS["tokens"]  # 'Avg_Output_Len': a request's mean length, in tokens
    if unit is None and "tps" in words and not words & _SPREAD and "/" not in header.split("(")[0] and not words & {
            "req", "request", "user", "users", "per", "usuario", "seq"}:  # 'TPS verdadeiro (Σ tokens / Σ tempo)';
        unit = units.UNITS["tokens/s"]  # never 'TPS/req', a request's rate
    if unit is None and words & {"throughput", "thruput"} and not words & _SPREAD and not any(
            _PERCENTILE.fullmatch(w) for w in words):
        # a throughput of tokens or requests is per second wherever its unit goes unwritten ('Token_Throughput',
        # 'Request_Throughput': trtllm-bench prints them as tokens/sec and req/sec)
        if words & {"tokens", "token", "tok", "toks"}:
            unit = units.UNITS["tokens/s"]
        elif words & {"request", "requests", "req", "reqs", "query", "queries", "sample", "samples", "images"}:
            unit = units.UNITS["req/s" if words & {"request", "requests", "req", "reqs"} else "items/s"]
    if unit is None:
        if words & {"tokens", "token", "tok", "toks"} and (words & {"median", "med"} or any(
                _PERCENTILE.fullmatch(w) for w in words)):
            return None, None, "a median or percentile of a count of tokens (JouleBench stores the total or the mean)"
        return None, None, "no unit in its name or cells"
    kind = unit.kind
    if words & _SETTING and kind in ("power", "energy"):
        return None, None, "a power mode setting (a label), not a measured power"
    per_token = bool(_PER_TOKEN.search(low))
    per_item = bool(_PER_ITEM.search(low))
    says_energy = bool(words & _ENERGY)
    if kind == "power" and says_energy and (per_token or per_item):
        raise FieldError(units.refuse_unit(header, unit.symbol, "J/token" if per_token else "J/item"))
    if kind == "energy" and not (per_token or per_item) and (m := _PER_OTHER.search(low)) is not None:
        return None, None, f"an energy per {m.group(1)} (not per token, sample or request)"
    if kind == "energy" and (per_token or per_item):  # 'Energy per Token (J)': J in a per-token column
        kind = "energy_per_token" if per_token else "energy_per_item"
        unit = units.Unit(unit.symbol + ("/token" if per_token else "/item"), kind, unit.factor)
    if kind in ("energy_per_token", "energy_per_item") and (words & _POWER and not says_energy):
        raise FieldError(units.refuse_unit(header, unit.symbol, "W"))
    if kind == "memory":
        return _memory_field(words, unit)
    if kind in ("power", "energy", "energy_per_token", "energy_per_item", "tokens_per_energy") and words & _NET:
        return None, None, ("net of idle (an idle baseline subtracted): JouleBench stores the measured figure and "
                            "derives the net one from an idle run of its own")
    if kind == "power" and words & (_LIMIT | SET_ON):
        return None, None, "a power limit (a setting, not a measured power)"
    if kind == "item_rate" and {"output", "video"} <= words:  # table_checks.media_lengths' 'output video fps'
        return None, None, "the frame rate of the video generated (a setting), not the run's throughput"
    if words & _OBJECTIVE:  # 'TTFT threshold (s)', 'slo_ttft_ms', 'target_tok_s': what the run was to meet
        return None, None, "a target or threshold set for the run (a service-level objective), not a measurement"
    if kind == "power" and (words & {"median", "med"} or any(_PERCENTILE.fullmatch(w) for w in words)) and not (
            words & {"average", "avg", "mean"}):  # 'average_gpu_power_median_watts': a run's mean, median over runs
        return None, None, "a median or percentile of the power samples (JouleBench stores the mean power)"
    if kind in ("power", "energy") and words & (_BASELINE - {"idle"}):  # 'idle': said below, with the peaks
        return None, None, "a baseline (idle) figure, not the run's"
    if kind == "time" and written in ("min", "mins") and words & (_DURATION - {"time", "total"}) and not (
            words & _LATENCY):  # 'duration_min': a duration in minutes, not a minimum
        words = words - {"min", "mins"}
    if words & (_SPREAD - {"max", "maximum"}) or (words & {"max", "maximum"} and kind != "time"):
        return None, None, "a peak, a spread or an idle figure"
    if kind in ("time", "time_per_token") and any(_PERCENTILE.fullmatch(w) and w not in _AFTER_UNIT for w in words):
        return None, None, "a percentile JouleBench does not store"
    decode = "decode" in words or "generation" in words or "gen" in words or ("eval" in words and "prompt" not in words)
    prefill = "prefill" in words or "prompt" in words
    if kind in ("token_rate", "time"):  # llama.cpp's tests: pp (prompt processing) and tg (text generation)
        tests = {re.sub(r"\d+$", "", w) for w in words if re.fullmatch(r"(?:pp|tg)\d+", w)}  # 'pp520 (tok/s)'
        decode, prefill = decode or "tg" in words | tests, prefill or "pp" in words | tests  # tokens/s, the time
    if kind == "time" and re.search(r"(?:^|[ _])token[ _](?:latency|time)", low) and not words & {
            "first", "inter", "between", "ttft", "itl"}:  # 'avg_token_latency_ms': a time per token
        per_token = True
    if kind == "time" and per_token:  # 'Avg decode time/token: 0.0073 s': a time per token, never the run's window
        if prefill and not decode:
            return None, None, "a prefill time per token (not a time per output token)"
        kind = "time_per_token"
        unit = units.Unit(unit.symbol + "/token", kind, unit.factor)
    if kind == "energy":
        if words & _POWER and not says_energy:
            raise FieldError(units.refuse_unit(header, unit.symbol, "W"))
        return Field("energy_j", "J"), unit, ""
    if kind == "power":
        if words & {"energy"} and not ({"second", "sec", "s"} & words or "per second" in low):
            raise FieldError(units.refuse_unit(header, unit.symbol, "J"))
        return Field("avg_power_w", "W"), unit, ""
    if kind == "energy_per_token" and re.search(r"(?:all|total|combined)[ _-]tokens?", low) and not words & _GENERATED:
        return None, None, "an energy per token of prompt and output tokens together (JouleBench stores J per output "\
                           "token)"  # 'energy_per_all_tokens_j' beside 'energy_per_generated_token_j'
    if kind in ("energy_per_token", "tokens_per_energy"):  # tok/J: the inverse, converted where it is read
        return Field("decode_j_per_token" if decode else "j_per_token", "J/token"), unit, (
            "" if kind == "energy_per_token" else "tokens per joule: J/token is 1 / it")
    if kind == "energy_per_item":
        request = bool(re.search(r"request|req|prompt|query", low))
        return Field("j_per_request" if request else "j_per_sample", "J/item"), unit, ""
    if kind == "token_rate" and words & {"p1", "p5", "p10", "p25", "p75", "p80", "p90", "p95", "p99", "p999"}:  # not
        # any 'p' and digits: 'P40 (TPS)' is a Tesla P40's rate
        return None, None, "a percentile of a rate (JouleBench stores a rate's mean or median)"
    if kind == "token_rate":
        per = "per" in words or "/user" in low or "/req" in low or bool(re.search(r"\((?:req|request|user|stream)s?\)",
                                                                                  low))  # 't/s (req)': each request's
        if per and words & {"stream", "streams", "user", "users", "request", "requests", "req", "client", "clients",
                            "seq", "sequence", "session"}:
            return None, None, "a rate of each request (per stream or user), not the system's tokens/s"
        if per_gpu(low, words):  # scaled by the row's GPU count where it has one (table_checks.per_gpu_scaled)
            return Field("decode_tokens_per_s" if decode else "tokens_per_s", "tokens/s" + PER_GPU), unit, ""
        if words & {"total", "all", "combined"} and not (decode or prefill or words & {"output", "generated"}):
            return None, None, "prompt and output tokens together (JouleBench stores output tokens/s only)"
        prompt = prefill or "input" in words  # 'Input token throughput (tok/s)': the prompt's tokens
        key = "decode_tokens_per_s" if decode else "prompt_tokens_per_s" if prompt else "tokens_per_s"
        return Field(key, "tokens/s"), unit, ""
    if kind == "item_rate" and per_gpu(low, words):  # 'img/s/gpu': each GPU's share of the system's rate
        return (None, None, "a rate of requests per GPU") if re.search(r"req|request|rps", low) else (
            Field("throughput_sps", "items/s" + PER_GPU), unit, "")
    if kind == "item_rate":
        if re.search(r"req|request|rps", low) or unit.symbol in ("req/s", "requests/s") or written == "requests/s":
            return Field("requests_per_s", "items/s"), unit, ""
        if words & {"step", "steps", "iter", "iters", "iteration", "iterations"}:  # never 'BATCH FPS': frames
            return Field("iterations_per_s", "items/s"), unit, ""  # 'steps_per_s': optimizer steps, not samples
        return Field("throughput_sps", "items/s"), unit, ""
    if kind == "time_per_token":
        if prefill and not decode:  # 'prefill_latency_ms_per_token': a prompt token's share, no output token's
            return None, None, "a prefill time per token (not a time per output token)"
        if words & {"e2e", "global", "total", "overall"}:  # the whole run over its tokens, prompt ones among them
            return None, None, "a whole run's time per token (prompt tokens too), not a time per output token"
        tpot = _latency_field(words | {"tpot"})
        return (Field(tpot, "ms"), unit, "") if tpot else (None, None, "a maximum")
    if kind == "time":
        if words & {"1st", "2nd"} and words & {"latency", "lat"} and not words & {"token", "tokens", "tok"}:
            words = words | {"token"}  # OpenVINO's LLM tables: '1st latency (ms)' the first token's, '2nd' each next
        if words & {"2nd", "second"} and words & {"token", "tokens", "tok"} and words & {"latency", "lat"}:
            words = words | {"tpot"}  # '2nd token latency': the time of each token after the first
        if "first" in words and words & {"token", "tokens", "tok"} or "ftl" in words:  # 'Time to First Token (ms)',
            words = words | {"ttft"}  # 'FTL[s]' (first-token latency): the TTFT
        if ("inter" in words or "between" in words) and words & {"token", "tokens", "tok"} or "tbt" in words:
            words = words | {"itl"}  # 'Inter Token Latency (ms)', 'time between tokens', 'tbt_p95_ms': the ITL
        if words & INPUT_MEDIA and not (words & INPUT_MEDIA == {"media"} and words & _LATENCY):
            return None, None, "the length of the input (audio or video), not a time the run took"
        if "media" in words:  # 'Latencia media (ms)': the Spanish and Italian mean
            words = (words - {"media"}) | {"mean"}
        if words & {"load", "loading", "startup", "init", "initialization", "compile", "compilation", "cold"}:
            return None, None, "a load or start-up time (before the measured run), not the run's"
        if words & {"warmup", "warm"}:
            return None, None, "the warm-up's time, not the measured run's"
        if words & {"epoch", "epochs"} and words & {"avg", "mean", "average", "per"}:  # 'epoch_mean_time_s'
            return None, None, "a time per epoch (a part of the run), not the run's window"
        if words & {"preprocess", "preprocessing", "postprocess", "postprocessing", "nms", "viz", "visualization",
                    "visualisation", "render", "rendering", "draw", "mask", "info", "metadata", "health", "tokenize",
                    "tokenization", "detokenize", "transfer", "copy", "memcpy", "upload", "download", "h2d", "d2h",
                    "encoder"}:  # 'mask_time_ms', 'Model Info Time', 'KV Transfer Time (ms)'
            return None, None, ("a stage's time (pre- or post-processing, a transfer or a copy, an encoder, drawing, "
                                "a metadata call), not the run's")
        if words & {"overhead", "queue", "queued", "queueing", "waiting"}:
            return None, None, "an overhead or a wait around the model's work, not a time the run took"
        if words & {"io", "disk", "storage", "network", "injected", "simulated", "artificial"}:
            return None, None, "the time of I/O or of a delay injected (a setting of the test), not the model's"
        if words & _PAUSE:
            return None, None, "a pause, interval or timeout set around the runs (a setting), not a time a run took"
        if says_energy and words & _DURATION:  # 'energy_infer_duration_s': the window its energy was measured over
            return Field("duration_s", "s"), unit, ""
        if prefill and not words & {"ttft", "first"}:
            return None, None, "a prefill time (not a time to first token)"
        if "tg" in words:  # 'final_p50_tg_s': the time generating after the first token, never a request's latency
            return None, None, "a decode time (not a request's latency, nor a window)"
        averaged = bool(words & {"average", "avg", "mean"}) and not words & (_DURATION - _TIME - {"total"} | {"epoch"})
        done = words - {"average", "avg", "mean", "seconds", "secs", "sec", "s", "ms"}  # 'mean_transcribe_seconds':
        averaged = averaged or bool(words & {"average", "avg", "mean"}) and bool(done) and not done & (
            _DURATION | {"epoch", "run", "job", "total", "wall"})  # a mean of what each item took, in seconds
        # 'inference_ms', 'infer_ms_mean': the time of one inference (never a whole run's: 'total_inference_time_s')
        per_item = "per" in words and bool(words & {"iter", "iters", "iteration", "it", "step", "batch", "image",
                                                     "img", "sample", "item", "frame"})  # 'total_per_image_ms'
        per_inference = per_item and not words & {"elapsed", "wall", "duration"} or bool(words & {
            "inference", "infer", "forward", "pipeline", "dt"}) and not words & {"total", "elapsed", "wall",
                                                                                    "duration", "performance"}
        if words & (_LATENCY - {"gpu", "compute"}) or any(w in words for w, _ in _STATS[:6]) or (
                words & {"max", "maximum"}) or averaged or per_inference:  # 'Average time (per image)': a mean
            latency = _latency_field(words)
            return (Field(latency, "ms"), unit, "") if latency else (None, None, "a maximum other than the latency's")
        if decode and not words & _DURATION:
            return None, None, "a decode time (not a window)"
        if words & _DURATION or name.strip().lower() in ("s", "sec", "seconds"):
            return Field("duration_s", "s"), unit, ""
        bare = words - {"ms", "us", "ns", "s", "sec", "secs", "seconds"}  # the name without its unit's word
        if bare and bare <= {"npu", "gpu", "cpu", "tpu", "dsp", "accelerator"} and unit.factor <= 1e-3:
            return Field("latency_avg_ms", "ms"), unit, ""  # 'npu_ms': the time on the chip of one inference, in ms
        if bare and bare <= {"step", "iter", "iteration", "batch"}:  # 'Step(ms)': a step's time, as 'step_time_ms'
            return Field("duration_s", "s"), unit, ""  # (table_checks.per_part_durations reads it per row)
        return None, None, "a time that is neither a latency nor the run's duration"
    if kind == "frequency" and words & SET_ON:
        return None, None, "a clock set (a setting, not a measured clock)"
    if kind == "frequency" and words & {"gpu", "sm", "graphics"}:
        return Field("gpu_clock_avg_mhz", "MHz"), unit, ""
    if kind == "tokens" and words & {"throughput", "durchsatz", "rendimiento"}:  # 'completion_token_throughput':
        key = "prompt_tokens_per_s" if prefill or "input" in words else "tokens_per_s"  # tokens a second, as
        return Field(key, "tokens/s"), units.UNITS["tokens/s"], ""  # 'token_throughput' reads
    if kind == "tokens":
        if words & {"median", "med"} or any(_PERCENTILE.fullmatch(w) for w in words):  # 'Output Sequence Length
            return None, None, "a median or percentile of a count of tokens (JouleBench stores the total or the mean)"
        if words & _GENERATED and not prefill:
            mean = words & {"avg", "mean", "average"}
            return Field("output_tokens_mean" if mean else "output_tokens", None), unit, ""
        key = "prompt_tokens_mean" if prefill or "input" in words else "output_tokens"
        return Field(key, None), unit, ""
    return None, None, f"a {units.KIND_WORDS[kind]} JouleBench does not store"


PER_GPU = " per GPU"  # a stored unit's mark: the figure is each GPU's, the run's is it times the GPU count


def per_gpu(low: str, words: set[str]) -> bool:
    """Whether a rate's name says it is each GPU's: 'Tokens/GPU/Second', 'tokens_per_sec_per_gpu', 'img/s per GPU'."""
    return bool(words & {"gpu", "gpus", "device", "card", "chip"}) and bool(
        "per" in words or re.search(r"/\s*(?:gpu|device|card|chip)\b", low))
