"""Money: one display currency per view, prices converted with the stored exchange rates, and
the cost of a sample with its duty cycle.

A device bought for a job is busy a share `u` of its lifetime (the utilisation) and idle the
rest. Per sample it costs:

    electricity while busy = J/example ÷ 3,600,000 × price per kWh × PUE
    electricity while idle = idle W × (1 − u) ÷ u ÷ throughput ÷ 3,600,000 × price per kWh × PUE
    hardware               = device price ÷ (throughput × lifetime in seconds × u)

so cost(u) = A + B ÷ u with A = busy − idle share, B = idle share + hardware: two devices swap
places at most once as u moves, at u* = (B₁ − B₂) ÷ (A₂ − A₁) (the crossover utilisation).
Amounts in two currencies are never added or ranked together: a price without a rate to the
display currency leaves the cost missing, with that reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import polars as pl

J_PER_KWH = 3.6e6
SECONDS_PER_YEAR = 365.25 * 24 * 3600

COST_FORMULA = (
    "cost per sample at utilisation u = electricity while busy + electricity while idle + hardware\n"
    "electricity while busy = J/example ÷ 3,600,000 × price per kWh × PUE\n"
    "electricity while idle = idle power (W) × (1 − u) ÷ u ÷ throughput ÷ 3,600,000 × price per kWh × PUE\n"
    "hardware = device price ÷ (throughput × lifetime in seconds × u)\n"
    "cost per 1M samples = 1,000,000 × cost per sample, in the display currency"
)


@dataclass(frozen=True)
class Rate:
    from_currency: str
    to_currency: str
    rate: float
    rate_date: str
    source: str


@dataclass(frozen=True)
class Conversion:
    """An amount converted into the display currency, with the rates used (empty when none)."""

    amount: float | None
    currency: str
    rates: tuple[Rate, ...] = ()
    missing_reason: str | None = None

    def describe(self) -> str:
        return "; ".join(f"1 {r.from_currency} = {r.rate:g} {r.to_currency} ({r.rate_date}, {r.source})"
                         for r in self.rates)


class Rates:
    """Exchange rates as stored: each usable both ways, and through one other currency."""

    def __init__(self, rates: list[Rate]) -> None:
        self._direct: dict[tuple[str, str], tuple[float, tuple[Rate, ...]]] = {}
        for r in rates:
            self._direct[(r.from_currency, r.to_currency)] = (r.rate, (r,))
            self._direct.setdefault((r.to_currency, r.from_currency), (1.0 / r.rate, (r,)))

    @classmethod
    def from_frame(cls, frame: pl.DataFrame) -> Rates:
        return cls([Rate(r["from_currency"], r["to_currency"], float(r["rate"]), str(r["rate_date"]),
                         str(r["source"])) for r in frame.iter_rows(named=True)])

    def currencies(self) -> set[str]:
        return {c for pair in self._direct for c in pair}

    def factor(self, from_currency: str, to_currency: str) -> tuple[float, tuple[Rate, ...]] | None:
        if from_currency == to_currency:
            return 1.0, ()
        if (from_currency, to_currency) in self._direct:
            return self._direct[(from_currency, to_currency)]
        for (a, via), (f1, used1) in self._direct.items():
            if a == from_currency and (via, to_currency) in self._direct:
                f2, used2 = self._direct[(via, to_currency)]
                return f1 * f2, used1 + used2
        return None

    def convert(self, amount: float | None, from_currency: str | None, to_currency: str) -> Conversion:
        if amount is None:
            return Conversion(None, to_currency, missing_reason="no price in the catalog")
        if not from_currency:
            return Conversion(None, to_currency, missing_reason="the catalog price has no currency")
        found = self.factor(from_currency, to_currency)
        if found is None:
            return Conversion(None, to_currency, missing_reason=(
                f"price in {from_currency} and no {from_currency} to {to_currency} exchange rate "
                "(add one on the Devices page)"))
        if amount < 0:
            return Conversion(None, to_currency, missing_reason="a negative price in the catalog (fix it on the "
                              "Devices page)")
        factor, used = found
        return Conversion(amount * factor, to_currency, used)


@dataclass(frozen=True)
class CostSettings:
    """The user's numbers for cost; they round-trip through the URL (`kwh=0.3&util=0.1...`)."""

    currency: str = "USD"
    electricity_per_kwh: float = 0.15  # in `currency`
    pue: float = 1.0
    lifetime_years: float = 3.0
    utilisation: float = 0.5

    QUERY = {"currency": "currency", "kwh": "electricity_per_kwh", "pue": "pue", "years": "lifetime_years",
             "util": "utilisation"}
    LIMITS = {"electricity_per_kwh": (0.0, 10.0), "pue": (1.0, 3.0), "lifetime_years": (0.25, 15.0),
              "utilisation": (0.01, 1.0)}

    def __post_init__(self) -> None:
        for name, (lo, hi) in self.LIMITS.items():
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
                raise ValueError(f"{name} must be between {lo:g} and {hi:g}")

    @classmethod
    def from_query(cls, params: Mapping[str, list[str]]) -> tuple[CostSettings, list[str]]:
        """Settings from the URL; values that cannot be used are reported, not silently replaced."""
        values: dict[str, object] = {}
        problems = []
        for key, name in cls.QUERY.items():
            given = params.get(key)
            if not given:
                continue
            if name == "currency":
                code = given[0].strip().upper()
                if len(code) == 3 and code.isalpha():
                    values[name] = code
                else:
                    problems.append(f"{key}={given[0]!r} is not a currency code")
                continue
            try:
                number = float(given[0])
                lo, hi = cls.LIMITS[name]
                if not lo <= number <= hi:
                    raise ValueError
                values[name] = number
            except ValueError:
                lo, hi = cls.LIMITS[name]
                problems.append(f"{key}={given[0]!r} is not a number from {lo:g} to {hi:g}")
        return cls(**values), problems  # type: ignore[arg-type]

    def to_query(self) -> dict[str, list[str]]:
        return {key: [f"{getattr(self, name):g}" if name != "currency" else self.currency]
                for key, name in self.QUERY.items()}

    def with_utilisation(self, u: float) -> CostSettings:
        return replace(self, utilisation=u)

    def describe(self) -> str:
        return (f"{self.electricity_per_kwh:g} {self.currency} per kWh, PUE {self.pue:g}, "
                f"{self.lifetime_years:g} years, {self.utilisation * 100:.0f}% utilisation")


@dataclass(frozen=True)
class CostTerms:
    """Cost per 1M samples as A + B ÷ u, split into its parts (display currency)."""

    busy_energy: float  # electricity while busy, per 1M samples
    idle_energy_per_u: float  # idle electricity at u: this × (1 − u) ÷ u
    hardware_per_u: float  # hardware at u: this ÷ u
    idle_included: bool = True

    def at(self, u: float) -> float:
        return self.busy_energy + self.idle_energy_per_u * (1 - u) / u + self.hardware_per_u / u

    def split(self, u: float) -> dict[str, float]:
        return {"electricity while busy": self.busy_energy,
                "electricity while idle": self.idle_energy_per_u * (1 - u) / u,
                "hardware": self.hardware_per_u / u}

    @property
    def a(self) -> float:
        return self.busy_energy - self.idle_energy_per_u

    @property
    def b(self) -> float:
        return self.idle_energy_per_u + self.hardware_per_u


def cost_terms(j_per_sample: float, throughput_sps: float, idle_power_w: float | None, price: float,
               settings: CostSettings) -> CostTerms:
    """The parts of the cost per 1M samples (idle power None: idle electricity left out)."""
    per_joule = settings.electricity_per_kwh * settings.pue / J_PER_KWH * 1e6
    lifetime_s = settings.lifetime_years * SECONDS_PER_YEAR
    idle_j = (idle_power_w or 0.0) / throughput_sps
    return CostTerms(j_per_sample * per_joule, idle_j * per_joule, price / (throughput_sps * lifetime_s) * 1e6,
                     idle_power_w is not None)


def crossover(first: CostTerms, second: CostTerms, lo: float = 0.01, hi: float = 1.0) -> float | None:
    """The utilisation in (lo, hi) at which the two costs are equal (the ranking flips), or None."""
    da = second.a - first.a
    if da == 0:
        return None
    u = (first.b - second.b) / da
    return u if lo < u < hi else None


# --- what a catalog price is and where it comes from ----------------------------------------

PRICE_COVERS = {"gpu": "the card only (needs a host PC)", "jetson": "a complete system (developer kit)",
                "cpu": "the processor only (needs a board, memory and storage)"}


def price_covers(kind: str | None) -> str:
    """What a catalog price buys for a kind of device: a GPU's price is the bare card, a Jetson's
    the developer kit with its board, memory and storage, a CPU's the chip alone."""
    return PRICE_COVERS.get(kind or "", "not stated")


def price_entered(row: Mapping[str, object]) -> str | None:
    """'entered by you, 2026-11-24' for a price a person typed on the Devices page; None for a
    price from the published catalog."""
    when = row.get("price_entered_at")
    if when is None:
        return None
    day = when.date().isoformat() if hasattr(when, "date") else str(when)[:10]
    return f"entered by you, {day}"


def price_origin(row: Mapping[str, object]) -> str:
    """Where a catalog price comes from, for a citation: the user ('entered by you, <date>', with
    the source they gave, if any) or the published source with its kind and date."""
    entered = price_entered(row)
    given = str(row.get("price_source") or "").strip()
    if entered:
        return f"{entered} ({given})" if given else entered
    kind = str(row.get("price_kind") or "").strip()
    date = str(row.get("price_date") or "").strip()
    head = " ".join(p for p in (f"{kind} price" if kind else "price", f"of {date}" if date else "") if p)
    return f"{head}; {given or row.get('citation') or 'source not stated'}"
