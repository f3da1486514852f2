"""The Hessian rung of the Fisher ladder, for mass functions: ``g_ij = -E[d_i d_j log f]``
when that Hessian is linear in statistics whose means the zero-mean scores fix.

Derive stage, tried after the sum rung declines. The negative binomial with its shape r as a
coordinate is the case in point: ``E[s_p^2]`` needs ``E[k^2]``, a sum with gamma ratios SymPy
does not close, while ``-d_p^2 log f = r/p^2 + k/(1 - p)^2`` needs only ``E[k]``, which
``E[s_p] = 0`` gives. No sum is evaluated at all: like the exponential-family rung, the
entry follows from the zero mean of the scores (Lemma ``lem:score`` of the appendix, valid for
a mass function twice differentiable in the coordinates on a support that does not depend on
them). Entries whose Hessian holds a statistic no score fixes (the negative binomial's
``polygamma(1, k + r)``) are left to the numeric path.
"""

from __future__ import annotations

import sympy

from raosym.derive.expectation import Expectation
from raosym.derive.steps import ProofStep
from raosym.spec.model import FamilySpec

#: The strategy of an entry this rung closes.
HESSIAN = "Hessian form"

#: Functions whose kinks make the Hessian form false (a Dirac mass the pointwise Hessian
#: misses): the rung declines a log-density that holds one.
_KINKED = (sympy.Abs, sympy.sign, sympy.Piecewise, sympy.Heaviside, sympy.Max, sympy.Min,
           sympy.floor, sympy.ceiling)


def hessian_entry(spec: FamilySpec, log_density: sympy.Expr, i: int, j: int,
                  name: sympy.Symbol) -> tuple[sympy.Expr, tuple[ProofStep, ...]] | None:
    """``(g_ij, steps)`` by the Hessian form (``name`` the entry's symbol), or None when the
    rung does not apply."""
    if not spec.support.discrete or spec.support.free_symbols() & set(spec.coordinate_symbols):
        return None
    if log_density.has(*_KINKED):
        return None
    x, coordinates = spec.variable, spec.coordinate_symbols
    needed = _linear_in_statistics(
        sympy.expand(sympy.diff(log_density, coordinates[i], coordinates[j])), x, coordinates)
    if needed is None:
        return None
    # As displayed: each statistic once, its coefficient factored (k/(1 - p)**2, not
    # k/(p**2 - 2*p + 1)).
    hessian = sympy.Add(*(sympy.factor(c) * statistic for statistic, c in needed.items()))
    means = _means_from_scores(log_density, x, coordinates,
                               [statistic for statistic in needed if statistic != 1])
    if means is None:
        return None
    expectation = sympy.Add(*(coefficient * (1 if statistic == 1 else means[statistic])
                              for statistic, coefficient in needed.items()))
    value = sympy.factor(sympy.simplify(-expectation))
    return value, _steps(spec, i, j, name, hessian, means, value)


def _linear_in_statistics(expr: sympy.Expr, x, coordinates) -> dict | None:
    """``{T(x): c(theta)}`` with ``expr = sum c T`` (``T = 1`` for the part free of ``x``), or
    None when a term mixes ``x`` and the coordinates beyond such a product."""
    parts: dict = {}
    for term in sympy.Add.make_args(expr):
        coefficient, statistic = term.as_independent(x, as_Add=False)
        if statistic.free_symbols & set(coordinates):
            return None
        parts[statistic] = parts.get(statistic, 0) + coefficient
    return parts


def _means_from_scores(log_density, x, coordinates, statistics) -> dict | None:
    """``{T: E[T]}`` for each statistic, solved from ``E[s_c] = 0`` over the scores that are
    linear in statistics; None unless every mean is determined."""
    if not statistics:
        return {}
    unknowns = {}
    equations = []
    for theta in coordinates:
        parts = _linear_in_statistics(sympy.expand(sympy.diff(log_density, theta)), x,
                                      coordinates)
        if parts is None:
            continue
        for statistic in parts:
            if statistic != 1 and statistic not in unknowns:
                unknowns[statistic] = sympy.Dummy("mean")
        equations.append(sympy.Add(*(coefficient * (1 if s == 1 else unknowns[s])
                                     for s, coefficient in parts.items())))
    if any(statistic not in unknowns for statistic in statistics):
        return None
    solutions = sympy.solve(equations, list(unknowns.values()), dict=True)
    if len(solutions) != 1:
        return None
    solution = solutions[0]
    if any(unknowns[s] not in solution for s in statistics):
        return None
    return {s: sympy.factor(sympy.simplify(solution[unknowns[s]])) for s in statistics}


def _steps(spec, i, j, name, hessian, means, value) -> tuple[ProofStep, ...]:
    coordinates = spec.coordinate_symbols
    f = sympy.Function("f")(spec.variable)
    second = sympy.Derivative(sympy.log(f), coordinates[i], coordinates[j])
    steps = [ProofStep(
        "The mass function is twice differentiable in the coordinates and its support does "
        "not depend on them, so the score-product form equals minus the expected Hessian:",
        name, -Expectation(second),
        "differentiate the sum of f over the support, which is 1, twice under the sum",
        HESSIAN)]
    steps.append(ProofStep("The second derivative of the log-mass function:", second, hessian,
                           "differentiation of log f", HESSIAN))
    if means:
        (first, mean), *others = means.items()
        steps.append(ProofStep(
            "The scores have mean zero, which fixes the means of the statistics the second "
            "derivative holds:",
            Expectation(first), mean,
            "the scores linear in these statistics, their expectations set to zero and solved "
            "for the means", HESSIAN,
            also=tuple((Expectation(s), m) for s, m in others)))
    claim = "Minus the expectation of the second derivative" + (", with these means:"
                                                                 if means else ":")
    steps.append(ProofStep(claim, -Expectation(hessian), value,
                           "the expectation is linear; the terms free of the variable are "
                           "their own expectation", HESSIAN))
    return tuple(steps)
