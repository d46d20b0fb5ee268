"""Reading a page's settings from its URL: values the database does not know are reported to
the user (never silently replaced by something else), and the page writes its settings back so
a link reproduces what is on screen."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from decision.money import CostSettings


@dataclass
class UrlReader:
    """Reads query parameters and collects what it could not use, for one warning."""

    params: Mapping[str, list[str]]
    problems: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, query_params: object) -> UrlReader:
        get_all = query_params.get_all  # type: ignore[attr-defined]
        return cls({k: list(get_all(k)) for k in query_params})  # type: ignore[attr-defined]

    def many(self, key: str, options: Iterable[str], label: str) -> list[str]:
        known = set(options)
        given = self.params.get(key, [])
        unknown = [v for v in given if v not in known]
        if unknown:
            self.problems.append(f"{label} {', '.join(repr(v) for v in unknown)} (not in this database)")
        return [v for v in dict.fromkeys(given) if v in known]

    def one(self, key: str, options: Iterable[str], label: str) -> str | None:
        given = self.params.get(key, [])
        if not given:
            return None
        options = list(options)
        if given[0] in options:
            return given[0]
        self.problems.append(f"{label} {given[0]!r} (not one of the choices)")
        return None

    def number(self, key: str, label: str, lo: float, hi: float) -> float | None:
        given = self.params.get(key, [])
        if not given:
            return None
        try:
            value = float(given[0])
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and lo <= value <= hi):
            self.problems.append(f"{label} {given[0]!r} (expected a number from {lo:g} to {hi:g})")
            return None
        return value

    def cost_settings(self, currencies: Sequence[str]) -> CostSettings:
        """The cost settings the link gives (CostSettings.QUERY); a currency with no price or
        exchange rate in this database is reported and the default one used (the others stand)."""
        settings, problems = CostSettings.from_query({k: v for k, v in self.params.items() if k in CostSettings.QUERY})
        self.problems += problems
        if settings.currency not in currencies:
            self.problems.append(f"currency {settings.currency!r} (no price or exchange rate in it)")
            settings = replace(settings, currency=CostSettings().currency)
        return settings

    def warning(self) -> str | None:
        if not self.problems:
            return None
        return "This link asks for " + "; ".join(self.problems) + ". Not applied: pick from the choices below."
