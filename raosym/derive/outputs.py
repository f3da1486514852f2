"""The log-densities of a mechanism's two outputs, in the forms its generated code evaluates.

Derive stage, called by :mod:`raosym.derive.mechanism` after the Rényi curve. Input: the
family and its :class:`~raosym.derive.divergence.RenyiCurve` (the adjacent outputs ``f_D``
and ``f_D'``). Output: :class:`OutputForms`, what ``log_output_density``, ``privacy_loss`` and
the quadrature of a curve without closed form evaluate: ``log f_D`` and ``log f_D'`` (the
logarithm distributed over products, ``log(gamma(z))`` as ``loggamma(z)``, ``log(1 + exp(u))``
as :class:`~raosym.functions.softplus`) and, for a curve without closed form on the real line,
the pieces of its small-shift form (:class:`SmallShift`). The emit stage only prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from raosym.derive.divergence import RenyiCurve, log_density
from raosym.functions import softplus
from raosym.spec.model import FamilySpec

#: The variable the forms are written in: the local name the generated functions give the
#: output (a parameter name never starts with ``_``, so it collides with none).
VARIABLE = sympy.Symbol("_x", real=True)
#: Simplify an expression for the small-shift form only when it is this small (count_ops).
_SIMPLIFY_OPS = 200


@dataclass(frozen=True)
class SmallShift:
    """The small-shift form of an additive curve without closed form (see
    :func:`_small_shift`), each piece a function of :data:`VARIABLE`."""

    log_ratio: sympy.Expr  # L(x) = log f_D(x) - log f_D'(x), normalizing constants cancelled
    score: sympy.Expr      # d/dx log f_D (a Piecewise on the two sides of a kink at 0)
    slope: sympy.Expr      # d²/dx² log f_D (the same)
    kinked: bool           # whether the derivatives differ on the two sides of the location


@dataclass(frozen=True)
class OutputForms:
    """``log f_D`` and ``log f_D'`` as functions of :attr:`variable`, and the small-shift
    pieces of a curve without closed form (None where that form does not apply)."""

    variable: sympy.Symbol
    log_first: sympy.Expr
    log_second: sympy.Expr
    small_shift: SmallShift | None


def output_forms(spec: FamilySpec, curve: RenyiCurve) -> OutputForms:
    """The forms of the two outputs' log-densities (the small shift only without a closed
    curve: the closed one is evaluated from its own stable form)."""
    return OutputForms(VARIABLE, _logarithm(spec, curve.first), _logarithm(spec, curve.second),
                       None if curve.closed else _small_shift(spec, curve))


def _plain(spec: FamilySpec, density: sympy.Expr) -> sympy.Expr:
    """``log density`` in :data:`VARIABLE`, ``log(gamma(z))`` as ``loggamma(z)`` (no
    overflow for large z)."""
    expr = log_density(density).subs(spec.variable, VARIABLE)
    return expr.replace(lambda e: isinstance(e, sympy.log) and isinstance(e.args[0], sympy.gamma),
                        lambda e: sympy.loggamma(e.args[0].args[0]))


def _logarithm(spec: FamilySpec, density: sympy.Expr) -> sympy.Expr:
    return _with_softplus(_plain(spec, density))


def _with_softplus(expr: sympy.Expr) -> sympy.Expr:
    return expr.replace(lambda e: isinstance(e, sympy.log), _log_of_sum)


def _log_of_sum(function: sympy.log) -> sympy.Expr:
    """``log(1 + exp(u))`` as :class:`softplus`, ``log(cosh(u))`` as ``softplus(2u) - u -
    log 2`` (cosh overflows at |u| > 710 where its logarithm is ordinary)."""
    argument = function.args[0]
    if isinstance(argument, sympy.cosh):
        u = argument.args[0]
        return softplus(2 * u) - u - sympy.log(2)
    terms = sympy.Add.make_args(argument)
    if len(terms) == 2 and sympy.S.One in terms:
        (other,) = [t for t in terms if t != 1]
        if isinstance(other, sympy.exp):
            return softplus(other.args[0])
    return function


def _small_shift(spec: FamilySpec, curve: RenyiCurve) -> SmallShift | None:
    """The pieces of the small-shift form of an additive curve, or None where it does not
    apply (a support other than the real line, a kink away from the location, a form SymPy
    does not reduce).

    With ℓ = log f_D and f_D'(x) = f_D(x - Δ), the log ratio is L(x) = ℓ(x) - ℓ(x - Δ) =
    Δ ℓ'(x) + R(x) with the Taylor remainder R(x) = -Δ² ∫₀¹ v ℓ''(x - Δ(1 - v)) dv, and
    ∫ f_D ℓ' dx = [f_D] = 0. So ∫ f_D^α f_D'^(1-α) - 1 = ∫ f_D ((α-1) R + φ((α-1) L)) with
    φ(y) = e^y - 1 - y, a sum of terms of order Δ² computed without cancellation, where the
    textbook ∫ f_D (e^((α-1)L) - 1) is a difference of terms of order Δ that lost every digit
    as Δ/scale -> 0; and KL = ∫ f_D R. The module evaluates: L directly (the symbolic
    difference, normalizing constants cancelled), ℓ' and, on each side of the kink at the
    location, ℓ'' (for the Gauss–Legendre rule)."""
    if not (spec.support.kind == "interval" and spec.support.lower == -sympy.oo
            and spec.support.upper == sympy.oo):
        return None
    first = _plain(spec, curve.first)
    difference = sympy.expand_log(first - _plain(spec, curve.second), force=True)
    if sympy.count_ops(difference) <= _SIMPLIFY_OPS:
        difference = sympy.simplify(difference)
    kinked = (sympy.Abs, sympy.sign, sympy.Heaviside, sympy.DiracDelta, sympy.Piecewise,
              sympy.Max, sympy.Min)
    sides = []
    for side in ({"positive": True}, {"negative": True}):
        branch = sympy.Symbol("_branch", real=True, **side)
        on_side = first.subs(VARIABLE, branch)
        derivatives = []
        for order in (1, 2):
            derivative = sympy.diff(on_side, branch, order)
            if sympy.count_ops(derivative) <= _SIMPLIFY_OPS:
                derivative = sympy.simplify(derivative)
            if derivative.has(*kinked):  # a kink away from the location: not this form
                return None
            derivatives.append(_with_softplus(derivative.subs(branch, VARIABLE)))
        sides.append(derivatives)
    (score_right, slope_right), (score_left, slope_left) = sides

    def on_both_sides(right, left):
        if sympy.simplify(right - left) == 0:
            return right
        return sympy.Piecewise((right, VARIABLE > 0), (left, True))

    # A kink at the location: the derivatives differ on its two sides.
    kink = (sympy.simplify(score_right - score_left) != 0
            or sympy.simplify(slope_right - slope_left) != 0)
    return SmallShift(_with_softplus(difference), on_both_sides(score_right, score_left),
                      on_both_sides(slope_right, slope_left), bool(kink))
