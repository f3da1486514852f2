"""Verification of a vector additive mechanism's lift to the sensitivity ball, in mpmath.

Verify stage, called by :func:`raosym.verify.divergence.divergence_checks` for a mechanism
with a :class:`~raosym.derive.vector_mechanism.VectorLift`. The scalar checks of the factor
(budget, RDP curve, KL against quadrature) run on the factor's family; this module checks
what the lift adds, numerically and independently of the symbolic proof:

- ``product_density``: the family's density against the product of its factor's copies, at
  sampled parameters and outputs (the factorization the lift rests on);
- ``renyi_vector_shift`` / ``kl_vector_shift``: the Rényi divergence and KL between the
  outputs at ``m`` and ``m + h`` for shifts ``h`` where the derivation says the supremum is
  attained (the ℓ2 sphere; the ℓ1 vertices), computed as the sum over coordinates of the
  one-dimensional quadratures ``log ∫ phi(x; 0)^alpha phi(x; h_i)^(1-alpha) dx / (alpha-1)``,
  against the curve at ``Delta``;
- ``renyi_ball_supremum`` / ``kl_ball_supremum`` / ``rao_dp_ball_supremum``: the largest
  value over those shifts and others inside the ball (of mixed signs, off the vertices),
  against the derived supremum: a shift that exceeded the curve would fail it.
"""

from __future__ import annotations

import mpmath
import sympy

from raosym.derive.divergence import ALPHA, log_density
from raosym.derive.fisher import scores
from raosym.spec.points import sample_points
from raosym.verify.evaluate import evaluate
from raosym.verify.quadrature import expectation

#: Digits the lift's checks must reach (as the scalar divergence checks).
VECTOR_DIGITS = 25
#: (alpha, sensitivity, scale / sensitivity) of the lift's checks.
_POINTS = ((sympy.Rational(3, 2), 1, 1), (5, 2, sympy.Rational(3, 2)))
#: The shift of the coordinate's own quadrature (a dummy location).
_SHIFT = sympy.Symbol("shift_h", real=True)


def shifts(norm: str, dimension: int) -> tuple[list, list]:
    """``(attaining, inside)``: unit shifts where the supremum is claimed, and others in the
    unit ball of the norm (scaled by Delta at use)."""
    d = dimension
    vertex = [sympy.Integer(1)] + [0] * (d - 1)
    negative = [0] * (d - 1) + [sympy.Integer(-1)]
    alternating = [(-1) ** i for i in range(d)]
    if norm == "l2":
        diagonal = [sympy.Integer(s) / sympy.sqrt(d) for s in alternating]
        inside = [[sympy.Rational(1, 2)] + [0] * (d - 1),
                  [sympy.Rational(1, 2) * s / sympy.sqrt(d) for s in alternating]]
        return [vertex, negative, diagonal], inside
    inside = [[sympy.Integer(s) / d for s in alternating],
              [sympy.Rational(1, 2), sympy.Rational(-1, 2)] + [0] * (d - 2)]
    return [vertex, negative], inside


def vector_checks(derivation, make_check) -> list:
    """Every check of the lift (see the module docstring)."""
    lift = derivation.mechanism.vector
    checks = _product_checks(derivation, make_check)
    attaining, inside = shifts(lift.norm, lift.dimension)
    for point in _points(derivation):
        checks += _supremum_checks(derivation, point, attaining, inside, make_check)
    return checks


def _points(derivation) -> list[dict]:
    """(alpha, Delta, scale) points with the factor's other constants at a sample point."""
    mechanism = derivation.mechanism
    delta, scale = mechanism.arguments[:2]
    base = sample_points(mechanism.vector.factor, 1)[0]
    return [{**base, ALPHA: mpmath.mpf(alpha), delta: mpmath.mpf(d),
             scale: mpmath.mpf(d) * mpmath.mpf(ratio)} for alpha, d, ratio in _POINTS]


def _product_checks(derivation, make_check) -> list:
    """The density against the product of the factor's copies at a few points."""
    spec, lift = derivation.spec, derivation.mechanism.vector
    factor = lift.factor.density
    x1, m1 = lift.variables[0], lift.locations[0]
    copies = sympy.Mul(*[factor.subs({x1: x, m1: m}, simultaneous=True)
                         for x, m in zip(lift.variables, lift.locations)])
    checks = []
    for index, point in enumerate(sample_points(spec, 3)):
        at = dict(point)
        for k, x in enumerate(lift.variables):
            at[x] = point[lift.locations[k]] + mpmath.mpf(k - index) / 2 * (index + 1)
        checks.append(make_check("product_density", at, evaluate(copies, at),
                                 evaluate(spec.density, at), required=VECTOR_DIGITS))
    return checks


def _coordinate_divergences(lift, point, shift) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(log ∫ phi_0^alpha phi_t^(1-alpha), KL(phi_0 || phi_t))`` summed over the
    coordinates of ``shift``, by one-dimensional quadrature."""
    factor = lift.factor
    m = lift.locations[0]
    first, second = factor.density.subs(m, 0), factor.density.subs(m, _SHIFT)
    renyi_integrand = sympy.exp(ALPHA * log_density(first) + (1 - ALPHA) * log_density(second))
    kl_integrand = first * (log_density(first) - log_density(second))
    log_integral, kl = mpmath.mpf(0), mpmath.mpf(0)
    for component in shift:
        if component == 0:
            continue
        at = {**point, _SHIFT: component}
        log_integral += mpmath.log(expectation(factor, renyi_integrand, at))
        kl += expectation(factor, kl_integrand, at)
    return log_integral, kl


def _supremum_checks(derivation, point, attaining, inside, make_check) -> list:
    mechanism = derivation.mechanism
    lift, curve = mechanism.vector, mechanism.renyi
    delta = mechanism.arguments[0]
    alpha = point[ALPHA]
    renyi_bound, kl_bound = evaluate(curve.textbook, point), evaluate(curve.kl, point)
    information = _information(lift, point)
    checks, renyi_values, kl_values, rao_values = [], [], [], []
    for unit in attaining + inside:
        shift = [evaluate(sympy.sympify(c), {}) * point[delta] for c in unit]
        log_integral, kl = _coordinate_divergences(lift, point, shift)
        renyi = log_integral / (alpha - 1)
        renyi_values.append(renyi)
        kl_values.append(kl)
        rao_values.append(mpmath.sqrt(information * mpmath.fsum(c**2 for c in shift)))
        if unit in attaining:
            checks.append(make_check("renyi_vector_shift", _with_shift(point, shift),
                                     renyi_bound, renyi, required=VECTOR_DIGITS))
            checks.append(make_check("kl_vector_shift", _with_shift(point, shift),
                                     kl_bound, kl, required=VECTOR_DIGITS))
    checks.append(make_check("renyi_ball_supremum", point, renyi_bound, max(renyi_values),
                             required=VECTOR_DIGITS))
    checks.append(make_check("kl_ball_supremum", point, kl_bound, max(kl_values),
                             required=VECTOR_DIGITS))
    checks.append(make_check("rao_dp_ball_supremum", point,
                             evaluate(mechanism.theta_stable, point), max(rao_values),
                             required=VECTOR_DIGITS))
    return checks


def _with_shift(point, shift) -> dict:
    """The point with the shift's components as ``h_1, ..., h_d`` (for the record)."""
    return {**point, **{sympy.Symbol(f"h_{i + 1}"): c for i, c in enumerate(shift)}}


def _information(lift, point) -> mpmath.mpf:
    """``E[s_m^2]`` of the factor by quadrature, at location 0."""
    factor = lift.factor
    score = scores(factor)[0]
    return expectation(factor, score**2 * factor.density,
                       {**point, lift.locations[0]: mpmath.mpf(0)})


__all__ = ["shifts", "vector_checks"]
