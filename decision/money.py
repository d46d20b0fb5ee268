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

from decision.text import money, sig

J_PER_KWH = 3.6e6
SECONDS_PER_YEAR = 365.25 * 24 * 3600

COST_FORMULA = (
    "cost per sample at utilisation u = electricity while busy + electricity while idle + hardware\n"
    "electricity while busy = J/example ÷ 3,600,000 × price per kWh × PUE\n"
    "electricity while idle = idle power (W) × (1 − u) ÷ u ÷ throughput ÷ 3,600,000 × price per kWh × PUE\n"
    "hardware = device price ÷ (throughput × lifetime in seconds × u)\n"
    "cost per 1M samples = 1,000,000 × cost per sample, in the display currency\n"
    "shown as electricity (busy + idle) + hardware = total; the electricity price, PUE, lifetime and "
    "utilisation are your numbers"
)
NO_PRICE = "no price: add one on Devices"  # the hardware part of a device without a price, and how to get it


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
        return (f"your {self.electricity_per_kwh:g} {self.currency} per kWh, PUE {self.pue:g}, "
                f"{self.lifetime_years:g} years, {busy_text(self.utilisation)}")


def busy_text(u: float) -> str:
    """'50% utilisation (12 hours a day)': the share busy as a percentage and as the hours a day it means."""
    return f"{u * 100:.0f}% utilisation ({sig(u * 24)} hours a day)"


@dataclass(frozen=True)
class CostSplit:
    """A cost per 1M samples or output tokens as electricity + hardware = total, in one currency. The
    electricity part (busy, plus idle where the idle power is known) needs no device price and is known
    whenever the energy figure is; the hardware part needs the price (else `hardware_missing` says how to
    get it). `workings` are the two formulas with their numbers, to check the figure by hand."""

    electricity: float | None
    hardware: float | None
    currency: str
    per: str = "samples"  # what the 1M counts: samples | output tokens
    hardware_missing: str = NO_PRICE
    electricity_missing: str = ""
    workings: tuple[str, ...] = ()

    @property
    def total(self) -> float | None:
        return None if self.electricity is None or self.hardware is None else self.electricity + self.hardware

    def text(self) -> str:
        """'0.00195 USD electricity + 0.41 USD hardware = 0.412 USD per 1M samples', or with the hardware
        part missing, the electricity alone and how to get the rest."""
        c = self.currency
        if self.electricity is None:
            return f"not known per 1M {self.per} ({self.electricity_missing or 'no energy figure'})"
        if self.hardware is None:
            return (f"{money(self.electricity, c)} electricity + hardware not known ({self.hardware_missing}) "
                    f"per 1M {self.per}")
        return (f"{money(self.electricity, c)} electricity + {money(self.hardware, c)} hardware = "
                f"{money(self.total, c)} per 1M {self.per}")


def cost_split(j_per_unit: float | None, per_s: float | None, idle_power_w: float | None, price: float | None,
               settings: CostSettings, per: str = "samples", *, price_missing: str = NO_PRICE,
               energy_missing: str = "") -> CostSplit:
    """Cost per 1M samples (or output tokens: `j_per_unit` J/token, `per_s` tokens/s) as electricity +
    hardware, each part with its formula and numbers; the same sums as `cost_terms` at the utilisation."""
    u, cur = settings.utilisation, settings.currency
    unit = "example" if per == "samples" else per.removesuffix("s")
    rate = "samples/s" if per == "samples" else f"{per}/s"
    kwh = f"{settings.electricity_per_kwh:g} {cur} per kWh (your price) × PUE {settings.pue:g}"
    per_joule = settings.electricity_per_kwh * settings.pue / J_PER_KWH * 1e6
    workings: list[str] = []
    electricity = None
    if j_per_unit is not None:
        electricity = j_per_unit * per_joule
        text = f"electricity = {sig(j_per_unit)} J/{unit} × 1,000,000 ÷ 3,600,000 × {kwh}"
        if idle_power_w is not None and per_s and u < 1:
            electricity += idle_power_w / per_s * (1 - u) / u * per_joule
            text += (f" + idle {sig(idle_power_w)} W ÷ {sig(per_s)} {rate} × (1 − {sig(u)}) ÷ {sig(u)} × 1,000,000 "
                     "÷ 3,600,000 × the same price and PUE")
        elif idle_power_w is not None and not per_s:
            text += " (idle electricity not counted: no throughput to spread it over)"
        workings.append(f"{text} = {money(electricity, cur)} per 1M {per}")
    hardware = None
    if price is not None and per_s:
        lifetime_s = settings.lifetime_years * SECONDS_PER_YEAR
        hardware = price / (per_s * lifetime_s * u) * 1e6
        workings.append(f"hardware = {money(price, cur)} ÷ ({sig(per_s)} {rate} × {settings.lifetime_years:g} years "
                        f"× {SECONDS_PER_YEAR:,.0f} s a year × {sig(u)} busy) × 1,000,000 = {money(hardware, cur)} "
                        f"per 1M {per}")
    missing_hw = price_missing if price is None else "" if per_s else f"no {rate} to spread the price over"
    return CostSplit(electricity, hardware, cur, per, missing_hw, energy_missing, tuple(workings))


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
