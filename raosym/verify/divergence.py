"""Verification of a mechanism's accounting: Rao-DP budget, RDP curve, KL, against mpmath.

Verify stage, called by :func:`raosym.verify.checks.verify` when the derivation has a
mechanism. Every quantity is recomputed independently of its closed form, at
:data:`WORKING_DIGITS`, at :data:`POINT_COUNT` or more (alpha, parameter) points, and must agree to
:data:`DIVERGENCE_DIGITS`:

- ``renyi`` / ``renyi_stable``: ``log(∫ f_D^alpha f_D'^(1-alpha)) / (alpha - 1)`` by the
  quadrature of :mod:`raosym.verify.quadrature` (split at the kinks, tails mapped), against
  the closed form and its stable rewrite; where the directions were not proved equal, the
  reverse direction may not exceed the curve (``renyi_reverse``);
- ``kl`` / ``kl_stable``: ``∫ f_D log(f_D / f_D')`` likewise;
- ``rao_dp_theta``: for an additive mechanism ``Delta sqrt(E[s_mu^2])`` with the expectation
  by quadrature at fixed scale; for a neighbour map, the length ``∫ sqrt(g)`` of the segment
  from ``p`` to its image, with ``g = E[s^2]`` summed at every node;
- a curve without closed form (``renyi_numeric``): the quadrature at two working precisions,
  which must agree to :data:`NUMERIC_DIGITS` (the accuracy the numeric curve is stated with),
  at the moderate points :data:`_NUMERIC_POINTS`.
"""

from __future__ import annotations

import dataclasses

import mpmath
import sympy

from raosym.derive.divergence import ALPHA, log_density, unrewritten
from raosym.derive.fisher import scores
from raosym.spec.points import sample_points
from raosym.verify.evaluate import evaluate
from raosym.verify.quadrature import expectation

#: Digits every divergence and Rao-DP check must reach.
DIVERGENCE_DIGITS = 25
#: Working precision of these checks.
WORKING_DIGITS = 40
#: Orders and scale ratios (scale / sensitivity) of the additive checks: near 1, ordinary,
#: large orders, small and large noise.
_ADDITIVE_POINTS = (
    (sympy.Rational(3, 2), 1, 1), (2, 1, 1), (5, 1, 2), (32, 1, 10), (sympy.Rational(1001, 1000), 2, 3),
    (8, 3, sympy.Rational(1, 2)),
)
#: Points of a curve without closed form (checked between two working precisions): moderate
#: orders and noise at least the sensitivity. Far from privacy the integrand of a light-tailed
#: density peaks sharply away from every break of the quadrature.
_NUMERIC_POINTS = (
    (sympy.Rational(3, 2), 1, 1), (2, 1, 1), (2, 1, 2), (sympy.Rational(3, 2), 1, 4),
    (sympy.Rational(1001, 1000), 1, 2),
)
#: Digits the two precisions of a numeric curve must share (the stated accuracy).
NUMERIC_DIGITS = 15
#: Orders and probabilities of the neighbour-map checks (randomized response).
_NEIGHBOUR_POINTS = (
    (2, sympy.Rational(3, 4)), (sympy.Rational(3, 2), sympy.Rational(51, 100)),
    (5, sympy.Rational(9, 10)), (32, sympy.Rational(99, 100)),
    (sympy.Rational(1001, 1000), sympy.Rational(3, 10)),
)


def mechanism_points(derivation) -> list[dict]:
    """(alpha, parameters) points: every symbol the curve's arguments need, as mpf."""
    spec, mechanism = derivation.spec, derivation.mechanism
    base = sample_points(spec, 1)[0]
    points = []
    if mechanism.kind == "additive":
        delta, scale = mechanism.arguments[:2]
        grid = _ADDITIVE_POINTS if mechanism.renyi.closed else _NUMERIC_POINTS
        for alpha, sensitivity, ratio in grid:
            point = dict(base)
            point.update({ALPHA: mpmath.mpf(alpha), delta: mpmath.mpf(sensitivity),
                          scale: mpmath.mpf(sensitivity) * mpmath.mpf(ratio)})
            points.append(point)
        return points
    (moved, _), = spec.mechanism.neighbour
    for alpha, value in _NEIGHBOUR_POINTS:
        point = dict(base)
        point.update({ALPHA: mpmath.mpf(alpha), moved: mpmath.mpf(value)})
        points.append(point)
    return points


def divergence_checks(derivation, make_check) -> list:
    """All checks of the mechanism; ``make_check(quantity, point, symbolic, numeric,
    required=...)`` builds one :class:`~raosym.verify.checks.Check`."""
    mechanism = derivation.mechanism
    if mechanism is None:
        return []
    checks = []
    # A vector mechanism: the scalar checks run on its factor's family, then the lift's.
    lift = mechanism.vector
    scalar = derivation if lift is None else dataclasses.replace(derivation, spec=lift.factor)
    with mpmath.workdps(WORKING_DIGITS):
        for point in mechanism_points(scalar):
            checks += _theta_checks(scalar, point, make_check)
            checks += _renyi_checks(scalar, point, make_check)
        if lift is not None:
            from raosym.verify.vector_mechanism import vector_checks

            checks += vector_checks(derivation, make_check)
    return checks


def _outputs(derivation):
    """The two adjacent outputs, built here from the spec: an additive mechanism's at
    locations ``mu`` and ``mu + Delta`` (the derivation put them at 0 and Delta, so the
    translation invariance it claimed is checked too)."""
    spec, mechanism = derivation.spec, derivation.mechanism
    if mechanism.kind != "additive":
        return mechanism.renyi.first, mechanism.renyi.second
    location, delta = spec.mechanism.location.symbol, spec.mechanism.sensitivity
    return spec.density, spec.density.subs(location, location + delta)


def _integrand(derivation, reverse=False):
    first, second = _outputs(derivation)
    if reverse:
        first, second = second, first
    return sympy.exp(ALPHA * log_density(first) + (1 - ALPHA) * log_density(second))


def _numeric_renyi(derivation, point, reverse=False):
    integral = expectation(derivation.spec, _integrand(derivation, reverse), point)
    return mpmath.log(integral) / (point[ALPHA] - 1)


def _numeric_kl(derivation, point):
    first, second = _outputs(derivation)
    integrand = first * (log_density(first) - log_density(second))
    return expectation(derivation.spec, integrand, point)


def _renyi_checks(derivation, point, make_check) -> list:
    curve = derivation.mechanism.renyi
    numeric = _numeric_renyi(derivation, point)
    if not curve.closed:
        with mpmath.workdps(WORKING_DIGITS - 10):
            coarse = _numeric_renyi(derivation, point)
        return [make_check("renyi_numeric", point, coarse, numeric, required=NUMERIC_DIGITS)]
    checks = [make_check("renyi", point, evaluate(curve.textbook, point), numeric,
                         required=DIVERGENCE_DIGITS)]
    if curve.stable is not None:
        checks.append(make_check("renyi_stable", point, evaluate(unrewritten(curve.stable), point),
                                 numeric, required=DIVERGENCE_DIGITS))
    if not curve.symmetric:
        reverse = _numeric_renyi(derivation, point, reverse=True)
        bound = max(numeric, reverse)
        checks.append(make_check("renyi_larger_direction", point,
                                 evaluate(curve.textbook, point), bound,
                                 required=DIVERGENCE_DIGITS))
    kl = _numeric_kl(derivation, point)
    checks.append(make_check("kl", point, evaluate(curve.kl, point), kl,
                             required=DIVERGENCE_DIGITS))
    if curve.kl_stable is not None:
        checks.append(make_check("kl_stable", point, evaluate(unrewritten(curve.kl_stable), point),
                                 kl, required=DIVERGENCE_DIGITS))
    return checks


def _theta_checks(derivation, point, make_check) -> list:
    spec, mechanism = derivation.spec, derivation.mechanism
    symbolic = evaluate(mechanism.theta_stable, point)
    if mechanism.kind == "additive":
        location = spec.mechanism.location.symbol
        index = spec.coordinate_symbols.index(location)
        score = scores(spec)[index]
        at = dict(point)
        at[location] = mpmath.mpf(0)
        information = expectation(spec, score**2 * spec.density, at)
        numeric = point[mechanism.arguments[0]] * mpmath.sqrt(information)
        checks = [make_check("rao_dp_theta", point, symbolic, numeric, required=DIVERGENCE_DIGITS)]
        return checks + [_composition_check(derivation, point, score, information, make_check)]
    numeric = _neighbour_length(derivation, point)
    return [make_check("rao_dp_theta", point, symbolic, numeric, required=DIVERGENCE_DIGITS)]


def _composition_check(derivation, point, score, information, make_check):
    """Two independent copies, the second with twice the scale and half the sensitivity: the
    product family's metric by quadrature, ``diag(E_1[s^2], E_2[s^2])`` plus the cross term
    ``E_1[s] E_2[s]`` (which must vanish), against the derived ``sqrt(theta_1^2 + theta_2^2)``."""
    spec, mechanism = derivation.spec, derivation.mechanism
    delta, scale = mechanism.arguments[:2]
    location = spec.mechanism.location.symbol
    second = dict(point)
    second.update({location: mpmath.mpf(0), scale: 2 * point[scale], delta: point[delta] / 2})
    second_information = expectation(spec, score**2 * spec.density, second)
    first_mean = expectation(spec, score * spec.density, {**point, location: mpmath.mpf(0)})
    second_mean = expectation(spec, score * spec.density, second)
    d1, d2 = point[delta], second[delta]
    numeric = mpmath.sqrt(d1**2 * information + d2**2 * second_information
                          + 2 * d1 * d2 * first_mean * second_mean)
    names = {s.name: s for s in mechanism.composition.free_symbols}
    values = {names[f"{delta.name}_1"]: d1, names[f"{delta.name}_2"]: d2,
              names[f"{scale.name}_1"]: point[scale], names[f"{scale.name}_2"]: second[scale]}
    values.update({s: point[s] for s in mechanism.composition.free_symbols if s in point})
    symbolic = evaluate(mechanism.composition, values)
    return make_check("rao_dp_composition", point, symbolic, numeric, required=DIVERGENCE_DIGITS)


def _neighbour_length(derivation, point) -> mpmath.mpf:
    """``|∫ sqrt(E[s^2])|`` along the segment from the point to its image (one coordinate)."""
    spec = derivation.spec
    (moved, image), = spec.mechanism.neighbour
    score = scores(spec)[spec.coordinate_symbols.index(moved)]
    integrand = score**2 * spec.density

    def root_information(value):
        at = dict(point)
        at[moved] = value
        return mpmath.sqrt(expectation(spec, integrand, at))

    start, end = point[moved], evaluate(image, point)
    return abs(mpmath.quad(root_information, [start, end]))


def mechanism_report(verified) -> dict | None:
    """The JSON object of a mechanism (``raosym derive NAME --json``, key ``mechanism``):
    Rao-DP budget and calibration, conversions, composition, RDP curve and KL (SymPy syntax,
    in the derivation file's names, ``Delta`` the sensitivity, ``alpha`` the order), and the
    verification of each quantity (points checked, least digits, digits required)."""
    mechanism = verified.derivation.mechanism
    if mechanism is None:
        return None
    curve = mechanism.renyi

    def text(expr):
        return None if expr is None else sympy.sstr(expr)

    quantities: dict = {}
    for check in verified.checks:
        if check.quantity.startswith(("renyi", "kl", "rao_dp", "product_density")):
            entry = quantities.setdefault(check.quantity, {"points": 0, "min_digits": 99.0,
                                                           "required_digits": check.required})
            entry["points"] += 1
            entry["min_digits"] = min(entry["min_digits"], check.digits)
    lift = mechanism.vector
    return {
        "kind": mechanism.kind,
        "manifold": mechanism.manifold,
        # A vector location: the norm Delta bounds, the dimension and where the supremum
        # over the ball is attained (None for a scalar mechanism).
        "sensitivity_norm": None if lift is None else lift.norm,
        "dimension": None if lift is None else lift.dimension,
        "supremum_attained": None if lift is None else lift.attained,
        "arguments": [symbol.name for symbol in mechanism.arguments],
        "rao_dp_theta": text(mechanism.theta),
        "rao_dp_theta_stable": text(mechanism.theta_stable),
        "rao_dp_constant": text(mechanism.constant),
        "fixed_scale_metric": text(mechanism.metric),
        "calibration": None if mechanism.calibration is None else {
            "solves_for": mechanism.calibrated.name, "value": text(mechanism.calibration)},
        "conversions": [{"name": c.name, "source": c.source, "scale": text(c.scale),
                         "rao_dp_theta": text(c.theta)} for c in mechanism.conversions],
        "composition": text(mechanism.composition),
        "rdp_curve": text(curve.textbook),
        "rdp_curve_stable": text(curve.stable),
        "rdp_closed": curve.closed,
        "rdp_reason": curve.reason,
        "rdp_symmetric": curve.symmetric,
        "zcdp_rho": text(curve.rho),
        "kl": text(curve.kl),
        "kl_stable": text(curve.kl_stable),
        "verification": quantities,
    }
