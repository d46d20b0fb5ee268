"""What a table row's figures say about each other, for the general reader (`importers.general_table`): the phase
of generation a row or its setup names (its rate the prompt's or the decode's, its time the first token's); a decode
step's latency in a table of generation is the inter-token latency; a stated energy per token is checked against
the row's own power and token rate, and against the energy over all its tokens (the prompt's among them); the count
of all tokens a row gives. Each check says what it left out and why."""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion
from importers.table_fields import PER_GPU, Field, FieldError, measure_field, plain, words_of
from joulebench import units
from joulebench.metrics import ITL, LATENCY

# a decode step's latency statistic -> the inter-token latency's (joulebench.metrics: one definition of each)
_STEP_TO_ITL = {LATENCY.stat(stat).name: ITL.stat(stat).name for stat in ("avg", "p50", "p90", "p95", "p99")}
_STEP_MAX = {LATENCY.max.name} if LATENCY.max is not None else set()
# the figures of text generation: a table holding one is a table of generation (its mode infer)
GENERATION = frozenset({"tokens_per_s", "decode_tokens_per_s", "prompt_tokens_per_s", "j_per_token",
                        "decode_j_per_token", "ttft_avg_ms", "ttft_p50_ms", "tpot_avg_ms", "itl_avg_ms"})


def steps_of_generation(conv: Conversion, header: list[str], columns: dict[int, tuple[Field, units.Unit | None]],
                        trained: bool = False) -> None:
    """A step's latency in a table of generation ('per_step_latency_p50_ms' beside tokens/s) is the time of one decode
    step, which makes one token of each sequence: the inter-token latency (ITL), never a request's or a batch's.
    `trained`: the table's headings say it trained, where a step is a training step."""
    keys = {f.key for f, _ in columns.values()}
    if not keys & GENERATION or trained:
        return
    for i, (field, unit) in list(columns.items()):  # 'Input Size' beside a TTFT: the prompt's tokens, no image's
        if field.key == "image_size" and "input" in words_of(header[i]) and "prompt_tokens_requested" not in keys:
            columns[i] = (Field("prompt_tokens_requested", None, "config"), unit)
            conv.warn(f"{header[i][:80]} read as the prompt's length in tokens: the table measures text generation")
    for i, (field, unit) in list(columns.items()):
        if field.key not in _STEP_TO_ITL and field.key not in _STEP_MAX or "step" not in words_of(header[i]):
            continue
        itl = _STEP_TO_ITL.get(field.key)
        if itl is None or itl in keys:
            del columns[i]
            conv.warn(f"{header[i][:80]} left out: a decode step's time, "
                      + ("which no ITL statistic holds" if itl is None else f"{itl} is already given"))
            continue
        columns[i] = (Field(itl, "ms"), unit)
        conv.warn(f"{header[i][:80]} read as {itl}: a decode step's time, one token of each sequence")


def per_token_checked(conv: Conversion, where: str, metrics: dict[str, Any], derived: float) -> str | None:
    """The energy per token where the row gives its power and token rate: the stated figure when it agrees with
    power / rate (within a fifth), else power / rate, the stated one left out and said (0.42 J/token beside 94.6 W
    at 83.8 tokens/s is net of an idle draw, or of another window: not the energy per token)."""
    stated = metrics.get("j_per_token")
    if stated is not None and abs(stated - derived) <= 0.2 * derived:
        return None
    if stated is not None:
        conv.warn(f"{where}: the stated {stated:.4g} J/token left out: its power / its token rate gives "
                  f"{derived:.4g} J/token (a net figure, idle subtracted, or another window)")
    metrics["j_per_token"] = derived
    return "J/token = the average power / the output tokens per second"


def all_tokens(header: list[str], row: list[str]) -> float | None:
    """The row's count of prompt and output tokens together ('total_tokens'), where a column gives it."""
    for i, name in enumerate(header):
        if plain(name).strip().replace(" ", "_") in ("total_tokens", "tokens_total", "num_tokens_total") and i < len(
                row):
            try:
                return units.value_in(row[i], None)
            except units.UnitError:
                return None
    return None


# a row of a long table that states its phase of generation in the mode's column ('phase': prefill, ttft, decode):
# its token rate is that phase's, and its time the phase's time, never the run's window
_MODES = {"train": "train", "training": "train", "finetune": "train", "fine-tuning": "train", "infer": "infer",
          "inference": "infer", "serving": "infer", "generation": "infer", "idle": "idle"}
_TRAINING = {"train", "training", "finetune", "finetuning", "pretraining", "pretrain", "sft"}
# a table's columns that only a training run has (two of them say it: llm-foundry's GradAccum, MicroBatchSize, MFU;
# a script's summary's optimizer_type and max_steps)
_TRAINING_COLUMNS = {"gradaccum", "grad_accum", "gradient_accumulation", "gradient_accumulation_steps",
                     "microbatchsize", "micro_batch_size", "globalbatchsize", "global_batch_size", "mfu", "hfu",
                     "activation_checkpointing", "learning_rate", "train_loss", "zero_stage", "sharding_strategy",
                     "optimizer", "optimizer_type", "losses", "loss", "grad_norm", "weight_decay", "max_steps",
                     "epochs", "num_epochs", "steps_per_epoch", "steps/ep", "samples_per_epoch", "samples/ep",
                     "local_batch_size", "global_bs", "local_bs", "sec_per_epoch", "s/ep"}


_TRAINING_WORDS = {"loss", "mfu", "hfu", "grad", "gradient", "optimizer", "trainable", "epoch", "epochs", "gbs"}


def trains(header: list[str]) -> bool:
    """Whether a table's columns are a training run's: two of the columns only training has (GradAccum, MFU,
    optimizer_type, max_steps), or two named for a loss, an MFU, gradients, an optimizer or epochs
    ('loss_first_step', 'mfu_pct', 'steps_per_epoch_for_dataset')."""
    names = {plain(h).strip().replace(" ", "_").split(".")[-1] for h in header}
    return len(names & _TRAINING_COLUMNS) >= 2 or sum(bool(words_of(h) & _TRAINING_WORDS) for h in names) >= 2


def states_a_mode(value: str) -> bool:
    """Whether a cell names a mode (training, inference) or a phase of generation, as a mode column's cells do."""
    word = plain(value).strip()
    return word in _MODES or word in PHASES


def says_training(text: str | None) -> bool:
    """Whether a setup's name or the headings above its table say it trained ('Pretraining', 'Full Fine-Tune');
    post-training quantization is no training."""
    words = words_of(re.sub(r"(?i)post[-\s]?training", "", text or ""))
    return bool(words & _TRAINING) or {"fine", "tune"} <= words or {"fine", "tuning"} <= words


def row_mode(said: str | None, tag: str | None, header: list[str], figures: list[str],
             metrics: dict[str, Any]) -> str | None:
    """A row's mode: its mode column's; else its setup's name ('infer' beside 'train'); else training where its
    name, every figure's ('train_runtime') or two of the table's columns (GradAccum, MFU) say so; else inference
    where it measured text generation; None where nothing says."""
    mode = _MODES.get(plain(said or "").strip())
    tagged = words_of(re.sub(r"(?i)post[-\s]?training", "", tag or ""))  # post-training quantization is no training
    if mode is None and tagged & {"infer", "inference"} and not says_training(tag):
        mode = "infer"  # a setup named 'infer' beside one named 'train' (split_setups)
    if mode is None and (says_training(tag) or {f.lower()[:6] == "train_" for f in figures} == {True}
                         or trains(header)):
        mode = "train"  # the row's own name says it ('training_benchmark'), or its figures' ('train_runtime')
    if mode is None and GENERATION & set(metrics):
        mode = "infer"  # a token rate or a time to first token is text generation
    return mode


PHASES = {"prefill": "prefill", "prompt": "prefill", "pp": "prefill", "ttft": "ttft", "first_token": "ttft",
          "decode": "decode", "tg": "decode", "generation_phase": "decode"}
# a setup's own name for its phase, with its token count ('Prompt 512', 'tg128', 'gen 64')
_SETUP_PHASES = {w: p for w, p in PHASES.items() if p in ("prefill", "decode") and "_" not in w} | {
    "generation": "decode", "gen": "decode"}
_PHASE_SETUP = re.compile(rf"(?:^|[\s,])(?P<phase>{'|'.join(_SETUP_PHASES)})[\s_-]*\d+", re.IGNORECASE)


_NOT_GENERATION = re.compile(r"(?i)\b(?:train|training|fine-?tun\w*|pretrain\w*)\b|\b(?:tp|dp|ep|cp|vpp)[\s=_-]?\d")


# a request's shape: its prompt's length and its output's ('prompt-8192-output-300', 'in512_out128'), no phase
_SHAPE = re.compile(r"(?i)(?:prompt|input|in|isl)[\s_-]*\d+[\s_/,-]*(?:output|out|completion|osl)[\s_-]*\d+")


def tag_phases(tag: str | None) -> set[str]:
    """The phases of generation a row's setup names with its token count ('Prompt 512', 'Decode 128', 'pp512',
    'Prompt 512 + Decode 128': both). None in a training setup, nor beside a parallelism's ('tp2, ep8, pp32': pp is
    the pipeline's degree there)."""
    if _NOT_GENERATION.search(tag or "") or _SHAPE.search(tag or ""):
        return set()
    for part in (p.strip() for p in (tag or "").split(",")):  # a part that is a phase's name ('tg128') names the
        # row's own, before a heading that names several ('RTX 3090: pp520 tg128')
        if (m := _PHASE_SETUP.match(part)) is not None and m.end() == len(part):
            return {_SETUP_PHASES[m.group("phase").lower()]}
    return {_SETUP_PHASES[m.group("phase").lower()] for term in (tag or "").split("+")
            for m in _PHASE_SETUP.finditer(term)}


def of_phase(metrics: dict[str, Any], phase: str) -> None:
    """A phase row's figures as that phase's: a token rate is the prompt's (prefill) or the decode rate, a time is
    the time to first token on a ttft row and no window on the others (a prefill or decode time is not stored); a
    prefill row's decode rate is left out."""
    rate = metrics.pop("tokens_per_s", None)
    seconds = metrics.pop("duration_s", None)
    if phase == "prefill":  # a prompt-only row's decode rate is none of its own (a 1000000 placeholder, say)
        metrics.pop("decode_tokens_per_s", None)
    if rate is not None and phase == "prefill":
        metrics.setdefault("prompt_tokens_per_s", rate)
    elif rate is not None and phase == "decode":
        metrics.setdefault("decode_tokens_per_s", rate)
    if seconds is not None and phase == "ttft":
        metrics.setdefault("ttft_avg_ms", seconds * 1000.0)




_COMPONENTS = {"cpu", "gpu", "ram", "dram", "mem", "memory", "soc", "ane", "npu"}
_WHOLE_WORDS = {"total", "combined", "sum", "all", "overall", "system", "whole"}
_PART_ALIASES = {"package": "cpu", "pkg": "cpu"}  # RAPL's package domain: the CPU's whole
_SUBPARTS = {"pp0", "pp1", "core", "cores", "uncore"}  # RAPL's domains inside the package, never added to it
_COUNTER_ENDS = {"start", "end", "begin", "initial", "final", "before", "after"}


def _part(header: str) -> set[str]:
    """The component a column is the energy or power of: 'GPU0_ENERGY (mJ)' -> gpu, 'PACKAGE_ENERGY' -> cpu."""
    words = {re.sub(r"\d{1,2}$", "", w) for w in words_of(header)}
    return (words & _COMPONENTS) | {_PART_ALIASES[w] for w in words if w in _PART_ALIASES}


def _other_units(header: list[str], columns: dict[int, tuple[Field, units.Unit | None]], twins: list[tuple[int, int]],
                 key: str, kind: str) -> dict[int, units.Unit]:
    """Columns left out as giving `key` in another unit ('GPU0_ENERGY (mJ)' beside 'PACKAGE_ENERGY (J)')."""
    taken = set(columns) | {b for _, b in twins}
    found: dict[int, units.Unit] = {}
    for i, name in enumerate(header):
        if i in taken:
            continue
        try:
            field, unit, _ = measure_field(name)
        except FieldError:
            continue
        if field is not None and field.key == key and unit is not None and unit.kind == kind:
            found[i] = unit
    return found


def with_component_sums(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]],
                        columns: dict[int, tuple[Field, units.Unit | None]], twins: list[tuple[int, int]]
                        ) -> tuple[list[str], list[tuple[int, list[str]]], list[tuple[int, int]]]:
    """A run's energy (or power) given only as its components ('cpu_total_energy_j', 'gpu_total_energy_j'; no
    total): their sum, a column of its own, said (CodeCarbon's convention: the energy is CPU + GPU + RAM; RAPL's
    package + DRAM, with a GPU's). A whole given beside its parts ('energy_kwh', 'energy_cpu_kwh') is the run's.
    Counter readings at the start or end of the run ('start_cpu_energy_j') and domains inside the package ('PP0')
    are no part and are left out first. Columns of one field that are not one component each stay as they were
    (setups, or left out)."""
    for key in ("energy_j", "avg_power_w"):
        first = next((i for i, (f, _) in columns.items() if f.key == key), None)
        if first is None or columns[first][1] is None:
            continue
        base = columns[first][1]
        assert base is not None
        group = [first, *(o for f0, o in twins if f0 == first)]
        other = {i: u for i, u in _other_units(header, columns, twins, key, base.kind).items() if _part(header[i])}
        unit_of = {**{i: base for i in group}, **other}
        group += list(other)
        counters = [i for i in group if words_of(header[i]) & _COUNTER_ENDS]
        inner = [i for i in group if words_of(header[i]) & _SUBPARTS]
        group = [i for i in group if i not in counters and i not in inner]
        parts = {i: _part(header[i]) for i in group}
        totals = [i for i in group if not parts[i]]
        named = [i for i in group if parts[i]]
        distinct = all(len(parts[i]) == 1 for i in named) and len({next(iter(parts[i])) for i in named}) == len(named)
        whole_named = len(totals) == 1 and all(words_of(header[totals[0]]) - _WHOLE_WORDS <= words_of(header[i])
                                               for i in named)  # 'energy_kwh' of 'energy_cpu_kwh'; 'ane_power_w' no
        if whole_named and named and distinct and totals[0] not in other:
            # 'energy_infer_kwh' beside 'energy_infer_cpu_kwh' and 'energy_infer_gpu_kwh': the total is given
            whole = totals[0]
            columns[whole] = columns.pop(first)
            twins = [(a, b) for a, b in twins if a != first]
            parts_named = ", ".join(header[i][:40] for i in named)
            conv.warn(f"{header[whole][:40]} read as {key} (the whole); its parts {parts_named} left out")
            continue
        if len(group) < 2 or totals or not distinct:
            continue
        header = [*header, f"{key} ({' + '.join(header[i][:30] for i in group)})"]
        summed = []
        wrapped: list[int] = []
        for n, row in rows:
            values = [units.value_in(row[i], None) if i < len(row) else None for i in group]
            total = (sum(v * unit_of[i].factor for v, i in zip(values, group, strict=True) if v is not None)
                     if all(v is not None for v in values) else None)
            if any(v is not None and v < 0 for v in values):  # a part's counter wrapped: no sum is the run's
                wrapped.append(n)
                total = None
            summed.append((n, [*row, "" if total is None else repr(total)]))
        if wrapped:
            conv.warn(f"line {', '.join(map(str, wrapped[:5]))}{' ...' if len(wrapped) > 5 else ''}: a part of "
                      f"{key} is negative (an energy counter that wrapped or was reset): no {key} for that run")
        rows = summed
        columns[len(header) - 1] = (columns[first][0], units.find_unit("J" if key == "energy_j" else "W"))
        for i in group + counters + inner:
            columns.pop(i, None)
        twins = [(a, b) for a, b in twins if a not in group and b not in group + counters + inner]
        left = [(counters, "counter readings at the start or end, no energy"),
                (inner, "domains inside the CPU package, already in it")]
        conv.warn(f"{key} read as the sum of its parts {', '.join(header[i][:40] for i in group)}"
                  + "".join(f"; {', '.join(header[i][:40] for i in cols)} left out ({why})" for cols, why in left
                            if cols))
    return header, rows, twins


# a row per layer of one network's pass: 'layer', 'module'; an operator's or a node's name ('op', '[node type]') only
# beside each row's share of the pass ('pct', '[%]'): a table of single-operator benchmarks names its ops too
_LAYER_COLUMNS = frozenset({"layer", "layers", "layer_name", "layer name", "module", "module_name"})
_OP_COLUMNS = frozenset({"op", "op_name", "op name", "operator", "operator_name", "op_type", "node", "node_name",
                         "node type", "node_type", "kernel", "kernel_name"})
_SHARE = frozenset({"pct", "%", "percent", "percentage", "share", "cdf%", "time_pct", "pct_time"})
_PROFILE_KEYS = ({"name", "averagems"}, {"name", "timems"},  # trtexec --exportProfile's layer records
                 {"name", "selfcpu", "cputotal"}, {"name", "#ofcalls"})  # torch.profiler's key_averages().table()


def layer_profile(header: list[str], rows: list[tuple[int, list[str]]]) -> str | None:
    """The column naming a layer or operator a row each (a per-layer profile: every row one part of one pass, never
    a run of its own); None for a table of runs. Five distinct names at least: a table of three stages is a table."""
    plain_names = [plain(h).strip(" []") for h in header]
    keys = {h.replace(" ", "").replace("_", "") for h in plain_names}
    shares = bool(set(plain_names) & _SHARE)
    for i, name in enumerate(plain_names):
        profile = name == "name" and any(k <= keys for k in _PROFILE_KEYS)
        if name in _LAYER_COLUMNS or profile or (name in _OP_COLUMNS and shares):
            named = {row[i].strip() for _, row in rows[:2000] if i < len(row) and row[i].strip()}
            if len(named) >= 5:
                return header[i]
    return None


_OF_TOTAL = re.compile(r"(?:pct|percent|percentage|share|fraction|frac|ratio)[ _]?(?:of[ _]?)?(?:the[ _]?)?total|"
                       r"%[ _]?(?:of[ _]?)?total|(?:pct|percent|share)[ _]of[ _](?:time|step|pass)")
_WHOLE_ROW = {"total", "overall", "all", "sum", "whole", "end_to_end", "e2e"}


def whole_of_parts(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
                   ) -> list[tuple[int, list[str]]]:
    """A breakdown of one run into parts (`embedding`, `qkv_proj`, `mlp`, ... each with its `pct_of_total`) holding
    the whole as a row of its own (`total`): that row alone, the parts said and left out; any other table as it is."""
    if not any(_OF_TOTAL.fullmatch(plain(h).strip().replace(" ", "_")) for h in header):
        return rows
    for i in range(len(header)):
        names = [plain(r[i]).strip().replace(" ", "_") if i < len(r) else "" for _, r in rows]
        whole = [n for n, name in zip(rows, names, strict=True) if name in _WHOLE_ROW]
        if len(whole) == 1 and len(set(names)) == len(names) >= 3:
            conv.warn(f"the rows are parts of one run, each with its share of the total ({', '.join(names[:6])[:120]}"
                      f"{' ...' if len(names) > 6 else ''}): the {whole[0][1][i][:20]!r} row read as the run, the "
                      "parts left out")
            return whole
    return rows


# the columns of a table of audio clips (speech: an RTF is the time over the audio's length)
_AUDIO_COLUMNS = {"sample_rate", "sr", "sampling_rate", "wav_file", "wav", "audio_file", "audio_path", "audio",
                  "num_samples", "samples", "clip", "rtf", "rtfx", "real_time_factor", "wer"}
_BARE_DURATION = re.compile(r"(?i)(?:duration|length|len)(?:[_ ]?(?:s|sec|secs|seconds|ms))?")


_FRAME_COUNT = {"num_frames", "frames", "num_video_frames", "video_frames", "frame_count"}
_BARE_FPS = re.compile(r"(?i)(?:video[_ ]?)?(?:fps|frame_?rate)")
_GENERATED_VIDEO = {"num_inference_steps", "inference_steps", "guidance_scale", "cfg_scale", "width", "height"}


def media_lengths(conv: Conversion, header: list[str]) -> list[str]:
    """A table of audio clips (a `sample_rate`, `wav_file`, `clip`, `rtf` or `wer` column) whose bare `duration_sec`
    is each clip's length, never the time the model took (`transcription_time_ms` beside it): that column renamed
    'audio_...' so that it is read as the input's length; a bare `fps` beside a frame count (`num_frames`) and a
    generation's settings (`num_inference_steps`, `width`) is the generated video's frame rate, renamed so that it
    is never read as the run's throughput. Any other header as it is."""
    low = {plain(h).strip().replace(" ", "_") for h in header}
    if low & _FRAME_COUNT and low & _GENERATED_VIDEO and any(_BARE_FPS.fullmatch(h.strip()) for h in header):
        # a video generated: '189 frames @ 24 fps, 1280 x 720, 35 steps' (a clip timed frame by frame has no steps)
        header = [f"output video {h.strip()}" if _BARE_FPS.fullmatch(h.strip()) else h for h in header]
        conv.warn("fps beside a frame count: the frame rate of the video generated (a setting), not the run's "
                  "throughput")
    if not low & _AUDIO_COLUMNS:
        return header
    out = [f"audio_{h.strip()}" if _BARE_DURATION.fullmatch(h.strip()) else h for h in header]
    renamed = [h for h, o in zip(header, out, strict=True) if h != o]
    if renamed:
        conv.warn(f"{', '.join(renamed)[:80]}: each clip's length (the table describes audio clips), not the time the "
                  "run took")
    return out



def shared_durations(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]],
                     columns: dict[int, tuple[Field, units.Unit | None]]) -> dict[int, tuple[Field, units.Unit | None]]:
    """The columns read, less a duration that is a total shared by rows of different setups: the same wall time
    written on each row one invocation produced (`wall_s` of a whole engine call, over every length it swept), in
    groups of consecutive rows whose other figures differ; or a clock, from 0 and rising down the rows (`elapsed_s`:
    when each row was taken). A duration the same on every row (a fixed test length) is each row's, and stays."""
    at = next((i for i, (f, _) in columns.items() if f.key == "duration_s"), None)
    if at is None or len(rows) < 4:
        return columns
    values = [row[at].strip() if at < len(row) else "" for _, row in rows]
    others = [i for i, (f, _) in columns.items() if f.section == "metrics" and i != at]
    grouped = 0
    for k in range(1, len(rows)):
        same = values[k] and values[k] == values[k - 1]
        if same and any(rows[k][1][i:i + 1] != rows[k - 1][1][i:i + 1] for i in others):
            grouped += 1
    numbers = [float(v) for v in values if re.fullmatch(r"\d{1,12}(?:\.\d{1,9})?", v)]
    if len(numbers) == len(values) and _zero(values[0]) and numbers[-1] > 0 and all(
            b >= a for a, b in zip(numbers, numbers[1:])):  # 'elapsed_s' 0, 5, 8, ...: a clock since the start
        conv.warn(f"{header[at][:40]} left out: from 0 and rising row after row, the time since the start at which "
                  "each row was taken, not each row's duration")
        return {i: fu for i, fu in columns.items() if i != at}
    zeros = sum(_zero(v) for v in values)  # 'wall_s' of the group on its first row, 0 on the rows after it
    if 3 * zeros >= len(rows) and zeros < len(rows):
        conv.warn(f"{header[at][:40]} left out: 0 on {zeros} of {len(rows)} rows that measured other figures, a "
                  "total written on some rows only, not each row's duration")
        return {i: fu for i, fu in columns.items() if i != at}
    if len(set(values) - {""}) < 2 or 3 * grouped < len(rows):
        return columns
    conv.warn(f"{header[at][:40]} left out: the same value on consecutive rows whose other figures differ ({grouped} "
              f"of {len(rows)} rows), a total of the invocation that produced them, not each row's duration")
    return {i: fu for i, fu in columns.items() if i != at}


def _zero(value: str) -> bool:
    return bool(re.fullmatch(r"0+(?:\.0*)?", value))


def per_gpu_scaled(conv: Conversion, header: list[str], columns: dict[int, tuple[Field, units.Unit | None]],
                   metrics: dict[str, Any], gpu_count: float | None) -> None:
    """A rate of each GPU ('Tokens/GPU/Second', 'img/s per GPU') times the row's GPU count is the run's rate (all its
    GPUs together, as joulebench.metrics defines it); a row that gives no GPU count keeps no rate from it."""
    for i, (field, _) in columns.items():
        if not (field.unit or "").endswith(PER_GPU) or field.key not in metrics:
            continue
        each = metrics.pop(field.key)
        if not gpu_count:
            conv.warn(f"{header[i][:80]} is each GPU's rate and a row gives no GPU count: its rate is not stored "
                      "(label the GPU count, or add a column of it)")
            continue
        metrics[field.key] = each * gpu_count
        metrics["throughput_derivation"] = f"{header[i][:60]} ({each:g}) x the row's GPU count ({gpu_count:g})"


_PART_WORDS = {"epoch": "one epoch's", "step": "one step's", "iter": "one iteration's", "iteration": "one iteration's",
               "batch": "one batch's"}


def of_a_part(name: str) -> bool:
    """Whether a time's name is of one part of a run (a step's, an iteration's, a batch's, an epoch's), not a total."""
    words = words_of(name)
    return any(w in words for w in _PART_WORDS) and not words & {"total", "sum", "all", "whole", "full"}


def per_part_durations(conv: Conversion, header: list[str], columns: dict[int, tuple[Field, units.Unit | None]]
                       ) -> dict[int, tuple[Field, units.Unit | None]]:
    """The columns read, where each row is a run (its steps not rows of their own), less a duration named for one
    part of the run: a step's, an iteration's or a batch's time (`step_time_ms`) is the run's mean step time, read
    as its latency; an epoch's (`epoch_time_sec`, a W&B summary's last epoch) is no figure of the whole run and is
    left out. A total (`total_step_time`) stays the run's duration."""
    at = next((i for i, (f, _) in columns.items() if f.key == "duration_s"), None)
    if at is None:
        return columns
    words = words_of(header[at])
    part = next((w for w in _PART_WORDS if w in words), None)
    if part is None or not of_a_part(header[at]):
        return columns
    out = {i: fu for i, fu in columns.items() if i != at}
    if part == "epoch":
        conv.warn(f"{header[at][:40]} left out: {_PART_WORDS[part]} time, not the run's duration")
    elif not any(f.key == "latency_avg_ms" for f, _ in columns.values()):
        out[at] = (Field("latency_avg_ms", "ms", "metrics"), columns[at][1])
        conv.warn(f"{header[at][:40]} read as latency_avg_ms: {_PART_WORDS[part]} time (the run's mean step), not the "
                  "run's duration")
    return out

