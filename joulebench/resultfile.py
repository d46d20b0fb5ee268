"""The JouleBench result file, version 1: read, validate, write.

One JSON document (optionally gzip-compressed) holding runs with their device, environment,
configuration, metrics, power traces and step times. The schema ships beside this module
(`result_schema_v1.json`) and is documented in docs/result-file.md.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

import joulebench.requests as requests
from joulebench.errors import ResultFileError
from joulebench.labels import SuppliedLabel
from joulebench.metrics import latency_metrics
from joulebench.text import NAME_CHARS, text_problem

FORMAT_NAME = "joulebench-result"
SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("result_schema_v1.json")
# After decompression (gzip bombs). JSON of packed numbers ("1.5,") takes about 8 times its size as
# Python objects, so 64 MiB keeps one document's parse under about 700 MB; a runner's file of a
# 10-minute run with its 10 Hz power trace is under 1 MiB, and a larger export splits by source.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
# Runs in one file: a whole Lambda or MLPerf table is a few hundred; a file of more is refused
# before it is validated (160,182 runs from a 490 KB table of 10,000 columns took 178 s).
MAX_RUNS_PER_FILE = 20_000
MAX_JSON_DEPTH = 64
MAX_PROBLEMS = 50


@dataclass(frozen=True)
class LoadedResultFile:
    """A validated document and the identity of the bytes it came from; `supplied` holds the labels
    that did not come from its content (import flags, a folder name), recorded at ingest for the
    runs that carry their value."""

    name: str
    content_sha256: str
    document: dict[str, Any]
    supplied: tuple[SuppliedLabel, ...] = ()


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return loaded


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_result_file(path: Path) -> LoadedResultFile:
    """Read and validate a result file from disk."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ResultFileError(str(path), [f"cannot read the file: {e.strerror}"]) from e
    return load_result_bytes(data, path.name)


def load_result_bytes(data: bytes, name: str) -> LoadedResultFile:
    """Parse and validate result-file bytes (plain or gzip JSON); raise ResultFileError."""
    document = parse_document(decompress(data, name), name)
    validate_document(document, name)
    return LoadedResultFile(name=name, content_sha256=content_sha256(data), document=document)


def decompress(data: bytes, name: str, limit_bytes: int | None = None) -> bytes:
    """Gzip data unpacked (other bytes as they are), refusing more than `limit_bytes` (default:
    MAX_DOCUMENT_BYTES) after decompression: gzip bombs."""
    if data[:2] != b"\x1f\x8b":
        return data
    limit_bytes = MAX_DOCUMENT_BYTES if limit_bytes is None else limit_bytes
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(limit_bytes + 1)
    except (OSError, EOFError, ValueError) as e:
        raise ResultFileError(name, [f"gzip data is corrupt or truncated ({e}); re-export the file"]) from e
    if len(out) > limit_bytes:
        raise ResultFileError(
            name, [f"decompresses to more than {limit_bytes // 2**20} MiB; split it into smaller files"]
        )
    return out


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number JSON allows; write null for a missing value")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"{token} is too large for a number (it would be infinite); write a finite value or null")
    return value


def parse_document(data: bytes, name: str) -> dict[str, Any]:
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ResultFileError(name, [f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB; split it"])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultFileError(name, [f"not UTF-8 text (byte {e.start}); is this a result file?"]) from e
    try:
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise ResultFileError(
            name, [f"not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}; the file may be truncated"]
        ) from e
    except (ValueError, RecursionError) as e:
        raise ResultFileError(name, [f"not a usable JSON document: {e}"]) from e
    if not isinstance(document, dict):
        raise ResultFileError(name, ["the top level must be a JSON object with 'format', 'schema_version' and 'runs'"])
    return document


def _depth(value: Any, limit: int) -> int:
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list) and item and isinstance(item[0], (dict, list)):
            stack.extend((v, d + 1) for v in item)
    return deepest


def _location(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    where = _location(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        return (f"{where}: unknown field(s) {', '.join(_short_repr(e) for e in extra[:10])}; "
                f"allowed fields: {', '.join(allowed)}")
    if error.validator == "required":
        return f"{where}: {error.message}; add it"
    if error.validator == "maxLength" and isinstance(error.instance, str):
        return _too_long(where, len(error.instance), int(error.validator_value))
    expected = error.schema.get("description") if isinstance(error.schema, dict) else None
    fix = f"; expected {expected}" if expected else ""
    bound = _BOUNDS.get(str(error.validator))
    if bound and isinstance(error.instance, (int, float)):
        return f"{where}: {error.instance:g} is {bound} {float(error.validator_value):g} (its physical range){fix}"
    message = error.message
    if isinstance(error.instance, str) and len(error.instance) > 60:  # never echo a long value whole
        message = message.replace(repr(error.instance), _short_repr(error.instance))
    return f"{where}: {message[:500]}{fix}"


def _short_repr(value: str) -> str:
    return repr(value) if len(value) <= 60 else repr(value[:40]) + f"... ({len(value):,} characters)"


def _too_long(where: str, length: int, limit: int) -> str:
    what = "free text" if limit > NAME_CHARS else "a name or label"
    fix = "keep the first lines and put the rest in a file of its own" if limit > NAME_CHARS else (
        "give a short name (longer text goes in the run's notes)")
    return f"{where}: {length:,} characters, over the limit of {limit:,} for {what}; {fix}"


_BOUNDS = {"maximum": "above the maximum", "exclusiveMaximum": "not below the limit",
           "minimum": "below the minimum", "exclusiveMinimum": "not above"}


def validate_document(document: dict[str, Any], name: str) -> None:
    """Check format, version, schema and cross-field rules; raise one error listing every problem."""
    fmt = document.get("format")
    if fmt != FORMAT_NAME:
        raise ResultFileError(
            name, [f"format: expected '{FORMAT_NAME}', found {fmt!r}; this is not a JouleBench result file"]
        )
    version = document.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ResultFileError(name, [f"schema_version: expected the integer {SCHEMA_VERSION}, found {version!r}"])
    if version > SCHEMA_VERSION:
        raise ResultFileError(
            name,
            [f"schema_version: {version} is newer than this JouleBench reads (up to {SCHEMA_VERSION}); "
             "upgrade JouleBench to import it"],
        )
    if version < 1:
        raise ResultFileError(name, [f"schema_version: {version} is not a valid version; expected {SCHEMA_VERSION}"])
    if _depth(document, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ResultFileError(name, [f"nested deeper than {MAX_JSON_DEPTH} levels; not a result file"])
    latencies_to_missing(document)

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    problems = [_describe(e) for e in errors]
    if not problems:
        problems = _semantic_problems(document)
    if problems:
        raise ResultFileError(name, problems[:MAX_PROBLEMS])


def _semantic_problems(document: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    seen: set[str] = set()
    runs = document.get("runs", [])
    if not runs and not document.get("findings") and not document.get("devices"):
        problems.append("runs: the file holds no runs, findings or devices; nothing to import")
    for i, run in enumerate(runs):
        where = f"runs[{i}]"
        if run["run_id"] in seen:
            problems.append(f"{where}.run_id: {run['run_id']!r} appears twice; give each run its own id")
        seen.add(run["run_id"])
        for j, trace in enumerate(run.get("power_traces", [])):
            t, p = trace["t_s"], trace["power_w"]
            if len(t) != len(p):
                problems.append(
                    f"{where}.power_traces[{j}]: t_s has {len(t)} values, power_w {len(p)}; they must pair up")
            if any(b < a for a, b in zip(t, t[1:])):
                problems.append(f"{where}.power_traces[{j}].t_s: times must not go backwards; sort the samples")
            if any(not math.isfinite(x) for x in p):
                problems.append(f"{where}.power_traces[{j}].power_w: non-finite value")
        if run.get("requests"):  # every request kept (issue 38): its latencies checked, never averaged in silently
            problems.extend(requests.problems(run["requests"], where))
            if run.get("requests_total", len(run["requests"])) < len(run["requests"]):
                problems.append(f"{where}.requests_total: {run['requests_total']} is fewer than the "
                                f"{len(run['requests'])} requests given; it counts the source's requests")
    problems.extend(_time_problems(document))
    problems.extend(_text_problems(document))
    finding_ids = [f["finding_id"] for f in document.get("findings", [])]
    for dup in sorted({f for f in finding_ids if finding_ids.count(f) > 1}):
        problems.append(f"findings: finding_id {dup!r} appears twice; give each finding its own id")
    return problems


# Times a result can carry: after the first GPUs ran deep learning, and not after tomorrow (a
# clock a day ahead is tolerated). Outside this, a date is a typo or an attack (year 1 at +14:00
# overflows every datetime library on conversion to UTC).
EARLIEST_YEAR = 1990


def _instant(value: Any, where: str, problems: list[str]) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        instant = parsed.astimezone(UTC)
    except OverflowError:
        problems.append(f"{where}: {value[:40]} is outside {EARLIEST_YEAR} to today; check the clock that wrote it")
        return None
    except ValueError:
        problems.append(f"{where}: {value[:40]!r} is not an ISO 8601 date and time; write e.g. "
                        "2026-11-20T10:10:00+00:00")
        return None
    latest = datetime.now(UTC) + timedelta(days=1)
    if instant.year < EARLIEST_YEAR or instant > latest:
        problems.append(f"{where}: {value[:40]} is outside {EARLIEST_YEAR} to today; check the clock that wrote it")
        return None
    return instant


def _time_problems(document: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    _instant(document.get("created_at"), "created_at", problems)
    for i, run in enumerate(document.get("runs", [])):
        start = _instant(run.get("started_at"), f"runs[{i}].started_at", problems)
        end = _instant(run.get("ended_at"), f"runs[{i}].ended_at", problems)
        if start is not None and end is not None and end < start:
            problems.append(f"runs[{i}].ended_at: {run['ended_at']} is before started_at {run['started_at']}; "
                            "a run ends after it starts")
    return problems


_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Fields of free text, which may hold line breaks and tabs (the schema allows them more characters);
# every other string (a name, a tag, an id, a version) is one line.
FREE_TEXT_FIELDS = frozenset({"notes", "error", "quote", "subject_desc", "baseline_desc", "citation",
                              "energy_missing_reason", "avg_power_missing_reason", "energy_split_missing_reason",
                              "throughput_derivation"})


def _text_problems(document: dict[str, Any], limit: int = 10) -> list[str]:
    """Strings that cannot be stored or shown faithfully: control characters (NUL, escape codes;
    tab and line breaks only in free text), and unpaired UTF-16 surrogates ("\\ud800" in JSON),
    which no UTF-8 database or page can encode. Walks every string once, iteratively."""
    problems: list[str] = []
    stack: list[tuple[Any, str, str]] = [(document, "", "")]
    while stack and len(problems) < limit:
        item, where, field = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                problems.append(f"{where or 'the document'}: holds an unpaired surrogate (\\ud800-\\udfff), "
                                "which is not text; re-export the file as UTF-8")
                continue
            problem = text_problem(item, max_chars=len(item), multiline=field in FREE_TEXT_FIELDS)
            if problem is not None:
                problems.append(f"{where or 'the document'}: {problem}")
        elif isinstance(item, dict):
            for k, v in item.items():
                key = f"{where}.{k}" if where else str(k)
                if isinstance(k, str) and (_SURROGATE.search(k) or text_problem(k, max_chars=len(k))):
                    problems.append(f"{where or 'the document'}: a field name holds a control character or "
                                    "surrogate; remove it")
                stack.append((v, key, str(k)))
        elif isinstance(item, list) and item and not isinstance(item[0], (int, float)):
            stack.extend((v, f"{where}[{n}]", field) for n, v in enumerate(item))
    return problems


# Latencies: a zero or negative time is not a measurement (a timer that never ran, a placeholder a
# tool wrote); it is stored as missing, and the run carries a flag saying so.
_LATENCY_FLAGS = {m.name: f"{d.key}_nonpositive" for d, m in latency_metrics()}


def latencies_to_missing(document: dict[str, Any]) -> None:
    """Every zero or negative latency (the ms columns of joulebench.metrics.DISTRIBUTIONS: latency_*,
    ttft_*, itl_*, tpot_*, e2e_latency_*) in the runs' metrics set to null, in place, with the flag
    `<kind>_nonpositive` on the run (ttft_nonpositive: a time to first token of 0 ms was stored as
    missing). The one rule for every file: `validate_document` applies it before the schema's check."""
    runs = document.get("runs")
    for run in runs if isinstance(runs, list) else []:
        metrics = run.get("metrics") if isinstance(run, dict) else None
        if not isinstance(metrics, dict):
            continue
        found = []
        for key, value in metrics.items():
            if (key in _LATENCY_FLAGS and isinstance(value, (int, float)) and not isinstance(value, bool)
                    and value <= 0):
                metrics[key] = None
                found.append(_LATENCY_FLAGS[key])
        if found:
            flags = run.get("flags")
            if not isinstance(flags, list):
                flags = run["flags"] = []
            flags.extend(f for f in dict.fromkeys(found) if f not in flags)


def new_document(runs: list[dict[str, Any]], *, producer_version: str, created_at: str,
                 devices: list[dict[str, Any]] | None = None,
                 findings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": FORMAT_NAME,
        "schema_version": SCHEMA_VERSION,
        "created_at": created_at,
        "producer": {"tool": "joulebench", "version": producer_version},
    }
    if devices:
        doc["devices"] = devices
    if findings:
        doc["findings"] = findings
    doc["runs"] = runs
    return doc


def dump_bytes(document: dict[str, Any], path: Path) -> bytes:
    """The document as a file's bytes: gzip when the name ends in .gz, else indented JSON."""
    data = json.dumps(document, indent=None if path.suffix == ".gz" else 1, sort_keys=False).encode()
    return gzip.compress(data, mtime=0) if path.suffix == ".gz" else data


def dump_document(document: dict[str, Any], path: Path) -> None:
    """Write a document atomically (FileWriteError naming the cause when it cannot be written)."""
    from joulebench.files import write_atomic

    write_atomic(path, dump_bytes(document, path))
