"""`go test -bench` output, as pasted into notes and logs: one run per result line, for `importers.text_figures`.

Learned from Go's benchmark data format (the design document 14313-benchmark-format, which the testing package's
`BenchmarkResult.String` and `B.ReportMetric` write):

    goos: linux
    goarch: amd64
    cpu: 13th Gen Intel(R) Core(TM) i9-13900HX
    BenchmarkInference-32           99         110913774 ns/op               270.5 tokens/s

A result line is the benchmark's name (`Benchmark`, then nothing or a character that is not a lower-case letter;
`-N` at its end is the GOMAXPROCS it ran with), the iterations timed, then value-unit pairs separated by spaces or
tabs: `ns/op` always (the mean time of one iteration: stored as the latency mean), `MB/s`, `B/op` and `allocs/op`
when asked for, and any metric the benchmark reports with `B.ReportMetric` in its own unit (`tokens/s`: the token
rate). A metric whose unit is itself a name with a unit (Ollama's benchmark reports `gen_tok/s`, `prompt_tok/s`,
`ttft_ms`, `load_ms`, `gen_tokens`, `prompt_tokens`) is read as a table's column of that name would be
(`table_fields.measure_field`: decode and prompt tokens/s, TTFT in ms, counts of output and prompt tokens; a load
time is no figure JouleBench stores, and says so). Configuration lines `key: value` (goos, goarch, pkg, cpu) printed
before results apply to them; they go into the notes. Lines of one benchmark in one configuration are its repeats
(`-count=5`): the same tag. The flags a `go test` command line passes to the benchmark itself (not go test's own,
`-nctx=32000 -device="CUDA0"`) are part of what was run, and so of the tag. A line is read only in that exact shape,
with its ns/op; a unit JouleBench does not store (B/op, allocs/op, MB/s) is named in a warning. Nothing is guessed:
no device or mode from the names, and a model only where the package is Ollama's benchmark (`pkg:
github.com/ollama/ollama/benchmark`), whose BenchmarkColdStart and BenchmarkWarmStart name each case
`<model>/cold/<prompt>` or `<model>/warm/<prompt>` (its `-m` flag:
`BenchmarkColdStart/qwen3:8b/cold/short_prompt-16`); cold or warm and the prompt stay in the tag. The CPU a
configuration line names is the host's, kept in the notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from importers.table_fields import Field, FieldError, measure_field
from importers.text_lines import Figure
from joulebench import units

_NUM = r"[-+]?(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})(?:[eE][-+]?\d{1,3})?"
_RESULT = re.compile(rf"[ \t]{{0,8}}(?P<name>Benchmark(?:[^a-z\s]\S{{0,200}}?)?)(?:-(?P<procs>\d{{1,4}}))?"
                     rf"[ \t]+(?P<n>\d{{1,15}})(?P<pairs>(?:[ \t]+{_NUM}[ \t]+\S{{1,40}}){{1,20}})[ \t]*")
_PAIR = re.compile(rf"({_NUM})[ \t]+(\S{{1,40}})")
# Ollama's benchmark package (benchmark/server_benchmark_test.go): b.Run(fmt.Sprintf("%s/cold/%s", m, tt.name)), the
# model m from its -m flag (a name that may hold '/' and ':'), the case a word (short_prompt)
OLLAMA_PACKAGE = "github.com/ollama/ollama/benchmark"
_OLLAMA_CASE = re.compile(r"Benchmark[A-Z]\w{0,60}/(?P<model>\S{1,200}?)/(?:cold|warm)/\w{1,60}")
_GO_ENV_LINE = re.compile(r"[ \t]{0,8}(?P<key>goos|goarch|pkg|cpu):[ \t]*(?P<value>\S[^\n]{0,199}?)[ \t]*")
_COMMAND = re.compile(r"(?:^|.*[\s>$#])go test(?P<args>(?:[ \t][^\n]{0,1000})?)")
_NOT_STORED = {"B/op": "bytes allocated per iteration", "allocs/op": "allocations per iteration",
               "MB/s": "bytes processed per second"}
# go test's own flags (cmd/go's build and test flags, the testing package's -test.* flags): not the benchmark's
_GO_FLAGS = frozenset({
    "bench", "benchmem", "benchtime", "blockprofile", "blockprofilerate", "count", "cover", "covermode", "coverpkg",
    "coverprofile", "cpu", "cpuprofile", "failfast", "fullpath", "fuzz", "fuzzminimizetime", "fuzztime", "json",
    "list", "memprofile", "memprofilerate", "mutexprofile", "mutexprofilefraction", "outputdir", "parallel", "run",
    "short", "shuffle", "skip", "timeout", "trace", "v", "vet", "c", "exec", "o", "race", "msan", "asan", "tags",
    "ldflags", "gcflags", "mod", "modfile", "p", "x", "n", "a", "work", "trimpath", "buildvcs", "args",
})
_SEPARATE_VALUE = frozenset({"bench", "benchtime", "count", "cpu", "run", "skip", "timeout", "parallel", "tags", "o",
                             "covermode", "coverpkg", "coverprofile", "cpuprofile", "memprofile", "blockprofile",
                             "mutexprofile", "outputdir", "trace", "exec", "ldflags", "gcflags", "mod", "fuzz",
                             "fuzztime", "shuffle", "list", "p", "vet"})


@dataclass(frozen=True)
class GoResult:
    """One result line: its benchmark, iterations and figures."""

    line: int
    name: str  # as printed, with its -N
    benchmark: str  # without its -N
    procs: int | None
    iterations: int
    figures: list[Figure]
    ns_per_op: float


def result(line: int, raw: str) -> GoResult | None:
    """The result of a `go test -bench` line in its exact shape, with its ns/op; None for any other line."""
    if "Benchmark" not in raw or "ns/op" not in raw:
        return None
    m = _RESULT.fullmatch(raw.rstrip("\r\n"))
    if m is None:
        return None
    pairs = _PAIR.findall(m.group("pairs"))
    ns = [float(v) for v, unit in pairs if unit == "ns/op"]
    if len(ns) != 1 or ns[0] < 0:
        return None
    figures = [_figure(line, value, unit) for value, unit in pairs]
    procs = m.group("procs")
    name = m.group("name") + (f"-{procs}" if procs else "")
    return GoResult(line, name, m.group("name"), int(procs) if procs else None, int(m.group("n")), figures, ns[0])


def _figure(line: int, number: str, written: str) -> Figure:
    value = float(number)
    decimals = len(number.lower().split("e")[0].split(".")[1]) if "." in number else 0
    if written == "ns/op":  # the mean time of one iteration
        ns = units.unit("ns")
        return Figure(line, "ns/op", value, ns, False, Field("latency_avg_ms", "ms"), ns, decimals=decimals)
    if written in _NOT_STORED:
        return Figure(line, written, value, None, False, None, None, _NOT_STORED[written])
    unit = units.find_unit(written)
    header = ""
    if unit is None:  # a unit that is itself a name with a unit: 'gen_tok/s', 'ttft_ms'; 'gen_tokens' counts tokens
        named, unit = _named_unit(written)
        if unit is None:
            return Figure(line, written, value, None, False, None, None, "a unit JouleBench does not convert")
        header = named
    try:
        found, field_unit, why = measure_field(header or written, None if header else unit)
    except FieldError as e:
        return Figure(line, written, value, unit, False, None, None, error=str(e))
    return Figure(line, written, value, unit, False, found, field_unit, why, decimals=decimals)


def _named_unit(written: str) -> tuple[str, units.Unit | None]:
    """(the column header it reads as, its unit) of a reported metric's unit that names what it measures: a name with
    its unit at the end as a table's header writes it ('gen_tok/s', 'ttft_ms'), or a name and the unit it counts
    ('gen_tokens' is gen (tokens)); ('', None) for any other."""
    if not re.fullmatch(r"[A-Za-z][\w./-]{0,39}", written):
        return "", None
    in_name = units.header_unit(written)[1]
    if in_name is not None:
        return written, in_name
    head, sep, last = written.rpartition("_")
    counted = units.find_unit(last) if sep and head else None
    if counted is not None and counted.kind == "tokens":
        return f"{written} ({counted.symbol})", counted
    return "", None


@dataclass
class GoContext:
    """The configuration lines and the `go test` command in force, from the lines before a result."""

    config: dict[str, str] = field(default_factory=dict)
    flags: str = ""

    def reset(self) -> None:
        self.config, self.flags = {}, ""

    def see(self, raw: str) -> bool:
        """Take a configuration or command line; whether it was one."""
        if (m := _GO_ENV_LINE.fullmatch(raw.rstrip("\r\n"))) is not None:
            self.config[m.group("key")] = m.group("value")
            return True
        if "go test" in raw and (m := _COMMAND.match(raw.strip())) is not None:
            self.config, self.flags = {}, benchmark_flags(m.group("args"))
            return True
        return False

    def model(self, found: GoResult) -> str | None:
        """The model of an Ollama benchmark case (`BenchmarkColdStart/qwen3:8b/cold/short_prompt`), where the package
        line says the results are Ollama's benchmark's; None for any other."""
        if self.config.get("pkg") != OLLAMA_PACKAGE:
            return None
        m = _OLLAMA_CASE.fullmatch(found.benchmark)
        return m.group("model") if m is not None else None

    def tag(self, path: str | None, found: GoResult) -> str:
        parts = [p for p in (path, f"{found.name} {self.flags}".strip()) if p]
        return " > ".join(parts)[:200]

    def note(self, found: GoResult) -> str:
        said = [f"go test -bench: {found.name}, {found.iterations} iterations of {found.ns_per_op / 1e6:g} ms each "
                "(ns/op)"]
        if found.procs:
            said.append(f"GOMAXPROCS {found.procs}")
        said += [f"{k} {v[:100]}" for k, v in self.config.items()]
        if self.flags:
            said.append(f"benchmark flags {self.flags}")
        return ", ".join(said)


def benchmark_flags(args: str) -> str:
    """The flags of a `go test` command line that go to the benchmark, not to go test: '-nctx=32000 -device=CUDA0'."""
    tokens = args.replace('"', "").replace("'", "").split()
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-"):
            continue  # a package or a value
        name = token.lstrip("-").split("=", 1)[0]
        name = name.removeprefix("test.")
        if name in _GO_FLAGS:
            if "=" not in token and name in _SEPARATE_VALUE and i < len(tokens):
                i += 1  # '-bench .': its value
            continue
        if "=" not in token and i < len(tokens) and not tokens[i].startswith("-"):
            token, i = f"{token}={tokens[i]}", i + 1  # '-device CUDA0'
        out.append(token)
    return " ".join(out)[:150]
