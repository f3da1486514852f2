"""Expectations under a family, computed numerically with mpmath: the ground truth of verify.

Integrals over the support are split at every kink of ``Abs``/``sign`` (located symbolically,
then evaluated at the point) and use tanh-sinh quadrature, which copes with infinite ranges and
endpoint singularities; discrete supports are summed (``nsum`` when infinite).
"""

from __future__ import annotations

import functools
import itertools

import mpmath
import sympy
from sympy.codegen.cfunctions import expm1, log1p

from raosym.derive.integrals import kinks
from raosym.spec.model import FamilySpec
from raosym.verify.evaluate import evaluate, mpmath_function

#: Largest finite support that is summed term by term.
_FINITE_SUM_LIMIT = 100_000
#: Next to a kink or an end k of the support, x = k + w**_POWER.
_POWER = 16
#: An integrand below this far out in a tail is treated as zero from there on.
_NEGLIGIBLE = mpmath.mpf(10) ** -80


class PrecisionUnreachable(ArithmeticError):
    """A sum or integral that cannot be carried to the working precision: the check that
    needed it says so (a check not reached), never that the two sides disagree."""


def expectation(spec: FamilySpec, integrand: sympy.Expr, point: dict, *,
                method: str = "tanh-sinh") -> mpmath.mpf:
    """``sum`` or ``integral`` over the support of ``integrand`` (already multiplied by f);
    ``method`` is mpmath's quadrature rule for the pieces of an integral."""
    x = spec.variable
    integrand, point = _hoisted(integrand, x, point)
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
        return series_sum(at, lower, upper)
    bounds = (support.lower, support.upper)
    if bounds == (0, sympy.oo) and _logarithmically_heavy(at):
        t = sympy.Dummy("t", real=True)
        integrand, x = integrand.xreplace({x: sympy.exp(t)}) * sympy.exp(t), t
        bounds = (-sympy.oo, sympy.oo)
    return integrate_split(integrand, x, point, bounds, method)


def _logarithmically_heavy(at) -> bool:
    """Whether ``x f(x)`` on (0, oo) falls too slowly as x -> oo for the algebraic map of a
    heavy tail: the log-Cauchy's ``1/(x log(x)**2)``. The integral is then taken in
    ``t = log(x)``, where such a tail is algebraic (Cauchy's) and an algebraic one exponential.
    ``x f(x)`` is compared at ``2**50`` and ``2**100``: a power ``x**-e`` falls by
    ``2**(-50 e)`` between them, a logarithmic tail by a factor 4. The end x -> 0 is not
    looked at: a slowly vanishing mass there (``x**(a - 1)`` at a small a, as much as a
    logarithmic one) is the anchored piece's, mapped logarithmically
    (:func:`_slowly_vanishing`); in t it would be a tail ``e**(a t)`` that the algebraic map
    of a heavy tail integrates badly (the exponentiated exponential at a = 1/8 lost 3e-4)."""
    def weighted(x):
        try:
            value = abs(x * at(x))
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return value if mpmath.isfinite(value) else None

    return _falls_slowly(weighted(mpmath.mpf(2) ** 50), weighted(mpmath.mpf(2) ** 100))


def _falls_slowly(near, far) -> bool:
    """Whether a mass per decade measured twice, ``near`` and ``far`` out (None where it could
    not be evaluated), fell by less than ``_SLOW_FALL`` between the two."""
    return bool(near and far is not None and mpmath.isfinite(near) and mpmath.isfinite(far)
                and far > _SLOW_FALL * near)


#: A fall of x f(x) by less than this between 2**50 and 2**100 is a logarithmic tail.
_SLOW_FALL = mpmath.mpf(10) ** -3


def _hoisted(integrand: sympy.Expr, x: sympy.Symbol, point: dict) -> tuple[sympy.Expr, dict]:
    """:func:`hoisted` for one integrand in one variable."""
    (integrand,), values = hoisted([integrand], [x], point)
    return integrand, values


def hoisted(integrands, variables, point: dict) -> tuple[list, dict]:
    """Every subexpression of the parameters alone (a normalizer ``besseli(0, kappa)`` or
    ``sqrt(nu)*s*gamma(nu/2)``, the exponent ``-(nu + 1)/2``, the parameter factors of a sum
    or product) replaced by a symbol evaluated once at the point, instead of at every
    quadrature node: the special functions were most of von Mises' verification time, and
    the rest of these a third of every node's arithmetic."""
    names: dict = {}

    def replaced(expr):
        if expr.is_Atom:
            return expr
        if not expr.has(*variables):
            if expr not in names:
                names[expr] = sympy.Symbol(f"_constant{len(names)}", real=True)
            return names[expr]
        if expr.is_Add or expr.is_Mul:
            fixed = [argument for argument in expr.args if not argument.has(*variables)]
            varying = [replaced(argument) for argument in expr.args if argument.has(*variables)]
            return expr.func(replaced(expr.func(*fixed)), *varying)
        # Derivatives too (Zipf's Derivative(zeta(s), s)) are replaced whole above, where
        # replacing only the zeta(s) inside one would make it 0.
        return expr.func(*[replaced(argument) for argument in expr.args])

    rewritten = [replaced(integrand) for integrand in integrands]
    if not names:
        return list(integrands), point
    values = dict(point)
    values.update({symbol: evaluate(node, point) for node, symbol in names.items()})
    return rewritten, values


def series_sum(at, lower, upper) -> mpmath.mpf:
    """A sum over the integers from ``lower`` to ``upper`` (infinite, or too many to add one by
    one). A sum that runs to minus infinity is turned round, ``Σ_{k<=u} f(k) = Σ_{j>=-u}
    f(-j)``, and one over all the integers is split at 0 (the discrete Laplace
    distribution's ``q^|k|``): each half a sum of :func:`_rightward_sum`."""
    if lower == -mpmath.inf:
        def mirrored(k):
            return at(-k)

        if upper == mpmath.inf:
            return _rightward_sum(at, 0, upper) + _rightward_sum(mirrored, 1, mpmath.inf)
        return _rightward_sum(mirrored, -upper, mpmath.inf)
    return _rightward_sum(at, lower, upper)


def _rightward_sum(at, lower, upper) -> mpmath.mpf:
    """A sum over the integers from a finite ``lower`` to ``upper``: the terms up to past the
    largest of them are added directly, and only the tail after it, where the terms fall, is
    left to ``nsum``'s extrapolation. Extrapolating from ``lower`` fails when the terms first
    rise for thousands of terms (a negative binomial at p = 0.001 has its mass near 1500)."""
    start = int(lower)
    largest, peak, negligible = None, start, mpmath.inf
    for power in range(64):
        k = start + 2**power - 1
        if k > upper:
            break
        value = abs(at(mpmath.mpf(k)))
        if largest is None or value > largest:
            largest, peak = value, k
        elif value < largest * _NEGLIGIBLE and abs(at(mpmath.mpf(k + 1))) < largest * _NEGLIGIBLE:
            # Two terms in a row: a single one may be a zero of the summand (a centred score
            # squared, (k/p - 2)**2 p**k, vanishes at k = 1), not the end of its tail.
            negligible = k
            break
    stop = min(2 * peak - start + 1, int(upper) if upper != mpmath.inf else 2 * peak - start + 1)
    if stop - start > _FINITE_SUM_LIMIT:
        return _euler_maclaurin_sum(at, start, negligible, upper, peak)
    head = mpmath.fsum(at(mpmath.mpf(k)) for k in range(start, stop + 1))
    if stop >= upper:
        return head
    # A slowly falling tail (terms in ratio 0.999, or a power law k^-s) defeats Richardson and
    # Shanks, whose estimates then agree with each other on a wrong value.
    if _slowly_falling(at, stop + 1, upper):
        return head + _euler_maclaurin_sum(at, stop + 1, negligible, upper)
    return head + mpmath.nsum(at, [stop + 1, upper], method="richardson+shanks")


def _euler_maclaurin_sum(at, start: int, negligible, upper, peak=None) -> mpmath.mpf:
    """A sum whose terms fall slowly (Zipf's k^-1.3) or peak too far out to add one by one (a
    Borel pmf at mu = 0.999 has its mass spread to k ~ 10^7): the first ``_HEAD_TERMS`` terms
    added directly, the rest by Euler-Maclaurin (``mpmath.sumem``; its corrections converge
    only that far from the start).

    Its integral part is a quadrature in log k, split at powers of 4: in log k a power law
    decays exponentially, where one tanh-sinh rule over [K, oo) in k loses ten digits. It ends
    at ``negligible``, an index where the terms fell below 1e-80 of their largest (a tail that
    falls exponentially; beyond it the terms are not even evaluated, ``log(k!)`` at k = e^1000
    would take hours), else at infinity."""
    first = start + _HEAD_TERMS
    head = mpmath.fsum(at(mpmath.mpf(k)) for k in range(start, min(first, upper + 1)))
    if first > min(upper, negligible):
        return head  # the terms after the head are below 1e-80 of the largest
    end, step = min(upper, negligible), mpmath.log(4)
    points = [mpmath.log(first)]
    # To the end, or to k = 4^32 K (10^22) in a power law's slow tail, beyond which the
    # integrand in log k is the exponential fitted to its last two points: evaluating the
    # terms at k = e^(10^6), where quadrature nodes towards infinity fall, takes hours.
    while points[-1] + step < (mpmath.log(end) if end != mpmath.inf else points[0] + 32 * step):
        points.append(points[-1] + step)

    def in_log(u):
        # Terms at k = e^u lose about log10(k) digits to cancellation between functions of k
        # and of k + a (Yule-Simon's digamma(k) - digamma(k + rho + 1) ~ -(rho + 1)/k).
        with mpmath.extradps(int(u / mpmath.ln10) + 5):
            return at(mpmath.exp(u)) * mpmath.exp(u)

    if peak is not None and peak > first:
        points = sorted({*points, *_around_peak(at, peak, first, end)})
    if end != mpmath.inf:
        points.append(mpmath.log(end))
        return head + mpmath.sumem(at, [first, upper], integral=mpmath.quad(in_log, points))
    # The tail fitted at two cut-offs 4^8 apart: a power law times log(k)^2 (a Zipf score
    # squared) is no single exponential in log k, and the two then disagree. That is a check
    # not reached, never a disagreement of the check itself.
    near = mpmath.quad(in_log, points)
    farther = points[-1] + 8 * step
    beyond = near + mpmath.quad(in_log, [points[-1], farther])
    integral = near + _fitted_tail(in_log, points[-1], step)
    extended = beyond + _fitted_tail(in_log, farther, step)
    if abs(integral - extended) > abs(extended) * mpmath.mpf(10) ** (5 - mpmath.mp.dps):
        raise PrecisionUnreachable(
            f"the tail of a slowly falling sum beyond k = {mpmath.nstr(mpmath.exp(points[-1]), 3)}"
            f" is not yet a power law (two estimates differ by "
            f"{mpmath.nstr(abs(integral - extended) / abs(extended), 2)} relative)")
    return head + mpmath.sumem(at, [first, upper], integral=integral)


def _around_peak(at, peak: int, first: int, end) -> list:
    """Quadrature points in log k around the largest term near ``peak`` (a point of the
    doubling scan): a negative binomial with r = 1e6 has its mass at k ~ 1.6e5 within a width
    of 400, a thousandth of the piece of the log-k grid it falls in, which tanh-sinh steps
    over. The mode is refined by golden section on log|term| over [peak/2, 2 peak], its width
    read from the second difference there; the points lie at mode +- 2^j widths."""
    def height(k):
        value = abs(at(mpmath.mpf(k)))
        return mpmath.log(value) if value > 0 else -mpmath.inf

    low, high = mpmath.mpf(peak) / 2, mpmath.mpf(peak) * 2
    ratio = (mpmath.sqrt(5) - 1) / 2
    for _ in range(80):
        if high - low < 1:
            break
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        if height(left) < height(right):
            low = left
        else:
            high = right
    mode = mpmath.nint((low + high) / 2)
    curvature = height(mode - 1) - 2 * height(mode) + height(mode + 1)
    width = 1 / mpmath.sqrt(-curvature) if mpmath.isfinite(curvature) and curvature < 0 else 1
    candidates = [mode + sign * width * 2**j for j in range(12) for sign in (-1, 1)] + [mode]
    return [mpmath.log(k) for k in candidates if first < k < end]


def _fitted_tail(in_log, cut, step) -> mpmath.mpf:
    """The integral beyond ``cut`` of an integrand in log k taken as the exponential through
    its values at ``cut - step`` and ``cut``."""
    last, before = in_log(cut), in_log(cut - step)
    if not (last > 0 and before > last):
        raise PrecisionUnreachable(
            f"the terms of a slowly falling sum do not yet fall like a power at k = "
            f"{mpmath.nstr(mpmath.exp(cut), 3)}, so its tail cannot be bounded")
    return last / (mpmath.log(before / last) / step)


#: Terms of a far-reaching sum added one by one before its Euler-Maclaurin tail.
_HEAD_TERMS = 1000


def _slowly_falling(at, first: int, upper) -> bool:
    """Whether the terms from ``first`` on fall slower than geometrically with ratio 0.9: the
    ratio of consecutive terms is read at ``first`` and far beyond it, because a power-law tail
    (Zipf's k^-s, Yule-Simon's) has small first ratios, (3/4)^4 for k^-4, that tend to 1."""
    for k in (first, first + 10**3, first + 10**6):
        if k + 1 > upper:
            break
        term, following = at(mpmath.mpf(k)), at(mpmath.mpf(k + 1))
        if term != 0 and abs(following / term) > _SLOW_RATIO:
            return True
    return False


#: Ratio of consecutive terms above which a tail counts as slowly falling.
_SLOW_RATIO = mpmath.mpf("0.9")


def integrate_split(integrand, x, point, bounds, method="tanh-sinh", *, with_error=False):
    """Integrate over the support split at its kinks and near its parameters.

    A density has its features near its location parameters, at distances of the order of its
    positive parameters (a centre mu far from 0, a peak of width s), and tanh-sinh over one
    long piece misses digits there. Each piece is integrated in a variable ``w`` substituted
    symbolically (:func:`_piece_function`), so that ``x - k`` is exact next to a kink ``k``
    and the singularities at the ends of the pieces become smooth. ``with_error`` returns
    (value, the sum of mpmath's error estimates of the pieces, the integrand's evaluations).
    """
    lower, upper = (evaluate(bound, point) for bound in bounds)
    parameters = tuple(sorted(point, key=lambda s: s.name))
    anchors = {evaluate(kink, point): kink for kink in kinks(integrand, x)}
    anchors.update({evaluate(bound, point): bound for bound in bounds if bound.is_finite})
    parameters_proper = [s for s in parameters if not s.name.startswith("_constant")]
    locations = [point[s] for s in parameters_proper if not s.is_nonnegative]
    centres = [*anchors, *locations, mpmath.mpf(0)]
    widths = [point[s] for s in parameters_proper if s.is_positive]
    candidates = centres + [c + sign * w for c in centres for w in widths for sign in (-1, 1)]
    arguments = [point[s] for s in parameters]
    widest = widest_parameter(point)
    width = point[widest] if widest is not None else mpmath.mpf(1)
    plain = _piece_function(integrand, x, None, "plain", parameters)
    candidates += _peak(plain, centres, width, arguments, lower, upper)
    breaks = [lower, *sorted({c for c in candidates if lower < c < upper}), upper]
    total = error = mpmath.mpf(0)
    evaluations = [0]
    for left, right in itertools.pairwise(breaks):
        scale = width  # the d of the piece's substitution (see _piece_function)
        if right == mpmath.inf or left == -mpmath.inf:
            side, base = ("right", left) if right == mpmath.inf else ("left", right)
            found = _light_tail_extent(plain, base, 1 if side == "right" else -1, width,
                                       arguments)
            if found is None:
                kind, interval = f"heavy {side} tail", [0, 1]
            else:
                # Split at the tail's peak: the mass may sit far out (log-normal at mu = 40
                # has it near x = e**40), and tanh-sinh must see the bump as an end point.
                extent, peak = found
                kind = f"light {side} tail"
                interval = [0, *([mpmath.log1p(peak / width)] if peak else []),
                            mpmath.log1p(extent / width)]
        elif left in anchors or right in anchors:
            kind, base = ("from left", left) if left in anchors else ("from right", right)
            interval = [0, mpmath.root(right - left, _POWER)]
            function = _piece_function(integrand, x, anchors.get(base), kind, parameters)
            if _slowly_vanishing(function, base, right - left, width, arguments):
                kind, interval, scale = f"logarithmic {kind}", [0, 1], right - left
        else:
            kind, base, interval = "plain", 0, [left, right]
        function = _piece_function(integrand, x, anchors.get(base), kind, parameters)
        def at(w, f=function, c=base, d=scale):
            evaluations[0] += 1
            return _at_node(f, w, c, d, arguments)

        value, estimate = mpmath.quad(at, interval, method=method, error=True)
        total += value
        error += estimate
    return (total, error, evaluations[0]) if with_error else total


def widest_parameter(point: dict) -> sympy.Symbol | None:
    """The positive parameter of largest value above 1 at ``point`` (symbols hoisted by
    :func:`hoisted` excluded), or None: the family's typical width, by which the tails are
    scaled here and the half-lines beside a kink in :mod:`raosym.verify.multivariate`
    (a width of 1 when None)."""
    positive = [s for s in point if s.is_positive and not s.name.startswith("_constant")]
    widest = max(positive, key=lambda s: point[s], default=None)
    return widest if widest is not None and point[widest] > 1 else None


def _slowly_vanishing(anchored, base, length, width, arguments) -> bool:
    """Whether the mass next to an anchored end falls too slowly for ``x = c + w**16``: an
    end-point singularity ``|x - c|**(a - 1)`` with a small ``a`` (``x**(a - 1)`` at a = 0.001
    holds 96 % of its mass below x = 1e-20, and ``w**(16 a - 1)`` is still singular). The
    mass density per decade, ``h f(c + h)`` (``w F(w) / 16`` of the anchored piece ``F``), is
    compared at ``h = length * 1e-20`` and ``length * 1e-40``: a power ``h**e`` falls by
    ``1e-20 e`` between them; a fall by less than 1e-3 (e < 0.15) is slow."""
    def per_decade(depth):
        w = mpmath.root(length * mpmath.mpf(10) ** -depth, _POWER)
        try:
            return abs(w * anchored(w, base, width, *arguments))
        except (ZeroDivisionError, ValueError, OverflowError):
            return None

    return _falls_slowly(per_decade(20), per_decade(40))


def _peak(plain, centres, width, arguments, lower, upper) -> list:
    """Breaks around the largest value of the integrand found on a geometric grid
    ``c +- width * 2**k`` (|k| <= 40) about each centre: a feature of width 1/40 near 0
    (a skew-normal with shape -40) or far out is seen by no other break."""
    best, where = None, None
    for centre in centres:
        for power in range(-_PEAK_SCAN, _PEAK_SCAN + 1):
            for sign in (-1, 1):
                offset = sign * width * mpmath.mpf(2) ** power
                value = _probe(plain, centre + offset, width, arguments, lower, upper)
                if value is not None and (best is None or value > best):
                    best, where = value, (centre, offset)
    if where is None:
        return []
    centre, offset = where
    breaks = [centre + offset * factor for factor in (mpmath.mpf(1) / 4, 1, 4)]
    return breaks + _around_narrow_peak(plain, centre, offset, width, arguments, lower, upper)


def _around_narrow_peak(plain, centre, offset, width, arguments, lower, upper) -> list:
    """Breaks at a peak narrower than the grid can see, and one and four of its widths on
    either side: the Weibull density at shape k = 40 is a bump of width 1/40 at x = 1, between
    the grid's 0.625 and 1.25, and tanh-sinh over (0.625, 2.5) kept 21 of 40 digits. The
    largest value is located between the grid's neighbours of the best probe (SciPy's bounded
    Brent search, in double precision: only where the breaks go depends on it), and its width
    is where the integrand falls to e**-2 of it."""
    import scipy.optimize

    def minus_log(x):
        value = _probe(plain, centre + mpmath.mpf(x), width, arguments, lower, upper)
        return float(-mpmath.log(value)) if value else _NO_VALUE

    ends = sorted((float(offset) / 2, float(offset) * 2))
    found = scipy.optimize.minimize_scalar(minus_log, bounds=ends, method="bounded",
                                           options={"xatol": abs(float(offset)) * 1e-6})
    if found.fun >= _NO_VALUE:
        return []
    peak, height = centre + mpmath.mpf(found.x), mpmath.exp(-found.fun)
    local = abs(offset) / 4
    for _ in range(_PEAK_SCAN):
        values = [_probe(plain, peak + sign * local, width, arguments, lower, upper)
                  for sign in (-1, 1)]
        if all(v is None or v > height * _PEAK_DROP for v in values):
            break
        local /= 2
    else:
        return []
    if local >= abs(offset) / 4:
        return []  # as wide as the grid's spacing: the grid's breaks already frame it
    return [peak + sign * local * factor for sign in (-1, 1) for factor in (0, 1, 4)]


#: Powers of two scanned on either side of each centre by :func:`_peak`.
_PEAK_SCAN = 40
#: -log of a probe that has no value (outside the support, or 0): finite, for SciPy's search.
_NO_VALUE = 1e300
#: A peak's width is where the integrand falls to this fraction of its largest value.
_PEAK_DROP = mpmath.exp(-2)


def _probe(plain, value, width, arguments, lower, upper):
    if not lower < value < upper:
        return None
    try:
        result = abs(plain(value, 0, width, *arguments))
    except (ZeroDivisionError, ValueError):
        return None
    return result if mpmath.isfinite(result) else None


def _at_node(function, w, c, width, arguments):
    """The integrand at a quadrature node. A division by zero can only come from an
    exponential taken as 0 beyond exp(-10**7) (see raosym.verify.evaluate): the integrand
    there is below exp(-10**7), so 0 is right to every digit."""
    try:
        value = function(w, c, width, *arguments)
    except ZeroDivisionError:
        return mpmath.mpf(0)
    # nan likewise: 0 * inf, an exponential taken as 0 times one taken as inf (far in a
    # doubly exponential tail, the Gumbel's). A wrong 0 could only make the check fail.
    return mpmath.mpf(0) if mpmath.isnan(value) else value


def _light_tail_extent(plain, base, direction, width, arguments):
    """``(extent, peak)``: how far from ``base`` the integrand falls below 1e-80 of the largest
    value probed (probing at ``width * 2**k``, k < 200) after its largest value, and the
    distance of that largest value (None when it is at ``base``); None for a heavy
    (algebraic) tail that never does. A tail whose mass lies far out (log-normal at mu = 40)
    first rises: it is not cut before its peak."""
    largest, peak, peak_power, negligible_before = None, None, 0, False
    for power in range(_TAIL_PROBES):
        distance = width * mpmath.mpf(2) ** power
        try:
            value = plain(base + direction * distance, 0, width, *arguments)
        except (ZeroDivisionError, ValueError):
            continue  # a probe where the integrand cannot be evaluated tells nothing
        if not mpmath.isfinite(value):
            continue
        negligible = largest is not None and abs(value) < _NEGLIGIBLE * largest
        if largest is None or abs(value) > largest:
            largest, peak, peak_power = abs(value), (distance if power > 0 else None), power
        elif negligible and negligible_before:
            # Two probes in a row: one alone may sit on a zero of the integrand (a score
            # a/b - x of a gamma family at b = 1/8 vanishes exactly at the probe x = 8a).
            return distance, peak
        negligible_before = negligible
        if power >= peak_power + _HEAVY_TAIL_PROBES:
            return None  # not negligible 2**60 widths past its peak: a heavy (algebraic) tail
    return None


#: Probes of a tail at width * 2**k: far enough for a peak near e**100 ...
_TAIL_PROBES = 200
#: ... but a tail that is not below 1e-80 of its peak 2**60 widths past it is heavy
#: (algebraic), and is mapped onto (0, 1] instead of being truncated.
_HEAVY_TAIL_PROBES = 60


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
    # A plain piece's w is x itself, of either sign (were it w > 0, a piece left of 0 would
    # read Heaviside(-x) as 0 and Heaviside(x) as 1: an asymmetric Laplace was 'divergent').
    w = sympy.Dummy("w", **({"real": True} if kind == "plain" else {"positive": True}))
    d, c = sympy.Dummy("d", positive=True), sympy.Dummy("c", real=True)
    base = anchor if anchor is not None else c
    direction = -1 if kind.endswith(("from right", "left tail")) else 1
    if kind == "plain":
        substitution, jacobian = w, 1
    elif kind.startswith("logarithmic"):
        return _logarithmic_piece(integrand, x, base, direction, parameters, (w, c, d))
    elif kind.startswith("from"):
        substitution, jacobian = base + direction * w**_POWER, _POWER * w ** (_POWER - 1)
    elif kind.startswith("light"):
        substitution, jacobian = base + direction * d * (sympy.exp(w) - 1), d * sympy.exp(w)
    else:
        substitution = base + direction * (w**-_POWER - 1)
        jacobian = _POWER * w ** (-_POWER - 1)
    local = integrand.subs(x, substitution) * jacobian
    if kind.startswith("from"):
        local = _without_cancellation(local, w)
    # Common subexpressions once a node: the substituted x appears in every factor.
    return mpmath_function(local, [w, c, d, *parameters], cse=True)


def _logarithmic_piece(integrand, x, base, direction, parameters, dummies):
    """``logarithmic from left/right``: ``x = c +- d exp(1 - w**-16)`` for w in (0, 1], d the
    piece's length, so that a mass spread evenly over the decades of ``|x - c|`` (an end-point
    singularity ``|x - c|**(a - 1)`` with a small ``a``) sits inside (0, 1] in w (near
    ``w = a**(1/16)``). The cancellation-free forms of :func:`_without_cancellation` are taken in
    ``e = exp(1 - w**-16)``, which vanishes at the end, before e is written out."""
    w, c, d = dummies
    e = sympy.Dummy("e", positive=True)
    local = _without_cancellation(integrand.subs(x, base + direction * d * e), e)
    decay = sympy.exp(1 - w**-_POWER)
    local = local.subs(e, decay) * d * decay * _POWER * w ** (-_POWER - 1)
    return mpmath_function(local, [w, c, d, *parameters], cse=True)


def _without_cancellation(expr: sympy.Expr, w: sympy.Symbol) -> sympy.Expr:
    """Next to an anchored end (``w -> 0``): ``(1 + h)**e`` as ``exp(e*log1p(h))`` and
    ``1 - exp(z)`` as ``-expm1(z)`` and ``log(1 + h)`` as ``log1p(h)`` for ``h, z -> 0``. ``1 - (1 - w**16)**a`` (Kumaraswamy's
    ``1 - x**a`` at x = 1) is 0 at any working precision once ``w**16`` is below it, and a
    negative power of it is then infinite; the rewritten form keeps every digit. Likewise
    ``log(x)`` at x = 1 - w**16 is 0 once ``w**16`` is below the working precision, and the
    score ``x**a*log(x)/(1 - x**a)`` with it: the mass there, ``(10**-dps)**b`` of an end
    point singularity ``(1 - x)**(b - 1)``, would be lost (24 of 30 digits at b = 0.36)."""

    def vanishes(h):
        return h.has(w) and h.subs(w, 0) == 0

    def power(node):
        h = sympy.expand(node.base - 1)
        if node.exp.is_Integer or not vanishes(h):
            return node
        return sympy.exp(node.exp * log1p(h))

    def difference(add):
        terms = list(add.args)
        if sympy.S.One not in terms and sympy.S.NegativeOne not in terms:
            return add
        for index, term in enumerate(terms):
            coefficient, function = term.as_coeff_Mul()
            if isinstance(function, sympy.exp) and vanishes(function.args[0]) \
                    and -coefficient in terms and coefficient in (1, -1):
                rest = [t for k, t in enumerate(terms) if k != index and t != -coefficient]
                return sympy.Add(coefficient * expm1(function.args[0]), *rest)
        return add

    def logarithm(node):
        h = sympy.expand(node.args[0] - 1)
        return log1p(h) if vanishes(h) else node

    expr = expr.replace(lambda n: n.is_Pow and n.base.has(w) and not n.exp.has(w), power)
    expr = expr.replace(lambda n: isinstance(n, sympy.log) and n.has(w), logarithm)
    return expr.replace(lambda n: n.is_Add and n.has(sympy.exp), difference)


def _bound(bound: sympy.Expr, point: dict) -> mpmath.mpf:
    return evaluate(bound, point)
