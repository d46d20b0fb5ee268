"""Turning paths into sources: single files, folders and .zip archives, safely.

A folder or archive is walked; a directory holding an MLPerf `mlperf_log_summary.txt` is
grouped into one folder source rooted above its run directories (`run_1`, `ranging`,
`performance`), an optimum-benchmark `benchmark_report.json` with the `benchmark_config.json`
beside it makes one source (and the same run's `benchmark.json`, `.txt` and `.md` copies beside it
are not imported again), every other file is its own source. Archives are read in memory only, never
extracted, one member at a time (`LazyFiles`): members are capped in count and size from the
archive's directory before anything is read (total uncompressed bytes too, which stops zip
bombs), and absolute paths, `..`, links and encrypted members are refused. Files on disk are
checked for size before they are read.
"""

from __future__ import annotations

import functools
import io
import re
import shlex
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from importers.base import MAX_FILE_BYTES, LazyFiles, Source
from joulebench.errors import ResultFileError

MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 4 * 1024 * 1024 * 1024  # uncompressed, per archive or folder (read one file at a time)
# The Upload page reads an archive twice (preview, import), each in a child process stopped at its time
# limit (explorer.bounded, 60 s); an archive it could not read in time is refused from its directory, before
# a member is read, with the way to import it anyway (the command line has no time limit). 2,000 result
# files: preview 2.7 s, import 19.8 s in the child on an idle 2-core machine (benchmarks/ingest_speed.py
# --members gives the rate); the limit is half of that, for a server many people share. 512 MiB of
# nvidia-smi CSV is about 3.5 M samples: seconds at the >= 1M samples/s of `ingest_speed.py --samples`.
UPLOAD_MAX_MEMBERS = 1_000
UPLOAD_MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_MEMBER_BYTES = MAX_FILE_BYTES  # one file, as read (a gzip member may unpack to as much again)
MAX_RATIO = 200  # compressed -> uncompressed, per member
RUN_DIR = re.compile(r"^(run_\d+|ranging|accuracy|performance|power)$", re.IGNORECASE)
MLPERF_SUMMARY = "mlperf_log_summary.txt"
# optimum-benchmark writes these side by side; imported together, the config gives device and shapes
OPTIMUM_REPORT, OPTIMUM_CONFIG = "benchmark_report.json", "benchmark_config.json"
OPTIMUM_COPIES = ("benchmark.json", "benchmark_report.txt", "benchmark_report.md")  # the same run again


def _safe_member(name: str, archive: str) -> str:
    if "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise ResultFileError(archive, [f"{name!r}: absolute or Windows path in the archive; refused"])
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise ResultFileError(archive, [f"{name!r}: '..' in an archive path; refused"])
    return "/".join(p for p in parts if p not in ("", "."))


def read_zip(data: bytes, name: str, *, upload: bool = False) -> LazyFiles:
    """Members of a zip archive as {relative path: bytes}, read one at a time when asked for, with
    bomb and traversal protection: every member is checked from the archive's directory before
    anything is read, and each read stops at the size the directory declares. `upload`: the Upload
    page's tighter limits on members and total size (UPLOAD_MAX_*)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise ResultFileError(name, [f"not a readable zip archive ({e})"]) from e
    infos = zf.infolist()  # the archive stays open (over bytes in memory) for its members' loaders
    declared = sum(i.file_size for i in infos)
    _check_size(name, len(infos), declared, upload)
    loaders: dict[str, Callable[[], bytes]] = {}
    for info in infos:
        if info.is_dir():
            continue
        rel = _safe_member(info.filename, name)
        if not rel:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ResultFileError(name, [f"{rel}: symbolic link in the archive; refused"])
        if info.flag_bits & 0x1:
            raise ResultFileError(name, [f"{rel}: encrypted member; refused"])
        if info.file_size > MAX_MEMBER_BYTES or (
            info.compress_size
            and info.file_size / max(info.compress_size, 1) > MAX_RATIO
            and info.file_size > 1024 * 1024
        ):
            raise ResultFileError(
                name,
                [f"{rel}: unpacks to {info.file_size} bytes from {info.compress_size}; "
                 "refused as a possible archive bomb"],
            )
        loaders[rel] = functools.partial(_read_member, zf, info, rel, name)
    return LazyFiles(loaders)


def _check_size(name: str, members: int, total_bytes: int, upload: bool) -> None:
    """Refuse an archive over the limits, from the counts its directory declares."""
    if members > MAX_MEMBERS:
        raise ResultFileError(name, [f"(whole archive): {members:,} members; at most {MAX_MEMBERS:,} are read: "
                                     "split it into smaller archives"])
    if total_bytes > MAX_TOTAL_BYTES:
        raise ResultFileError(name, [f"(whole archive): unpacks to {total_bytes / 2**20:,.0f} MiB; at most "
                                     f"{MAX_TOTAL_BYTES // 2**20:,} MiB are read: split it into smaller archives"])
    if not upload:
        return
    fix = ("split it into smaller archives, or import it from the command line (no time limit): "
           f"joulebench import {shlex.quote(name)}")
    if members > UPLOAD_MAX_MEMBERS:
        raise ResultFileError(name, [f"(whole archive): {members:,} members; the Upload page imports at most "
                                     f"{UPLOAD_MAX_MEMBERS:,} (what it reads within its time limit): {fix}"])
    if total_bytes > UPLOAD_MAX_TOTAL_BYTES:
        raise ResultFileError(name, [f"(whole archive): unpacks to {total_bytes / 2**20:,.0f} MiB; the Upload page "
                                     f"imports at most {UPLOAD_MAX_TOTAL_BYTES // 2**20:,} MiB (what it reads within "
                                     f"its time limit): {fix}"])


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, rel: str, name: str) -> bytes:
    """One member, from the archive opened once (its directory is parsed once: reopening it for
    each member made an archive of 10,000 members quadratic, past 600 s)."""
    try:
        with zf.open(info) as f:
            blob = f.read(info.file_size + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as e:
        raise ResultFileError(name, [f"{rel}: cannot be read ({e})"]) from e
    if len(blob) > info.file_size:
        raise ResultFileError(name, [f"{rel}: larger than its header says; refused"])
    return blob


def read_file(path: Path, limit_bytes: int = MAX_MEMBER_BYTES) -> bytes:
    """A file's bytes, its size checked before anything is read."""
    try:
        size = path.stat().st_size
        if size > limit_bytes:
            raise ResultFileError(str(path), [f"(whole file): {size / 2**20:.0f} MiB; at most "
                                              f"{limit_bytes // 2**20} MiB are read: split it into smaller files"])
        with open(path, "rb") as f:
            data = f.read(limit_bytes + 1)
    except OSError as e:
        raise ResultFileError(str(path), [f"cannot read the file: {e.strerror}"]) from e
    if len(data) > limit_bytes:
        raise ResultFileError(str(path), [f"(whole file): grew past {limit_bytes // 2**20} MiB while being read"])
    return data


def read_folder(folder: Path) -> LazyFiles:
    """A folder's files (symbolic links and hidden files skipped), sizes checked first, each read
    only when asked for."""
    loaders: dict[str, Callable[[], bytes]] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        if len(loaders) >= MAX_MEMBERS:
            raise ResultFileError(str(folder), [f"more than {MAX_MEMBERS} files; import sub-folders separately"])
        size = path.stat().st_size
        total += size
        if size > MAX_MEMBER_BYTES:
            raise ResultFileError(str(folder), [f"{rel}: {size / 2**20:.0f} MiB; at most "
                                                f"{MAX_MEMBER_BYTES // 2**20} MiB per file are read"])
        if total > MAX_TOTAL_BYTES:
            raise ResultFileError(
                str(folder),
                [f"{rel}: the folder holds more than {MAX_TOTAL_BYTES // 2**20} MiB; import sub-folders separately"])
        loaders[rel] = functools.partial(_read_folder_file, folder, path, rel)
    return LazyFiles(loaders)


def _read_folder_file(folder: Path, path: Path, rel: str) -> bytes:
    try:
        return read_file(path)
    except ResultFileError as e:
        raise ResultFileError(str(folder), [f"{rel}: {p}" for p in e.problems]) from e


def group(files: LazyFiles, top: str, outer_dirs: tuple[str, ...]) -> list[Source]:
    """Sources from a tree of files: MLPerf result folders grouped, other files one by one."""
    roots: set[str] = set()
    for rel in files:
        parts = rel.split("/")
        if parts[-1] != MLPERF_SUMMARY:
            continue
        dirs = parts[:-1]
        while dirs and RUN_DIR.match(dirs[-1]):
            dirs = dirs[:-1]
        roots.add("/".join(dirs))
    sources: list[Source] = []
    claimed: set[str] = set()
    for root in sorted(roots, key=len):
        if any(root.startswith(r + "/") for r in roots if r and r != root) or (root and "" in roots):
            continue
        prefix = f"{root}/" if root else ""
        members = {rel[len(prefix) :]: rel for rel in files if rel.startswith(prefix)}
        claimed.update(members.values())
        system = _mlperf_system(root, files)
        if system and not any(m.endswith(".json") and "/" not in m for m in members):
            members["system.json"] = system  # the submission's systems/<system>.json: device and count
            claimed.add(system)
        name = f"{top}/{root}" if root else top
        root_dirs = (*outer_dirs, top, *(root.split("/")[:-1] if root else []))
        sources.append(Source(name=name, files=files.subset(members), dirs=root_dirs if root else outer_dirs,
                              is_folder=True))
    for report in sorted(rel for rel in files if rel.split("/")[-1] == OPTIMUM_REPORT):
        folder = report[: -len(OPTIMUM_REPORT)]
        config = folder + OPTIMUM_CONFIG
        if config in files and report not in claimed and config not in claimed:
            claimed.update((report, config))
            parts = folder.strip("/").split("/") if folder else []
            sources.append(Source(name=f"{top}/{folder}{OPTIMUM_REPORT}",
                                  files=files.subset({OPTIMUM_REPORT: report, OPTIMUM_CONFIG: config}),
                                  dirs=(*outer_dirs, top, *parts), is_folder=True))
    for result, paths in _training_results_with_power(files).items():
        if result in claimed:
            continue
        claimed.update(paths.values())
        folder = result.rsplit("/", 1)[0] if "/" in result else ""
        parts = folder.split("/") if folder else []
        sources.append(Source(name=f"{top}/{result}", files=files.subset(paths),
                              dirs=(*outer_dirs, top, *parts), is_folder=True))
    claimed.update(_redundant_renderings(files, claimed))
    for rel in sorted(files):
        if rel in claimed:
            continue
        parts = rel.split("/")
        sources.append(Source(name=f"{top}/{rel}", files=files.subset({parts[-1]: rel}),
                              dirs=(*outer_dirs, top, *parts[:-1])))
    return sources


def _mlperf_system(root: str, files: LazyFiles) -> str | None:
    """`<submitter>/systems/<system>.json` for a result folder `<submitter>/results/<system>/<benchmark>/<scenario>`."""
    dirs = root.split("/")
    for i in range(len(dirs) - 1, 0, -1):
        if dirs[i - 1] == "results":
            path = "/".join([*dirs[:i - 1], "systems", f"{dirs[i]}.json"])
            return path if path in files else None
    return None


def _training_results_with_power(files: LazyFiles) -> dict[str, dict[str, str]]:
    """MLPerf Training results: `results/<system>/<benchmark>/<result>.txt` with `systems/<system>.json` of the
    same submitter when the tree has it, and its power readings in `power/<result>/node_*.txt` (and `sw_*.txt`)
    beside it: {result path: {member name in the source: path in the tree}}."""
    out: dict[str, dict[str, str]] = {}
    for rel in files:  # a result file without power readings still takes its system description
        parts = rel.split("/")
        if (len(parts) >= 4 and parts[-4] == "results" and re.fullmatch(r"result\S*\.txt", parts[-1])
                and "/".join([*parts[:-4], "systems", f"{parts[-3]}.json"]) in files):
            out.setdefault(rel, {"result.txt": rel, "system.json": "/".join([*parts[:-4], "systems",
                                                                             f"{parts[-3]}.json"])})
    for rel in files:
        parts = rel.split("/")
        if len(parts) < 3 or parts[-3] != "power" or not re.fullmatch(r"(node|sw)_\d+\.txt", parts[-1]):
            continue
        bench_dir = "/".join(parts[:-3])
        result = f"{bench_dir}/{parts[-2]}.txt" if bench_dir else f"{parts[-2]}.txt"
        if result not in files:
            continue
        members = out.setdefault(result, {"result.txt": result})
        members[f"power/{parts[-1]}"] = rel
        dirs = bench_dir.split("/")
        if len(dirs) >= 3 and dirs[-3] == "results":
            system = "/".join([*dirs[:-3], "systems", f"{dirs[-2]}.json"])
            if system in files:
                members["system.json"] = system
    return out


def _redundant_renderings(files: LazyFiles, claimed: set[str]) -> set[str]:
    """optimum-benchmark (>= 0.5) writes one run as benchmark.json, benchmark_report.json (+ config),
    benchmark_report.txt and benchmark_report.md in one folder: imported once, from the most complete
    (the report with its config, else benchmark.json, else the report, else a rendering)."""
    out: set[str] = set()
    by_folder: dict[str, set[str]] = {}
    for rel in files:
        folder, _, base = rel.rpartition("/")
        by_folder.setdefault(folder, set()).add(base)
    for folder, names in by_folder.items():
        prefix = f"{folder}/" if folder else ""
        order = [n for n in (OPTIMUM_REPORT, *OPTIMUM_COPIES) if n in names]
        if len(order) < 2 or not {OPTIMUM_REPORT, "benchmark.json"} & names:
            continue
        keep = OPTIMUM_REPORT if prefix + OPTIMUM_REPORT in claimed else order[0]
        out.update(prefix + n for n in order if n != keep)
    return out


def sources_from_path(path: Path) -> list[Source]:
    """One source per file, per MLPerf result folder, per archive member."""
    outer = tuple(p for p in path.resolve().parent.parts[-8:] if p not in ("/", ""))
    if path.is_dir():
        return group(read_folder(path), path.name, outer)
    return sources_from_bytes(read_file(path), path.name, outer)


def sources_from_bytes(data: bytes, name: str, dirs: tuple[str, ...] = (), *, upload: bool = False) -> list[Source]:
    """One source per file, per MLPerf result folder, per archive member; `upload`: the Upload page's limits."""
    if data[:4] == b"PK\x03\x04" or (name.lower().endswith(".zip") and data[:2] == b"PK"):
        stem = name[:-4] if name.lower().endswith(".zip") else name
        return group(read_zip(data, name, upload=upload), stem, dirs)
    return [Source.single(data, name, dirs)]
