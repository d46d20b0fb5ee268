"""whisper.cpp's model benchmark (ggml-org/whisper.cpp `whisper-bench`, and the table its scripts/bench-all.sh and
bench.py print from it), learned from the writer: `whisper-bench -m MODEL -t N [-fa]` times one encoder pass over a
30-second window, 256 single-token decoder calls, 64 batched calls of 5 tokens and 16 prompt calls of 256 tokens, then
`whisper_print_timings` prints each as a total and its 'ms per run', where a run of the decoder is one token (the
batched and prompt counts add each call's tokens):

    whisper_print_timings:   encode time =  1157.86 ms /     1 runs ( 1157.86 ms per run)
    whisper_print_timings:   decode time =  1155.00 ms /   256 runs (    4.51 ms per run)
    whisper_print_timings:   prompt time =   598.39 ms /  4096 runs (    0.15 ms per run)

The scripts tabulate the 'ms per run' of each (`| Config | Model | Th | FA | Enc. | Dec. | Bch5 | PP | Commit |`, a
hand-filled `CPU` or `GPU` column in older pages); the unit, ms, is the writer's, never printed in the table. A run
is one model line or one log: its decode rate (tokens/s) is 1000 / Dec. (one sequence, a token a call), its prompt
rate 1000 / PP. The encoder's time for the 30-second window, the batched decode's time a token, the load time and the
commit go into the notes: JouleBench has no field for one stage of a model. The device is a log's `found device:` /
`Device 0:` line, a table's CPU / GPU column or the heading above the table, where it names one JouleBench knows.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count
from importers.device_text import device_named, kind_of_device
from importers.table_text import heading_device

_TIMING = re.compile(r"^\s{0,8}whisper_print_timings:\s{1,8}(?P<what>load|encode|decode|batchd|prompt|total) time\s?="
                     r"\s{0,12}(?P<total>\d{1,12}(?:\.\d{1,6})?)\s?ms(?:\s{0,4}/\s{0,12}(?P<runs>\d{1,12})\s{1,4}runs"
                     r"\s{0,4}\(\s{0,12}(?P<per>\d{1,12}(?:\.\d{1,6})?)\s?ms per run\))?", re.MULTILINE)
_MODEL_FILE = re.compile(r"loading model from '(?:[^'\n]{0,400}[/\\])?(?:ggml-)?(?P<model>[^'/\\\n]{1,120}?)\.bin'")
_DEVICE = re.compile(r"(?:ggml_metal_init: found device:|Device 0:)\s{0,4}(?P<name>[^,\n]{2,120}?)\s*(?:,|$)",
                     re.MULTILINE)
_THREADS = re.compile(r"system_info: n_threads = (\d{1,4})")
_HEADER = re.compile(r"^\s{0,3}\|(?P<cells>.*\|\s*Model\s*\|.*\|\s*Enc\.\s*\|.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<text>[^\n]{1,200}?)[ \t#]*$")
NO_ENERGY = "whisper.cpp's bench measures no power"


class WhisperBenchImporter(Importer):
    NAME = "whisper-bench"
    TOOL = "whisper.cpp"
    DESCRIPTION = ("whisper.cpp's whisper-bench output ('whisper_print_timings: encode time = ...') or the table "
                   "bench-all.sh prints from it ('| Config | Model | Th | FA | Enc. | Dec. | Bch5 | PP |')")

    def sniff(self, source: Source) -> bool:
        head = source.head
        return ("whisper_print_timings:" in head and "decode time" in head) or any(
            _HEADER.match(line) for line in head.splitlines()[:2000])

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        runs = self._table(conv, text) if not _TIMING.search(text[:2_000_000]) else [self._log(conv, text)]
        if not runs:
            raise conv.fail("(whole file)", "a whisper.cpp bench table whose rows give no decoder time (Dec. or PP): "
                            "encoder times alone fill no field JouleBench stores; run bench-all.sh with the decoder "
                            "benchmark (its default)")
        return conv.document(runs)

    def _log(self, conv: Conversion, text: str) -> dict[str, Any]:
        per: dict[str, float] = {}
        load = None
        for line in text.splitlines()[:200_000]:
            if (m := _TIMING.match(line)) is None:
                continue
            if m.group("what") == "load":
                load = float(m.group("total"))
            elif m.group("per") is not None and int(m.group("runs") or 0) > 0:  # the total over the runs: the
                per[m.group("what")] = float(m.group("total")) / int(m.group("runs"))  # printed 0.15 is rounded
        head = text[:2_000_000]
        model, device, threads = _MODEL_FILE.search(head), _DEVICE.search(head), _THREADS.search(head)
        return self._run(conv, 0, "the log", model.group("model") if model else None,
                         device.group("name").strip() if device else None, threads.group(1) if threads else None,
                         None, None, per.get("encode"), per.get("decode"), per.get("batchd"), per.get("prompt"),
                         [f"load {load:g} ms"] if load is not None else [])

    def _table(self, conv: Conversion, text: str) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = []
        header: list[str] | None = None
        heading = ""
        for n, line in enumerate(text.splitlines()[:200_000], 1):
            if (h := _HEADING.match(line)) is not None:
                heading, header = h.group("text").strip(), None
            elif (m := _HEADER.match(line)) is not None:
                header = [c.strip() for c in m.group("cells").strip().strip("|").split("|")]
            elif header is not None and line.lstrip().startswith("|") and not set(line) <= set("|-: \t"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                row = dict(zip(header, cells, strict=False))
                dec, pp = _ms(row.get("Dec.")), _ms(row.get("PP"))
                if dec is None and pp is None:
                    continue
                check_run_count(conv, len(runs) + 1, "its model rows")
                named = row.get("CPU") or row.get("GPU") or ""
                device = device_named(named) if named and named != "<todo>" else heading_device(heading)
                runs.append(self._run(conv, len(runs), f"line {n}", row.get("Model"), device, row.get("Th"),
                                      row.get("FA"), row.get("Config"), _ms(row.get("Enc.")), dec,
                                      _ms(row.get("Bch5")), pp, [f"commit {row['Commit']}"] if row.get("Commit")
                                      else []))
            elif not line.strip().startswith("|"):
                header = None if line.strip() else header
        return runs

    @staticmethod
    def _run(conv: Conversion, index: int, where: str, model: str | None, device: str | None, threads: str | None,
             fa: str | None, config: str | None, enc: float | None, dec: float | None, batched: float | None,
             prompt: float | None, notes: list[str]) -> dict[str, Any]:
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        said = [f"whisper-bench ({where}), ms per run as whisper_print_timings prints them"]
        if dec:
            metrics["decode_tokens_per_s"] = 1000.0 / dec
            said.append(f"decode {dec:g} ms a token: {1000.0 / dec:.4g} tokens/s for one sequence")
        if prompt:
            metrics["prompt_tokens_per_s"] = 1000.0 / prompt
            said.append(f"prompt {prompt:g} ms a token: {1000.0 / prompt:.4g} tokens/s")
        if enc is not None:
            said.append(f"encoder {enc:g} ms for one 30-second window (a stage: no field)")
        if batched is not None:
            said.append(f"batched decode (5 tokens a call) {batched:g} ms a token")
        name = (model or "").strip() or None
        quantized = re.search(r"(?i)q\d_\d|q\d_k|q8_0", name or "")
        tag = ", ".join(p for p in (config and config.strip(), f"{threads} threads" if threads else None,
                                    f"flash attention {fa}" if fa not in (None, "") else None) if p)
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(device, kind_of_device(device) if device else None,
                                  where=f"({where}: whisper-bench names the GPU only when one ran)"),
            "config": {"workload": conv.hints.workload or (f"whisper {name}" if name else "whisper"),
                       "model": f"whisper {name}" if name else None, "task": "speech-recognition", "mode": "infer",
                       "precision": conv.precision(None), "quantization": quantized.group().upper()
                       if quantized else None, "batch_size": 1, "engine": "whisper.cpp", "tag": tag[:200] or None},
            "metrics": metrics,
            "notes": "; ".join(said + notes)[:2000],
        }


def _ms(cell: str | None) -> float | None:
    try:
        value = float((cell or "").strip())
    except ValueError:
        return None
    return value if value > 0 else None
