"""Expectations under a family, computed numerically with mpmath: the ground truth of verify.

Integrals over the support are split at every kink of ``Abs``/``sign`` (located symbolically,
then evaluated at the point) and use tanh-sinh quadrature, which copes with infinite ranges and
endpoint singularities; discrete supports are summed (``nsum`` when infinite).
"""

from __future__ import annotations

import functools

import mpmath
import sympy

from raosym.derive.integrals import kinks
from raosym.spec.model import FamilySpec
from raosym.verify.evaluate import evaluate, mpmath_function

#: Largest finite support that is summed term by term.
_FINITE_SUM_LIMIT = 100_000
#: Next to a kink or an end k of the support, x = k + w**_POWER.
_POWER = 16
#: An integrand below this far out in a tail is treated as zero from there on.
_NEGLIGIBLE = mpmath.mpf(10) ** -80


def expectation(spec: FamilySpec, integrand: sympy.Expr, point: dict) -> mpmath.mpf:
    """``sum`` or ``integral`` over the support of ``integrand`` (already multiplied by f)."""
    x = spec.variable
    symbols = [x, *sorted(point, key=lambda s: s.name)]
    function = mpmath_function(integrand, symbols)
    values = [point[s] for s in symbols[1:]]

    def at(value):
        return function(value, *values)

    support = spec.support
    if support.kind == "finite":
        return mpmath.fsum(at(evaluate(p, point)) for p in support.points)
    if support.kind == "integers":
        lower, upper = _bound(support.lower, point), _bound(support.upper, point)
        if upper != mpmath.inf and upper - lower <= _FINITE_SUM_LIMIT:
            return mpmath.fsum(at(mpmath.mpf(k)) for k in range(int(lower), int(upper) + 1))
        return mpmath.nsum(at, [lower, upper])
    return _integrate_split(integrand, x, point, (support.lower, support.upper))


def _integrate_split(integrand, x, point, bounds) -> mpmath.mpf:
    """Integrate over the support split at its kinks and near its parameters.

    A density has its features near its location parameters, at distances of the order of its
    positive parameters (a centre mu far from 0, a peak of width s), and tanh-sinh over one
    long piece misses digits there. Each piece is integrated in a variable ``w`` substituted
    symbolically (:func:`_piece_function`), so that ``x - k`` is exact next to a kink ``k``
    and the singularities at the ends of the pieces become smooth.
    """
    lower, upper = (evaluate(bound, point) for bound in bounds)
    parameters = tuple(sorted(point, key=lambda s: s.name))
    anchors = {evaluate(kink, point): kink for kink in kinks(integrand, x)}
    anchors.update({evaluate(bound, point): bound for bound in bounds if bound.is_finite})
    locations = [point[s] for s in parameters if not s.is_nonnegative]
    centres = [*anchors, *(locations or [mpmath.mpf(0)])]
    widths = [point[s] for s in parameters if s.is_positive]
    candidates = centres + [c + sign * w for c in centres for w in widths for sign in (-1, 1)]
    breaks = [lower, *sorted({c for c in candidates if lower < c < upper}), upper]
    arguments = [point[s] for s in parameters]
    width = max([mpmath.mpf(1), *widths])
    plain = _piece_function(integrand, x, None, "plain", parameters)
    total = mpmath.mpf(0)
    for left, right in zip(breaks, breaks[1:]):
        if right == mpmath.inf or left == -mpmath.inf:
            side, base = ("right", left) if right == mpmath.inf else ("left", right)
            extent = _light_tail_extent(plain, base, 1 if side == "right" else -1, width,
                                        arguments)
            if extent is None:
                kind, interval = f"heavy {side} tail", [0, 1]
            else:
                kind, interval = f"light {side} tail", [0, mpmath.log1p(extent / width)]
        elif left in anchors or right in anchors:
            kind, base = ("from left", left) if left in anchors else ("from right", right)
            interval = [0, mpmath.root(right - left, _POWER)]
        else:
            kind, base, interval = "plain", 0, [left, right]
        function = _piece_function(integrand, x, anchors.get(base), kind, parameters)
        total += mpmath.quad(lambda w, f=function, c=base: f(w, c, width, *arguments), interval)
    return total


def _light_tail_extent(plain, base, direction, width, arguments):
    """How far from ``base`` the integrand falls below 1e-80 (probing at ``width * 2**k``),
    or None for a heavy (algebraic) tail that never does within ``width * 2**60``."""
    for power in range(61):
        distance = width * mpmath.mpf(2) ** power
        value = plain(base + direction * distance, 0, width, *arguments)
        if mpmath.isfinite(value) and abs(value) < _NEGLIGIBLE:
            return distance
    return None


@functools.lru_cache(maxsize=256)
def _piece_function(integrand, x, anchor, kind, parameters):
    """The integrand of one piece as a function of ``(w, c, d, *parameters)``.

    ``c`` is the numeric end of the piece, used when ``anchor`` (its symbolic form, for a kink
    or an end of the support) is None; ``d`` is the family's typical width.

    - ``plain``: ``x = w``.
    - ``from left``/``from right``, a finite piece from its anchored end: ``x = c +- w**16``,
      which makes ``|x - c|**(-15/16)`` smooth (tanh-sinh's nodes stop near ``10**-dps`` from
      an end and would lose the mass below them).
    - ``light ... tail``, truncated where the integrand is negligible:
      ``x = c +- d*(exp(w) - 1)``, so that decay over many orders of magnitude of ``x`` takes
      a short range of ``w``.
    - ``heavy ... tail`` onto (0, 1]: ``x = c +- (w**-16 - 1)``, which turns algebraic decay
      as slow as ``x**(-1 - 1/16)`` into a vanishing power of ``w``.
    """
    # Dummies: a parameter of the family may be called w, c or d (lambdify would see the
    # same argument twice).
    w, d = sympy.Dummy("w", positive=True), sympy.Dummy("d", positive=True)
    c = sympy.Dummy("c", real=True)
    base = anchor if anchor is not None else c
    direction = -1 if kind in ("from right", "light left tail", "heavy left tail") else 1
    if kind == "plain":
        substitution, jacobian = w, 1
    elif kind.startswith("from"):
        substitution, jacobian = base + direction * w**_POWER, _POWER * w ** (_POWER - 1)
    elif kind.startswith("light"):
        substitution, jacobian = base + direction * d * (sympy.exp(w) - 1), d * sympy.exp(w)
    else:
        substitution = base + direction * (w**-_POWER - 1)
        jacobian = _POWER * w ** (-_POWER - 1)
    local = integrand.subs(x, substitution) * jacobian
    return mpmath_function(local, [w, c, d, *parameters])


def _bound(bound: sympy.Expr, point: dict) -> mpmath.mpf:
    return evaluate(bound, point)
