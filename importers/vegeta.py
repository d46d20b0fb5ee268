"""vegeta's report (`vegeta report` text, `vegeta report -type=json`), as its writer writes them (tsenart/vegeta
lib/reporters.go `NewTextReporter`, lib/metrics.go `Metrics`): one attack at a constant rate on an endpoint.

    Requests      [total, rate, throughput]         100, 10.10, 2.21
    Duration      [total, attack, wait]             45.194s, 9.9s, 35.294s
    Latencies     [min, mean, 50, 90, 95, 99, max]  12.433s, 26.17s, 29.448s, 34.631s, 35.094s, 35.546s, 35.642s
    Success       [ratio]                           100.00%

`rate` is the requests sent a second (the load offered), `throughput` the successful requests a second over the
attack and the wait for the last answer (`Success * Requests / (Duration + Wait)`); latencies are each request's,
end to end (Go durations in the text, nanoseconds in the JSON). vegeta names neither the model nor the device.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, as_dict, num, positive
from joulebench.metrics import E2E
from joulebench.units import duration_s

_TEXT = re.compile(r"^(?P<name>Requests|Duration|Latencies|Success)\s+\[(?P<keys>[^\]]{1,80})\]\s+"
                   r"(?P<values>.{1,300})$")
_LATENCY_KEYS = {"mean": "avg", "50": "p50", "90": "p90", "95": "p95", "99": "p99"}
_JSON_LATENCY = {"mean": "avg", "50th": "p50", "90th": "p90", "95th": "p95", "99th": "p99"}
NS_PER_MS = 1e6
_REPORT_LINE = re.compile(r"(?m)^[ \t>`]*Requests\s+\[total, rate, throughput\]")
# the lines a person writes above a report to say what it was ('Rate: 5', '### 10 req/s'): its setup, in the tag
_SAID = re.compile(r"^(?:#{1,6}\s*(?P<heading>[^#].{0,60})|(?P<key>[A-Za-z][\w ]{0,20}):\s*(?P<value>\S.{0,30}))$")
MAX_REPORTS = 500



def _json_report(source: Source) -> dict[str, Any] | None:
    doc = source.json
    if isinstance(doc, dict) and {"latencies", "requests", "rate", "throughput", "success"} <= set(doc):
        return doc
    return None


class VegetaImporter(Importer):
    NAME = "vegeta"
    TOOL = "vegeta"
    DESCRIPTION = "vegeta report (text or -type=json): one attack at a constant rate"

    def sniff(self, source: Source) -> bool:
        return _REPORT_LINE.search(source.head) is not None or _json_report(source) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = _json_report(conv.source)
        reports = [(self._json(conv, doc), "")] if doc is not None else self._text(conv)
        if len(reports) > 1:
            conv.warn(f"{len(reports)} vegeta reports in one file: a run each, told apart by the lines above each "
                      "(its rate, duration, timeout) in the tag")
        conv.warn("vegeta names neither the model nor the device (it measures an endpoint): give them with --workload "
                  "and --device, or label the run")
        return conv.document([self._run(conv, i, figures, said) for i, (figures, said) in enumerate(reports)])

    @staticmethod
    def _run(conv: Conversion, index: int, figures: dict[str, Any], said: str) -> dict[str, Any]:
        requests, rate, throughput = figures["requests"], figures["rate"], figures["throughput"]
        success = figures.get("success")
        metrics: dict[str, Any] = {"energy_missing_reason": "vegeta measures no power"}
        if throughput is not None and throughput > 0:
            metrics["requests_per_s"] = throughput
        if requests is not None and success is not None:
            completed = round(requests * success)
            metrics.update(requests_completed=int(completed), requests_failed=int(requests - completed))
        if (total := positive(figures.get("duration_s"))) is not None:
            metrics["duration_s"] = total
        for stat, ms in figures["latencies_ms"].items():
            if (ms := positive(ms)) is not None:
                metrics[E2E.stat(stat).name] = ms
        config = conv.endpoint_config()
        if (offered := positive(rate)) is not None:
            config.update(load_kind="rate", request_rate_per_s=offered, arrival="constant")
        if said:
            config["tag"] = said
        return {"run_id": conv.run_id(index), "status": "ok",
               "device": conv.device(None, "gpu", where="(whole file; vegeta measures an endpoint and names no GPU)"),
               "config": config, "metrics": metrics,
               "notes": "vegeta attack: requests/s = its throughput (successful requests over the attack and the wait "
                        "for the last answer); the rate offered in the config; latencies end to end"}

    @staticmethod
    def _json(conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        lat = as_dict(doc.get("latencies"))
        where = "latencies"
        duration, wait = num(doc.get("duration"), "duration", conv), num(doc.get("wait"), "wait", conv)
        return {
            "requests": num(doc.get("requests"), "requests", conv),
            "rate": num(doc.get("rate"), "rate", conv),
            "throughput": num(doc.get("throughput"), "throughput", conv),
            "success": num(doc.get("success"), "success", conv),
            "duration_s": (duration + (wait or 0)) / 1e9 if duration is not None else None,
            "latencies_ms": {stat: v / NS_PER_MS for key, stat in _JSON_LATENCY.items()
                             if (v := num(lat.get(key), f"{where}.{key}", conv)) is not None},
        }

    @staticmethod
    def _text(conv: Conversion) -> list[tuple[dict[str, Any], str]]:
        """Each report in the text (a person may paste several, each under a few lines saying its rate) with the
        words above it."""
        reports: list[tuple[dict[str, tuple[int, list[str], list[str]]], str]] = []
        said: list[str] = []
        for n, raw in enumerate((conv.source.text or "").splitlines(), 1):
            line = raw.strip().strip("`>").strip()
            if (m := _TEXT.match(line)) is not None:
                keys = [k.strip() for k in m.group("keys").split(",")]
                values = [v.strip() for v in m.group("values").split(",")]
                if m.group("name") == "Requests":
                    if len(reports) >= MAX_REPORTS:
                        raise conv.fail(f"line {n}", f"more than {MAX_REPORTS} vegeta reports in one file")
                    reports.append(({}, ", ".join(dict.fromkeys(said))[:120]))
                    said = []
                if reports:
                    reports[-1][0].setdefault(m.group("name"), (n, keys, values))
            elif (w := _SAID.match(line)) is not None and w.group("heading"):
                said = [w.group("heading").strip()]  # a heading starts what the next report is said to be
            elif w is not None and not line.startswith(("Bytes", "Status", "Error")):
                said.append(f"{w.group('key').strip()} {w.group('value').strip()}")
        if not reports:
            raise conv.fail("line 1", "no 'Requests [total, rate, throughput]' line: import vegeta's report")
        return [(VegetaImporter._figures(conv, lines), words) for lines, words in reports]

    @staticmethod
    def _figures(conv: Conversion, lines: dict[str, tuple[int, list[str], list[str]]]) -> dict[str, Any]:
        def figure(name: str, key: str) -> str | None:
            n, keys, values = lines.get(name, (0, [], []))
            return values[keys.index(key)] if key in keys and keys.index(key) < len(values) else None

        def seconds(name: str, key: str) -> float | None:
            text = figure(name, key)
            if text is None:
                return None
            s = duration_s(text)
            if s is None:
                raise conv.fail(f"line {lines[name][0]}: {name} {key}", f"{text[:30]!r} is not a Go duration")
            return s

        success = figure("Success", "ratio")
        n = lines["Requests"][0]
        latencies = {stat: s * 1e3 for key, stat in _LATENCY_KEYS.items()
                     if (s := seconds("Latencies", key)) is not None}
        ratio = num(success.rstrip("%"), "Success ratio", conv) if success else None
        return {
            "requests": num(figure("Requests", "total"), f"line {n}: total", conv),
            "rate": num(figure("Requests", "rate"), f"line {n}: rate", conv),
            "throughput": num(figure("Requests", "throughput"), f"line {n}: throughput", conv),
            "success": ratio / 100 if ratio is not None else None,
            "duration_s": seconds("Duration", "total"),
            "latencies_ms": latencies,
        }
