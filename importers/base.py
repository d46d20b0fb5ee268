"""Shared pieces of the importers: the source, hints, the base class and conversion helpers.

An importer turns a file (or an MLPerf result folder) written by another tool into a
JouleBench result document v1. Everything downstream (validation, ingest, dedupe) is the
one ingest path every result file takes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, ClassVar

from energy import energy_figures
from importers.device_text import device_from_path, device_in_file_name, kind_of_device
from importers.encodings import legacy_text
from joulebench import __version__, units
from joulebench.errors import ResultFileError
from joulebench.ranges import RangeError, check
from joulebench.resultfile import MAX_DOCUMENT_BYTES, MAX_RUNS_PER_FILE, decompress, new_document
from joulebench.vocab import BOUNDARIES, DEVICE_KINDS, MODES, PRECISIONS

MAX_FILE_BYTES = MAX_DOCUMENT_BYTES  # one file of another tool's format, after decompression
# A table is read as Python strings (about 60 bytes a cell): real tables have tens of columns and
# power logs up to a few hundred thousand rows; these caps keep one table under about 300 MB.
MAX_CSV_COLUMNS = 1_000
HEAD_BYTES = 16_384  # what sniffing reads of a file
FIRST_LINE_MAX_BYTES = 4 * 1024 * 1024  # the longest first line a sniffer reads whole (a JSON Lines record)
MAX_CSV_CELLS = 5_000_000
KINDS = DEVICE_KINDS

# Units: every conversion is joulebench.units'; the constants below are its factors, for the readers' arithmetic
J_PER_KWH = units.UNITS["kWh"].factor
MS_PER_NS = units.UNITS["ns"].factor / units.UNITS["ms"].factor
MS_PER_S = 1 / units.UNITS["ms"].factor
W_PER_MW = units.UNITS["mW"].factor
MB_PER_MIB = units.UNITS["MiB"].factor
MB_PER_BYTE = units.UNITS["B"].factor


# Units a user may state for a column a file leaves without one (`--unit COLUMN=UNIT`): quantity and
# the factor to the stored unit (J, W, s).
COLUMN_UNITS: dict[str, tuple[str, float]] = {
    symbol: (units.UNITS[symbol].kind, units.UNITS[symbol].factor)
    for symbol in ("J", "kJ", "mWh", "Wh", "kWh", "mW", "W", "kW", "ms", "s", "min", "h")
}


def column_unit(text: str) -> tuple[str, str]:
    """'PWR_IN_AVG=mW' -> ('PWR_IN_AVG', 'mW'); ValueError naming the fix when it is not one."""
    column, sep, unit = text.rpartition("=")
    canonical = {u.lower(): u for u in COLUMN_UNITS}.get(unit.strip().lower())
    if not sep or not column.strip() or len(column.strip()) > 200:
        raise ValueError(f"{text[:60]!r}: write COLUMN=UNIT, e.g. PWR_IN_AVG=mW")
    if canonical is None:
        raise ValueError(f"{text[:60]!r}: unit {unit.strip()[:20]!r} is not one of {', '.join(COLUMN_UNITS)}")
    return column.strip(), canonical


@dataclass(frozen=True)
class Hints:
    """What a file cannot say, given by the user (CLI flags, upload form). Never guessed."""

    device: str | None = None
    device_kind: str | None = None  # gpu | jetson | cpu; inferred from the device name when absent
    boundary: str | None = None
    precision: str | None = None
    mode: str | None = None
    workload: str | None = None
    batch_size: int | None = None
    units: tuple[tuple[str, str], ...] = ()  # (column, unit) for columns a table leaves without a unit

    def __post_init__(self) -> None:
        problems = []
        for column, unit in self.units:
            try:
                column_unit(f"{column}={unit}")
            except ValueError as e:
                problems.append(f"--unit {e}")
        if self.boundary is not None and self.boundary not in BOUNDARIES:
            problems.append(f"--boundary: {self.boundary!r} is not one of {', '.join(BOUNDARIES)}")
        if self.precision is not None and self.precision not in PRECISIONS:
            problems.append(f"--precision: {self.precision!r} is not one of {', '.join(PRECISIONS)}")
        if self.mode is not None and self.mode not in MODES:
            problems.append(f"--mode: {self.mode!r} is not one of {', '.join(MODES)}")
        if self.device_kind is not None and self.device_kind not in KINDS:
            problems.append(f"--device-kind: {self.device_kind!r} is not one of {', '.join(KINDS)}")
        if self.batch_size is not None:
            try:  # the schema's range, as every edit path applies it (joulebench.ranges)
                if isinstance(self.batch_size, float) or check("config", "batch_size", self.batch_size) is None:
                    raise RangeError(f"batch size: {self.batch_size!r} is not a whole number")
            except RangeError as e:
                problems.append(f"--{e.format_message().replace('batch size', 'batch-size', 1)}")
        if self.device is not None and not (0 < len(self.device.strip()) <= 200):
            problems.append("--device: give a device name of 1 to 200 characters")
        if problems:
            raise ResultFileError("hints", problems)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v != ()}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Hints:
        data = data or {}
        fields = {k: data.get(k) for k in cls.__dataclass_fields__ if k != "units"}
        units = tuple((str(c), str(u)) for c, u in data.get("units") or ())
        return cls(**fields, units=units)

    def unit_of(self, column: str) -> str | None:
        """The unit the user stated for a column (names compared without case and outer spaces)."""
        key = column.strip().lower()
        return next((u for c, u in self.units if c.strip().lower() == key), None)

    def __bool__(self) -> bool:
        return bool(self.to_json())


class LazyFiles(Mapping[str, bytes]):
    """A folder's or an archive's files, read when asked for and not kept: importing a large
    archive holds one member at a time in memory, not all of them."""

    def __init__(self, loaders: dict[str, Callable[[], bytes]]) -> None:
        self._loaders = loaders

    def __getitem__(self, rel: str) -> bytes:
        return self._loaders[rel]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)

    def subset(self, names: dict[str, str]) -> LazyFiles:
        """{new name: existing name} as a view (nothing read)."""
        return LazyFiles({new: self._loaders[old] for new, old in names.items()})


@dataclass
class Source:
    """Bytes to import: one file, or a folder's files keyed by relative path ('/'-separated).

    `dirs` are the names of the folders the file (or folder) sat in, outermost first; they are
    used only for path hints that are reliable (a folder named after a device or precision).
    """

    name: str
    files: Mapping[str, bytes]
    dirs: tuple[str, ...] = ()
    is_folder: bool = False

    @classmethod
    def single(cls, data: bytes, name: str, dirs: tuple[str, ...] = ()) -> Source:
        return cls(name=name, files={name.rsplit("/", 1)[-1]: data}, dirs=dirs)

    def part(self, data: bytes) -> Source:
        """What this file holds (a wrapper's records, a log's JSON document, a table under comments) as a source of
        its own, under the file's name and with the file's content hash: its runs are the file's."""
        inner = Source.single(data, self.name, self.dirs)
        inner.__dict__["content_sha256"] = self.content_sha256  # a cached property: the file's own hash
        return inner

    @cached_property
    def data(self) -> bytes:
        """The (decompressed) bytes of a single-file source, as UTF-8 where the file was UTF-16 or Windows-1252."""
        return self._decoded[0]

    @cached_property
    def encoding_note(self) -> str | None:
        """What the file was written in where it was not UTF-8 and was read as text all the same."""
        return self._decoded[1]

    @cached_property
    def _decoded(self) -> tuple[bytes, str | None]:
        if self.is_folder:
            return b"", None
        raw = next(iter(self.files.values()))
        data = decompress(raw, self.name, MAX_FILE_BYTES)
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with its byte-order mark (PowerShell's '>' writes it)
            try:
                return data.decode("utf-16").encode("utf-8"), None
            except UnicodeDecodeError:
                return data, None
        if (legacy := legacy_text(data)) is not None:
            return legacy.encode("utf-8"), "not UTF-8: read as Windows-1252 text (the encoding Windows programs write)"
        return data, None

    @cached_property
    def text(self) -> str | None:
        """The file as text, or None when it is not UTF-8 (or latin-1 decodable) text."""
        data = self.data
        if b"\x00" in data:
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None

    @cached_property
    def head(self) -> str:
        """The first 16 KB as text (for sniffing without decoding a large file); '' for binary data."""
        data = self.data[:HEAD_BYTES]
        if b"\x00" in data[:4096]:
            return ""
        text = data.decode("utf-8-sig", errors="replace")
        return "" if text.count("\ufffd") > 8 else text

    @cached_property
    def first_line(self) -> str:
        """The first line whole, even where it runs past `head` (a JSON Lines record with a server's settings can
        be 50 KB), up to FIRST_LINE_MAX_BYTES; '' for binary data."""
        if "\n" in self.head or len(self.data) <= HEAD_BYTES or not self.head:
            return self.head.split("\n", 1)[0]
        line = self.data[:FIRST_LINE_MAX_BYTES].split(b"\n", 1)[0]
        return line.decode("utf-8-sig", errors="replace")

    @cached_property
    def json(self) -> Any:
        """The parsed JSON document, or None when the file is not JSON."""
        text = self.text
        if text is None or text.lstrip()[:1] not in ("{", "["):
            return None
        try:
            return json.loads(text, parse_constant=lambda c: None)
        except (ValueError, RecursionError):
            return None

    @cached_property
    def content_sha256(self) -> str:
        if not self.is_folder:
            return hashlib.sha256(next(iter(self.files.values()))).hexdigest()
        return folder_sha256(self.files)

    @property
    def base_name(self) -> str:
        return self.name.rstrip("/").rsplit("/", 1)[-1]

    def release(self) -> None:
        """Drop the bytes read so far (they are read again if needed)."""
        for cached in ("data", "_decoded", "encoding_note", "text", "head", "json"):
            self.__dict__.pop(cached, None)


def folder_sha256(files: Mapping[str, bytes]) -> str:
    """A stable hash over sorted (relative path, bytes) pairs."""
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        h.update(rel.encode() + b"\x00" + str(len(data)).encode() + b"\x00")
        h.update(data)
    return h.hexdigest()


class _NotStated(str):
    """The name of a device the file does not state: a placeholder (so importers can handle the
    device dict as usual) that `load_source` replaces with null. No file value is of this type."""


DEVICE_NOT_STATED = _NotStated("not stated")


_ONE_LISTED = re.compile(r"""\[\s*['"]([^'"\[\],]{1,200})['"]\s*\]""")
_COUNT_ONLY = re.compile(r"(?i)\d{1,5}\s*(?:x|device\(s\)|devices?|gpus?|gpu\(s\)|cards?)")
_COUNT_AFTER = re.compile(r"(?i)\s{1,4}\d{1,5}\s*(?:device\(s\)|devices?|gpu\(s\))$")  # eco2ai: 'NAME 1 device(s)'


@dataclass
class Conversion:
    """State of one conversion: the source, the hints, the warnings collected on the way."""

    source: Source
    hints: Hints
    importer: Importer
    warnings: list[str] = field(default_factory=list)
    tool_version: str | None = None
    # label -> value, for labels read from the name of a folder the file sat in
    from_folder: dict[str, str] = field(default_factory=dict)
    # label -> where the importer looked for it, for labels the file does not state
    unstated: dict[str, str] = field(default_factory=dict)

    def fail(self, where: str, reason: str) -> ResultFileError:
        """An error naming the file, the line or field, and the reason (raise it)."""
        return ResultFileError(self.source.name, [f"{where}: {reason}"])

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def run_id(self, index: int | str) -> str:
        """Stable: the same bytes give the same run ids, so a re-import adds nothing."""
        return f"{self.importer.NAME}:{self.source.content_sha256[:20]}:{index}"

    def as_sweep(self, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The runs of a file that states one sweep (a tool's several loads of one invocation), linked by one
        id (stable, like run_id): a sweep's points stay one curve, apart from another sweep of the same
        device. A single run is no sweep."""
        if len(runs) > 1:
            for run in runs:
                run.setdefault("config", {})["sweep_id"] = f"{self.importer.NAME}:{self.source.content_sha256[:20]}"
        return runs

    # --- hints ---------------------------------------------------------------------------
    # A label the file does not state comes from a reliable folder name (noted in `from_folder`)
    # or from the user's hints; failing both it is left "not stated" and the import goes on.
    # `load_source` warns once, naming every label left unstated.
    def device(
        self, from_file: str | None, kind: str | None = None, where: str = "device", memory_gb: float | None = None,
        by_file_name: bool = True,
    ) -> dict[str, Any]:
        """The run's device: the file's own name, else --device, else a reliable path component or the file's name
        (`device_in_file_name`; not where the file says the run had none of it: `by_file_name` False).

        A file that does not say which device ran it, in a path that does not either, and without
        --device, gives a placeholder that `load_source` turns into `null` (not stated): the
        importer never guesses.
        """
        name = clean_str(from_file)
        if name and (listed := _ONE_LISTED.fullmatch(name)) is not None:  # "['Apple M4 Pro']": a list of one name
            name = listed.group(1).strip() or None
        if name and not _COUNT_ONLY.fullmatch(name) and _COUNT_AFTER.search(name):
            name = _COUNT_AFTER.sub("", name).strip() or None  # 'NVIDIA RTX A6000 1 device(s)': the count apart
        if name and _COUNT_ONLY.fullmatch(name):  # eco2ai's ' 2 device(s)': a count of devices, naming none
            self.warn(f"{name[:30]!r} counts devices and names none: the device is not stated")
            name = None
        if not name and self.hints.device:
            name = self.hints.device.strip()
        if not name:
            name = device_from_path(self.source.dirs) or None
            if name:
                self.warn(f"device {name!r} taken from the folder name")
                self.from_folder.setdefault("device", name[:200])
        if not name and by_file_name:
            name = device_in_file_name(self.source.name) or None
            if name:
                self.warn(f"device {name!r} taken from the file name {self.source.name[:80]!r} (the file states none)")
                self.from_folder.setdefault("device", name[:200])
        if not name:
            self.unstated.setdefault("device", where)
            return {"name": DEVICE_NOT_STATED, "kind": kind or "gpu"}
        kind = self.hints.device_kind or kind or kind_of_device(name)
        device: dict[str, Any] = {"name": name[:200], "kind": kind}
        if memory_gb:
            device["memory_gb"] = memory_gb
        return device

    def device_from_name(self, named: str | None, kind: str, where: str) -> dict[str, Any]:
        """The device a file's name gives (Zeus' `<GPU>+<model>+gpu0.csv`, ML.ENERGY's
        `<GPU>_<task>_benchmark.csv`): a hint like a folder's name, taken only when it is a device
        name, recorded as supplied (origin folder_name) so `joulebench label --device` can correct
        it, and never over the user's --device. Not stated otherwise, with `where` as the reason."""
        if self.hints.device or not named or not device_from_path((named,)):
            return self.device(None, kind, where=where)
        self.warn(f"device {named!r} taken from the file name")
        self.from_folder.setdefault("device", named[:200])
        return {"name": named[:200], "kind": self.hints.device_kind or kind or kind_of_device(named)}

    def generation_config(self, model: str | None, **fields: Any) -> dict[str, Any]:
        """An LLM inference run's config: the workload named by the user or the model, text generation, the
        precision and batch size the user gave (None: not stated), then `fields` (the file's own, which win)."""
        config: dict[str, Any] = {"workload": self.hints.workload or (model or "unknown")[:200], "model": model,
                                  "task": "text-generation", "mode": "infer"}
        if "precision" not in fields:
            config["precision"] = self.precision(None)
        return {**config, "batch_size": self.hints.batch_size, **fields}

    def endpoint_config(self, **fields: Any) -> dict[str, Any]:
        """A load test's config: requests sent to an endpoint whose model and task the file does not name (the
        user's --workload, else unknown), then `fields` (the file's own)."""
        return {"workload": self.hints.workload or "unknown", "mode": "infer", "precision": self.precision(None),
                "batch_size": self.hints.batch_size, **fields}

    def precision(self, from_file: str | None) -> str | None:
        if from_file:
            return from_file
        from_path = precision_from_path(self.source.dirs)
        if from_path:
            self.from_folder.setdefault("precision", from_path)
            return from_path
        return self.hints.precision

    def boundary(self, default: str | None) -> str | None:
        return self.hints.boundary or default

    def mode(self, from_file: str | None, where: str = "mode") -> str | None:
        """train | infer | idle from the file, else --mode, else None (not stated)."""
        if from_file:
            return from_file
        if self.hints.mode:
            return self.hints.mode
        self.unstated.setdefault("mode", where)
        return None

    def document(self, runs: list[dict[str, Any]], *, created_at: str | None = None) -> dict[str, Any]:
        if not runs:
            raise self.fail("(whole file)", "no runs found in it")
        doc = new_document(
            runs, producer_version=__version__, created_at=created_at or datetime.now(UTC).isoformat(timespec="seconds")
        )
        doc["producer"] = {"tool": self.importer.TOOL, "version": self.tool_version}
        return doc


class Importer:
    """One format family. Subclasses set NAME, TOOL and DESCRIPTION and implement both methods."""

    NAME: ClassVar[str] = ""
    TOOL: ClassVar[str] = ""
    DESCRIPTION: ClassVar[str] = ""
    FOLDER: ClassVar[bool] = False  # reads a folder of files rather than one file

    def sniff(self, source: Source) -> bool:
        """True when the content (not the file name alone) is of this format."""
        raise NotImplementedError

    def convert(self, conv: Conversion) -> dict[str, Any]:
        """Return a JouleBench result document v1; raise ResultFileError on bad data."""
        raise NotImplementedError


# --- value helpers ------------------------------------------------------------------------

def clean_str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def num(value: Any, where: str | None = None, conv: Conversion | None = None, *, unit: str | None = None
        ) -> float | None:
    """A finite number, or None for empty cells; a malformed number raises when `conv` is given.

    A cell that carries a unit ('250 mW', '0.5 kWh', '35 ms') is converted to `unit`, the unit the caller
    stores the figure in (joulebench.units); a unit of another kind (W where J is expected), or a unit where
    the caller expects a bare number (`unit` None), is refused: a ResultFileError naming `where` when `conv`
    is given, else a UnitError (a ValueError). A unit is never dropped."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    text = str(value).strip()
    if text == "" or text.lower() in _EMPTY:
        return None
    try:
        out = units.value_in(text, unit)
    except units.UnitError as e:
        if conv is not None and where is not None:
            raise conv.fail(where, str(e)) from e
        if isinstance(e, units.UnknownUnit):
            return None  # not a number, as a malformed cell without `conv`
        raise
    if out is None:
        if conv is not None and where is not None:
            raise conv.fail(where, f"{str(value)[:60]!r} is not a number")
        return None
    return out if math.isfinite(out) else None


_EMPTY = frozenset({"nan", "n/a", "na", "none", "null", "-", "[n/a]", "[not supported]"})


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for optional sections of a file)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def positive(value: float | None) -> float | None:
    return value if value is not None and value > 0 else None


def pos_int(value: Any) -> int | None:
    v = num(value)
    if v is None or v < 1 or v != int(v) or v > 2**62:
        return None
    return int(v)


def energy_metrics(
    energy_j: float | None,
    *,
    examples: float | None = None,
    duration_s: float | None = None,
    boundary: str | None,
    method: str | None,
    what: str = "energy",
    flags: list[str] | None = None,
) -> dict[str, Any]:
    """A file's energy figure by the rules of `energy.energy_figures`; {} when the file has none
    (ingest then records why energy is missing)."""
    if energy_j is None:
        return {}
    return energy_figures(energy_j, boundary=boundary, method=method, examples=examples, duration_s=duration_s,
                          what=f"the file's {what}", flags=flags)


def read_csv(conv: Conversion, text: str, *, delimiter: str = ",") -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header (stripped) and (line number, cells stripped) rows; blank lines skipped."""
    rows: list[tuple[int, list[str]]] = []
    cells = 0
    try:
        reader = csv.reader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True)
        for row in reader:
            if len(row) > MAX_CSV_COLUMNS:
                raise conv.fail(f"line {reader.line_num}", f"{len(row):,} columns; at most {MAX_CSV_COLUMNS:,} are "
                                "read (no benchmark table is that wide): split the file")
            cells += len(row)
            if cells > MAX_CSV_CELLS:
                raise conv.fail(f"line {reader.line_num}", f"more than {MAX_CSV_CELLS:,} cells; split the file "
                                "into smaller ones")
            if any(c.strip() for c in row):
                rows.append((reader.line_num, [c.strip() for c in row]))
    except csv.Error as e:
        raise conv.fail("CSV", f"cannot be read: {e}") from e
    if not rows:
        raise conv.fail("line 1", "the file is empty")
    header = rows[0][1]
    while header and header[-1] == "":
        header = header[:-1]
    return header, rows[1:]


def check_run_count(conv: Conversion, count: int, what: str) -> None:
    """Refuse before building them when a file would make more runs than one file may hold."""
    if count > MAX_RUNS_PER_FILE:
        raise conv.fail("(whole file)", f"{what} make {count:,} runs; one file holds at most {MAX_RUNS_PER_FILE:,}: "
                        "split it into smaller files")


def cell(header: list[str], row: list[str], name: str) -> str | None:
    try:
        i = header.index(name)
    except ValueError:
        return None
    return row[i] if i < len(row) and row[i] != "" else None


def parse_time(value: str | None, formats: tuple[str, ...]) -> datetime | None:
    if not value:
        return None
    text = value.strip()
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def iso_utc(value: datetime | None) -> str | None:
    """ISO text for a time that carries its zone; naive times (zone unknown) are not stored."""
    if value is None or value.tzinfo is None:
        return None
    return value.astimezone(UTC).isoformat()


# --- path hints ---------------------------------------------------------------------------

_PRECISION_IN_DIR = re.compile(r"(?:^|[^a-z0-9])(fp32|tf32|fp16|bf16)(?:[^a-z0-9]|$)", re.IGNORECASE)


def precision_from_path(dirs: tuple[str, ...]) -> str | None:
    """A precision named in a folder (optimum-benchmark sweeps name folders 'fp16-batch_size(1)-...')."""
    for part in reversed(dirs):
        found = {m.lower() for m in _PRECISION_IN_DIR.findall(part)}
        if len(found) == 1:
            return found.pop()
    return None


def int_from_path(dirs: tuple[str, ...], key: str) -> int | None:
    """`key(N)` or `key=N` in a folder name, as hydra sweeps write them."""
    pattern = re.compile(rf"(?:^|[^a-z_]){re.escape(key)}[(=](\d+)\)?", re.IGNORECASE)
    for part in reversed(dirs):
        m = pattern.search(part)
        if m:
            return int(m.group(1))
    return None


def check_size(data: bytes, name: str) -> None:
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ResultFileError(name, [f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB; split it"])
