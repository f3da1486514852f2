"""Seeded sampling of parameter points from a family's declared domains.

Spec stage (a function of the FamilySpec alone), so that every later stage draws the same
points: derive (a counterexample to a condition), verify (the verification points) and the
emitted-code gate (:mod:`raosym.gate`). Points are drawn from the declared domains with a generator seeded by the family's name, so a
run is reproducible; besides the random points, each parameter is also taken near the edges of
its domain (close to a finite bound, and large) with the others at typical values.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random

import mpmath
import sympy

from raosym.spec.model import Domain, FamilySpec


def _seed(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")


def _number(bound: sympy.Expr) -> mpmath.mpf:
    """A domain bound at the working precision: ``pi`` in ``(-pi, pi)`` as well as a rational
    (mpmath cannot convert a SymPy constant itself)."""
    return mpmath.mpf(sympy.N(bound, mpmath.mp.dps + 5))


def _typical(domain: Domain, rng: random.Random) -> mpmath.mpf:
    lower, upper = domain.lower, domain.upper
    if domain.integer:
        start = int(sympy.ceiling(lower)) if lower.is_finite else 0
        start += 1 if lower.is_finite and domain.lower_open and lower == start else 0
        top = int(sympy.floor(upper)) if upper.is_finite else start + 6
        return mpmath.mpf(rng.randint(start, max(start, min(top, start + 6))))
    if lower.is_finite and upper.is_finite:
        return _number(lower) + (_number(upper) - _number(lower)) * rng.uniform(0.05, 0.95)
    if lower.is_finite:
        return _number(lower) + mpmath.e ** rng.uniform(-1.2, 1.5)
    if upper.is_finite:
        return _number(upper) - mpmath.e ** rng.uniform(-1.2, 1.5)
    return mpmath.mpf(rng.uniform(-3, 3))


def _edges(domain: Domain) -> list[mpmath.mpf]:
    """Values near the ends of the domain: close to finite bounds, and far out otherwise."""
    lower, upper = domain.lower, domain.upper
    if domain.integer:
        start = int(sympy.ceiling(lower)) if lower.is_finite else 0
        start += 1 if lower.is_finite and domain.lower_open and lower == start else 0
        return [mpmath.mpf(start), mpmath.mpf(start + 25)] if not upper.is_finite else [
            mpmath.mpf(start), mpmath.mpf(int(sympy.floor(upper)))]
    if lower.is_finite and upper.is_finite:
        width = _number(upper) - _number(lower)
        return [_number(lower) + width / 1000, _number(upper) - width / 1000]
    if lower.is_finite:
        return [_number(lower) + mpmath.mpf(1) / 8, _number(lower) + 40]
    if upper.is_finite:
        return [_number(upper) - mpmath.mpf(1) / 8, _number(upper) - 40]
    return [mpmath.mpf(-40), mpmath.mpf(40)]


def domain_at(domain: Domain, point: dict) -> Domain:
    """``domain`` with bounds that use earlier coordinates (``p2 in (0, 1 - p1)``, allowed in
    families of several variables) evaluated at ``point``'s values of them."""
    if not domain.dependent:
        return domain
    values = {symbol: sympy.Float(value, mpmath.mp.dps + 5) for symbol, value in point.items()}
    return dataclasses.replace(domain, lower=domain.lower.subs(values),
                               upper=domain.upper.subs(values))


def _draw(parameters, rng: random.Random, edge=None) -> dict[sympy.Symbol, mpmath.mpf]:
    """A typical value of every parameter, in order (a domain is evaluated at the values
    drawn before it); ``edge = (parameter, index)`` puts that parameter at its index-th edge.
    The generator is called once per parameter either way, so every point of a family whose
    domains are plain intervals is the same as when edges were set after drawing."""
    point: dict[sympy.Symbol, mpmath.mpf] = {}
    for p in parameters:
        domain = domain_at(p.domain, point)
        point[p.symbol] = _typical(domain, rng)
        if edge is not None and p is edge[0]:
            point[p.symbol] = _edges(domain)[edge[1]]
    return point


def sample_points(spec: FamilySpec, count: int = 5) -> list[dict[sympy.Symbol, mpmath.mpf]]:
    """``count`` random points, then one point per (parameter, edge) pair."""
    rng = random.Random(_seed(spec.name))
    parameters = spec.parameters
    points = [_draw(parameters, rng) for _ in range(count)]
    for parameter in parameters:
        for index in (0, 1):  # _edges gives one value near each end of a domain
            points.append(_draw(parameters, rng, (parameter, index)))
    return points


def describe_point(point: dict[sympy.Symbol, mpmath.mpf]) -> dict[str, str]:
    """A point as ``name -> value`` strings (15 significant digits) for reports."""
    return {symbol.name: mpmath.nstr(value, 15) for symbol, value in point.items()}


def distance_pairs(spec: FamilySpec, *, far_ratio: float = 50, far_shift: float = 20,
                   ordinary: int = 2, nearby: int = 2, relative: float = 1e-6):
    """Seeded pairs of points for distance checks, as ``(kind, first, second)``.

    ``kind`` is ``"ordinary"`` (two random points), ``"nearby"`` (a random point and one whose
    coordinates differ by ``relative``, alternating in sign) or ``"far"`` (scales ``far_ratio``
    apart, locations ``far_shift`` apart; on a bounded interval, from near one end to near the
    other). Constants take one random value shared by both points of a pair: a distance is
    taken within one manifold.
    """
    rng = random.Random(_seed(spec.name + ":distance"))

    def draw():
        return _draw(spec.parameters, rng)

    pairs = []
    for _ in range(ordinary):
        first, second = draw(), draw()
        second.update({p.symbol: first[p.symbol] for p in spec.constants})
        pairs.append(("ordinary", first, second))
    for index in range(nearby):
        first = draw()
        second = dict(first)
        for position, p in enumerate(spec.coordinates):
            sign = 1 if (position + index) % 2 == 0 else -1
            second[p.symbol] = _nudged(first[p.symbol], domain_at(p.domain, first), sign * relative)
        pairs.append(("nearby", first, second))
    first = draw()
    second = dict(first)
    for p in spec.coordinates:
        # A domain that uses earlier coordinates is evaluated at each point's own values.
        value = first[p.symbol]
        first[p.symbol], _ = _far_apart(value, domain_at(p.domain, first), far_ratio, far_shift)
        _, second[p.symbol] = _far_apart(value, domain_at(p.domain, second), far_ratio, far_shift)
    pairs.append(("far", first, second))
    return pairs


def nearest_representative(periods, one: dict, two: dict) -> dict:
    """``two`` with each periodic coordinate (``periods``: ``(symbol, period)``, see
    :class:`~raosym.derive.steps.RaoDistance`) moved by whole periods to within half a period
    of ``one``'s: the same distribution, and the point the distance is taken to."""
    two = dict(two)
    for c, period in periods:
        # As many more digits as the points are periods apart (1e160 modulo 2 pi needs 160
        # digits of pi), so that the representative keeps the working precision's digits.
        with mpmath.workdps(mpmath.mp.dps):
            gap = abs(mpmath.mpf(two[c]) - mpmath.mpf(one[c]))
        extra = max(0, int(mpmath.log10(gap))) if gap else 0
        with mpmath.workdps(mpmath.mp.dps + extra + 5):
            size = mpmath.mpf(sympy.N(period, mpmath.mp.dps + 5))
            first, second = mpmath.mpf(one[c]), mpmath.mpf(two[c])
            two[c] = second - size * mpmath.nint((second - first) / size)
    return two


def _nudged(value: mpmath.mpf, domain: Domain, relative: float) -> mpmath.mpf:
    """``value`` moved by ``relative`` of its distance to the nearest finite end of the domain
    (of its size when there is none)."""
    lower, upper = domain.lower, domain.upper
    if lower.is_finite:
        scale = value - _number(lower)
    elif upper.is_finite:
        scale = _number(upper) - value
    else:
        scale = max(abs(value), mpmath.mpf(1))
    if lower.is_finite and upper.is_finite:
        scale = min(scale, _number(upper) - value)
    return value + scale * mpmath.mpf(relative)


def _far_apart(value, domain: Domain, ratio: float, shift: float):
    lower, upper = domain.lower, domain.upper
    if lower.is_finite and upper.is_finite:
        width = _number(upper) - _number(lower)
        return _number(lower) + width / (ratio + 1), _number(upper) - width / (ratio + 1)
    if lower.is_finite:
        offset = value - _number(lower)
        return value, _number(lower) + offset * ratio
    if upper.is_finite:
        offset = _number(upper) - value
        return value, _number(upper) - offset * ratio
    return value - mpmath.mpf(shift) / 2, value + mpmath.mpf(shift) / 2
