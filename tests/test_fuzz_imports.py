"""Fuzz the import path with mutated real files (issue 17): every outcome is a document that passes
validation or a JouleBenchError naming the problem; never another exception, no input over 10 s.

The seeds are the real files of other tools in tests/fixtures (attribution in their SOURCES.md)
and JouleBench's own result files, cut to their first 16 KiB so that thousands of inputs run in CI
time. The mutations are what attackers and broken exporters produce: flipped and dropped bytes,
truncation, duplicated spans, huge and non-finite numbers, quoted numbers, lone surrogates, NULs,
control characters, and exploded rows and columns.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import importers
from joulebench.errors import JouleBenchError

FIXTURES = Path(__file__).parent / "fixtures"
SEED_BYTES = 16 * 1024
MAX_INPUT_BYTES = 2 * 1024 * 1024  # mutations compound; larger inputs are the caps' tests (test_attacks)
INPUTS = 5_000
MAX_INPUT_S = 10.0  # the bound for one input; a hang guard, not a speed target
MAX_PEAK_MB = 1024

INSERTS = [b"1e400", b"-1e400", b"NaN", b"Infinity", b'"1"', b"\\ud800", b"\x00", b"\x1b[2J", b"99999999999999999999",
           b"-0", b"null", b"[]", b"{}", b'""', b"\xff\xfe", b"0001-01-01T00:00:00+14:00", b"=cmd|' /C calc'!A0",
           b"**bold** [x](http://evil.example)", b"<script>alert(1)</script>", b"7" * 4096, b",", b"\n", b"\r", b"\t"]


def _seeds() -> list[tuple[str, bytes]]:
    paths = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "SOURCES.md"
                   and p.suffix not in (".png", ".zip", ".gz"))
    return [(p.name, p.read_bytes()[:SEED_BYTES]) for p in paths]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        at = rng.randrange(len(b) + 1)
        if op == 0 and b:  # flip a byte
            b[min(at, len(b) - 1)] = rng.randrange(256)
        elif op == 1:  # truncate
            del b[at:]
        elif op == 2 and b:  # drop a span
            del b[at:at + rng.randint(1, 64)]
        elif op == 3:  # duplicate a span
            b[at:at] = b[at:at + rng.randint(1, 256)] * rng.randint(1, 8)
        elif op == 4:  # insert a hostile token
            b[at:at] = rng.choice(INSERTS)
        elif op == 5:  # replace the next number with a huge, negative or non-finite one
            for j in range(at, min(len(b), at + 200)):
                if 48 <= b[j] <= 57:
                    b[j:j + 1] = rng.choice([b"1e308", b"-5", b"1e-320", b"NaN", b"1e12", b"0"])
                    break
        elif op == 6:  # explode a line sideways (columns)
            end = b.find(b"\n", at)
            line = b[at:end if end >= 0 else len(b)]
            b[at:at] = (line + b",") * rng.randint(2, 50)
        else:  # explode the file downwards (rows)
            end = b.find(b"\n", at)
            line = b[at:end + 1 if end >= 0 else len(b)]
            b[at:at] = line * rng.randint(2, 200)
        del b[MAX_INPUT_BYTES:]
    return bytes(b)


def fuzz() -> dict[str, object]:
    """The fuzz run itself: outcomes, crashes, the slowest input and this process's peak memory."""
    seeds = _seeds()
    rng = random.Random(17)
    outcomes = {"imported": 0, "refused": 0, "empty refusals": 0}
    slowest = (0.0, "")
    crashes: list[str] = []
    for n in range(INPUTS):
        name, seed = seeds[n % len(seeds)]
        data = _mutate(seed, rng)
        start = time.perf_counter()
        try:
            importers.load(data, name)
            outcomes["imported"] += 1
        except JouleBenchError as e:
            outcomes["refused"] += 1
            outcomes["empty refusals"] += not e.format_message().strip()
        except Exception as e:  # noqa: BLE001 - the test's point: any other exception is a defect
            crashes.append(f"{name} #{n}: {type(e).__name__}: {str(e)[:200]}")
        slowest = max(slowest, (time.perf_counter() - start, f"{name} #{n}"))
    status = Path("/proc/self/status").read_text()
    peak_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return {"seeds": len(seeds), "outcomes": outcomes, "crashes": crashes, "slowest_s": slowest[0],
            "slowest": slowest[1], "peak_mb": peak_kb / 1024}


def test_five_thousand_mutated_real_files_give_documents_or_clear_refusals():
    """In a child process, so the peak memory is the fuzz run's own (the test process's peak holds
    whatever earlier tests loaded)."""
    code = "import json, tests.test_fuzz_imports as f; print(json.dumps(f.fuzz()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"fuzz: {INPUTS} inputs from {result['seeds']} real files, {result['outcomes']}, slowest "
          f"{result['slowest_s']:.2f} s ({result['slowest']}), peak RSS {result['peak_mb']:.0f} MB")
    assert result["seeds"] >= 50, "the fixtures hold the real files of every format"
    assert not result["crashes"], "\n".join(result["crashes"][:20])
    assert result["slowest_s"] < MAX_INPUT_S, result["slowest"]
    outcomes = result["outcomes"]
    assert outcomes["imported"] > 0 and outcomes["refused"] > 0  # the mutations reach both ends
    assert outcomes["empty refusals"] == 0
    assert result["peak_mb"] < MAX_PEAK_MB
