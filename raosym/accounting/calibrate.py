"""Calibration: the value of one mechanism parameter that meets a target budget.

Runtime accounting, without SymPy. Under Rao-DP (the generated closed-form calibration where
there is one, else a root of the budget), (ε, δ)-DP through RDP, or KL; the parameter solved
for is the one not given, or any named one (``solve="sensitivity"``: the largest sensitivity
the given noise affords).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from raosym.accounting.mechanisms import Mechanism, _call, describe_values
from raosym.accounting.rdp import CONVERSIONS, _check_delta, _positive_count, dp_epsilon
from raosym.errors import AccountingError


@dataclass(frozen=True)
class Calibration:
    """The value of ``parameter`` that meets a target budget, and how it was found."""

    definition: str  # "rao-dp", "dp", "kl"
    parameter: str
    value: float
    target: dict
    method: str


def solve_parameter(budget: Callable[[float], float], target: float,
                    domain: tuple[float, float], name: str = "the parameter") -> float:
    """A value x in the open ``domain`` with budget(x) = target.

    The budget need only be continuous. The root is bracketed before it is solved, in a
    coordinate u that maps the real line onto the domain (log for (0, ∞), logistic for a
    bounded interval): from the middle of the domain, u = 0, the scan walks towards the target
    in steps that double, u = ±0.5, ±1, ±2, ..., ±16, ±30, and stops at the first sign change;
    Brent's root-finder (``scipy.optimize.brentq``) refines it. The direction is the one in
    which the budget approaches the target between u = 0 and u = 0.5 (upwards first when that
    says nothing); if the walk ends without a sign change, the other direction is walked too.
    Why from the middle: each evaluation of an (ε, δ) budget of a numeric curve is a
    minimization over α of quadratures, cheap at moderate values and slow at extreme ones
    (a noise scale of 1e13 times the sensitivity took 27 s where 1 took 0.3 s), so the walk
    reaches the extremes only when the root lies there. For a noise scale the budget is
    monotone and there is one crossing; randomized response's budget is symmetric about
    p = 1/2 (u = 0) and rises towards the target above it, so the crossing found is the one
    with p > 1/2 (truth more likely than not). Values where the budget cannot be evaluated
    are skipped; when no sign change is found the error says the range the budget took.
    """
    from scipy import optimize

    to_x = _domain_map(*domain)
    gaps: dict[float, float] = {}

    def gap(u: float) -> float:
        if u not in gaps:
            gaps[u] = _safe(budget, to_x(u)) - target
        return gaps[u]

    def walk(sign: int) -> float | None:
        previous = 0.0
        for step in _BRACKET_STEPS:
            u = sign * step
            value = gap(u)
            if value == 0.0:
                return u
            if not np.isfinite(value):
                continue
            if np.isfinite(gap(previous)) and value * gap(previous) < 0.0:
                low, high = sorted((previous, u))
                return optimize.brentq(gap, low, high, xtol=1e-15,
                                       rtol=4 * np.finfo(float).eps, maxiter=200)
            previous = u
        return None

    if gap(0.0) == 0.0:
        return to_x(0.0)
    first, second = gap(0.0), gap(_BRACKET_STEPS[0])
    downwards = (np.isfinite(first) and np.isfinite(second) and first * second > 0.0
                 and abs(second) > abs(first))
    for sign in ((-1, 1) if downwards else (1, -1)):
        u = walk(sign)
        if u is not None:
            return to_x(u)
    values = np.array(list(gaps.values()))
    finite = values[np.isfinite(values)] + target
    reach = (f"over {name} in ({domain[0]:g}, {domain[1]:g}) it ranges in "
             f"[{finite.min():.6g}, {finite.max():.6g}]" if finite.size else "it is never finite")
    raise AccountingError(f"no value of {name} meets the target {target:g}: {reach}")


#: The steps of solve_parameter's walk from the middle of the domain (in the coordinate u of
#: _domain_map), doubling: fine near the middle, coarse far out where a budget changes
#: slowly in u.
_BRACKET_STEPS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def _safe(budget, x) -> float:
    try:
        value = float(budget(x))
    except (AccountingError, ValueError, ArithmeticError):
        return math.nan
    return value if not math.isnan(value) else math.nan


def _domain_map(lower: float, upper: float) -> Callable[[float], float]:
    """A map from the real line onto the open interval (lower, upper)."""
    if math.isinf(lower) and math.isinf(upper):
        return lambda u: math.sinh(u)
    if math.isinf(upper):
        return lambda u: lower + math.exp(u)
    if math.isinf(lower):
        return lambda u: upper - math.exp(-u)
    width = upper - lower
    # Measured from the nearer end, so values next to either bound keep their digits.
    return lambda u: (lower + width / (1.0 + math.exp(-u)) if u <= 0
                      else upper - width / (1.0 + math.exp(u)))


def _solved_parameter(mechanism: Mechanism, values: dict, solve: str | None) -> str:
    free = [p for p in mechanism.parameters if p not in values]
    if solve is not None:
        if solve not in mechanism.parameters:
            raise AccountingError(f"mechanism {mechanism.name} has no parameter {solve!r}; "
                                  f"its parameters are {', '.join(mechanism.parameters)}")
        if solve in values:
            raise AccountingError(f"{solve} is both given a value and asked for (--solve)")
        free.remove(solve)
        if free:
            raise AccountingError(f"mechanism {mechanism.name} needs a value for "
                                  f"{', '.join(free)}")
        return solve
    if not free:
        raise AccountingError(
            f"every parameter of {mechanism.name} has a value ({describe_values(values)}): leave "
            "out the one to calibrate")
    if len(free) != 1:
        raise AccountingError(
            f"give a value to every parameter of {mechanism.name} but the one to calibrate "
            f"(missing: {', '.join(free) or 'none'}; parameters: "
            f"{', '.join(mechanism.parameters)}); or name it with --solve")
    return free[0]


def calibrate_rao(mechanism: Mechanism, theta: float, values: dict, *, repeat: int = 1,
                  solve: str | None = None) -> Calibration:
    """The parameter value at which ``repeat`` releases are θ-Rao-DP in total.

    Composition gives the per-release budget θ/sqrt(repeat). For an additive mechanism the
    calibration is the derived closed form ``rao_dp_scale(sensitivity, θ) = Δ·k/θ``; otherwise
    ``rao_dp_theta`` is solved for the parameter.
    """
    theta = float(theta)
    if not theta > 0.0:
        raise AccountingError(f"the Rao-DP target must be positive; got {theta!r}")
    name = _solved_parameter(mechanism, values, solve)
    per_release = theta / math.sqrt(_positive_count(repeat))
    target = {"theta": theta, "repeat": repeat, "theta_per_release": per_release}
    closed_form = _closed_form_calibration(mechanism, name)
    if closed_form is not None:
        given = {k: float(v) for k, v in values.items()}
        value = float(_call(mechanism, closed_form, theta=per_release, **given))
        return Calibration("rao-dp", name, value, target,
                           f"closed form {closed_form.__name__} (derived)")
    value = solve_parameter(lambda x: mechanism.theta(**values, **{name: x}), per_release,
                            mechanism.domains.get(name, (0.0, math.inf)), name)
    return Calibration("rao-dp", name, value, target, "root of rao_dp_theta (Brent)")


def _closed_form_calibration(mechanism: Mechanism, name: str) -> Callable | None:
    """The generated calibration function that returns parameter ``name``, if there is one:
    it returns the one mechanism parameter that is not among its own arguments."""
    for function in (mechanism.rao_dp_scale, mechanism.rao_dp_parameter):
        if function is None:
            continue
        own = set(inspect.signature(function).parameters)
        returned = [p for p in mechanism.parameters if p not in own]
        if returned == [name]:
            return function
    return None


def calibrate_dp(mechanism: Mechanism, epsilon: float, delta: float, values: dict, *,
                 repeat: int = 1, conversion: str = "balle",
                 solve: str | None = None) -> Calibration:
    """The parameter value at which ``repeat`` releases are (ε, δ)-DP through RDP.

    The (ε, δ) of a candidate is :func:`dp_epsilon` of the composed curve; Brent's
    root-finder solves it for the target ε.
    """
    epsilon = float(epsilon)
    if not epsilon > 0.0:
        raise AccountingError(f"the ε target must be positive; got {epsilon!r}")
    delta = _check_delta(delta)
    name = _solved_parameter(mechanism, values, solve)
    count = _positive_count(repeat)

    def budget(x):
        return dp_epsilon(mechanism.curve(**values, **{name: x}).repeated(count), delta,
                          conversion).epsilon

    value = solve_parameter(budget, epsilon, mechanism.domains.get(name, (0.0, math.inf)), name)
    return Calibration("dp", name, value,
                       {"epsilon": epsilon, "delta": delta, "repeat": count,
                        "conversion": conversion},
                       f"root (Brent) of ε over the RDP curve ({CONVERSIONS[conversion]})")


def calibrate_kl(mechanism: Mechanism, kl: float, values: dict, *, repeat: int = 1,
                 solve: str | None = None) -> Calibration:
    """The parameter value at which ``repeat`` releases have KL divergence ``kl`` in total
    (KL adds over independent releases)."""
    kl = float(kl)
    if not kl > 0.0:
        raise AccountingError(f"the KL target must be positive; got {kl!r}")
    name = _solved_parameter(mechanism, values, solve)
    count = _positive_count(repeat)
    value = solve_parameter(lambda x: mechanism.kl(**values, **{name: x}), kl / count,
                            mechanism.domains.get(name, (0.0, math.inf)), name)
    return Calibration("kl", name, value, {"kl": kl, "repeat": count},
                       "root of kl_divergence (Brent)")
