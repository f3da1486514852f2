"""The "Privacy accounting" subsection of a mechanism's LaTeX section.

Emit stage, LaTeX backend. Input: a :class:`Verified` whose derivation has a mechanism.
Output: the context of ``accounting.tex.j2``: which manifold the budget is measured in, the
derivation steps (Rao-DP budget and calibration, conversions, composition, the Rényi integral
split at its kinks, KL as its limit, and each rewrite into the stable forms the generated code
evaluates, with SymPy's check of the equality), the verification record, and a comparison of
privacy definitions at a common calibration (Rao-DP budget 1 at sensitivity 1), whose values
the verify stage computed (:mod:`raosym.verify.comparison`): Rao-DP ``theta``; pure
``epsilon``-DP (where finite; the Gaussian mechanism has none); KL; zCDP ``rho`` where the
RDP curve is linear in ``alpha``; the RDP curve at a few orders.
"""

from __future__ import annotations

import mpmath

from raosym.emit.latex.forms import collected_form
from raosym.emit.latex.layout import continued_rows, display_rows
from raosym.emit.latex.printer import ProofPrinter, quantity_label
from raosym.functions import expm1mx
from raosym.verify.checks import Verified

#: Quantities of the verification record that belong to the mechanism.
QUANTITIES = ("rao_dp_theta", "renyi", "renyi_stable", "renyi_numeric", "kl", "kl_stable",
              # a vector mechanism's lift to the sensitivity ball (raosym.verify.vector_mechanism)
              "product_density", "renyi_vector_shift", "kl_vector_shift", "renyi_ball_supremum",
              "kl_ball_supremum", "rao_dp_ball_supremum")


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
        "vector": _vector(mechanism),
    }
    return context


def _vector(mechanism) -> dict | None:
    """A vector mechanism's norm and dimension, for the prose that states the ball the
    sensitivity bounds and why the supremum over it is the one-coordinate curve at Delta."""
    lift = mechanism.vector
    if lift is None:
        return None
    return {"norm": lift.norm, "dimension": lift.dimension,
            "norm_tex": {"l2": r"\ell_2", "l1": r"\ell_1"}[lift.norm],
            "subscript": lift.norm[1:]}


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


def _comparison(verified: Verified, printer: ProofPrinter) -> dict | None:
    """The comparison table, as the verify stage computed it
    (:mod:`raosym.verify.comparison`), printed to 8 digits."""
    values = verified.comparison
    if values is None:
        return None
    return {
        "parameter": printer.doprint(values.calibrated),
        "parameter_value": mpmath.nstr(values.parameter_value, 8),
        "theta": mpmath.nstr(values.theta, 8),
        "epsilon": r"$\infty$" if values.epsilon is None else mpmath.nstr(values.epsilon, 8),
        "kl": mpmath.nstr(values.kl, 8),
        "rho": "--" if values.rho is None else mpmath.nstr(values.rho, 8),
        "orders": list(values.orders),
        "rdp": [r"$\infty$" if mpmath.isinf(v) else mpmath.nstr(v, 8) for v in values.rdp],
        "delta": r"10^{%d}" % round(mpmath.log10(values.delta)),
        "dp": {conversion: mpmath.nstr(value, 8) for conversion, value in values.dp},
        "mu": "--" if values.mu is None else mpmath.nstr(values.mu, 8),
    }
