"""Deciding between placements on measured evidence: candidates timed in interleaved rounds
against an incumbent (the predicted-best single device), a sign test per candidate, more
rounds while the evidence is still open, and the decision with its spread and reason.

A candidate replaces the incumbent only when it was faster in enough paired rounds that the
one-sided sign test puts chance below `SIGNIFICANCE` (5 of 5, 7 of 8, 9 of 11 ...) and its
median is lower; among such candidates, those within `TIE` of the least median are measured
alike, and the first of them in the candidates' order (the pick, then by prediction) wins:
which of two placements measured alike was a few per cent faster is noise, and choosing by
it made the same program return different placements run after run. Rounds are paired
because they are interleaved: a burst of load slows every placement of its round alike.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scipy.stats import binomtest

from devplace.autoplacer.timing import measure_in_rounds
from devplace.core.formatting import format_time

__all__ = [
    "MAX_VERIFY_ROUNDS",
    "SIGNIFICANCE",
    "TIE",
    "VERIFY_ROUNDS",
    "Verdict",
    "decide",
    "sign_test",
    "spread",
    "verify_rounds",
]

#: Rounds `verify_rounds` always measures (5 of 5 faster is the fewest that can be significant).
VERIFY_ROUNDS = 5
#: Rounds it measures at most, while a candidate faster by median could still become
#: significant.
MAX_VERIFY_ROUNDS = 11
#: The chance (one-sided sign test) below which a candidate's wins count as evidence.
SIGNIFICANCE = 0.05
#: Medians within this share of the least are alike: measurement noise, not a difference.
TIE = 0.05


def sign_test(times: Sequence[float], base: Sequence[float]) -> float:
    """One-sided sign test: the chance of at least as many rounds where `times` beat `base`
    (strictly faster; a tie counts against) if neither were faster."""
    wins = sum(t < b for t, b in zip(times, base, strict=True))
    return float(binomtest(wins, len(base), 0.5, alternative="greater").pvalue)


def decide(rounds: Mapping[str, Sequence[float]], incumbent: str) -> tuple[str, dict[str, float]]:
    """The label to trust and every other label's sign-test chance against `incumbent`: among
    the candidates significantly faster (`SIGNIFICANCE`) with a lower median than the
    incumbent's, the first (in `rounds`' order) whose median is within `TIE` of their least;
    else the incumbent."""
    base = rounds[incumbent]
    median = {k: statistics.median(t) for k, t in rounds.items()}
    chance = {k: sign_test(t, base) for k, t in rounds.items() if k != incumbent}
    beat = [k for k, p in chance.items() if p <= SIGNIFICANCE and median[k] < median[incumbent]]
    if not beat:
        return incumbent, chance
    least = min(median[k] for k in beat)
    return next(k for k in beat if median[k] <= least * (1 + TIE)), chance


def _evidence_open(rounds: Mapping[str, Sequence[float]], incumbent: str, left: int) -> bool:
    """True when some candidate faster by median than `incumbent` but not yet significantly
    could still be, were it faster in each of `left` more rounds."""
    base = rounds[incumbent]
    for k, t in rounds.items():
        if k == incumbent or statistics.median(t) >= statistics.median(base):
            continue
        wins = sum(a < b for a, b in zip(t, base, strict=True))
        n = len(base)
        if sign_test(t, base) > SIGNIFICANCE and (
            binomtest(wins + left, n + left, 0.5, alternative="greater").pvalue <= SIGNIFICANCE
        ):
            return True
    return False


def spread(rounds: Mapping[str, Sequence[float]]) -> float:
    """The noise of the measurement: the median over placements of their slowest round over
    their fastest (1.0: no noise)."""
    return statistics.median(max(t) / min(t) for t in rounds.values() if min(t) > 0)


@dataclass
class Verdict:
    """What verification decided: `chosen` (a label), the `incumbent` it was measured
    against, every label's times per round (µs), each candidate's sign-test `chance`, the
    `spread` of the rounds and the `reason` in words."""

    chosen: str
    incumbent: str
    rounds: dict[str, list[float]]
    chance: dict[str, float] = field(default_factory=dict)
    spread: float = 1.0
    reason: str = ""


def _reason(verdict: Verdict) -> str:
    """The decision in one line."""
    r, inc, n = verdict.rounds, verdict.incumbent, len(verdict.rounds[verdict.incumbent])
    med = {k: statistics.median(t) for k, t in r.items()}
    head = f"verify ({n} interleaved rounds, spread {verdict.spread:.2f}x): "
    if verdict.chosen != inc:
        wins = sum(a < b for a, b in zip(r[verdict.chosen], r[inc], strict=True))
        alike = [
            f"{k} ({format_time(med[k])})"
            for k, p in verdict.chance.items()
            if p <= SIGNIFICANCE and med[k] < med[verdict.chosen]
        ]
        return head + (
            f"chose {verdict.chosen} ({format_time(med[verdict.chosen])} median, faster than "
            f"{inc} ({format_time(med[inc])}) in {wins} of {n} rounds, chance "
            f"{verdict.chance[verdict.chosen]:.3f})"
            + (f"; measured alike (within {TIE:.0%}): {', '.join(alike)}" if alike else "")
        )
    faster = [k for k in r if k != inc and med[k] < med[inc]]
    why = (
        "no candidate was faster"
        if not faster
        else "faster by median but not in enough rounds: "
        + ", ".join(f"{k} ({format_time(med[k])}, chance {verdict.chance[k]:.2f})" for k in faster)
    )
    return head + f"kept {inc} ({format_time(med[inc])} median); {why}"


def verify_rounds(
    placements: Mapping[str, Sequence[int]],
    measure: Callable[[Sequence[int]], float],
    incumbent: str,
) -> Verdict:
    """`placements` (label -> assignment, `incumbent` among them) measured by `measure` in
    `VERIFY_ROUNDS` interleaved rounds, then one round more at a time while the evidence is
    open, up to `MAX_VERIFY_ROUNDS`; the `Verdict` of `decide`."""
    rounds = measure_in_rounds(placements, measure, VERIFY_ROUNDS)
    while len(rounds[incumbent]) < MAX_VERIFY_ROUNDS and _evidence_open(
        rounds, incumbent, MAX_VERIFY_ROUNDS - len(rounds[incumbent])
    ):
        for label, times in measure_in_rounds(placements, measure, 1).items():
            rounds[label].extend(times)
    chosen, chance = decide(rounds, incumbent)
    verdict = Verdict(chosen, incumbent, rounds, chance, spread(rounds))
    verdict.reason = _reason(verdict)
    return verdict
