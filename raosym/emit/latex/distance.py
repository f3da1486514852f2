"""The Rao distance subsection of a family's LaTeX section.

Emit stage, LaTeX backend (kept apart from :mod:`raosym.emit.latex` so that later subsections
do not mix with it). Input: the family's :class:`~raosym.derive.steps.RaoDistance` and its
verification record. Output: the context of ``distance.tex.j2``: the line element, the
recognized structure, the proof steps the derive stage recorded (shear, half-plane, curvature,
antiderivatives, the cancellation-free identities and the equality of the stable and textbook
forms), the closed form, and the numeric geodesic check; for a family without a closed form,
the reason and how the generated code computes the distance.
"""

from __future__ import annotations

import sympy

from raosym.derive.steps import PERIOD_STRATEGY
from raosym.emit.latex.forms import line_element_form, line_element_latex
from raosym.emit.latex.layout import display_rows
from raosym.emit.latex.printer import ProofPrinter, quantity_label, symbol_latex, tex_text
from raosym.emit.provenance import verification_record
from raosym.verify.checks import Verified

#: Verification quantities of the distance (see raosym/verify/checks.py).
DISTANCE_QUANTITIES = ("periodicity", "rao_distance", "rao_distance_textbook")


def point_coordinate_latex(name: str, point: int) -> str:
    """A coordinate at the first or second point: ``\\mu_{1}``, or ``m_{1}^{(1)}`` for a
    coordinate whose name has its own subscript (``m_{1}_{1}`` is a LaTeX error)."""
    symbol = symbol_latex(name)
    return f"{symbol}^{{({point})}}" if "_" in symbol else f"{symbol}_{{{point}}}"


def distance_names(verified: Verified) -> dict[sympy.Symbol, str]:
    """LaTeX names of the symbols the distance steps use: the two points' coordinates
    (``mu_1`` -> ``\\mu_{1}``, ``lam_2`` -> ``\\lambda_{2}``) and sheared coordinates
    (``mu'`` -> ``\\mu'``)."""
    spec = verified.derivation.spec
    names = {}
    for p in spec.coordinates:
        for suffix in (1, 2):
            names[sympy.Symbol(f"{p.name}_{suffix}")] = point_coordinate_latex(p.name, suffix)
        names[sympy.Symbol(f"{p.name}'")] = f"{symbol_latex(p.name)}'"
    return names


def distance_context(verified: Verified, printer: ProofPrinter, steps) -> dict | None:
    """The ``distance`` entry of the section context; ``steps(list, printer, first=1)`` is the
    backend's step formatter (with the line element's name fixed)."""
    derivation = verified.derivation
    distance = derivation.distance
    if distance is None:
        return None
    spec = derivation.spec
    record = verification_record(verified)
    checks = {q.quantity: q for q in record.quantities if q.quantity in DISTANCE_QUANTITIES}
    context = {
        "closed": distance.closed,
        "one_coordinate": False,
        "structure": printer.prose.latex(STRUCTURES.get(distance.structure,
                                                        distance.structure)),
        # On rows, as the line element of the geometry steps: three coordinates' overrun a line.
        "line_element_rows": display_rows(
            f"{line_element_latex(spec)}^2",
            line_element_form(derivation.geometry.line_element, spec), printer),
        "points": [", ".join(printer.doprint(s) for s in point) for point in distance.points],
        "steps": steps(distance.steps, printer, first=1),
        "period_steps": steps([s for s in distance.steps if s.strategy == PERIOD_STRATEGY],
                              printer, first=1),
        "checks": [{"name": quantity_label(name), "points": q.points, "min_digits": f"{q.min_digits:g}",
                    "required_digits": f"{q.required_digits:g}"} for name, q in checks.items()],
        "module": tex_text(f"generated/python/{spec.name}.py"),
    }
    if distance.closed:
        # Long forms are broken into rows of the align* by the backend's own layout.
        textbook = display_rows("d(P_1, P_2)", distance.textbook, printer)
        stable = display_rows("", distance.stable, printer)
        stable[0] = "&= " + stable[0].removeprefix("& ")
        context["rows"] = textbook + stable
    else:
        from raosym.emit.python.distance import NUMERIC_TOLERANCE

        # The reason's first sentence: which structures were tried (the template says how the
        # distance is computed instead).
        first = (distance.reason or "").split(". ")[0]
        tried = first.removeprefix("no closed form recognized: ")
        context["reason"] = (
            "The metric is of none of the kinds whose distance the derivation knows in closed "
            f"form: it is {printer.prose.latex(tried)}. For such a metric the geodesic "
            "equations have no closed-form solution known to the derivation (which is not a "
            "proof that none exists), so the distance is computed numerically, and the "
            "computed value is certified as follows.")
        context["tolerance"] = _scientific(NUMERIC_TOLERANCE)
        if len(spec.coordinates) == 1:
            context.update(_arc_length_context(derivation, printer, tried))
    return context


def _arc_length_context(derivation, printer: ProofPrinter, tried: str) -> dict:
    """A line without a closed distance: the integral the distance is, and why it is not
    closed (no antiderivative of sqrt(g) known, or a metric known only numerically)."""
    theta = derivation.spec.coordinate_symbols[0]
    first, second = derivation.distance.points
    numeric_metric = derivation.numeric_metric
    g = derivation.fisher[0, 0]  # for a metric known only numerically, the entry's name
    integral = sympy.Abs(sympy.Integral(sympy.sqrt(g), (theta, first[0], second[0])))
    if numeric_metric:
        reason = ("The metric has no closed form known to the derivation: its entry "
                  f"${printer.doprint(g)}$ is computed numerically, as stated above. So the "
                  "distance has none either, and it is computed numerically too.")
    else:
        reason = ("The metric is of none of the kinds whose distance the derivation knows in "
                  f"closed form: it is {printer.prose.latex(tried)}. This is not a proof that no "
                  "closed form exists; the distance is computed numerically, and the computed "
                  "value is certified as follows.")
    return {"one_coordinate": True, "numeric_metric": numeric_metric, "reason": reason,
            "integral": printer.doprint(integral)}


#: The derive stage's names of the structures a distance is recognized by, as a noun phrase
#: of "The manifold is a ...".
STRUCTURES = {"one coordinate": "one-coordinate manifold",
              "constant metric": "manifold with a constant metric",
              "location-scale half-plane": "location-scale half-plane",
              "location-scale half-space": "location-scale half-space (several locations "
                                           "sharing one scale)",
              "product": "product of one-dimensional manifolds",
              "product of manifolds": "product of manifolds (the metric splits into blocks)",
              "warped half-plane": "warped half-plane",
              "round sphere (finite outcomes)": "piece of the sphere of radius 2 (a family "
                                                "on finitely many outcomes)",
              "sphere (a multiple of the categorical metric)":
                  "piece of a sphere (the metric is a constant multiple of the categorical "
                  "family's on the simplex)"}


def _scientific(value: float) -> str:
    mantissa, exponent = f"{value:.0e}".split("e")
    return rf"{mantissa} \cdot 10^{{{int(exponent)}}}" if mantissa != "1" else rf"10^{{{int(exponent)}}}"
