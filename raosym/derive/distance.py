"""Rao distances in closed form, found by recognizing structure in the derived metric.

Derive stage, after :mod:`raosym.derive.geometry`. Input: the spec, its Fisher metric ``g`` and
geometry. Output: a :class:`~raosym.derive.steps.RaoDistance` with proof steps. The structure is
read off the metric, never off the family's name; the recognizers are tried in this order:

- **constant metric** (``g`` free of the coordinates): ``d = sqrt(dθᵀ g dθ)`` with
  ``dθ = θ₁ - θ₂``, a straight line being the geodesic;
- **one coordinate**: ``d = |F(θ₂) - F(θ₁)|`` with ``F`` a symbolic antiderivative of
  ``sqrt(g)`` (SymPy ``integrate`` under the budget, checked by differentiation);
- **location-scale half-plane**: ``g = (1/s²)·[[a, b], [b, c]]`` with ``a, b, c`` free of the
  coordinates and ``s`` a positive coordinate. The shear ``μ' = μ + (b/a)·s`` removes the cross
  term, ``ds² = (a dμ'² + c' ds²)/s²`` with ``c' = c - b²/a``, a Poincaré half-plane scaled by
  ``c'``, so ``d = sqrt(c')·acosh(1 + ((μ₁' - μ₂')²·a/c' + (s₁ - s₂)²)/(2 s₁ s₂))``; confirmed by
  the derived Gaussian curvature ``K = -1/c'``;
- **product**: a diagonal metric whose entry ``g_ii`` depends only on ``θ_i`` is a product of
  one-dimensional manifolds, ``d = sqrt(d₁² + d₂²)``;
- **warped half-plane**: a diagonal metric ``g = diag(a(u)·b(y), c(y))`` (``g_uu`` a product
  of a function of each coordinate) with ``m = 4·c·b²/b'²`` a positive constant: with
  ``x = ∫ sqrt(a) du / sqrt(m)`` and ``w = 1/sqrt(b)``, ``ds² = m·(dx² + dw²)/w²``, a Poincaré
  half-plane scaled by ``m`` (curvature ``-1/m``, confirmed by the derived one) when ``w``
  ranges over (0, ∞) (the image, a vertical strip, is then geodesically convex, so the
  half-plane distance is the manifold's); the inverse Gaussian (``x ∝ 1/√μ``, ``w = 1/√λ``,
  ``m = 2``) is one;
- otherwise **numeric only** (the verify stage's geodesic solver gives the distance).

A coordinate in which the density is periodic (the von Mises mean direction) identifies
points a period apart; the distance is then between classes, taken between the
representatives within half a period (:func:`_periods` says when that is valid).

Each closed form comes in two equal forms: ``textbook`` (as the literature writes it) and
``stable`` (rewritten by the rules of :func:`difference` so that nearly identical points do not
cancel: ``acosh(1 + 2z) = 2·asinh(√z)``, ``√x - √y = (x - y)/(√x + √y)``,
``log x - log y = log1p((x - y)/y)``, taken factor by factor for the logarithm of a
product, and an ``atan`` form of ``asin √x - asin √y``). Their
equality is checked symbolically and recorded as a proof step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import sympy
from sympy.calculus.util import periodicity
from sympy.codegen.cfunctions import expm1, log1p
from sympy.functions.elementary.trigonometric import TrigonometricFunction

from raosym.derive.budget import BudgetExceeded, run_with_budget
from raosym.derive.geometry import derive_geometry
from raosym.derive.integrals import tidy, transcendental_radical
from raosym.derive.steps import PERIOD_STRATEGY, Geometry, ProofStep, RaoDistance
from raosym.errors import DerivationError
from raosym.spec.model import Domain, FamilySpec
from raosym.spec.names import point_name

NUMERIC_ONLY = "numeric only"
#: Digits to which the stable and textbook forms must agree at exact rational points.
IDENTITY_DIGITS = 50


class _Declined(Exception):
    """A recognizer does not apply (the message says why)."""


@dataclass(frozen=True)
class _Problem:
    """What the recognizers read: coordinates, their domains, the two points, the metric."""

    spec: FamilySpec
    metric: sympy.Matrix
    geometry: Geometry
    first: tuple[sympy.Symbol, ...]
    second: tuple[sympy.Symbol, ...]
    budget: float

    @property
    def coordinates(self) -> tuple[sympy.Symbol, ...]:
        return self.spec.coordinate_symbols

    def domain(self, index: int) -> Domain:
        return self.spec.coordinates[index].domain


def point_symbols(spec: FamilySpec) -> tuple[tuple[sympy.Symbol, ...], tuple[sympy.Symbol, ...]]:
    """``(mu_1, sigma_1), (mu_2, sigma_2)``: the coordinates of two points, same assumptions."""
    def suffixed(suffix):
        return tuple(sympy.Symbol(point_name(p.name, suffix), **p.domain.symbol_assumptions())
                     for p in spec.coordinates)

    return suffixed(1), suffixed(2)


def derive_distance(spec: FamilySpec, fisher: sympy.Matrix, geometry: Geometry, *,
                    budget: float) -> RaoDistance:
    """The Rao distance of the family's manifold, or "numeric only" with the reason."""
    first, second = point_symbols(spec)
    problem = _Problem(spec, sympy.Matrix(fisher), geometry, first, second, budget)
    periods, period_steps = _periods(problem)
    distance = _recognized(problem)
    return dataclasses.replace(distance, periods=periods,
                               steps=(*period_steps, *distance.steps))


def _recognized(problem: _Problem) -> RaoDistance:
    """The first recognizer's closed distance, else "numeric only" with every reason."""
    reasons = []
    one = len(problem.coordinates) == 1
    for structure, recognizer, arity in _RECOGNIZERS:
        if one and arity == 2:
            continue  # a structure of several coordinates: its "no" says nothing of a line
        try:
            return recognizer(problem)
        except _Declined as declined:
            reasons.append(f"not a {structure} ({declined})")
    computed = ("the integral of sqrt(g) between the points, by quadrature" if one
                else "the length of a numeric geodesic")
    reason = ("no closed form recognized: " + "; ".join(reasons) +
              f". The verify stage computes the distance as {computed}.")
    step = ProofStep("No closed form of the Rao distance was recognized.", None,
                     sympy.Symbol("d"), reason, "distance")
    return RaoDistance(NUMERIC_ONLY, None, None, (problem.first, problem.second), (step,),
                       reason)


def numeric_metric_distance(spec: FamilySpec, fisher: sympy.Matrix) -> RaoDistance:
    """One coordinate whose metric entry is known only numerically: the distance is still
    the length of the segment, ``d = |∫ sqrt(g)|``, an integral of an integral that the verify
    stage and the generated module compute by quadrature (no closed form is claimed or
    sought: the integrand itself has none)."""
    first, second = point_symbols(spec)
    theta = spec.coordinate_symbols[0]
    g = fisher[0, 0]
    reason = (f"the metric entry {sympy.sstr(g)} is known only numerically; on a line the "
              "geodesic is the segment, so the distance is the integral of sqrt(g) between "
              "the points, computed by quadrature of the numerically evaluated metric")
    steps = (
        ProofStep("One coordinate: the manifold is a curve, and the distance is the integral of "
                  "the line element along it.", sympy.Symbol("d"),
                  sympy.Abs(sympy.Integral(sympy.sqrt(g), (theta, first[0], second[0]))),
                  f"ds = sqrt(g) |d{theta}| with g > 0 (a Fisher information of a regular "
                  "family); the coordinate segment is the only curve joining the points",
                  "distance"),
        ProofStep("The metric entry has no closed form here, so neither has the distance: it "
                  "is computed by quadrature of the numerically computed metric.", None,
                  sympy.Symbol("d"), reason, "distance"),
    )
    return RaoDistance(NUMERIC_ONLY, None, None, (first, second), steps, reason)


# ------------------------------------------------------------------------ periodic coordinates


def _periods(problem: _Problem) -> tuple[tuple, tuple[ProofStep, ...]]:
    """The periodic coordinates ``((c, P), ...)`` and the step that reduces the distance to
    representatives within half a period.

    A coordinate ``c`` is periodic with period ``P`` when the density is unchanged by
    ``c -> c + P`` (SymPy's ``periodicity``, confirmed by simplifying the difference): then
    ``θ`` and ``θ + P e_c`` are one distribution, and the Rao distance is the distance between
    classes modulo ``P``. When the metric is free of ``c`` and has no cross term in it,
    translations and the reflection of ``c`` are isometries, and shrinking ``Δc`` shortens
    every curve (its ``g_cc dc²`` term scales, nothing else changes), so the distance is
    nondecreasing in ``|Δc|`` and the class distance is the distance between the
    representatives with ``|Δc| ≤ P/2``. Otherwise raosym does not reduce it: DerivationError
    (the distance is then unavailable, never the longer distance of the covering plane)."""
    spec, metric = problem.spec, problem.metric
    found, steps = [], []
    for index, parameter in enumerate(spec.coordinates):
        period = _period(spec.density, parameter.symbol, problem.budget)
        if period is None:
            continue
        c = parameter.symbol
        cross = [metric[index, j] for j in range(metric.cols) if j != index]
        if metric.has(c) or any(not _is_zero(entry) for entry in cross):
            raise DerivationError(
                f"the density is periodic in {c} (period {period}) and the metric depends on "
                f"{c} or couples it to another coordinate: the distance between classes modulo "
                "the period is not implemented")
        if not _is_real_line(parameter.domain):
            raise DerivationError(
                f"the density is periodic in {c} (period {period}) but {c} is declared on "
                f"{parameter.domain.text}: declare it real, so that the distance can be taken "
                "between the representatives within half a period")
        found.append((c, period))
        steps.append(ProofStep(
            f"The coordinate {c} is periodic with period {period}.",
            # f(x; c + P) = f(x; c), the density as a function of the variable and c
            sympy.Function("f")(spec.variable, c + period), sympy.Function("f")(spec.variable, c),
            f"The density is unchanged when {c} moves by {period}, so points whose {c} "
            f"differ by a multiple of {period} are one distribution. The metric is free of "
            f"{c} and has no cross term in it: translations and the reflection of {c} are "
            f"isometries, and scaling the difference in {c} down shortens every curve. The "
            f"distance is therefore taken between the representatives whose {c} differ by at "
            f"most {period / 2}.", PERIOD_STRATEGY))
    return tuple(found), tuple(steps)


def _period(density: sympy.Expr, c: sympy.Symbol, budget: float) -> sympy.Expr | None:
    """The least period of the density in ``c``, or None (only a density with a
    trigonometric function of ``c`` is asked: ``periodicity`` costs tenths of a second)."""
    if not any(isinstance(e, TrigonometricFunction) and e.has(c)
               for e in sympy.preorder_traversal(density)):
        return None
    period = periodicity(density, c)
    if period is None or not (period.is_positive and period.is_finite):
        return None
    if not _simplifies_to_zero(density.subs(c, c + period) - density, budget):
        return None
    return period


# ----------------------------------------------------------------------------- recognizers


def _constant_metric(problem: _Problem) -> RaoDistance:
    """Constant metric (a flat, straight-line geometry)."""
    metric, coordinates = problem.metric, problem.coordinates
    if metric.has(*coordinates):
        raise _Declined("the metric depends on the coordinates")
    delta = sympy.Matrix([a - b for a, b in zip(problem.first, problem.second)])
    if len(coordinates) == 1:
        textbook = tidy(sympy.sqrt(metric[0, 0])) * sympy.Abs(delta[0])
        identity = "sqrt(g*dtheta^2) = sqrt(g)*|dtheta|"
    else:
        # g = L D Lᵀ: the quadratic form is a sum of non-negative squares D_i (Lᵀ dθ)_i².
        lower, diagonal = metric.LDLdecomposition(hermitian=False)
        rotated = lower.T * delta
        textbook = sympy.sqrt(sum(tidy(diagonal[i, i]) * rotated[i] ** 2
                                  for i in range(len(coordinates))))
        identity = ("with g = L D Lᵀ (L unit lower triangular, D diagonal), dthetaᵀ g dtheta is "
                    "the sum over i of D_i times the square of the i-th component of Lᵀ dtheta")
    steps = [
        ProofStep("The metric does not depend on the coordinates: the manifold is flat and the "
                  "straight line is the geodesic.", sympy.Symbol("g"), sympy.ImmutableMatrix(metric),
                  "constant coefficients: the Christoffel symbols vanish, so geodesics are "
                  "straight lines in these coordinates", "distance"),
        ProofStep("The Rao distance is the length of the straight segment.", sympy.Symbol("d"),
                  textbook, identity, "distance"),
        ProofStep("The same form is cancellation-free: it only takes the difference of the "
                  "coordinates, which is exact for nearby points.", sympy.Symbol("d"), textbook,
                  "no rewriting needed", "stable form"),
    ]
    return RaoDistance("constant metric", textbook, textbook, (problem.first, problem.second),
                       tuple(steps))


def _one_coordinate(problem: _Problem) -> RaoDistance:
    """One coordinate with a symbolic antiderivative of sqrt(g)."""
    if len(problem.coordinates) != 1:
        raise _Declined("more than one coordinate")
    textbook, stable, steps = _one_dimensional(problem, 0)
    return RaoDistance("one coordinate", textbook, stable, (problem.first, problem.second),
                       tuple(steps))


def _half_plane(problem: _Problem) -> RaoDistance:
    """Location-scale half-plane: g = (1/s²)·[[a, b], [b, c]] with a, b, c constant; with
    several locations sharing the scale, the half-space of :func:`_half_space_distance`."""
    coordinates, metric = problem.coordinates, problem.metric
    for scale_index in reversed(range(len(coordinates))):
        scale = coordinates[scale_index]
        locations = [i for i in range(len(coordinates)) if i != scale_index]
        scaled = (metric * scale**2).applyfunc(sympy.cancel)
        if scaled.has(*coordinates) or not _is_half_line(problem.domain(scale_index)):
            continue
        if not all(_is_real_line(problem.domain(i)) for i in locations):
            continue
        if len(locations) > 1:
            return _half_space_distance(problem, locations, scale_index,
                                        scaled.applyfunc(tidy))
        location_index, = locations
        a = tidy(scaled[location_index, location_index])
        b = tidy(scaled[location_index, scale_index])
        c = tidy(scaled[scale_index, scale_index])
        return _half_plane_distance(problem, location_index, scale_index, a, b, c)
    raise _Declined("s²·g is not constant for any coordinate s ranging over (0, oo) while the "
                    "others range over the real line")


def _product(problem: _Problem) -> RaoDistance:
    """Product of one-dimensional manifolds (diagonal metric with separated entries)."""
    coordinates, metric = problem.coordinates, problem.metric
    size = len(coordinates)
    if size < 2:
        raise _Declined("one coordinate")
    if any(metric[i, j] != 0 for i in range(size) for j in range(size) if i != j):
        raise _Declined("the metric is not diagonal")
    for i in range(size):
        others = [theta for j, theta in enumerate(coordinates) if j != i]
        if metric[i, i].has(*others):
            raise _Declined(f"g_{coordinates[i]}{coordinates[i]} depends on another coordinate")
    pieces = [_one_dimensional(problem, i) for i in range(size)]
    textbook = sympy.sqrt(sum(piece[0] ** 2 for piece in pieces))
    stable = sympy.sqrt(sum(piece[1] ** 2 for piece in pieces))
    steps = [ProofStep(
        "The metric is diagonal and each entry depends only on its own coordinate: the manifold "
        "is a product of one-dimensional manifolds.", sympy.Symbol("g"),
        sympy.ImmutableMatrix(metric),
        "geodesics of a product are products of geodesics (constant-speed lines of each factor)",
        "distance")]
    for piece in pieces:
        steps += piece[2]
    steps.append(ProofStep("The distance of a product manifold.", sympy.Symbol("d"), textbook,
                           "d² = d₁² + d₂² for the product metric", "distance"))
    steps.append(ProofStep("The cancellation-free form: a root of a sum of squares of the "
                           "factors' stable distances.", sympy.Symbol("d"), stable,
                           "each factor is replaced by its equal stable form", "stable form"))
    return RaoDistance("product", textbook, stable, (problem.first, problem.second), tuple(steps))


def _block_product(problem: _Problem) -> RaoDistance:
    """A metric that splits into blocks, each depending only on its own coordinates
    (independent normal and exponential samples in (mu, sigma, lam): the half-plane times a
    line): the product of the blocks' manifolds, ``d² = Σ d_b²``, each block's distance
    recognized on its own as a manifold of its coordinates."""
    blocks = _blocks(problem.metric, problem.coordinates)
    if len(blocks) < 2:
        raise _Declined("the metric does not split into blocks of coordinates")
    if all(len(block) == 1 for block in blocks):
        raise _Declined("every block is one coordinate")  # the product of lines, above
    pieces = []
    for block in blocks:
        piece = _recognized(_block_problem(problem, block))
        names = ", ".join(str(problem.coordinates[i]) for i in block)
        if not piece.closed:
            raise _Declined(f"the block of {names} has no closed distance")
        pieces.append(piece)
    textbook = sympy.sqrt(sum(piece.textbook ** 2 for piece in pieces))
    stable = sympy.sqrt(sum(piece.stable ** 2 for piece in pieces))
    steps = [ProofStep(
        "The metric splits into blocks, each depending only on its own coordinates: the "
        "manifold is a product of the blocks' manifolds.", sympy.Symbol("g"),
        sympy.ImmutableMatrix(problem.metric),
        "geodesics of a product are products of geodesics of the factors, each at constant "
        "speed", "distance")]
    for piece in pieces:
        steps += piece.steps
    steps.append(ProofStep("The distance of a product manifold.", sympy.Symbol("d"), textbook,
                           "d² is the sum of the squared distances of the factors",
                           "distance"))
    steps.append(ProofStep("The cancellation-free form: a root of a sum of squares of the "
                           "factors' stable distances.", sympy.Symbol("d"), stable,
                           "each factor is replaced by its equal stable form", "stable form"))
    return RaoDistance("product of manifolds", textbook, stable, (problem.first, problem.second),
                       tuple(steps))


def _blocks(metric: sympy.Matrix, coordinates) -> list[list[int]]:
    """The coordinates' indices grouped so that no entry of the metric couples two groups:
    i and j are together when g_ij is not zero or an entry of i's row depends on j."""
    group = list(range(len(coordinates)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(len(coordinates)):
        for j in range(len(coordinates)):
            linked = {j} if i != j and metric[i, j] != 0 else set()
            linked |= {k for k, theta in enumerate(coordinates) if metric[i, j].has(theta)}
            for k in linked:
                group[root(k)] = root(i)
    blocks: dict[int, list[int]] = {}
    for i in range(len(coordinates)):
        blocks.setdefault(root(i), []).append(i)
    return sorted(blocks.values())


def _block_problem(problem: _Problem, block: list[int]) -> _Problem:
    """The manifold of one block's coordinates: its metric, geometry and points."""
    spec = dataclasses.replace(problem.spec,
                               coordinates=tuple(problem.spec.coordinates[i] for i in block))
    metric = problem.metric.extract(block, block)
    return _Problem(spec, metric, derive_geometry(spec.coordinate_symbols, metric),
                    tuple(problem.first[i] for i in block), tuple(problem.second[i] for i in block),
                    problem.budget)


def _warped_half_plane(problem: _Problem) -> RaoDistance:
    """g = diag(a(u)·b(y), c(y)) with 4·c·b²/b'² = m constant: a half-plane scaled by m."""
    coordinates, metric = problem.coordinates, problem.metric
    if len(coordinates) != 2:
        raise _Declined("not two coordinates")
    if metric[0, 1] != 0:
        raise _Declined("the metric is not diagonal")
    reasons = []
    for along, across in ((0, 1), (1, 0)):
        u, y = coordinates[along], coordinates[across]
        if metric[across, across].has(u):
            reasons.append(f"g_{y}{y} depends on {u}")
            continue
        parts = sympy.separatevars(metric[along, along], symbols=[u, y], dict=True, force=True)
        if not parts or not parts[y].has(y):
            reasons.append(f"g_{u}{u} is not a product of a function of {u} and one of {y}")
            continue
        a, b = tidy(parts["coeff"] * parts[u]), tidy(parts[y])
        if not (b.is_positive or _sign_on(b, y, _interval(problem.domain(across)),
                                          problem.domain(across).interior_point()) == 1):
            a, b = -a, -b  # the split's signs are arbitrary: b > 0 is wanted
        m = tidy(sympy.simplify(4 * metric[across, across] * b**2 / sympy.diff(b, y) ** 2))
        if m.has(u, y) or not m.is_positive:
            reasons.append(f"4·g_{y}{y}·b²/b'² = {sympy.sstr(m)} is not a positive constant "
                           f"(b = {sympy.sstr(b)})")
            continue
        w = tidy(1 / sympy.sqrt(b))
        ends = {sympy.limit(w, y, end, direction)
                for end, direction in ((problem.domain(across).lower, "+"),
                                       (problem.domain(across).upper, "-"))}
        if ends != {sympy.S.Zero, sympy.oo}:
            reasons.append(f"w = {sympy.sstr(w)} does not range over (0, oo)")
            continue
        return _warped_distance(problem, along, across, a, b, m, w)
    raise _Declined("; ".join(reasons))


def _warped_distance(problem: _Problem, along: int, across: int, a, b, m, w) -> RaoDistance:
    u, y = problem.coordinates[along], problem.coordinates[across]
    x_of_u, steps = _antiderivative(_positive_root(a, u, problem.domain(along)), u,
                                    problem.domain(along), problem.budget)
    x_of_u = tidy(x_of_u / sympy.sqrt(m))
    w_symbol = sympy.Symbol("w", positive=True)
    point = {name: (problem.first[index], problem.second[index])
             for name, index in (("u", along), ("y", across))}
    x1, x2 = (x_of_u.subs(u, value) for value in point["u"])
    w1, w2 = (w.subs(y, value) for value in point["y"])
    squares = (x1 - x2) ** 2 + (w1 - w2) ** 2
    textbook = sympy.sqrt(m) * sympy.acosh(1 + squares / (2 * w1 * w2))
    steps = steps[1:]  # the antiderivative of sqrt(a): x = that / sqrt(m)
    steps.insert(0, ProofStep(
        f"The metric is diagonal, g_{u}{u} = a({u})·b({y}) and g_{y}{y} = c({y}) with "
        f"4·c·b²/b'² = m constant: a warped half-plane.", sympy.Symbol("g"),
        sympy.ImmutableMatrix(problem.metric),
        f"a = {sympy.sstr(a)}, b = {sympy.sstr(b)}, c = {sympy.sstr(problem.metric[across, across])}, "
        f"m = {sympy.sstr(m)}", "distance"))
    steps.append(ProofStep(
        f"With x = ∫ sqrt(a) d{u} / sqrt(m) and w = 1/sqrt(b) the metric is a Poincaré "
        "half-plane scaled by m.", sympy.Symbol("ds") ** 2,
        m * (sympy.Symbol("dx") ** 2 + sympy.Symbol("dw") ** 2) / w_symbol**2,
        f"x = {sympy.sstr(x_of_u)}, w = {sympy.sstr(w)}: b·a d{u}² = m dx²/w² and, as "
        f"dw = -b'/(2 b^(3/2)) d{y}, m dw²/w² = m b'²/(4 b²) d{y}² = c d{y}²; w ranges over "
        "(0, oo) and x over an interval, a vertical strip of the half-plane, which is "
        "geodesically convex (bounded by geodesics), so the half-plane distance is the "
        "manifold's", "half-plane"))
    steps.append(_curvature_step(problem.geometry, m))
    steps.append(ProofStep("The Rao distance (textbook form).", sympy.Symbol("d"), textbook,
                           "the half-plane distance acosh(1 + ((x₁-x₂)² + (w₁-w₂)²)/(2 w₁ w₂)) "
                           "scaled by sqrt(m)", "distance"))
    differences, identities = [], []
    for expr, theta, index in ((x_of_u, u, along), (w, y, across)):
        domain = problem.domain(index)
        increasing = _Monotonicity(domain, theta)(expr) > 0
        try:
            stable_difference, used = _stable_difference(
                expr if increasing else -expr, theta, problem.first[index],
                problem.second[index], domain)
        except _Declined:
            stable_difference, used = expr.subs(theta, problem.first[index]) - \
                expr.subs(theta, problem.second[index]), []
        differences.append(stable_difference)
        identities += [identity for identity in used if identity not in identities]
    stable = 2 * sympy.sqrt(m) * sympy.asinh(sympy.sqrt(
        (differences[0] ** 2 + differences[1] ** 2) / (4 * w1 * w2)))
    z = sympy.Symbol("z", nonnegative=True)
    identities.append(Identity(
        sympy.acosh(1 + 2 * z), 2 * sympy.asinh(sympy.sqrt(z)),
        "acosh(1 + 2z) = 2·asinh(√z) for z ≥ 0",
        lambda: sympy.expand_trig(sympy.cosh(2 * sympy.asinh(sympy.sqrt(z)))) - 1 - 2 * z))
    steps += [_identity_step(identity, problem.budget) for identity in identities]
    steps.append(_equality_step(problem, textbook, stable,
                                "differences of x and w without cancellation, asinh for "
                                "acosh(1 + tiny)"))
    return RaoDistance("warped half-plane", textbook, stable, (problem.first, problem.second),
                       tuple(steps))


#: (structure, recognizer, the least number of coordinates it needs: None for any number).
_RECOGNIZERS = (
    ("constant metric", _constant_metric, None),
    ("one-coordinate manifold", _one_coordinate, 1),
    ("location-scale half-plane or half-space", _half_plane, 2),
    ("product of one-dimensional manifolds", _product, 2),
    ("product of manifolds", _block_product, 2),
    ("warped half-plane", _warped_half_plane, 2),
)


# ----------------------------------------------------------------------------- half-plane


def _half_plane_distance(problem: _Problem, location_index: int, scale_index: int,
                         a: sympy.Expr, b: sympy.Expr, c: sympy.Expr) -> RaoDistance:
    mu, s = problem.coordinates[location_index], problem.coordinates[scale_index]
    mu1, mu2 = problem.first[location_index], problem.second[location_index]
    s1, s2 = problem.first[scale_index], problem.second[scale_index]
    c_prime = tidy(c - b**2 / a)
    ratio = tidy(a / c_prime)
    shift = tidy(b / a)
    numerator = ratio * (mu1 - mu2 + shift * (s1 - s2)) ** 2 + (s1 - s2) ** 2
    textbook = sympy.sqrt(c_prime) * sympy.acosh(1 + numerator / (2 * s1 * s2))
    stable = 2 * sympy.sqrt(c_prime) * sympy.asinh(sympy.sqrt(numerator / (4 * s1 * s2)))
    shear_symbol = sympy.Symbol(f"{mu.name}'", real=True)
    steps = [ProofStep(
        f"The metric is a location-scale half-plane metric in ({mu}, {s}).", sympy.Symbol("g"),
        sympy.ImmutableMatrix(problem.metric),
        f"{s}²·g is constant: a = {sympy.sstr(a)}, b = {sympy.sstr(b)}, c = {sympy.sstr(c)}",
        "distance")]
    if b != 0:
        steps.append(ProofStep(
            "A shear removes the cross term.", shear_symbol, mu + shift * s,
            f"a d{mu}² + 2b d{mu} d{s} + c d{s}² = a d{mu}'² + c' d{s}² with "
            f"{mu}' = {mu} + (b/a) {s} and c' = c - b²/a", "shear"))
    steps.append(ProofStep(
        "The metric is a scaled Poincaré half-plane.", sympy.Symbol("ds") ** 2,
        c_prime * (sympy.Symbol("dx") ** 2 + sympy.Symbol(f"d{s}") ** 2) / s**2,
        f"x = {mu}'·sqrt(a/c'), c' = {sympy.sstr(c_prime)}; the Poincaré half-plane "
        "(dx² + dy²)/y² has distance acosh(1 + ((x₁-x₂)² + (y₁-y₂)²)/(2 y₁ y₂))", "half-plane"))
    steps.append(_curvature_step(problem.geometry, c_prime))
    steps.append(ProofStep("The Rao distance (textbook form).", sympy.Symbol("d"), textbook,
                           "the half-plane distance scaled by sqrt(c')", "distance"))
    steps += _asinh_form_steps(problem, textbook, stable)
    return RaoDistance("location-scale half-plane", textbook, stable,
                       (problem.first, problem.second), tuple(steps))


def _half_space_distance(problem: _Problem, locations: list[int], scale_index: int,
                         scaled: sympy.Matrix) -> RaoDistance:
    """n >= 2 locations mu sharing one scale s, g = M/s² with M constant: with A the
    locations' block of M, b their column against s and c = M_ss, the shear
    mu' = mu + s·A⁻¹b leaves (dmu'ᵀ A dmu' + c' ds²)/s², c' = c - bᵀA⁻¹b, and with
    ξ = Lᵀmu'/√c' (A = L Lᵀ) the Poincaré half-space scaled by c': its distance
    √c'·acosh(1 + (|ξ₁ - ξ₂|² + (s₁ - s₂)²)/(2 s₁ s₂)), |ξ₁ - ξ₂|² = Δmu'ᵀ A Δmu'/c'."""
    s = problem.coordinates[scale_index]
    mu = sympy.Matrix([problem.coordinates[i] for i in locations])
    A = sympy.Matrix([[scaled[i, j] for j in locations] for i in locations])
    b = sympy.Matrix([scaled[i, scale_index] for i in locations])
    c = scaled[scale_index, scale_index]
    if not A.is_positive_definite:
        raise _Declined("the locations' block of s²·g is not positive definite")
    shift = (A.inv() * b).applyfunc(tidy)
    c_prime = tidy(c - (b.T * A.inv() * b)[0, 0])
    if not c_prime.is_positive:
        raise _Declined("c - bᵀA⁻¹b is not positive")
    s1, s2 = problem.first[scale_index], problem.second[scale_index]
    delta = sympy.Matrix([problem.first[i] - problem.second[i] for i in locations]) \
        + shift * (s1 - s2)
    # Term by term, never expanded: (m_1 - m_2)² must not become m_1² - 2 m_1 m_2 + m_2²,
    # which cancels for nearby points.
    n = len(locations)
    numerator = sympy.Add(*(tidy(A[i, j] / c_prime) * (delta[i] * delta[j])
                            for i in range(n) for j in range(n))) + (s1 - s2) ** 2
    textbook = sympy.sqrt(c_prime) * sympy.acosh(1 + numerator / (2 * s1 * s2))
    stable = 2 * sympy.sqrt(c_prime) * sympy.asinh(sympy.sqrt(numerator / (4 * s1 * s2)))
    names = ", ".join(str(symbol) for symbol in (*mu, s))
    steps = [ProofStep(
        f"The metric is a location-scale half-space metric in ({names}).", sympy.Symbol("g"),
        sympy.ImmutableMatrix(problem.metric),
        f"`{s}**2*g` is constant; its block `A` of the locations is positive definite, `b` is "
        f"their column against `{s}` and `c = {sympy.sstr(c)}`", "half-space")]
    if any(entry != 0 for entry in shift):
        sheared = sympy.Matrix([sympy.Symbol(f"{m.name}'", real=True) for m in mu])
        steps.append(ProofStep(
            "A shear removes the cross terms.", sympy.ImmutableMatrix(sheared),
            sympy.ImmutableMatrix(mu + shift * s),
            f"the sheared locations are `mu' = mu + {s}*A**(-1)*b`, and "
            f"`c' = c - bᵀ*A**(-1)*b = {sympy.sstr(c_prime)}`", "half-space shear"))
    dimension = len(locations) + 1
    steps.append(ProofStep(
        "The metric is a scaled Poincaré half-space.", sympy.Symbol("ds") ** 2,
        c_prime * (sympy.Symbol("dx") ** 2 + sympy.Symbol(f"d{s}") ** 2) / s**2,
        f"`x = Lᵀ*mu'/sqrt(c')` with `A = L*Lᵀ` and `c' = {sympy.sstr(c_prime)}`, `dx**2` the "
        f"squared norm of `dx`: the Poincaré half-space of dimension {dimension}, "
        "scaled by c'", "half-space"))
    curvature = problem.geometry.scalar_curvature
    predicted = -dimension * (dimension - 1) / c_prime
    if curvature is not None:
        if sympy.simplify(curvature - predicted) != 0:
            raise DerivationError(
                f"the half-space structure predicts the scalar curvature {sympy.sstr(predicted)} "
                f"but the derived one is {sympy.sstr(curvature)}")
        steps.append(ProofStep(
            "The derived scalar curvature confirms the constant sectional curvature -1/c'.",
            sympy.Symbol("R"), curvature,
            f"a space of dimension {dimension} and sectional curvature `-1/c'` has "
            f"`R = -{dimension * (dimension - 1)}/c'`", "half-space curvature"))
    steps.append(ProofStep("The Rao distance (textbook form).", sympy.Symbol("d"), textbook,
                           "the half-space distance scaled by sqrt(c')", "distance"))
    steps += _asinh_form_steps(problem, textbook, stable)
    return RaoDistance("location-scale half-space", textbook, stable,
                       (problem.first, problem.second), tuple(steps))


def _asinh_form_steps(problem: _Problem, textbook, stable) -> list[ProofStep]:
    """The identity acosh(1 + 2z) = 2 asinh(√z) and the equality of the textbook and stable
    forms of a half-plane's or half-space's distance."""
    z = sympy.Symbol("z", nonnegative=True)
    return [_identity_step(Identity(
                sympy.acosh(1 + 2 * z), 2 * sympy.asinh(sympy.sqrt(z)),
                "acosh(1 + 2z) = 2·asinh(√z) for z ≥ 0",
                lambda: sympy.expand_trig(sympy.cosh(2 * sympy.asinh(sympy.sqrt(z)))) - 1 - 2 * z),
                problem.budget),
            _equality_step(problem, textbook, stable,
                           "for a tiny z, acosh(1 + 2z) loses the digits of z, "
                           "2·asinh(√z) keeps them")]


def _curvature_step(geometry: Geometry, c_prime: sympy.Expr) -> ProofStep:
    """The half-plane scaled by c' has K = -1/c'; the derived curvature must say the same."""
    curvature = geometry.gaussian_curvature
    if curvature is None or sympy.simplify(curvature + 1 / c_prime) != 0:
        raise DerivationError(
            f"the half-plane structure predicts K = {sympy.sstr(-1 / c_prime)} but the derived "
            f"Gaussian curvature is {sympy.sstr(curvature)}")
    return ProofStep("The derived Gaussian curvature confirms the constant curvature -1/c'.",
                     sympy.Symbol("K"), curvature,
                     f"K + 1/c' simplifies to 0 with c' = {sympy.sstr(c_prime)}", "curvature")


def _is_half_line(domain: Domain) -> bool:
    return domain.lower == 0 and domain.upper == sympy.oo and not domain.integer


def _is_real_line(domain: Domain) -> bool:
    return domain.lower == -sympy.oo and domain.upper == sympy.oo and not domain.integer


# ----------------------------------------------------------------------------- one coordinate


def _one_dimensional(problem: _Problem, index: int):
    """``(textbook, stable, steps)`` of the distance along coordinate ``index`` alone."""
    theta, domain = problem.coordinates[index], problem.domain(index)
    first, second = problem.first[index], problem.second[index]
    g = problem.metric[index, index]
    if not g.has(theta):
        textbook = tidy(sympy.sqrt(g)) * sympy.Abs(first - second)
        step = ProofStep(f"g_{theta}{theta} does not depend on {theta}.", sympy.Symbol("d"),
                         textbook, "the distance is the coordinate difference times sqrt(g)",
                         "distance")
        return textbook, textbook, [step]
    root = _positive_root(g, theta, domain)
    antiderivative, steps = _antiderivative(root, theta, domain, problem.budget)
    textbook = sympy.Abs(sympy.logcombine(
        sympy.factor_terms(antiderivative.subs(theta, second) - antiderivative.subs(theta, first)),
        force=True))
    steps.append(ProofStep(
        f"The Rao distance along {theta}.", sympy.Symbol("d"), textbook,
        f"d = |∫ sqrt(g) d{theta}| between the two points (a one-dimensional manifold: the "
        "coordinate segment is the geodesic)", "distance"))
    try:
        stable, identities = _stable_difference(antiderivative, theta, first, second, domain)
    except _Declined as declined:
        steps.append(ProofStep("No cancellation-free rewriting applies; the textbook form is "
                               "used.", sympy.Symbol("d"), textbook, str(declined), "stable form"))
        return textbook, textbook, steps
    steps += [_identity_step(identity, problem.budget) for identity in identities]
    steps.append(_equality_step(problem, textbook, stable,
                                "the stable form takes differences of nearby values only where "
                                "they are exact"))
    return textbook, stable, steps


def _positive_root(g: sympy.Expr, theta: sympy.Symbol, domain: Domain) -> sympy.Expr:
    """``sqrt(g)`` as a product of powers of factors that are positive on the domain (so that
    SymPy integrates the real branch: ``1/(sqrt(p)*sqrt(1 - p))``, not ``sqrt(-1/(p*(p - 1)))``)."""
    interval = _interval(domain)
    interior = domain.interior_point()
    numerator, denominator = sympy.fraction(sympy.together(g))
    result, sign = sympy.S.One, 1
    for part, power in ((numerator, 1), (denominator, -1)):
        try:
            coefficient, factors = sympy.factor_list(part)
        except sympy.PolynomialError:
            return sympy.sqrt(g)
        sign *= 1 if coefficient > 0 else -1
        result *= sympy.sqrt(abs(coefficient)) ** power
        for base, exponent in factors:
            base_sign = _sign_on(base, theta, interval, interior)
            if base_sign is None:
                return sympy.sqrt(g)
            sign *= base_sign ** exponent
            result *= (base_sign * base) ** (sympy.Rational(exponent, 2) * power)
    return result if sign > 0 else sympy.sqrt(g)


def _sign_on(base, theta, interval, interior) -> int | None:
    """+1 or -1 when ``base`` keeps that sign on the domain, else None."""
    if base.has(theta):
        try:
            if sympy.solveset(base, theta, interval) != sympy.S.EmptySet:
                return None
        except NotImplementedError:
            return None
        value = base.subs(theta, interior)
    else:
        value = base
    if value.is_positive:
        return 1
    if value.is_negative:
        return -1
    return None


def _antiderivative(root, theta, domain, budget):
    """``F`` with ``F' = sqrt(g)`` on the domain, and its steps."""
    constant, varying = root.as_independent(theta, as_Add=False)
    radical = transcendental_radical(varying, theta)
    if radical is not None:
        raise _Declined(f"no antiderivative of sqrt(g) = {sympy.sstr(root)} is sought: "
                        f"{sympy.sstr(radical)} is a radical of a transcendental function of "
                        f"{theta}, beyond the Risch algorithm (which decides integrands "
                        "without such radicals)")
    try:
        result = run_with_budget(sympy.integrate, varying, theta, seconds=budget,
                                 what=f"the antiderivative of {sympy.sstr(varying)}")
    except BudgetExceeded:
        raise  # an error of the family: a clock must not choose the route
    except DerivationError as error:
        raise _Declined(f"no antiderivative of sqrt(g) = {sympy.sstr(root)}: {error}") from None
    antiderivative = _branch_on(sympy.piecewise_fold(result), theta, _interval(domain))
    antiderivative = None if antiderivative is None else constant * antiderivative
    if antiderivative is None or antiderivative.has(sympy.Integral, sympy.I):
        raise _Declined(f"SymPy found no real antiderivative of {sympy.sstr(root)} on "
                        f"{domain.describe()}")
    w, parametrized = _positive_parametrization(theta, domain)
    derivative = (sympy.diff(antiderivative, theta) - root).subs(theta, parametrized)
    if not _simplifies_to_zero(derivative, budget):
        raise _Declined(f"could not confirm that {sympy.sstr(antiderivative)} is an "
                        f"antiderivative of {sympy.sstr(root)}")
    step = ProofStep(
        f"An antiderivative of sqrt(g) on {domain.describe()}.",
        sympy.Integral(root, theta), antiderivative,
        "differentiating it gives sqrt(g) back on the whole domain (written with "
        f"{theta} = {sympy.sstr(parametrized)}, {w} > 0, every root taken on its real branch)",
        "antiderivative")
    return antiderivative, [ProofStep(
        "One coordinate: the manifold is a curve, and the distance is the integral of the "
        "line element along it.", sympy.Symbol("ds"), root * sympy.Symbol(f"d{theta}"),
        f"ds = sqrt(g) |d{theta}| with sqrt(g) > 0 on {domain.describe()}", "distance"), step]


def _branch_on(expr, theta, interval):
    """The branch of a Piecewise valid on the whole interval (None when it is split)."""
    if not isinstance(expr, sympy.Piecewise):
        pieces = [(expr, sympy.true)]
    else:
        pieces = expr.args
    for value, condition in pieces:
        if condition == sympy.true:
            return value
        if condition.free_symbols - {theta}:
            return None
        region = condition.as_set()
        if interval.is_subset(region):
            return value
        if interval.intersect(region) != sympy.S.EmptySet:
            return None
    return None


# ----------------------------------------------------------------------------- stable forms


def _stable_difference(antiderivative, theta, first, second, domain):
    """``|F(θ₂) - F(θ₁)|`` without cancellation, and the identities used.

    F is increasing (``F' = sqrt(g) > 0``), so the distance is ``F(hi) - F(lo)`` with
    ``hi = max``, ``lo = min``; :func:`difference` writes it in ``hi``, ``lo`` and
    ``delta = hi - lo`` (exact for nearby floating-point numbers). A symmetric result is written
    in the two points directly, otherwise with Max and Min.
    """
    assumptions = domain.symbol_assumptions()
    hi = sympy.Dummy("hi", **assumptions)
    lo = sympy.Dummy("lo", **assumptions)
    delta = sympy.Dummy("delta", positive=True)
    used: list = []
    monotone = _Monotonicity(domain, theta)
    expr = difference(antiderivative, theta, hi, lo, delta, used, monotone)
    swapped = expr.xreplace({hi: lo, lo: hi})
    if swapped == expr:
        stable = expr.xreplace({hi: first, lo: second, delta: sympy.Abs(first - second)})
    else:
        stable = expr.xreplace({hi: sympy.Max(first, second), lo: sympy.Min(first, second),
                                delta: sympy.Abs(first - second)})
    return stable, [IDENTITIES[name] for name in dict.fromkeys(used)]


class _Monotonicity:
    """Whether an expression of theta increases (+1) or decreases (-1) on the domain, read
    from the sign of its derivative at an interior point (constants set to 2); the final
    equality check at exact points catches a wrong answer."""

    def __init__(self, domain: Domain, theta: sympy.Symbol):
        self.theta = theta
        self.interior = domain.interior_point()
        self.interval = _interval(domain)

    def positive(self, expr: sympy.Expr) -> bool:
        """Whether ``expr`` is positive on the whole domain (no zero in it, positive inside)."""
        return _sign_on(expr, self.theta, self.interval, self.interior) == 1

    def __call__(self, expr: sympy.Expr) -> int:
        slope = sympy.diff(expr, self.theta).subs(self.theta, self.interior)
        slope = slope.subs({s: 2 for s in slope.free_symbols})
        return 1 if sympy.N(slope) > 0 else -1


def difference(expr, theta, hi, lo, delta, used, monotone) -> sympy.Expr:
    """``expr(hi) - expr(lo)`` rewritten so that it evaluates without cancellation when
    ``hi`` and ``lo`` are close: every difference of nearby values is reduced to ``delta``.

    Rules (each named in ``used``, stated in :data:`IDENTITIES`): constants and sums pass
    through; a rational function of ``theta`` by dividing out ``hi - lo``; ``√R`` (also a
    product of square roots, R = expr²) by the conjugate; ``log B`` by ``log1p`` (a product
    ``B`` factor by factor, when the factors' logarithms move the same way); ``asin √B`` by an
    ``atan`` of cancellation-free sines and cosines; ``exp`` by ``expm1`` with the larger
    exponential factored out; ``acosh``/``asinh`` by their logarithms.
    """
    def at(e, value):
        return e.subs(theta, value)

    def recurse(e):
        return difference(e, theta, hi, lo, delta, used, monotone)

    if not expr.has(theta):
        return sympy.S.Zero
    if expr == theta:
        return delta
    if expr.is_Mul:
        constant, rest = expr.as_independent(theta)
        if constant != 1:
            return constant * recurse(rest)
    if expr.is_Add:
        return sympy.Add(*(recurse(term) for term in sympy.Add.make_args(expr)))
    if expr.is_rational_function(theta):
        quotient = sympy.factor(sympy.cancel((at(expr, hi) - at(expr, lo)) / (hi - lo)))
        return delta * quotient
    square = sympy.factor(expr**2)
    if expr.is_Pow and expr.exp == sympy.S.Half or square.is_rational_function(theta):
        # expr = ±√R (R = expr², a rational function when expr is a product of square roots).
        sign = 1 if expr.subs(theta, monotone.interior).is_positive is not False else -1
        radicand = expr.base if expr.is_Pow and expr.exp == sympy.S.Half else square
        used.append("sqrt")
        return sign * recurse(radicand) / (sympy.sqrt(at(radicand, hi))
                                           + sympy.sqrt(at(radicand, lo)))
    if isinstance(expr, sympy.log):
        base = expr.args[0]
        logarithms = _logarithms_of_factors(base, theta, monotone)
        if logarithms is not None:
            used.append("log of a product")
            return sympy.Add(*(recurse(term) for term in logarithms))
        used.append("log")
        if monotone(base) > 0:
            return log1p(recurse(base) / at(base, lo))
        return -log1p(-recurse(base) / at(base, hi))
    if isinstance(expr, sympy.asin) and sympy.factor(expr.args[0] ** 2).is_rational_function(theta):
        base = sympy.factor(expr.args[0] ** 2)
        high, low = at(base, hi), at(base, lo)
        high_c, low_c = (sympy.factor(1 - high), sympy.factor(1 - low))
        used.append("asin")
        sine = sympy.sqrt(high * low_c) + sympy.sqrt(low * high_c)
        cosine = sympy.sqrt(high * low) + sympy.sqrt(high_c * low_c)
        return sympy.atan(recurse(base) / (sine * cosine))
    if isinstance(expr, sympy.exp):
        # e^a(hi) - e^a(lo) with the larger exponential factored out: expm1 of a difference
        # that is <= 0 (never overflows), times an exponential no larger than the result's
        # size (the Poisson family in its natural parameter: 2|e^(eta_1/2) - e^(eta_2/2)|).
        exponent = expr.args[0]
        used.append("exp")
        if monotone(exponent) > 0:
            return -sympy.exp(at(exponent, hi)) * expm1(-recurse(exponent))
        return sympy.exp(at(exponent, lo)) * expm1(recurse(exponent))
    if isinstance(expr, (sympy.acosh, sympy.asinh)):
        u = expr.args[0]
        sign = -1 if isinstance(expr, sympy.acosh) else 1
        used.append(type(expr).__name__)
        return recurse(sympy.log(u + sympy.sqrt(sympy.factor(u**2 + sign))))
    raise _Declined(f"no cancellation-free rule for differences of {sympy.sstr(expr)}")


def _logarithms_of_factors(base, theta, monotone) -> list[sympy.Expr] | None:
    """``log B`` as ``[k_1 log f_1, k_2 log f_2, ...]`` when ``B = f_1^k_1 f_2^k_2 ...`` has
    two or more factors in ``theta``, each positive on the domain, and the terms all increase
    or all decrease (else None).

    Their differences then share a sign, so their sum cancels nothing, and each difference is
    of one factor alone: the geometric distance's ``log((1 + sqrt(1 - p))/sqrt(p))`` gives
    ``log1p(Δ/p_lo)/2`` plus a term of order one, where the difference of the whole ratio
    divided by the product ``p_1·p_2``, which underflows to 0 below 1e-154 (0/0 = nan at
    ``p_1 = p_2``)."""
    factors = [f for f in sympy.Mul.make_args(sympy.together(base)) if f.has(theta)]
    if len(factors) < 2:
        return None
    terms = []
    for factor in factors:
        root, power = factor.as_base_exp()
        if not monotone.positive(root):
            return None
        terms.append(power * sympy.log(root))
    if len({monotone(term) for term in terms}) != 1:
        return None
    return terms


_x = sympy.Symbol("x", positive=True)
_y = sympy.Symbol("y", positive=True)


@dataclass(frozen=True)
class Identity:
    """A rewriting rule as an identity in generic symbols, and how SymPy confirms it
    (``proof()`` must simplify to 0)."""

    lhs: sympy.Expr
    rhs: sympy.Expr
    statement: str
    proof: Callable[[], sympy.Expr]


def _sqrt(e):
    return sympy.sqrt(e)


#: The rules of :func:`difference`, in generic symbols x > y > 0 (x, y < 1 for asin).
IDENTITIES = {
    "sqrt": Identity(
        _sqrt(_x) - _sqrt(_y), (_x - _y) / (_sqrt(_x) + _sqrt(_y)),
        "√x − √y = (x − y)/(√x + √y)",
        lambda: _sqrt(_x) - _sqrt(_y) - (_x - _y) / (_sqrt(_x) + _sqrt(_y))),
    "log": Identity(
        sympy.log(_x) - sympy.log(_y), log1p((_x - _y) / _y),
        "log x − log y = log(1 + (x − y)/y)",
        lambda: sympy.expand_log(sympy.log(_x) - sympy.log(_y)
                                 - sympy.expand_func(log1p((_x - _y) / _y)), force=True)),
    "log of a product": Identity(
        sympy.log(_x * _y), sympy.log(_x) + sympy.log(_y),
        "log(x·y) = log x + log y for x, y > 0: the difference of the logarithm of a product "
        "is the sum of the differences of its factors' logarithms, which share a sign here "
        "(each factor's logarithm moves the same way), so the sum cancels nothing",
        lambda: sympy.expand_log(sympy.log(_x * _y)) - sympy.log(_x) - sympy.log(_y)),
    "exp": Identity(
        sympy.exp(_x) - sympy.exp(_y), -sympy.exp(_x) * expm1(_y - _x),
        "e^x − e^y = −e^x·expm1(y − x) (= e^y·expm1(x − y))",
        lambda: sympy.exp(_x) - sympy.exp(_y)
        + sympy.exp(_x) * sympy.expand_func(expm1(_y - _x)).rewrite(sympy.exp)),
    "asin": Identity(
        sympy.asin(_sqrt(_x)) - sympy.asin(_sqrt(_y)),
        sympy.atan((_x - _y) / ((_sqrt(_x * (1 - _y)) + _sqrt(_y * (1 - _x)))
                                * (_sqrt(_x * _y) + _sqrt((1 - _x) * (1 - _y))))),
        "asin √x − asin √y = atan(sin φ / cos φ) for 0 < x, y < 1, with "
        "sin φ = (x − y)/(√(x(1−y)) + √(y(1−x))) and cos φ = √(x y) + √((1−x)(1−y)) > 0",
        lambda: sympy.expand_trig(sympy.sin(sympy.asin(_sqrt(_x)) - sympy.asin(_sqrt(_y))))
        - (_x - _y) / (_sqrt(_x * (1 - _y)) + _sqrt(_y * (1 - _x)))),
    "acosh": Identity(
        sympy.acosh(_x + 1), sympy.log(_x + 1 + _sqrt(_x * (_x + 2))),
        "acosh u = log(u + √(u² − 1)) for u ≥ 1",
        lambda: sympy.exp(sympy.acosh(_x + 1).rewrite(sympy.log))
        - (_x + 1 + _sqrt(_x * (_x + 2)))),
    "asinh": Identity(
        sympy.asinh(_x), sympy.log(_x + _sqrt(_x**2 + 1)), "asinh u = log(u + √(u² + 1))",
        lambda: sympy.exp(sympy.asinh(_x).rewrite(sympy.log)) - (_x + _sqrt(_x**2 + 1))),
}


# ----------------------------------------------------------------------------- proofs


def _identity_step(identity: Identity, budget: float) -> ProofStep:
    """A rewriting identity, once its difference simplifies to 0."""
    if not _simplifies_to_zero(identity.proof(), budget):
        raise DerivationError(f"SymPy could not confirm the identity {identity.statement}")
    return ProofStep("A cancellation-free identity.", identity.lhs, identity.rhs,
                     identity.statement, "identity")


def _equality_step(problem: _Problem, textbook, stable, why: str) -> ProofStep:
    """stable == textbook: by simplify of the difference, else at exact rational points."""
    difference_ = stable - textbook
    if _simplifies_to_zero(difference_, problem.budget):
        how = "the difference of the two forms is identically 0"
    else:
        pairs = _rational_pairs(problem)
        worst = 0
        for values in pairs:
            # Twice the digits: the textbook form cancels at the nearby pair, even here.
            exact_t = sympy.N(textbook.subs(values), 2 * IDENTITY_DIGITS)
            exact_s = sympy.N(stable.subs(values), 2 * IDENTITY_DIGITS)
            if exact_t == 0 or abs(exact_s - exact_t) > abs(exact_t) * sympy.Float(
                    10) ** -IDENTITY_DIGITS:
                raise DerivationError(
                    f"the stable form {sympy.sstr(stable)} differs from the textbook form "
                    f"{sympy.sstr(textbook)} at {values}: {exact_s} vs {exact_t}")
            worst += 1
        how = ("the identities above, applied to the textbook form; as a check, the two "
               f"agree to {IDENTITY_DIGITS} digits at {worst} exact rational pairs of points "
               "(both orders, nearby and far apart)")
    return ProofStep(f"The stable form equals the textbook form ({why}).", textbook, stable,
                     how, "stable form")


def _simplifies_to_zero(expr, seconds: float) -> bool:
    """Whether SymPy's simplify gives 0. Its answer, True or False, chooses how a step is
    proved (simplify, or exact rational points); running out of time is neither: it raises
    :class:`BudgetExceeded`, so that the proof never depends on the machine's speed."""
    return run_with_budget(_is_zero, expr, seconds=seconds,
                           what=f"simplify of {_shortened(expr)}") is True


def _shortened(expr, limit: int = 100) -> str:
    text = sympy.sstr(expr)
    return text if len(text) <= limit else text[:limit] + "..."


def _is_zero(expr) -> bool:
    return sympy.simplify(expr) == 0


def _rational_pairs(problem: _Problem) -> list[dict]:
    """Pairs of exact points for the equality check: ordinary, nearby (relative 1e-8) and far
    apart, each in both orders; constants take a typical rational value."""
    spec = problem.spec
    constants = {p.symbol: _rational_values(p.domain)[1] for p in spec.constants}
    columns = [_rational_values(problem.domain(i)) for i in range(len(problem.coordinates))]
    pairs = []
    for left, right in ((0, 1), (1, 3), (2, 0)):
        one = [column[left] for column in columns]
        two = [column[right] for column in columns]
        pairs.append((one, two))
    base = [column[1] for column in columns]
    pairs.append((base, [v * (1 + sympy.Rational(1, 10**8)) if v != 0 else sympy.Rational(1, 10**8)
                         for v in base]))
    result = []
    for one, two in pairs:
        for a, b in ((one, two), (two, one)):
            values = dict(constants)
            values.update(zip(problem.first, a))
            values.update(zip(problem.second, b))
            result.append(values)
    return result


def _rational_values(domain: Domain) -> list[sympy.Rational]:
    """Four exact values in the domain, from near the lower end to far out."""
    lower, upper = domain.lower, domain.upper
    if domain.integer:
        start = int(sympy.ceiling(lower)) if lower.is_finite else 0
        start += 1 if lower.is_finite and lower == start and domain.lower_open else 0
        return [sympy.Integer(start + k) for k in (0, 2, 5, 9)]
    if lower.is_finite and upper.is_finite:
        return [lower + (upper - lower) * sympy.Rational(k, 1000) for k in (3, 317, 999, 501)]
    if lower.is_finite:
        return [lower + r for r in (sympy.Rational(1, 50), sympy.Rational(7, 3), 51, 5)]
    if upper.is_finite:
        return [upper - r for r in (sympy.Rational(1, 50), sympy.Rational(7, 3), 51, 5)]
    return [sympy.Rational(-3, 2), sympy.Rational(1, 3), 20, sympy.Rational(-7, 4)]


# ----------------------------------------------------------------------------- domains


def _interval(domain: Domain) -> sympy.Interval:
    return sympy.Interval(domain.lower, domain.upper, domain.lower_open, domain.upper_open)


def _positive_parametrization(theta: sympy.Symbol, domain: Domain):
    """``(w, θ(w))`` with ``w > 0`` covering the domain, so that SymPy knows the signs of
    ``θ - lower`` and ``upper - θ`` (it has no assumption for "θ < 1")."""
    w = sympy.Dummy("w", positive=True)
    lower, upper = domain.lower, domain.upper
    if lower.is_finite and upper.is_finite:
        return w, (lower + upper * w) / (1 + w)
    if lower.is_finite:
        return w, lower + w
    if upper.is_finite:
        return w, upper - w
    return w, theta
