"""A mechanism's privacy definitions compared at one calibration, in mpmath (verify stage).

Called by :func:`raosym.verify.checks.verify` for a mechanism whose RDP curve is closed and
whose calibration has no argument but the sensitivity and the budget. Input: the
:class:`~raosym.derive.steps.Derivation`. Output: a :class:`PrivacyComparison`, the values
the LaTeX section's table prints, at Rao-DP budget 1 and sensitivity 1
(:data:`CALIBRATION`): Rao-DP ``theta``; pure ``epsilon``-DP, the derived limit of the RDP
curve as ``alpha -> oo`` (for a finite support ``max_x log(f_D(x)/f_D'(x))``); KL; zCDP
``rho`` and mu-GDP where the RDP curve is linear in ``alpha``; the RDP curve at
:data:`ORDERS`; ``(epsilon, delta)``-DP at :data:`DP_DELTA` by two conversions of the curve.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy

from raosym.derive.divergence import unrewritten
from raosym.derive.steps import Derivation
from raosym.verify.evaluate import evaluate

#: Orders of the RDP columns of the comparison table.
ORDERS = (2, 8, 32)
#: The common calibration of the comparison: Rao-DP budget and sensitivity.
CALIBRATION = {"theta": 1, "sensitivity": 1}
#: The delta of the (epsilon, delta)-DP rows of the comparison, and the conversions from RDP:
#: Mironov (2017), Proposition 3, and Balle et al. (2020), Theorem 21.
DP_DELTA = mpmath.mpf("1e-5")
CONVERSIONS = ("mironov", "balle")


@dataclass(frozen=True)
class PrivacyComparison:
    """The values of the comparison (mpmath numbers at 30 digits); None for an infinite
    ``epsilon`` and for ``rho`` and ``mu`` of a curve that is not linear in ``alpha``."""

    calibrated: sympy.Symbol          # the parameter the calibration sets
    parameter_value: mpmath.mpf       # its value at budget 1 and sensitivity 1
    theta: mpmath.mpf
    epsilon: mpmath.mpf | None
    kl: mpmath.mpf
    rho: mpmath.mpf | None
    mu: mpmath.mpf | None             # mu-GDP: the privacy loss is N(rho, 2 rho)
    orders: tuple[int, ...]
    rdp: tuple[mpmath.mpf, ...]       # the RDP curve at each of the orders
    delta: mpmath.mpf
    dp: tuple[tuple[str, mpmath.mpf], ...]  # (conversion, epsilon at delta)


def privacy_comparison(derivation: Derivation) -> PrivacyComparison | None:
    """The comparison, or None (no mechanism, no closed curve, or other constants)."""
    mechanism = derivation.mechanism
    if mechanism is None:
        return None
    curve = mechanism.renyi
    with mpmath.workdps(30):
        point = _calibrated_point(mechanism)
        if point is None or not curve.closed:
            return None
        form = unrewritten(curve.stable if curve.stable is not None else curve.textbook)
        rho = None if curve.rho is None else evaluate(curve.rho, point)
        return PrivacyComparison(
            calibrated=mechanism.calibrated,
            parameter_value=point[mechanism.calibrated],
            theta=evaluate(mechanism.theta_stable, point),
            epsilon=_pure_epsilon(derivation, point),
            kl=evaluate(curve.kl, point),
            rho=rho,
            mu=None if rho is None else mpmath.sqrt(2 * rho),
            orders=ORDERS,
            rdp=tuple(evaluate(form, {**point, curve.order: mpmath.mpf(order)})
                      for order in ORDERS),
            delta=DP_DELTA,
            dp=tuple((conversion, conversion_epsilon(
                lambda alpha: evaluate(form, {**point, curve.order: alpha}), DP_DELTA,
                conversion)) for conversion in CONVERSIONS),
        )


def _calibrated_point(mechanism) -> dict | None:
    """The arguments at Rao-DP budget 1 and sensitivity 1 (other constants: None, the
    comparison is then skipped)."""
    if mechanism.calibration is None or len(mechanism.arguments) > (
            2 if mechanism.kind == "additive" else 1):
        return None
    point = {}
    if mechanism.kind == "additive":
        point[mechanism.arguments[0]] = mpmath.mpf(CALIBRATION["sensitivity"])
    point[mechanism.budget] = mpmath.mpf(CALIBRATION["theta"])
    value = evaluate(mechanism.calibration, point)
    point[mechanism.calibrated] = value
    return point


def _pure_epsilon(derivation: Derivation, point: dict):
    """epsilon of pure DP, ``D_oo = lim_{alpha -> oo} D_alpha`` (None when infinite): the
    derived limit, or for a finite support ``max_x log(f_D(x)/f_D'(x))`` (the same limit), the
    larger of the two directions."""
    curve = derivation.mechanism.renyi
    spec = derivation.spec
    pure = curve.order_infinity_limit
    if pure is not None:
        return None if pure.has(sympy.oo, sympy.zoo) else evaluate(pure, point)
    if spec.support.kind != "finite":
        raise ValueError("no limit of the RDP curve as alpha -> oo")
    ratios = [curve.first / curve.second, curve.second / curve.first]
    return max(evaluate(sympy.log(r.subs(spec.variable, x)), point)
               for r in ratios for x in spec.support.points)


def conversion_epsilon(curve, delta, conversion: str):
    """``min over alpha > 1`` of the conversion of the RDP curve ``curve(alpha)`` to
    ``epsilon`` at ``delta``: ``eps(alpha) + log(1/delta)/(alpha - 1)`` (Mironov) or
    ``eps(alpha) + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1)`` (Balle et
    al.). In ``u = log(alpha - 1)``: the least value on a grid of u from -6 to 12, then a
    golden-section search between the grid's neighbours of it (both bounds are quasi-convex in
    alpha for the curves of the catalog, so the grid's least cell holds the minimum)."""
    def objective(u):
        alpha = 1 + mpmath.exp(u)
        rdp = curve(alpha)
        if conversion == "mironov":
            return rdp + mpmath.log(1 / delta) / (alpha - 1)
        return rdp + mpmath.log((alpha - 1) / alpha) - (mpmath.log(delta)
                                                       + mpmath.log(alpha)) / (alpha - 1)

    grid = [mpmath.mpf(-6) + k * mpmath.mpf(18) / 180 for k in range(181)]
    values = [objective(u) for u in grid]
    best = min(range(len(grid)), key=lambda k: values[k])
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    ratio = (mpmath.sqrt(5) - 1) / 2
    for _ in range(80):
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        if objective(left) < objective(right):
            high = right
        else:
            low = left
    return min(objective((low + high) / 2), values[best])
