"""What one line of console text holds: its figures, for `importers.text_figures`, which gives them their runs.

- `name: value unit` / `name=value unit` cells (`Total energy: 5 J`, `wall=22.4s`): `figure`;
- a line naming its run before figures written value first, a word after the unit saying what it is
  (`q4km-1: 22.0 tok/s, 47.83 W decode, 2.174 J/tok (604 Wh/Mtok)`): `run_line`; every cell holds a number (a cell
  without one is prose, and the line is none), its first cell is such a figure;
- llama.cpp's timings: `llama_perf_context_print` / `common_perf_print` / `llama_print_timings` lines
  (`eval time = 11376.90 ms / 256 runs ( 44.44 ms per token, 22.50 tokens per second)`) and its examples'
  `decoded 257 tokens in 11.680 seconds, speed: 22.003 t/s`, with or without common_log's `0.16.643.646 I ` lead:
  `llama_cpp`. Eval and 'decoded' are decoding (decode tokens/s), prompt eval and 'encoded' the prompt's (prompt
  tokens/s); a rate over one run or printed inf/nan is none (a speculative run's target evaluates once); the load,
  sampling and total times are no figure of a run's window;
- mlx-lm's generate (`mlx_lm.generate --verbose`, mlx_lm/generate.py): `Prompt: 7 tokens, 6.657 tokens-per-sec` (the
  prompt's tokens over the time to the first token: prompt tokens and prompt tokens/s), `Generation: 256 tokens, 7.932
  tokens-per-sec` (the tokens generated over the time after the first: output tokens and decode tokens/s; versions
  before the counts print the rates alone, `Prompt: 6.657 tokens-per-sec`) and, right after the Generation line,
  `Peak memory: 5.990 GB` (`mx.get_peak_memory()`: the most memory MLX held on the device, stored as device memory
  used; a `Peak memory:` line of any other text is no figure of the device's): `mlx_lm`.

Each figure's field and unit come from `importers.table_fields` (its name and the unit written after its value), or,
for llama.cpp's phases, from what the tool prints them for. Only a value with a unit this project converts is a
figure; every pattern is anchored and bounded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from importers.table_fields import Field, FieldError, measure_field
from joulebench import units

MIN_FIGURES = 2  # recognised figures a run needs
MAX_CELLS = 40
NUM = r"[-+]?(?:\d{1,15}(?:,\d{3}){0,5}(?:\.\d{1,15})?|\.\d{1,15})(?:[eE][-+]?\d{1,3})?"
# what a terminal capture holds besides the text: ANSI escapes (cursor, colour) and a spinner's braille frames
TERMINAL = re.compile(r"\x1b\[[0-?]{0,20}[ -/]{0,5}[@-~]|\x1b[@-Z\\-_]|[\u2800-\u28ff]")
# 'RESULT threads=3 warmup=5 seconds=30 frames=4280 elapsed=30.000 fps=142.67': a line of key=value words
_KEY_VALUE = re.compile(r"(?<!\S)([A-Za-z][\w.-]{0,40})=([^\s=]{1,40})(?!\S)")


def key_values(text: str) -> list[str] | None:
    """The cells of a line of three or more `key=value` words, as 'key = value' (None for any other line)."""
    words = text[:1000].split()
    if words and "=" not in words[0]:
        words = words[1:]  # a leading word names the line ('RESULT', '[bench]')
    pairs = [_KEY_VALUE.fullmatch(w) for w in words]
    if len(pairs) < 3 or not all(pairs):  # every other word a key=value: 'AGG=8.9 tok/s' keeps its unit elsewhere
        return None
    return [f"{m.group(1)} = {m.group(2)}" for m in pairs if m is not None]


SPLIT = re.compile(r"\s*\|\s*|;\s+|,\s+|\t+|\s+[—–]\s+")  # ' — ' too: 'Strategy cuda — Average time: 0.16s
_FIGURE = re.compile(r"(?P<name>[A-Za-z][\w .()/%'+-]{0,79}?)\s{0,80}(?P<sep>[:=~])\s{0,80}"
                     rf"(?P<number>{NUM})(?P<rest>[^\n]{{0,200}})")
_THOUSANDS = re.compile(r"[-+]?[1-9]\d{0,2}(?:,\d{3}){1,5}")  # in a figure's line a comma group is thousands
MODEL_SIZE = re.compile(r"(?:^|[-_:./])\d{1,4}(?:\.\d{1,3})?[BbMm](?:$|[-_:./])")  # -3B-, -20b, :8b, -1.1B
# model families named without a parameter count ('resnet50', 'mobilenet_v2', 'bert-base-uncased', 'YOLOv9-C')
KNOWN_MODEL = re.compile(r"(?:resnet|resnext|wide_resnet|mobilenet|efficientnet|vgg|densenet|inception|googlenet|"
                         r"alexnet|squeezenet|shufflenet|mnasnet|regnet|convnext|vit|swin|deit|yolo|unet|bert|"
                         r"roberta|distilbert|albert|gpt|t5|bart|whisper|llama|mistral|mixtral|qwen|gemma|falcon|"
                         r"bloom|deepseek|clip)(?:\d[\w.]{0,20}|v\d[\w.-]{0,20}|[-_.][\w.-]{1,30})?", re.IGNORECASE)
_APPROX = re.compile(r"estimat|approx", re.IGNORECASE)
_RUN_LINE = re.compile(r"(?P<name>[^:=|\s][^:=|]{0,99}?):\s{1,40}(?P<rest>[-+]?\.?\d[^\n]{0,900})")
_VALUE_FIRST = re.compile(rf"(?P<number>{NUM})\s{{0,5}}(?P<rest>[^\n]{{1,200}})")
_QUALIFIER = re.compile(r"[A-Za-z][A-Za-z_-]{0,30}")  # one word: decode, prefill, avg
_LLAMA_LOG = re.compile(r"\d{1,4}\.\d{2}\.\d{3}\.\d{3} [IWED] ")  # common_log: time and level
_LLAMA_PREFIXES = ("llama_perf_context_print", "llama_print_timings", "common_perf_print", "llama_perf_sampler_print")
_LLAMA_TIMING = re.compile(
    rf"(?:{'|'.join(_LLAMA_PREFIXES)}):\s{{0,40}}"
    rf"(?P<phase>[a-z]{{1,12}}(?: [a-z]{{1,12}}){{0,2}}) time\s{{0,40}}=\s{{0,40}}{NUM}\s{{0,5}}ms"
    r"(?P<rest>[^\n]{0,200})")
_LLAMA_RATE = re.compile(
    rf"/\s{{0,20}}(?P<n>\d{{1,12}}) (?:tokens|runs)\s{{0,20}}\(\s{{0,20}}(?:{NUM}|-?inf|nan) ms per token,"
    rf"\s{{0,20}}(?P<rate>{NUM}|-?inf|nan) tokens per second\)")
_LLAMA_SPEED = re.compile(
    rf"(?P<phase>encoded|decoded)\s{{1,20}}(?P<n>\d{{1,12}}) tokens in\s{{1,20}}{NUM}\s{{0,5}}s(?:ec|econds)?,"
    rf" speed:\s{{1,20}}(?P<rate>{NUM}|-?inf|nan)\s{{0,5}}t/s")
_MLX_LEAD = r"(?:\[batch_generate\]\s{1,5})?"  # mlx-lm's batch_generate prints the same lines behind this
_MLX_RATE = re.compile(rf"{_MLX_LEAD}(?P<phase>Prompt|Generation):\s{{1,20}}(?:(?P<n>\d{{1,12}}) tokens,\s{{1,20}})?"
                       rf"(?P<rate>{NUM}|-?inf|nan) tokens-per-sec")
_MLX_PEAK = re.compile(rf"{_MLX_LEAD}Peak memory:\s{{1,20}}(?P<gb>{NUM}) GB")
_MLX_FIELDS = {"Prompt": ("prompt_tokens_mean", "prompt_tokens_per_s"), "Generation": ("output_tokens",
                                                                                     "decode_tokens_per_s")}
_LLAMA_PHASES = {"eval": "decode_tokens_per_s", "prompt eval": "prompt_tokens_per_s",
                 "decoded": "decode_tokens_per_s", "encoded": "prompt_tokens_per_s"}


@dataclass(frozen=True)
class Figure:
    """A number with its name as the text writes them, and the field `table_fields` makes of it."""

    line: int
    name: str
    value: float
    unit: units.Unit | None  # as written after the value; None: a bare number
    approximate: bool  # '~', or a remark '(estimated)': never stored
    field: Field | None  # None: not a figure JouleBench stores (why says so)
    field_unit: units.Unit | None  # the unit the value is in for that field
    why: str = ""
    error: str | None = None  # the unit contradicts the name (W as J/token): the file is refused naming it
    decimals: int | None = None  # digits printed after the decimal point

    @property
    def metric(self) -> bool:
        return self.field is not None and self.field.section == "metrics" and not self.approximate

    @property
    def base(self) -> float:
        """The value in its field's base unit (tokens/s, W, J/token)."""
        return self.value * (self.field_unit.factor if self.field_unit is not None else 1.0)

    def half_unit(self) -> float:
        """Half the last printed digit, in the base unit: how far the printed value may be from the true one."""
        scale = self.field_unit.factor if self.field_unit is not None else 1.0
        return 0.5 * 10.0 ** -(self.decimals if self.decimals is not None else 6) * scale


def recognised(figures: list[Figure]) -> int:
    """Distinct fields among the figures that are measurements, and the figures refused (counted so the file is)."""
    return len({f.field.key for f in figures if f.metric and f.field is not None}) + sum(1 for f in figures if f.error)


def _decimals(number: str) -> int:
    mantissa = number.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def _remark_cut(rest: str) -> int:
    return min((i for i in (rest.find("("), rest.find("[")) if i >= 0), default=len(rest))


_NAMED_BY_UNIT = ("token_rate", "item_rate", "energy_per_token", "energy_per_item", "tokens_per_energy")


def figure(line: int, cell: str) -> Figure | None:
    """'Total energy: 183155.23 J (0.050876 kWh)', 'wall=22.4s', 'per-stream~8.9' (approximate)."""
    m = _FIGURE.fullmatch(cell)
    if m is None:
        return None
    name = " ".join(m.group("name").split())
    rest = m.group("rest").strip()
    cut = _remark_cut(rest)
    written, remark = rest[:cut].strip(), rest[cut:]
    if written and units.find_unit(written) is None:
        return None  # '3 layers', '5 of 8': not a quantity
    if not written and (named := units.find_unit(name)) is not None and named.kind in _NAMED_BY_UNIT:
        written = name  # 'tok/sec: 5198.52' (nanoGPT's step lines): the name is the value's unit
    approximate = m.group("sep") == "~" or bool(_APPROX.search(remark))
    return _measured(line, name, m.group("number"), written, approximate)


def _measured(line: int, name: str, number: str, written: str, approximate: bool, shown: str = "") -> Figure | None:
    """The figure `name` of `number` `written` (a unit or ''), its field from `table_fields`; `shown` names it in
    warnings when `name` is empty (a figure written value first: 'tok/s')."""
    if _THOUSANDS.fullmatch(number):  # 'Total Output Tokens: 400,775': groups of three after a leading 1-9
        number = number.replace(",", "")
    try:
        q = units.parse(f"{number} {written}".strip())
    except units.UnitError:
        return None
    if q is None:
        return None
    label = shown or name
    in_name = units.header_unit(name)[1]
    if in_name is not None and q.unit is not None and in_name.symbol != q.unit.symbol:
        return Figure(line, label, q.value, q.unit, approximate, None, None, "two units, in its name and its value")
    try:
        found, unit, why = measure_field(name, q.unit)
    except FieldError as e:
        return Figure(line, label, q.value, q.unit, approximate, None, None, error=str(e))
    return Figure(line, label, q.value, q.unit, approximate, found, unit, why, decimals=_decimals(number))


def value_first(line: int, cell: str) -> Figure | None:
    """'47.83 W decode', '22.0 tok/s', '2.174 J/tok (604 Wh/Mtok)': a value, its unit, then at most one word saying
    what it is ('5 W inside a sentence' is no figure, nor is a count of tokens)."""
    m = _VALUE_FIRST.fullmatch(cell)
    if m is None:
        return None
    rest = m.group("rest").strip()
    cut = _remark_cut(rest)
    words = rest[:cut].split()
    for k in (3, 2, 1):  # 'tokens per second', 'W', 'J/tok'
        found = units.find_unit(" ".join(words[:k])) if len(words) >= k else None
        if found is not None:
            what = " ".join(words[k:])
            if found.kind == "tokens" or (what and not _QUALIFIER.fullmatch(what)):
                return None  # '5 tokens were generated': a count in a sentence
            written = " ".join(words[:k])
            return _measured(line, what, m.group("number"), written, bool(_APPROX.search(rest[cut:])),
                             shown=f"{written} {what}".strip())
    return None


_SENTENCE = re.compile(rf"(?P<name>[A-Za-z][\w .-]{{0,60}}?)\s{{1,5}}(?:completed|finished|done|ran|took)"
                       rf"(?:\s{{1,5}}in)?\s{{1,5}}(?P<number>{NUM})\s{{0,5}}(?P<rest>[^\n]{{1,40}})")


def sentence(line: int, cell: str) -> Figure | None:
    """'Inference completed in 10.71 seconds', 'Generation took 5.2 s': a time in a sentence, named by what it
    timed ('5 tokens generated in 2 s' is no figure of this form)."""
    m = _SENTENCE.fullmatch(cell)
    if m is None or units.find_unit(m.group("rest").strip()) is None:
        return None
    return _measured(line, " ".join(m.group("name").split()), m.group("number"), m.group("rest").strip(), False)


def loose(line: int, cells: list[str]) -> list[Figure]:
    """The figures of a line written as prose ('Inference completed in 10.71 seconds, 160.94 tokens/sec'): a time
    in a sentence and values written with their unit alone, read only where they make a run of their own."""
    figures = [f for c in cells if (f := sentence(line, c) or value_first(line, c)) is not None]
    return figures if recognised(figures) >= MIN_FIGURES else []


def run_line(line: int, text: str) -> tuple[str, list[Figure]] | None:
    """(the run's name, its figures) of 'NAME: value unit [what], value unit [what], ...'; None for any other line."""
    m = _RUN_LINE.fullmatch(text)
    if m is None:
        return None
    cells = [c.strip() for c in SPLIT.split(m.group("rest"))[:MAX_CELLS]]
    if not cells or any(not re.search(r"\d", c) for c in cells) or value_first(line, cells[0]) is None:
        return None
    figures = [f for c in cells if (f := figure(line, c) or value_first(line, c)) is not None]
    return (" ".join(m.group("name").split()), figures) if recognised(figures) >= MIN_FIGURES else None


_KEYED_RUN = re.compile(r"(?P<name>[A-Za-z][\w .#-]{0,39}?):\s{1,40}(?P<rest>[A-Za-z_][\w.]{0,60}=[^\n]{1,900})")


def keyed_run_line(line: int, text: str) -> tuple[str, list[Figure]] | None:
    """(the run's name, its figures) of 'NAME:  key=value, key=value, ...' (mlx_lm.benchmark's 'Trial 1:
    prompt_tps=1672.809, generation_tps=12.404, ...'); None for any other line."""
    m = _KEYED_RUN.fullmatch(text.strip())
    if m is None:
        return None
    figures = [f for c in SPLIT.split(m.group("rest"))[:MAX_CELLS] if (f := figure(line, c.strip())) is not None]
    return (" ".join(m.group("name").split()), figures) if recognised(figures) >= MIN_FIGURES else None


_SPACED_NAME = re.compile(r"(?P<name>[A-Za-z][\w.-]{0,39})\s{2,40}(?P<rest>\S[^\n]{0,900})")
_SPACED_CELL = re.compile(rf"(?P<name>[A-Za-z][\w.-]{{0,30}})\s{{1,20}}(?P<number>{NUM})\s{{0,5}}"
                          r"(?P<unit>\S[^\n]{0,30})")
_TOKENS_IN = re.compile(rf"(?P<n>\d{{1,12}})\s{{0,5}}tok(?:ens)?\s{{1,5}}in\s{{1,20}}(?P<time>{NUM})\s{{0,5}}"
                        r"(?P<unit>s|sec|ms)")


def spaced_run_line(line: int, text: str) -> tuple[str, list[Figure]] | None:
    """(the run's name, its figures) of 'NAME  name value unit | name value unit | N tok in T s' (a run named, then
    cells split by '|', each a name, a value and its unit: 'run1  pp 58.9 tok/s | tg 4.25 tok/s | 700 tok in
    164.51s'); None for any other line. Every cell must be a figure: a line of prose is none."""
    m = _SPACED_NAME.fullmatch(text.strip())
    if m is None or "|" not in m.group("rest"):
        return None
    figures: list[Figure] = []
    for cell in re.split(r"\s*\|\s*", m.group("rest"))[:MAX_CELLS]:
        if (tokens := _TOKENS_IN.fullmatch(cell)) is not None:  # '700 tok in 164.51s': tokens and their time
            counted = _measured(line, "output tokens", tokens.group("n"), "tokens", False)
            timed = _measured(line, "generation time", tokens.group("time"), tokens.group("unit"), False)
            figures += [f for f in (counted, timed) if f is not None]
            continue
        spaced = _SPACED_CELL.fullmatch(cell)
        found = _measured(line, spaced.group("name"), spaced.group("number"), spaced.group("unit").strip(), False) \
            if spaced is not None and units.find_unit(spaced.group("unit").strip()) is not None else None
        if found is None:
            return None
        figures.append(found)
    return (m.group("name"), figures) if recognised(figures) >= MIN_FIGURES else None


def llama_cpp(line: int, raw: str) -> list[Figure] | None:
    """The figures of one of llama.cpp's timing lines ([] for its load, sampling and total times); None for any
    other line."""
    text = raw.strip()
    if (lead := _LLAMA_LOG.match(text)) is not None:
        text = text[lead.end():]
    if text.startswith(_LLAMA_PREFIXES):  # printf's '%.2f' in a decimal-comma locale: '149901,40 ms', '3,06 tokens'
        text = re.sub(r"(?<=\d),(?=\d{2}\b)", ".", text)
    m = _LLAMA_SPEED.match(text)
    if m is not None:
        return [_rate(line, f"{m.group('phase')} speed", m.group("rate"), int(m.group("n")),
                      _LLAMA_PHASES[m.group("phase")])]
    m = _LLAMA_TIMING.match(text)
    if m is None:
        return None
    phase = m.group("phase")
    rate = _LLAMA_RATE.search(m.group("rest")) if phase in _LLAMA_PHASES else None
    return [] if rate is None else [_rate(line, f"{phase} rate", rate.group("rate"), int(rate.group("n")),
                                          _LLAMA_PHASES[phase])]


def _rate(line: int, name: str, number: str, count: int | None, key: str) -> Figure:
    """A tool's printed token rate as the field `key`; none where it is inf, nan, not above 0 or over one token."""
    unit = units.unit("tokens/s")
    value = float(number.replace(",", "")) if re.fullmatch(NUM, number) else math.nan
    if not math.isfinite(value) or value <= 0 or (count is not None and count < 2):
        over = f" over {count}" if count is not None else ""
        return Figure(line, name, 0.0, unit, False, None, None, f"{number} tokens/s{over}: no rate")
    return Figure(line, name, value, unit, False, Field(key, "tokens/s"), unit, decimals=_decimals(number))


def mlx_lm(line: int, text: str, after_generation: bool = False) -> list[Figure] | None:
    """The figures of one of mlx-lm's verbose lines: a Prompt or Generation line's count and rate, and the peak
    memory printed right after the Generation line (`after_generation`); None for any other line."""
    m = _MLX_RATE.fullmatch(text.strip())
    if m is not None:
        count_key, rate_key = _MLX_FIELDS[m.group("phase")]
        figures = []
        if m.group("n") is not None:
            tokens = units.unit("tokens")
            figures.append(Figure(line, f"{m.group('phase')} tokens", float(m.group("n")), tokens, False,
                                  Field(count_key, None), tokens, decimals=0))
        return [*figures, _rate(line, f"{m.group('phase')} tokens-per-sec", m.group("rate"), None, rate_key)]
    m = _MLX_PEAK.fullmatch(text.strip()) if after_generation else None
    if m is None:
        return None
    gb = units.unit("GB")
    return [Figure(line, "Peak memory", float(m.group("gb").replace(",", "")), gb, False,
                   Field("mem_used_device_mb", "MB"), gb, decimals=_decimals(m.group("gb")))]
