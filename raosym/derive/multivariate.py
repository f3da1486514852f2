"""The derive stage for families of several sample variables (``variables = [...]``).

Called by :func:`raosym.derive.fisher.fisher_entries` when the exponential-family rung (which
needs no integral, whatever the number of variables) does not close the matrix, and by
:func:`raosym.derive.derive` for the Rao distance. Input: a :class:`FamilySpec` whose
``variables`` and ``supports`` are set. Output: :class:`FisherEntry` records and a
:class:`RaoDistance`, with their proof steps.

- **Iterated integrals and nested sums** (:func:`iterated_entries`): ``E[s_i s_j]`` is taken
  over the last variable first, its bounds in the earlier ones (Fubini/Tonelli: the integrand
  ``s_i s_j f`` is integrable, which the verify stage confirms numerically). A discrete
  support with numeric bounds is enumerated exactly, point by point; symbolic bounds go to
  SymPy's ``summation``/``integrate`` under the time budget. An entry that does not close is
  an error of the family: there is no numeric path for several variables yet.
- **Distances** (:func:`multivariate_distance`): a family on a finite set of outcomes whose
  coordinates are as many as the outcomes less one is an open piece of the round sphere of
  radius 2 (``θ ↦ 2√f(x; θ)``, Čencov), so ``d = 2 arccos Σ_x √(f(x; θ₁) f(x; θ₂))``,
  emitted as ``4 asin(‖√f₁ − √f₂‖/2)``; a metric ``c`` times the categorical one on the open
  simplex of its coordinates (the multinomial, ``c = n``) is the sphere of radius ``2√c``; a
  constant metric gives the Mahalanobis distance
  (the recognizer of :mod:`raosym.derive.distance`, for any number of coordinates).
"""

from __future__ import annotations

import sympy

from raosym.derive.budget import run_with_budget
from raosym.derive.distance import derive_distance, point_symbols
from raosym.derive.integrals import is_closed, tidy
from raosym.derive.steps import FisherEntry, ProofStep, RaoDistance, fisher_symbol
from raosym.errors import DerivationError
from raosym.spec.model import FamilySpec

#: Enumerate a finite discrete support point by point up to this many outcomes.
_ENUMERATION_LIMIT = 10_000

SPHERE = "round sphere (finite outcomes)"
SIMPLEX_SPHERE = "sphere (a multiple of the categorical metric)"


# ----------------------------------------------------------------------------- the support


def outcomes(spec: FamilySpec) -> list[dict[sympy.Symbol, sympy.Integer]] | None:
    """Every outcome of a discrete support whose bounds are numbers once the earlier
    variables are fixed (``x2 in range(0, 2 - x1)``), in order; None when a bound holds a
    constant or is infinite, or there are more than :data:`_ENUMERATION_LIMIT` outcomes."""
    if not all(support.discrete for support in spec.supports):
        return None
    found: list[dict] = [{}]
    for variable, support in zip(spec.variables, spec.supports):
        extended = []
        for outcome in found:
            if support.kind == "finite":
                values = [point.subs(outcome) for point in support.points]
            else:
                lower, upper = support.lower.subs(outcome), support.upper.subs(outcome)
                if not (lower.is_Integer and upper.is_Integer):
                    return None
                values = [sympy.Integer(k) for k in range(int(lower), int(upper) + 1)]
            if not all(value.is_number for value in values):
                return None
            extended += [{**outcome, variable: value} for value in values]
            if len(extended) > _ENUMERATION_LIMIT:
                return None
        found = extended
    return found


def expectation_form(spec: FamilySpec, integrand: sympy.Expr) -> sympy.Expr:
    """``integrand`` under its nested integral or sum, the last variable innermost."""
    form = integrand
    for variable, support in reversed(tuple(zip(spec.variables, spec.supports))):
        if support.kind == "finite" or support.discrete:
            form = sympy.Sum(form, (variable, support.lower, support.upper))
        else:
            form = sympy.Integral(form, (variable, support.lower, support.upper))
    return form


# ----------------------------------------------------------------------------- Fisher entries


def iterated_entries(spec: FamilySpec, score, *, budget: float) -> tuple[FisherEntry, ...]:
    """Every entry ``g_ij = E[s_i s_j]`` (``j <= i``) by nested sums or iterated integrals."""
    coordinates = spec.coordinate_symbols
    entries = []
    for i in range(len(coordinates)):
        for j in range(i + 1):
            name = fisher_symbol(coordinates[i].name, coordinates[j].name)
            integrand = score[i] * score[j] * spec.density
            form = expectation_form(spec, integrand)
            definition = ProofStep(
                "Definition: the Fisher information is the expected product of the scores.",
                name, form, "the score-product form, over every sample variable", "definition")
            value, strategy, justification = _iterated(spec, integrand, name, budget)
            # From the nested expectation the definition displays: the LaTeX backend shows
            # the two as one chain g = E[...] = value, as it does a scalar entry's.
            closing = ProofStep("Evaluate the nested expectation.", form, value, justification,
                                strategy)
            entries.append(FisherEntry(i, j, value, strategy, (definition, closing)))
    return tuple(entries)


def _iterated(spec, integrand, name, budget) -> tuple[sympy.Expr, str, str]:
    points = outcomes(spec)
    if points is not None:
        total = sympy.Add(*(integrand.subs(point) for point in points))
        return tidy(total), "finite sum", (
            f"the sum over the {len(points)} outcomes of the support, term by term")
    value = integrand
    for variable, support in reversed(tuple(zip(spec.variables, spec.supports))):
        if support.discrete:
            operation = (sympy.summation, (value, (variable, support.lower, support.upper)))
        else:
            operation = (sympy.integrate, (value, (variable, support.lower, support.upper)))
        value = run_with_budget(operation[0], *operation[1], seconds=budget,
                                what=f"the expectation of {name} over {variable}")
        if not is_closed(value):
            raise DerivationError(
                f"{spec.path}: could not close the Fisher entry {name}: SymPy left the "
                f"{'sum' if support.discrete else 'integral'} over {variable} unevaluated "
                "(raosym has no numeric path for families of several variables yet)")
    kind = "iterated sums" if spec.supports[0].discrete else "iterated integrals"
    return tidy(value), kind, (
        "by Fubini's theorem: the last variable first, its bounds in the earlier ones, then "
        "outwards")


# ----------------------------------------------------------------------------- distances


def sphere_distance(spec: FamilySpec) -> RaoDistance | None:
    """``2 arccos Σ √(f₁ f₂)`` when the support is finite and the coordinates are as many as
    the outcomes less one (the whole open orthant of the sphere, which is geodesically
    convex: the great circle between two of its points stays in it); else None."""
    points = outcomes(spec)
    if points is None or len(points) != len(spec.coordinates) + 1:
        return None
    # g_ij = 4 Σ_k ∂_i √f_k ∂_j √f_k, f_k the probability of the k-th outcome.
    k, theta_i, theta_j = sympy.symbols("k theta_i theta_j")
    root = sympy.sqrt(sympy.Function("f")(k))
    sphere_metric = 4 * sympy.Sum(sympy.Derivative(root, theta_i) * sympy.Derivative(root, theta_j),
                                  (k, 1, len(points)))
    metric_step = ProofStep(
        "On a finite set of outcomes the Fisher metric is that of the round sphere of "
        "radius 2.", sympy.Symbol("g_ij"), sphere_metric,
        "`E[s_i s_j] = Σ_x ∂_i f ∂_j f / f = 4 Σ_x ∂_i √f ∂_j √f`: the map that takes θ to "
        "the vector of twice the square roots of the outcomes' probabilities is an "
        f"isometry onto an open part of the sphere of radius 2 in the space of dimension "
        f"{len(points)}; "
        f"with {len(spec.coordinates)} coordinates for {len(points)} outcomes that part is "
        "open in the positive orthant, which contains the great-circle arc between any two "
        "of its points", "distance")
    probabilities = [spec.density.subs(point) for point in points]
    return _great_circle(spec, probabilities, sympy.S.One, (metric_step,), SPHERE)


def simplex_sphere_distance(spec: FamilySpec, fisher) -> RaoDistance | None:
    """``2√c arccos Σ √(p_i q_i)`` when the coordinates are the free probabilities of the open
    simplex (``p1 in (0, 1)``, ``p2 in (0, 1 - p1)``, ...) and the metric is ``c`` times the
    categorical family's there, ``c`` free of the coordinates: the multinomial of ``n``
    trials (``c = n``), whose support has no fixed number of outcomes; else None."""
    coordinates = spec.coordinate_symbols
    remaining = sympy.S.One
    for parameter, symbol in zip(spec.coordinates, coordinates):
        domain = parameter.domain
        if not (domain.lower == 0 and domain.lower_open and domain.upper_open
                and sympy.simplify(domain.upper - remaining) == 0):
            return None
        remaining -= symbol
    count = len(coordinates)
    categorical = sympy.Matrix(count, count, lambda i, j: (1 / coordinates[i] if i == j else 0)
                               + 1 / remaining)
    metric = sympy.Matrix(fisher)
    scale = sympy.simplify(metric[0, 0] / categorical[0, 0])
    if scale.has(*coordinates) or not scale.is_positive:
        return None
    if not (metric - scale * categorical).applyfunc(sympy.simplify).is_zero_matrix:
        return None
    p_i, p_k = sympy.Symbol("p_i", positive=True), sympy.Symbol(f"p_{count + 1}", positive=True)
    metric_step = ProofStep(
        "The metric is a constant multiple of the Fisher metric of the categorical family on "
        "the simplex.", sympy.Symbol("g_ij"),
        scale * (sympy.KroneckerDelta(sympy.Symbol("i"), sympy.Symbol("j")) / p_i + 1 / p_k),
        f"with p_{count + 1} equal to 1 minus the sum of the coordinates, g minus this "
        "multiple of the categorical metric simplifies to zero entry by entry; the "
        "categorical metric is that of the sphere of radius 2 (the map that takes the "
        "probabilities p to 2√p is an isometry, as for any finite set of outcomes), so this one is that of the sphere whose radius is 2 times the "
        "square root of the multiple, and the coordinates range over the open simplex, "
        "whose image in the positive orthant contains the great-circle arc between any two "
        "of its points", "distance")
    return _great_circle(spec, [*coordinates, remaining], scale, (metric_step,), SIMPLEX_SPHERE)


def _great_circle(spec, probabilities, scale, metric_steps, structure) -> RaoDistance:
    """The distance on the sphere of radius 2√scale through θ ↦ (√q(θ)) for the outcome
    probabilities q: textbook ``2√scale·arccos Σ √(q₁ q₂)``, stable ``4√scale·asin(chord/2)``."""
    first, second = point_symbols(spec)
    coordinates = spec.coordinate_symbols
    radius_over_2 = sympy.sqrt(scale)
    at_first = [sympy.powsimp(sympy.expand_power_base(q.subs(dict(zip(coordinates, first))),
                                                      force=True)) for q in probabilities]
    at_second = [sympy.powsimp(sympy.expand_power_base(q.subs(dict(zip(coordinates, second))),
                                                       force=True)) for q in probabilities]
    affinity = sympy.Add(*(sympy.sqrt(a * b) for a, b in zip(at_first, at_second)))
    textbook = 2 * radius_over_2 * sympy.acos(affinity)
    # ‖√f₁ − √f₂‖ with each difference as (f₁ − f₂)/(√f₁ + √f₂): no cancellation for nearby
    # points, where acos(1 - tiny) loses half the digits.
    differences = [_telescoped(q, coordinates, first, second) for q in probabilities]
    chord = sympy.sqrt(sympy.Add(*((d / (sympy.sqrt(a) + sympy.sqrt(b))) ** 2
                                   for d, a, b in zip(differences, at_first, at_second))))
    stable = 4 * radius_over_2 * sympy.asin(chord / 2)
    steps = (
        *metric_steps,
        ProofStep("The Rao distance is the great-circle distance (Bhattacharyya angle).",
                  sympy.Symbol("d"), textbook,
                  "the radius times the angle between the unit vectors (√f₁) and (√f₂), whose "
                  "inner product is Σ_x √(f₁ f₂)", "distance"),
        ProofStep("The same distance from the chord, without cancellation.", sympy.Symbol("d"),
                  stable,
                  "the chord of an angle φ on the unit sphere is 2 sin(φ/2); each "
                  "√f₁ − √f₂ is written (f₁ − f₂)/(√f₁ + √f₂)", "stable form"),
    )
    return RaoDistance(structure, textbook, stable, (first, second), steps)


def _telescoped(probability, coordinates, first, second) -> sympy.Expr:
    """``f(θ₁) − f(θ₂)`` as a sum of differences in one coordinate at a time, each factored
    (``1 − p1 − p2`` gives ``(p1_2 − p1_1) + (p2_2 − p2_1)``) and kept unevaluated: summed
    flat, ``−p1_1 + p1_2 − p2_1 + p2_2`` rounds ``p1_2 − p1_1 − p2_1`` before the last term
    cancels it, and lost 5 of 16 digits at points 1e-12 apart."""
    terms = []
    for index in range(len(coordinates)):
        before = dict(zip(coordinates, (*second[:index], *first[index:])))
        after = dict(zip(coordinates, (*second[:index + 1], *first[index + 1:])))
        term = sympy.factor(probability.subs(before) - probability.subs(after))
        if term != 0:
            terms.append(term)
    if not terms:
        return sympy.S.Zero
    return sympy.Add(*terms, evaluate=False) if len(terms) > 1 else terms[0]


def multivariate_distance(spec: FamilySpec, fisher, geometry, *, budget: float) -> RaoDistance:
    """The sphere, else the recognizers of :func:`derive_distance` (the constant metric's
    straight line among them), else the numeric geodesic."""
    sphere = sphere_distance(spec) or simplex_sphere_distance(spec, fisher)
    if sphere is not None:
        return sphere
    # The recognizers read only the metric (and the density's periods, a symbolic identity in
    # the coordinates), so they apply over several variables; what none recognizes is left to
    # the numeric geodesic, as for one variable.
    return derive_distance(spec, fisher, geometry, budget=budget)
