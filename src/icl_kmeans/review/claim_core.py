"""The claim machinery, apart from any rule: statuses, the Result row, the registry, rule versions, and the
verdict helpers that turn the paper's quantifiers into statuses. Rule modules import this; it imports none.

Statuses (strictest reading of the paper's sentence; science.md §10):
    PASS          the rule holds in every cell it reads, and in each seed where the claim is over seeds
    PARTLY        the paper's quantifier ("all", "always", "every") holds in some cells but not all, or the
                  direction holds and the paper's number is missed: the measured value is the fraction
    FAIL          the rule does not hold (in no cell), or a rate claim's observation is improbable (p < 0.05)
                  under the paper's rate
    INCONCLUSIVE  the seeds disagree (the verdict on the median differs from one seed's), or a rate claim's
                  observation is not improbable under the paper's rate but does not show what it states
    NOT-RUN       the data the rule reads is not there, or no cell can be compared
    ERROR         the rule could not be evaluated (a defect of the artifacts or of the checker)
"""

from __future__ import annotations

import hashlib
import inspect
import math
import types
from dataclasses import dataclass

import numpy as np
import pandas as pd

PASS, PARTLY, FAIL, INCONCLUSIVE, NOT_RUN, ERROR = "PASS", "PARTLY", "FAIL", "INCONCLUSIVE", "NOT-RUN", "ERROR"
STATUSES = (PASS, PARTLY, FAIL, INCONCLUSIVE, NOT_RUN, ERROR)
DECIDED = (PASS, PARTLY, FAIL)
# the status policy above (quantifiers, seeds, rates); each claim's own rule carries its own version
POLICY = "2026-12-05: quantifiers per cell, verdicts per seed, rates by binomial probability"
RATE_ALPHA = 0.05         # a rate claim FAILs when what was seen has probability < 0.05 under the paper's rate
MIN_DECIDING_SEEDS = 2    # a claim over seeds is decided on at least two seeds that each decide it


@dataclass
class Result:
    id: str
    source: str
    figure: str
    statement: str
    rule: str
    threshold: str
    measured: str = ""
    status: str = NOT_RUN
    detail: str = ""
    reference: str = ""  # the paper's number where it gives one (not a threshold)
    quote: str = ""      # the paper's sentence (../shared/paper-text.md) the claim checks
    diagnostic: str = ""  # a value shown next to the measured one that does not decide the claim
    seeds: str = ""      # how the seeds bear on the verdict: each seed's status and value, or why none is read
    rule_version: str = ""  # rule_version() of the claim's rule: its code, text and constants


class NotRun(Exception):
    """The data a claim needs is not there."""


class NonFinite(Exception):
    """Multi-step values that are not finite: the claim reading them FAILs (check() says which)."""


@dataclass(frozen=True)
class Verdict:
    """What a rule returns when a bool is not enough: a status of its own (PARTLY, INCONCLUSIVE, ...)."""
    measured: str
    status: str
    detail: str
    diagnostic: str = ""
    over_seeds: bool = True  # False: the rule reads the seeds itself (a rate), so check() does not split them


CLAIMS: list = []


def claim(id, source, figure, statement, rule, threshold, reference="", quote=""):
    """Register a claim. `source` names the paper's figure and section ("Fig 7, §4"), `quote` its sentence."""
    def deco(fn):
        CLAIMS.append((Result(id, source, figure, statement, rule, threshold, reference=reference, quote=quote), fn))
        return fn

    return deco


def fmt(x, digits=3) -> str:
    """A number in plain positional notation with `digits` significant digits (2183.0 -> "2180", never
    "2.18e+03"); integers exactly."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if not math.isfinite(float(x)):
        return str(float(x))
    return np.format_float_positional(float(x), precision=digits, unique=False, fractional=False, trim="-")


def require(df: pd.DataFrame, what: str) -> pd.DataFrame:
    if df.empty:
        raise NotRun(f"no rows for {what}")
    return df


def every_cell(held: int, total: int, detail: str, what: str = "cells") -> Verdict:
    """The paper's "all"/"always"/"every": PASS only if every cell holds; PARTLY (with the fraction) if some do;
    FAIL if none does; NOT-RUN when there is no cell to compare (never a verdict on nothing)."""
    if total == 0:
        raise NotRun(f"no {what} to compare")
    status = PASS if held == total else (PARTLY if held else FAIL)
    return Verdict(f"{held}/{total}", status, f"holds in {held} of {total} {what}: {detail}")


def binomial_tail(observed: int, trials: int, rate: float) -> tuple[float, float]:
    """(P(X <= observed), P(X >= observed)) for X ~ Binomial(trials, rate)."""
    pmf = [math.comb(trials, i) * rate ** i * (1 - rate) ** (trials - i) for i in range(trials + 1)]
    return float(sum(pmf[:observed + 1])), float(sum(pmf[observed:]))


def trials_to_decide(rate: float, alpha: float = RATE_ALPHA) -> int:
    """The fewest trials in which seeing none of an event of probability `rate` has probability < alpha."""
    return math.ceil(math.log(alpha) / math.log(1 - rate) + 1e-12)


def rate_verdict(observed: int, trials: int, rate: float, what: str) -> Verdict:
    """A claim that something happens at the paper's rate (claim 9: 3 of 10 seeds). FAIL only when what was seen is
    improbable under that rate (either tail < RATE_ALPHA); PASS when it is not and the event was seen;
    INCONCLUSIVE when it was not seen and that is not improbable, with how many trials would decide."""
    if trials == 0:
        raise NotRun(f"no {what} trials")
    low, high = binomial_tail(observed, trials, rate)
    p = min(low, high)
    text = (f"{observed} of {trials} {what}; under the paper's rate {fmt(rate)}, P(X <= {observed}) = {fmt(low)}, "
            f"P(X >= {observed}) = {fmt(high)}")
    if p < RATE_ALPHA:
        return Verdict(f"{observed}/{trials}", FAIL, f"{text}: improbable (< {RATE_ALPHA:g})", over_seeds=False)
    if observed:
        return Verdict(f"{observed}/{trials}", PASS, f"{text}: consistent", over_seeds=False)
    need = trials_to_decide(rate)
    return Verdict(f"{observed}/{trials}", INCONCLUSIVE,
                   f"{text}: not improbable; {need} trials with none would be (p = {fmt((1 - rate) ** need)} < "
                   f"{RATE_ALPHA:g}), {max(need - trials, 0)} more than here", over_seeds=False)


# ------------------------------------------------------------------------------ rule versions
def _parts(fn, seen: set) -> list[str]:
    """The source of fn and of every function of this package it names (recursively), and the value of every
    constant it names: what decides the claim."""
    if fn in seen:
        return []
    seen.add(fn)
    try:
        parts = [inspect.getsource(fn)]
    except (OSError, TypeError):
        return [repr(fn)]
    codes = [fn.__code__]
    names = set()
    while codes:
        code = codes.pop()
        names |= set(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    g = fn.__globals__
    for name in sorted(names):
        v = g.get(name)
        if isinstance(v, types.FunctionType) and v.__module__.startswith("icl_kmeans."):
            parts += _parts(v, seen)
        elif isinstance(v, (int, float, str, tuple, frozenset)) and not name.startswith("__"):
            parts.append(f"{name}={v!r}")
    return parts


def rule_version(proto: Result, fn) -> str:
    """A short hash of a claim's rule: its statement, rule text and threshold, the code of its function and of
    the package's functions it calls, and the constants they name. A change to any of these is a new rule."""
    text = "\n".join([proto.statement, proto.rule, proto.threshold, *_parts(fn, set())])
    return hashlib.sha256(text.encode()).hexdigest()[:10]
