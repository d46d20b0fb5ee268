"""Decide's whole answer, typed: from the inputs (decision.inputs) and the data they are asked of, the
per-sample answer (decision.decide) with its sentences, best-setting notes, grade warning and figure
table computed beside it, and for inference the per-token answer (decision.token_target). The Decide
page renders it; `joulebench decide` prints it or writes it as JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from db import Store, queries
from decision import sentences, tables, token_target
from decision.decide import Answer, decide
from decision.inputs import DecideInputs
from decision.markdown import plain
from decision.money import Rates
from decision.scope import Job
from decision.text import cited


@dataclass(frozen=True)
class DecideData:
    """What Decide reads: the runs, the sources' findings, the device catalog and Jetson power modes, the
    exchange rates; the configurations (their stored aggregates, for the per-token question; None: not
    asked) and the best power settings (rows of explorer.power_settings.best_settings; None: not asked)."""

    runs: pl.DataFrame
    findings: pl.DataFrame
    catalog: pl.DataFrame
    modes: pl.DataFrame
    rates: Rates
    configurations: pl.DataFrame | None = None
    best: pl.DataFrame | None = None

    @classmethod
    def read(cls, store: Store) -> DecideData:
        """The frames the Decide page reads (explorer.data), from an open store: seed files named by title."""
        return cls(cited(queries.runs_table(store)), cited(queries.findings(store)), cited(queries.devices(store)),
                   cited(queries.power_modes(store)), Rates.from_frame(queries.exchange_rates(store)),
                   cited(queries.configurations(store)))


@dataclass(frozen=True)
class Decision:
    """The answer to one DecideInputs: the job they pick, the per-sample answer and what is said of it
    (Markdown, names escaped), and the per-token answer (None unless asked: inference, with the
    configurations read)."""

    inputs: DecideInputs
    job: Job
    answer: Answer
    sentences: list[str]  # the verdict: headline, faster, fewer joules, cost, constraints
    at_best: list[str]  # one sentence per device taken at its best power setting
    stays: list[str]  # one per device that stays at its measured figures, and why
    grade_warning: str | None
    figure_table: pl.DataFrame
    tokens: token_target.TokenDecision | None = None

    @property
    def devices(self) -> list[str]:
        return self.answer.devices

    def to_dict(self) -> dict[str, Any]:
        """The answer as JSON-ready values: sentences as the page shows them (Markdown) and as text."""
        s = self.inputs.settings
        costs = [{"device": d, "cost_per_1m_samples": a.cost_per_1m, "currency": s.currency,
                  "utilisation": s.utilisation, "missing": a.cost_missing or None}
                 for d, a in self.answer.per_device.items()]
        return {"job": self.job.describe(), "inputs": self.inputs.to_query(), "devices": self.devices,
                "cheapest_first": self.answer.costed(),
                "sentences": [plain(line) for line in self.sentences], "sentences_markdown": self.sentences,
                "best_setting_notes": [plain(line) for line in [*self.at_best, *self.stays]],
                "grade_warning": plain(self.grade_warning) if self.grade_warning else None,
                "costs": costs, "figures": self.figure_table.to_dicts(),
                "gaps": [{"device": g.device, "what": g.what, "fill": g.fill} for g in self.answer.gaps],
                "crossovers": [{"cheaper_below": lo, "cheaper_above": hi, "utilisation": u}
                               for lo, hi, u in self.answer.crossovers()],
                "tokens": self.tokens.to_dict() if self.tokens is not None else None}


def answer(inputs: DecideInputs, data: DecideData) -> Decision:
    """Decide's answer to `inputs` from `data` (ValueError from the per-token question for a shape the
    candidates lack)."""
    job = inputs.job(data.runs)
    found = decide(data.runs, data.findings, data.catalog, data.modes, data.rates, inputs.devices, job,
                   inputs.settings, inputs.constraints, data.best if inputs.best else None)
    at_best, stays = sentences.best_setting_notes(found)
    tokens = None
    if inputs.mode == "infer" and data.configurations is not None:
        tokens = token_target.decide(data.configurations, found.devices, inputs.shape, inputs.target, data.catalog,
                                     data.rates, inputs.settings)
    return Decision(inputs, job, found, sentences.verdict(found), at_best, stays, sentences.grade_warning(found),
                    tables.figure_table(found), tokens)
