"""What Decide says: the answer (decision.decide.Answer) in sentences, in Markdown with every name and
citation escaped (decision.markdown.md), each computed from the figures beside it: the headline, who is
faster, who uses fewer joules, the cost and its duty cycle, the constraints, the best-setting notes."""

from __future__ import annotations

from decision.aggregates import NOT_GRADED, low_grade_warning, worst_grade
from decision.decide import Answer
from decision.figures import ENTERED, ESTIMATE, STATED, DeviceAnswer
from decision.like_for_like import Comparison, leader_of
from decision.markdown import md
from decision.money import CostTerms, price_covers
from decision.tables import device_split
from decision.text import money, pct, ratio, sig


def price_coverage_warning(answer: Answer) -> str | None:
    """When the candidates' prices buy different things (a bare card vs a complete system), say so
    (Markdown, names escaped): the cost per sample then compares unlike purchases."""
    covers = {d: price_covers(answer.per_device[d].kind) for d in answer.devices if answer.per_device[d].price.known}
    if len(set(covers.values())) < 2:
        return None
    each = "; ".join(f"{_name(d)}'s price buys {md(c)}" for d, c in covers.items())
    return (f"**The prices compare different things:** {each}. A card needs a host PC, whose price is not in its "
            "cost; to compare like for like, enter the price of the card with its host "
            "on the Devices page.")


def best_setting_notes(answer: Answer) -> tuple[list[str], list[str]]:
    """(one sentence per device taken at its best setting, one per device that stays at its measured
    figures and why), Markdown with every name escaped."""
    at_best = [f"{_name(d)} at {md(b.setting)} ({md(b.basis)}): {md(b.configuration)}, {md(b.recommendation)}."
               for d, b in answer.best.items()]
    stays = [f"{_name(d)} stays at its measured figures: {md(why)}." for d, why in answer.not_best.items()]
    return at_best, stays


# --- what the page says -------------------------------------------------------------------

def _name(device: str) -> str:
    return f"**{md(device)}**"


def _grades_text(c: Comparison) -> str:
    """'grades C vs D' (winner vs loser), or 'not graded' where nothing is stored."""
    gw, gl = c.grade_of(c.winner), c.grade_of(c.loser)
    if gw is None and gl is None:
        return NOT_GRADED
    if gw == gl:
        return f"grade {gw} on both sides"
    return f"grades {gw or NOT_GRADED} vs {gl or NOT_GRADED}"


def _comparison_sentence(c: Comparison, what: str, either: str, quoted: set[str]) -> str:
    """One comparison with its interval and grades; a source's quote is given once per page section.
    `what`: 'is faster at training than'; `either`: 'either is faster at training' (for the noise)."""
    about = f"(*{md(c.basis)}*, {_grades_text(c)}: {md(c.detail)}" + (f"; {md(c.noise)}" if c.noise else "") + ")"
    if c.low is not None and c.high is not None and c.within_noise:
        text = (f"{_name(c.winner)} vs {_name(c.loser)}: {c.factor:.2f}x ({c.low:.2f}-{c.high:.2f}, 95 % "
                f"interval), **within the noise**: the interval includes 1x, so the data does not show that "
                f"{either} {about}")
    elif c.low is not None and c.high is not None:
        text = (f"{_name(c.winner)} {what} {_name(c.loser)}: {c.factor:.2f}x ({c.low:.2f}-{c.high:.2f}, 95 % "
                f"interval) {about}")
    elif same_ratio(c.factor):
        alike = "are about as fast as each other" if c.what == "faster" else "use about as many joules"
        text = f"{_name(c.winner)} and {_name(c.loser)} {alike}: {c.factor:.2f}x, which rounds to 1.0x {about}"
    else:
        text = f"{_name(c.winner)} {what} {_name(c.loser)}: {ratio(c.factor)} {about}"
    if c.quote and c.quote not in quoted:
        quoted.add(c.quote)
        text += f" — “{md(c.quote)}”"
    return text


def speed_sentences(answer: Answer) -> list[str]:
    leader = leader_of(answer.devices, answer.speed)
    mode = "training" if answer.job.mode == "train" else "inference"
    if leader is None:
        return [f"**Faster:** the data holds no like-for-like {mode} throughput, stated ratio or estimate for "
                "these devices (see what is missing below)."]
    lines: list[str] = []
    quoted: set[str] = set()
    for other in answer.devices:
        if other == leader:
            continue
        pair = (leader, other) if (leader, other) in answer.speed else (other, leader)
        for c in answer.speed[pair]:
            lines.append(_comparison_sentence(c, f"is faster at {mode} than", f"either is faster at {mode}", quoted))
        if not answer.speed[pair]:
            lines.append(f"{_name(other)}: no like-for-like {mode} throughput, stated ratio or estimate "
                         f"against {_name(leader)}.")
    return [f"**Faster:** {lines[0]}", *lines[1:]] if lines else []


def energy_sentences(answer: Answer) -> list[str]:
    leader = leader_of(answer.devices, answer.energy)
    if leader is None:
        return ["**Fewer joules:** the data holds no energy figure for both of any two of these devices "
                "(see what is missing below)."]
    lines: list[str] = []
    quoted: set[str] = set()
    for other in answer.devices:
        if other == leader:
            continue
        pair = (leader, other) if (leader, other) in answer.energy else (other, leader)
        for c in answer.energy[pair]:
            lines.append(_comparison_sentence(c, "uses fewer joules than", "either uses fewer joules", quoted))
        if not answer.energy[pair]:
            lines.append(f"{_name(other)}: no energy figure to compare with {_name(leader)}.")
    return [f"**Fewer joules:** {lines[0]}", *lines[1:]] if lines else []


def cost_sentences(answer: Answer) -> list[str]:
    s = answer.settings
    u = s.utilisation
    cur = s.currency
    costed = answer.costed()
    head = (f"**Cost per 1M samples** at {u * 100:.0f}% utilisation over {s.lifetime_years:g} years, "
            f"{s.electricity_per_kwh:g} {cur} per kWh:")
    parts = []
    for d in answer.devices:
        ans = answer.per_device[d]
        if ans.terms is None:
            parts.append(f"{_name(d)} not known ({md(ans.cost_missing)})")
            continue
        bases = sorted({ans.cost_throughput.basis, ans.cost_energy.basis})
        entered = ans.price.source.rsplit("; ", 1)[-1] if ans.price.basis == ENTERED else ""
        price = f"; price {md(entered)}" if entered else ""
        parts.append(f"{_name(d)} {md(money(ans.cost_at(u), cur))} (*{md(' and '.join(bases))}*{price})")
    lines = [head + " " + "; ".join(parts) + ".", split_sentence(answer)]
    used = [f"{_name(d)} {md(answer.per_device[d].cost_throughput.shown())} ({_throughput_why(answer.per_device[d])})"
            for d in costed]
    if used:
        lines.append("**Throughput each cost uses:** " + "; ".join(used) + ".")
    if len(costed) >= 2:
        best, second = costed[0], costed[1]
        cb, cs = answer.per_device[best].cost_at(u), answer.per_device[second].cost_at(u)
        assert cb is not None and cs is not None
        if cb > 0 and same_ratio(cs / cb):
            lines.append(f"**Cheapest per sample at {u * 100:.0f}% utilisation:** {_name(best)} and {_name(second)} "
                         f"cost about the same ({cs / cb:.2f}x).")
        else:
            lines.append(f"**Cheapest per sample at {u * 100:.0f}% utilisation:** {_name(best)}, "
                         f"{ratio(cs / cb) if cb > 0 else ''} cheaper than {_name(second)}.")
    lines.extend(duty_cycle_sentences(answer))
    lines.extend(estimate_caveats(answer))
    return lines


def split_sentence(answer: Answer) -> str:
    """Each cost per 1M samples as electricity + hardware: the electricity even where no price is known (the
    hardware part then says where to add one), at the user's own price, never a source's."""
    s = answer.settings
    parts = []
    for d in answer.devices:
        split = device_split(answer.per_device[d], s)
        parts.append(f"{_name(d)} " + (md(split.text().removesuffix(" per 1M samples")) if split.electricity is not None
                                       else f"not known ({md(split.electricity_missing)})"))
    return (f"**Electricity + hardware** per 1M samples, at your electricity price of {s.electricity_per_kwh:g} "
            f"{s.currency} per kWh: " + "; ".join(parts) + ".")


def _throughput_why(ans: DeviceAnswer) -> str:
    """Why the cost uses this throughput, in a few words (the figure table has the derivation)."""
    f = ans.cost_throughput
    if f.basis == STATED:
        return md(f.source.split(", the source's stated ratio", 1)[0]) + ", the source's stated speed ratio"
    unused = f.source.split("; the source's stated ratio ", 1)
    why_not = f"; the source's stated ratio {md(unused[1])}" if len(unused) > 1 else ""
    if f.basis == ESTIMATE and f is not ans.throughput and not ans.throughput.known:
        return "estimated as power while running ÷ J/example: no throughput measured" + why_not
    if f.basis == ESTIMATE:
        return "measured in another configuration than the energy figure, so an estimate"
    return f"{md(f.basis)}, in the same configuration as the energy figure"


def estimate_caveats(answer: Answer, tolerance: float = 0.25) -> list[str]:
    """Where a cost rests on estimated throughputs whose ratio disagrees with a stated or
    like-for-like ratio by more than `tolerance`, say so: the costs are then rough."""
    lines = []
    for (a, b), found in answer.speed.items():
        ta, tb = answer.per_device[a].cost_throughput, answer.per_device[b].cost_throughput
        if not (ta.known and tb.known) or ESTIMATE not in (ta.basis, tb.basis):
            continue
        assert ta.value is not None and tb.value is not None
        trusted = [c for c in found if c.basis != ESTIMATE]
        if not trusted:
            continue
        est = ta.value / tb.value
        stated = [c.factor if c.winner == a else 1 / c.factor for c in trusted]
        if all(abs(est / s - 1) > tolerance for s in stated):
            shown = " to ".join(ratio(x) for x in sorted({round(max(v, 1 / v), 1) for v in stated}))
            lines.append(f"*Caveat:* the estimated throughputs behind these costs ({md(sig(ta.value))} vs "
                         f"{md(sig(tb.value))} samples/s, {ratio(max(est, 1 / est))}) disagree with the "
                         f"{md(trusted[0].basis)} ({shown}) between {_name(a)} and {_name(b)}: treat the "
                         "costs as rough until a run measures throughput and energy together.")
    return lines


COST_PARTS = ("electricity while busy", "electricity while idle", "hardware")
DOMINANT_SHARE = 0.5  # a part above half of the cost dominates it
SMALL_SHARE = 0.1  # parts below a tenth of the cost add little


def cost_shares(terms: CostTerms, u: float) -> dict[str, float]:
    """Each part's share of the cost per sample at utilisation u (they add up to 1)."""
    split = terms.split(u)
    total = sum(split.values())
    return {k: (v / total if total > 0 else 0.0) for k, v in split.items()}


def _share_words(shares: dict[str, float]) -> str:
    """What the numbers say about the parts: which dominates (over half), which add little (under
    a tenth), with the percentages."""
    ordered = sorted(shares.items(), key=lambda kv: kv[1], reverse=True)
    top, top_share = ordered[0]
    small = [f"{k} {pct(v)}" for k, v in ordered[1:] if round(v * 100) < SMALL_SHARE * 100]
    rest = [f"{k} {pct(v)}" for k, v in ordered[1:] if round(v * 100) >= SMALL_SHARE * 100]
    if top_share > DOMINANT_SHARE:
        text = f"{top} dominates ({pct(top_share)})"
    else:
        text = f"no part dominates: {top} {pct(top_share)}"
    if rest:
        text += ", then " + ", ".join(rest)
    if small:
        text += "; " + " and ".join(small) + (" add" if len(small) > 1 else " adds") + " little"
    return text


def duty_cycle_sentences(answer: Answer) -> list[str]:
    """The duty cycle in sentences whose words follow the numbers: each device's cost split into
    busy electricity, idle electricity and hardware, with the share of each and which dominates."""
    s = answer.settings
    u = s.utilisation
    cur = s.currency
    costed = answer.costed()
    if not costed:
        return []
    idle_share = 1 - u
    parts = []
    for d in costed:
        ans = answer.per_device[d]
        assert ans.terms is not None
        split = ans.terms.split(u)
        total = ans.terms.at(u)
        shares = cost_shares(ans.terms, u)
        idle_w = f"{sig(ans.idle_power.value)} W idle" if ans.idle_power.known else "idle power not measured"
        parts.append(f"{_name(d)} ({md(idle_w)}): of {md(money(total, cur))}, hardware "
                     f"{md(money(split['hardware'], cur))} ({pct(shares['hardware'])}), electricity while busy "
                     f"{md(money(split['electricity while busy'], cur))} ({pct(shares['electricity while busy'])}), "
                     f"idle electricity {md(money(split['electricity while idle'], cur))} "
                     f"({pct(shares['electricity while idle'])}): {_share_words(shares)}")
    if u >= 0.999:
        head = ("**Duty cycle:** busy all the time, so idle power costs nothing and the price is spread over the "
                "most samples")
    else:
        head = f"**Duty cycle:** at {u * 100:.0f}% utilisation each device idles {idle_share * 100:.0f}% of the time"
    lines = [head + ": " + "; ".join(parts) + "."]
    flips = answer.crossovers()
    if flips:
        for low, high, at in flips:
            lines.append(f"**Crossover:** below {at * 100:.0f}% utilisation {_name(low)} is cheaper per sample; "
                         f"above it, {_name(high)}.")
    elif len(costed) >= 2:
        lines.append(f"**No crossover:** {_name(costed[0])} stays the cheapest per sample at every utilisation "
                     "from 1% to 100%.")
    missing_idle = [d for d in costed if not answer.per_device[d].idle_power.known]
    if missing_idle:
        lines.append("Idle power not measured for " + ", ".join(_name(d) for d in missing_idle)
                     + ": their idle electricity is left out, so their cost at low utilisation is understated.")
    return lines


def fit_status(answer: Answer, device: str) -> str:
    """'fits', 'fails' (a constraint is broken) or 'unknown' (a figure a constraint needs is missing)."""
    checks = answer.fits[device]
    return ("fails" if any(st == "fails" for st, _ in checks) else
            "unknown" if any(st == "unknown" for st, _ in checks) else "fits")


def constraint_sentences(answer: Answer) -> list[str]:
    if not answer.constraints.any():
        return []
    lines = []
    for d in answer.devices:
        checks = answer.fits[d]
        word = {"fits": "fits the constraints", "fails": "does not fit",
                "unknown": "may fit (not all is known)"}[fit_status(answer, d)]
        lines.append(f"{_name(d)} {word}: " + "; ".join(md(t) for _, t in checks) + ".")
    return ["**Constraints:** " + lines[0], *lines[1:]] if lines else []


def same_ratio(factor: float) -> bool:
    """A ratio that rounds to 1.0x says no difference: 'about as fast', never '1.0x faster'."""
    return ratio(factor) == "1.0x"


def _settled(leader: str, comparisons: dict[tuple[str, str], list[Comparison]]) -> bool:
    """Whether the leader wins at least one comparison by more than the noise (and more than 1.0x)."""
    return any(c.winner == leader and c.within_noise is not True and not same_ratio(c.factor)
               for found in comparisons.values() for c in found[:1])


def _among(pool: list[str], comparisons: dict[tuple[str, str], list[Comparison]]
           ) -> dict[tuple[str, str], list[Comparison]]:
    return {p: v for p, v in comparisons.items() if p[0] in pool and p[1] in pool}


def _summary(answer: Answer, pool: list[str]) -> list[str]:
    """Who is faster, who uses fewer joules, who is cheapest per sample among `pool`."""
    parts = []
    speed, energy = _among(pool, answer.speed), _among(pool, answer.energy)
    fast = leader_of(pool, speed) if len(pool) > 1 else None
    if fast and not _settled(fast, speed):
        parts.append("no difference in speed shown (within the noise, or about 1.0x)")
        fast = None
    elif fast:
        parts.append(f"{_name(fast)} is faster")
    frugal = leader_of(pool, energy) if len(pool) > 1 else None
    if frugal and not _settled(frugal, energy):
        parts.append("no difference in joules shown (within the noise, or about 1.0x)")
    elif frugal:
        parts.append(f"{_name(frugal)} uses fewer joules" if frugal != fast else "and uses fewer joules")
    costed = [d for d in answer.costed() if d in pool]
    u = answer.settings.utilisation
    if len(costed) >= 2:
        parts.append(f"{_name(costed[0])} costs least per sample at {u * 100:.0f}% utilisation")
    return parts


def _best_fitting(answer: Answer, pool: list[str]) -> tuple[str, str]:
    """The best of the devices that fit, and why: the cheapest per sample, else the fastest, else
    the one that uses fewest joules, else the only one."""
    u = answer.settings.utilisation
    costed = [d for d in answer.costed() if d in pool]
    if costed:
        cost = answer.per_device[costed[0]].cost_at(u)
        return costed[0], (f"it costs least per sample at {u * 100:.0f}% utilisation "
                           f"({md(money(cost, answer.settings.currency))} per 1M samples)")
    for comparisons, word in ((answer.speed, "it is the fastest"), (answer.energy, "it uses the fewest joules")):
        leader = leader_of(pool, _among(pool, comparisons)) if len(pool) > 1 else None
        if leader:
            return leader, word
    return pool[0], "the only candidate that fits" if len(pool) == 1 else "the data cannot rank them further"


def headline(answer: Answer) -> str:
    """One sentence: with constraints that rule devices out, the best device that fits them (or
    that none does, and why); then who is faster, who uses fewer joules, who is cheapest per
    sample at the chosen utilisation among the devices that fit (each only where the data can say)."""
    pool = list(answer.devices)
    lead = ""
    if answer.constraints.any():
        failed = [d for d in answer.devices if fit_status(answer, d) == "fails"]
        fits = [d for d in answer.devices if fit_status(answer, d) == "fits"]
        maybe = [d for d in answer.devices if fit_status(answer, d) == "unknown"]
        why_out = "; ".join(f"{_name(d)} breaks " + ", ".join(md(t.replace(": fails (", " (is "))
                                                             for st, t in answer.fits[d] if st == "fails")
                            for d in failed)
        if failed and not fits and not maybe:
            return (f"**In short:** none of these devices fits the constraints: {why_out}. Relax a constraint in "
                    "the sidebar or add candidates.")
        if failed:
            pool = fits or maybe
            best, why = _best_fitting(answer, pool)
            unsure = "" if fits else " (it may fit: not every figure a constraint needs is known)"
            lead = (f"the best device that fits the constraints is {_name(best)}{unsure}: {why}. Ruled out: "
                    f"{why_out}")
    parts = _summary(answer, pool)
    if lead:
        among = f"; among those that fit, {'; '.join(parts)}" if len(pool) > 1 and parts else ""
        text = (lead + among).replace("is faster; and uses", "is faster and uses")
        return f"**In short:** {text}. The reasons and the basis of each figure follow."
    if not parts:
        return "**In short:** the data cannot compare these devices for this job yet; see what is missing below."
    text = "; ".join(parts).replace("is faster; and uses", "is faster and uses")
    return f"**In short:** {text}. The reasons and the basis of each figure follow."


def device_grades(answer: Answer) -> dict[str, str | None]:
    """Each candidate's worst grade among the figures the answer rests on: throughput, energy, idle
    power, the figures its cost uses, and the comparisons it takes part in (None: nothing graded)."""
    out: dict[str, str | None] = {}
    for d in answer.devices:
        ans = answer.per_device[d]
        figs = [ans.throughput, ans.j_per_sample, ans.j_per_iteration, ans.idle_power, ans.cost_throughput,
                ans.cost_energy]
        grades = [f.grade for f in figs if f.known]
        grades += [c.grade_of(d) for found in [*answer.speed.values(), *answer.energy.values()] for c in found
                   if d in (c.winner, c.loser)]
        out[d] = worst_grade(grades)
    return out


def grade_warning(answer: Answer) -> str | None:
    """The warning (Markdown) when the answer rests on figures graded C or D: who, which grade, and
    what would settle it; None otherwise."""
    return low_grade_warning(device_grades(answer), "This answer")


def verdict(answer: Answer) -> list[str]:
    """The answer in sentences (Markdown, every name and citation escaped)."""
    covers = price_coverage_warning(answer)
    return [headline(answer), *speed_sentences(answer), *energy_sentences(answer), *cost_sentences(answer),
            *([covers] if covers else []), *constraint_sentences(answer)]
