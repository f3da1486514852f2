"""The "Privacy accounting" subsection of a mechanism's LaTeX section.

Emit stage, LaTeX backend. Input: a :class:`Verified` whose derivation has a mechanism.
Output: the context of ``accounting.tex.j2``: which manifold the budget is measured in, the
derivation steps (Rao-DP budget and calibration, conversions, composition, the Rényi integral
split at its kinks, KL as its limit, and each rewrite into the stable forms the generated code
evaluates, with SymPy's check of the equality), the verification record, and a comparison of
privacy definitions at a common calibration (Rao-DP budget 1 at sensitivity 1):

- Rao-DP ``theta``; pure ``epsilon``-DP, the limit of the RDP curve as ``alpha -> oo``
  (where finite; the Gaussian mechanism has none); KL; zCDP ``rho`` where the RDP curve is
  linear in ``alpha``; the RDP curve at a few orders.
"""

from __future__ import annotations

import mpmath
import sympy

from raosym.derive.divergence import ALPHA, expm1mx, unrewritten
from raosym.derive.mechanism import THETA
from raosym.emit.latex.forms import collected_form
from raosym.emit.latex.layout import continued_rows, display_rows
from raosym.emit.latex.printer import ProofPrinter, quantity_label
from raosym.verify.checks import Verified
from raosym.verify.evaluate import evaluate

#: Orders of the RDP columns of the comparison table.
ORDERS = (2, 8, 32)
#: The common calibration of the comparison: Rao-DP budget and sensitivity.
CALIBRATION = {"theta": 1, "sensitivity": 1}
#: Quantities of the verification record that belong to the mechanism.
QUANTITIES = ("rao_dp_theta", "renyi", "renyi_stable", "renyi_numeric", "kl", "kl_stable")


def accounting_context(verified: Verified, printer: ProofPrinter, steps) -> dict | None:
    """The ``accounting`` entry of the section context (None without a mechanism);
    ``steps(list, printer, first=1)`` is the backend's step formatter."""
    mechanism = verified.derivation.mechanism
    if mechanism is None:
        return None
    curve = mechanism.renyi
    stable = curve.stable if curve.stable is not None and curve.closed and (
        curve.stable != curve.textbook) else None
    rows = display_rows(r"D_\alpha", curve.textbook, printer) if curve.closed else []
    collected = collected_form(curve.textbook) if curve.closed else None
    if collected is not None:
        rows += continued_rows(collected[0], printer)
    if stable is not None:
        more = display_rows("", stable, printer)
        rows += ["&= " + more[0].removeprefix("& ")] + more[1:]
    context = {
        "manifold": printer.prose.latex(mechanism.manifold),
        "theta": printer.doprint(mechanism.theta_stable),
        "steps": steps(list(mechanism.steps), printer, first=1),
        "closed": curve.closed,
        "reason": printer.prose.latex(curve.reason or ""),
        "rows": rows,
        "stable": stable is not None,
        # the collected form's coefficients: (old sum, factored, exponential)
        "collected": None if collected is None else [
            {"sum": printer.doprint(old), "factored": printer.doprint(new),
             "exponential": printer.doprint(e)} for old, new, e in collected[1]],
        # phi(y) = e^y - 1 - y, the function the stable forms are written with.
        "phi": stable is not None and stable.has(expm1mx),
        "kl": printer.doprint(curve.kl) if curve.kl is not None else "",
        "checks": _checks(verified),
        "comparison": _comparison(verified, printer),
    }
    return context


def _checks(verified: Verified) -> list[dict]:
    found: dict = {}
    for check in verified.checks:
        if check.quantity in QUANTITIES:
            entry = found.setdefault(check.quantity, {"points": 0, "min": 99.0,
                                                      "required": check.required})
            entry["points"] += 1
            entry["min"] = min(entry["min"], check.digits)
    return [{"name": quantity_label(name), "points": e["points"], "min_digits": f"{e['min']:g}",
             "required_digits": f"{e['required']:g}"} for name, e in found.items()]


def _calibrated_point(verified: Verified) -> dict | None:
    """The arguments at Rao-DP budget 1 and sensitivity 1 (other constants: None, the
    comparison is then skipped)."""
    mechanism = verified.derivation.mechanism
    if mechanism.calibration is None or len(mechanism.arguments) > (
            2 if mechanism.kind == "additive" else 1):
        return None
    point = {}
    if mechanism.kind == "additive":
        point[mechanism.arguments[0]] = mpmath.mpf(CALIBRATION["sensitivity"])
    point[THETA] = mpmath.mpf(CALIBRATION["theta"])
    value = evaluate(mechanism.calibration, point)
    point[mechanism.calibrated] = value
    return point


def _pure_epsilon(verified: Verified, point: dict):
    """epsilon of pure DP, ``D_oo = lim_{alpha -> oo} D_alpha`` (None when infinite): SymPy's
    limit, or for a finite support ``max_x log(f_D(x)/f_D'(x))`` (the same limit), the larger
    of the two directions."""
    curve = verified.derivation.mechanism.renyi
    spec = verified.derivation.spec
    try:
        pure = sympy.limit(curve.textbook, ALPHA, sympy.oo)
    except (NotImplementedError, ValueError):
        pure = None
    if pure is not None:
        return None if pure.has(sympy.oo, sympy.zoo) else evaluate(pure, point)
    if spec.support.kind != "finite":
        raise ValueError("no limit of the RDP curve as alpha -> oo")
    ratios = [curve.first / curve.second, curve.second / curve.first]
    return max(evaluate(sympy.log(r.subs(spec.variable, x)), point)
               for r in ratios for x in spec.support.points)


#: The delta of the (epsilon, delta)-DP rows of the comparison, and the conversions from RDP:
#: Mironov (2017), Proposition 3, and Balle et al. (2020), Theorem 21.
DP_DELTA = mpmath.mpf("1e-5")
CONVERSIONS = ("mironov", "balle")


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


def _comparison(verified: Verified, printer: ProofPrinter) -> dict | None:
    mechanism = verified.derivation.mechanism
    curve = mechanism.renyi
    with mpmath.workdps(30):
        point = _calibrated_point(verified)
        if point is None or not curve.closed:
            return None
        values = {
            "theta": evaluate(mechanism.theta_stable, point),
            "epsilon": _pure_epsilon(verified, point),
            "kl": evaluate(curve.kl, point),
            "rho": None if curve.rho is None else evaluate(curve.rho, point),
            "rdp": [evaluate(unrewritten(curve.stable if curve.stable is not None
                                         else curve.textbook),
                             {**point, ALPHA: mpmath.mpf(order)}) for order in ORDERS],
        }
        form = unrewritten(curve.stable if curve.stable is not None else curve.textbook)
        values["dp"] = {conversion: conversion_epsilon(
            lambda alpha: evaluate(form, {**point, ALPHA: alpha}), DP_DELTA, conversion)
            for conversion in CONVERSIONS}
    return {
        "parameter": printer.doprint(mechanism.calibrated),
        "parameter_value": mpmath.nstr(point[mechanism.calibrated], 8),
        "theta": mpmath.nstr(values["theta"], 8),
        "epsilon": r"$\infty$" if values["epsilon"] is None else mpmath.nstr(values["epsilon"], 8),
        "kl": mpmath.nstr(values["kl"], 8),
        "rho": "--" if values["rho"] is None else mpmath.nstr(values["rho"], 8),
        "orders": list(ORDERS),
        "rdp": [r"$\infty$" if mpmath.isinf(v) else mpmath.nstr(v, 8) for v in values["rdp"]],
        "delta": r"10^{%d}" % round(mpmath.log10(DP_DELTA)),
        "dp": {conversion: mpmath.nstr(value, 8) for conversion, value in values["dp"].items()},
        # mu-GDP where the RDP curve is rho*alpha: the privacy loss is then N(rho, 2 rho).
        "mu": "--" if values["rho"] is None else mpmath.nstr(mpmath.sqrt(2 * values["rho"]), 8),
    }
