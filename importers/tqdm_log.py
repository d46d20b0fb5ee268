"""tqdm progress output (e.g. a Trainer's stdout): the rate of each completed bar in it/s.

Each bar that reaches its total (`1563/1563 [01:36<00:00, 16.14it/s]`) becomes a run with
iterations_per_s; throughput in samples/s needs the batch size (--batch-size), and is then
stated as derived. Carriage-return refreshes are read like lines. A bar's description (the text before its
percentage, counters left out: 'Epoch 2' is a pass of 'Epoch') is its tag: bars of one description are repeats of
one setup. Bars that set something up (a server log's `Loading safetensors checkpoint shards`, `Capturing batches`)
and bars that finished inside their first second time no workload: they are left out, and said.

The rate a finished bar shows is not its mean: tqdm displays an exponential moving average of the
last updates (`smoothing=0.3` by default, `format_meter`'s rate from `_ema_dn / _ema_dt`), so a bar
that slowed at its end shows the slow rate. Its mean lies between n / (elapsed + 1) and n / elapsed
(the elapsed time is printed in whole seconds): a shown rate inside that range is kept; one outside
it is replaced by n / (elapsed + 0.5) when the bar ran MIN_ELAPSED_S or more (an error of at most 1 in
20), and kept, said so in the notes, on a shorter bar.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, positive
from importers.text_scan import candidates

# Linear on any input: a count starts after a non-digit (so a run of digits is tried once, not from
# every position) and every repeat is bounded; an unbounded `(\d+)/` over 64 KiB of digits took 30 s.
_BAR = re.compile(r"(?<!\d)(\d{1,15})/(\d{1,15}) \[(?:(\d{1,6}):)?(\d{1,6}):(\d{1,2})<[^,\]\n]{0,40},\s{0,8}"
                  r"(\d{1,15}(?:\.\d{1,15})?)(it/s|s/it)")


MIN_ELAPSED_S = 10
# a bar that sets something up (a server log's `Loading safetensors checkpoint shards`, `Capturing batches`) times
# no workload: it is left out, as is a bar that finished inside its first second (no rate can be checked)
_SETUP_WORDS = {"loading", "load", "capturing", "capture", "cloning", "downloading", "download", "compiling",
                "compile", "fetching", "tokenizing", "tokenize", "building", "resolving", "extracting", "unpacking"}


def _description(part: str, start: int) -> str:
    """The text tqdm writes before a bar's percentage ('Loading checkpoint shards', 'Epoch 1'), '' for none."""
    prefix = part[:start]
    prefix = prefix[prefix.rfind("]") + 1:]  # after the bar before it on the same line
    said = re.split(r"\s*\d{1,3}%", prefix)[0].replace("\x1b", "").strip(" :|[A")
    return re.sub(r"\s*\d[\d.,/]*\s*", " ", said).strip(" :-#")[:80]  # 'Epoch 2' is another pass of 'Epoch'


def _progress_lines(text: str) -> list[str]:
    return [p for line in text.splitlines() for p in line.split("\r") if p.strip()]


class TqdmImporter(Importer):
    NAME = "tqdm"
    TOOL = "tqdm"
    DESCRIPTION = "tqdm progress lines with it/s"

    def sniff(self, source: Source) -> bool:
        """Progress bars, where the text states no figures of its own besides them (a summary's lines, with a
        stray bar among them, are the reader of figures in text's)."""
        if source.text is None or not _BAR.search(source.text[:262144]):
            return False
        return not candidates("\n".join(line for line in source.head.splitlines() if not _BAR.search(line)))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        finished, setup, instant = [], set(), 0
        for part in _progress_lines(text):
            for m in _BAR.finditer(part):
                n, total = int(m.group(1)), int(m.group(2))
                if n != total or n <= 0:
                    continue
                what = _description(part, m.start())
                if set(re.findall(r"[a-z]+", what.lower())) & _SETUP_WORDS:
                    setup.add(what)
                elif not m.group(3) and int(m.group(4)) == 0 and int(m.group(5)) == 0:
                    instant += 1
                else:
                    finished.append((what, m))
        left_out = ([f"{len(setup)} kind(s) of set-up bar ({', '.join(sorted(setup))[:120]}): they time no "
                     "workload"] if setup else []) + (
            [f"{instant} bar(s) that finished inside their first second: no rate to check"] if instant else [])
        if not finished:
            raise conv.fail("(whole file)", "no completed progress bar of a workload (n/n [elapsed<remaining, rate "
                                            f"it/s]){'; left out: ' + '; '.join(left_out) if left_out else ''}")
        if left_out:
            conv.warn("left out: " + "; ".join(left_out))
        runs: list[dict[str, Any]] = []
        device = conv.device(None, where="(whole file; tqdm output does not name the device)")
        mode = conv.mode(None, "(whole file; tqdm output does not say whether it trained or inferred)")
        seen: set[str] = set()
        repeats: dict[str, int] = {}  # bars of one description are repeats of one setup; of another, another
        for what, m in finished:
            if m.group(0) in seen:
                continue
            seen.add(m.group(0))
            repeats[what] = repeats.get(what, -1) + 1
            rate = float(m.group(6))
            shown = rate if m.group(7) == "it/s" else (1 / rate if rate > 0 else None)
            elapsed = int(m.group(3) or 0) * 3600 + int(m.group(4)) * 60 + int(m.group(5))
            steps = int(m.group(2))
            # the mean lies between n / (elapsed + 1) and n / elapsed (the elapsed time is printed in whole seconds)
            consistent = shown is not None and elapsed > 0 and steps / (elapsed + 1) <= shown <= steps / elapsed
            mean = not consistent and elapsed >= MIN_ELAPSED_S
            it_s = steps / (elapsed + 0.5) if mean else shown
            metrics: dict[str, Any] = {
                "iterations_per_s": positive(it_s),
                "duration_s": positive(float(elapsed)),
                "optimizer_steps": int(m.group(2)) if mode == "train" else None,
            }
            if conv.hints.batch_size and it_s:
                metrics["throughput_sps"] = it_s * conv.hints.batch_size
                metrics["throughput_derivation"] = "iterations_per_s x batch_size"
            runs.append(
                {
                    "run_id": conv.run_id(len(runs)),
                    "status": "ok",
                    "device": dict(device),
                    "config": {
                        "workload": conv.hints.workload or "unknown",
                        "mode": mode,
                        "precision": conv.precision(None),
                        "batch_size": conv.hints.batch_size,
                        "repeat_index": repeats[what],
                        "tag": what or None,
                    },
                    "metrics": metrics,
                    "notes": f"tqdm bar: {m.group(0)}" + (
                        f"; its shown rate is a moving average outside its mean's range: rate = {steps} iterations "
                        f"/ {elapsed}.5 s" if mean else "" if consistent else
                        f"; the rate as shown (a moving average; {elapsed} s in whole seconds is too coarse to check)"),
                }
            )
        return conv.document(runs)
