"""Nested sums and iterated quadrature for families of several sample variables (verify stage).

Used by :func:`raosym.verify.checks.fisher_checks` (the Fisher entries ``E[s_i s_j]``) and by
:func:`raosym.verify.density.check_density` (normalization and sign) when a
:class:`FamilySpec` has ``variables``. Input: the spec, SymPy integrands (already multiplied by
the density) and a parameter point. Output: the expectations, all integrands at once, so the
density and the scores are evaluated once per node.

- **Discrete supports** with finite bounds (``x2 in range(0, n - x1 + 1)``) are enumerated
  outcome by outcome and added exactly at the working precision; a variable of its own with
  infinitely many values (one factor of a product of Poisson counts) is summed by the
  one-variable stage's series.
- **Continuous supports** are integrated variable by variable, the first outermost, by a
  product double-exponential rule whose nodes are placed symbolically: a bounded interval
  ``(L, U)`` is split at its midpoint and each half written ``x = L + w e^{-y}`` or
  ``x = U - w e^{-y}`` (``w = (U - L)/2``, ``y > 0``), so that ``U - x`` is the exact small
  number ``w e^{-y}`` near the end and a power singularity ``(1 - x1 - x2)^{a - 1}`` becomes
  an exponential decay in ``y`` (the rule ``y = exp(t - e^{-t})``); a half-line is
  ``x = L + y`` in the same rule, and the real line a trapezoid ``x = c + s t``, centred and scaled at the density's mode
  and curvature when the whole piece lives on lines (exact to 1e-34 at h = 1/2 for a normal
  density; heavier tails converge slowly and are reported as not reached). A range is first
  cut at the kinks of ``Abs``, ``sign`` and ``Heaviside`` in its variable (the product
  Laplace's ``x_i = m_i``, and ``m_i + h_i`` too in a Rényi integrand between two outputs),
  each kink the exact end of its pieces (:func:`_kink_ranges`). The error is estimated
  from the rules at steps h, 2h and 4h (the digits of a double-exponential rule double with
  each halving); a result short of the requested digits raises
  :class:`~raosym.verify.quadrature.PrecisionUnreachable`, reported as a check not reached.
- Cost: the rule evaluates (nodes per variable)^(variables) points per piece (about 60² for
  two variables, 2² pieces for a simplex); :func:`last_cost` reports the nodes of the last
  call, which the checks print beside their figures.
"""

from __future__ import annotations

import itertools

import mpmath
import sympy

from raosym.derive.integrals import kinks
from raosym.spec.model import FamilySpec
from raosym.verify.evaluate import evaluate, mpmath_function
from raosym.verify.quadrature import (
    PrecisionUnreachable,
    hoisted,
    integrate_split,
    series_sum,
    widest_parameter,
)

#: The step of the finest rule (the coarser ones are 2h and 4h, on the same nodes).
STEP = mpmath.mpf(1) / 8
#: The step on a line, in units of the density's spread there.
LINE_STEP = mpmath.mpf(1) / 2
#: The ranges of t: (0, ∞) from y = e^{-81} to 2200 (e^{-y/8}, a power x^{-7/8} at an end,
#: is 1e-120 there); on a line ±60 spreads (cut where the density has become negligible).
_HALF_RANGE = (-4.4, 7.7)
_LINE_RANGE = (-60, 60)
#: Enumerate at most this many outcomes of a discrete support.
_ENUMERATION_LIMIT = 100_000

_cost = {"nodes": 0}


def last_cost() -> int:
    """How many nodes (outcomes, for a sum) the last call evaluated."""
    return _cost["nodes"]


def expectations(spec: FamilySpec, integrands, point, *, digits: float,
                 nonnegative_first: bool = False) -> list:
    """``E`` of each integrand (already times the density) over every variable at ``point``.

    ``digits`` is the relative accuracy the quadrature must reach (else PrecisionUnreachable);
    The first integrand should be the density: its mode and size place and cut the nodes.
    ``nonnegative_first`` raises ValueError (with the node) when the first integrand, the
    density, is negative at a node: the sign check of the density check."""
    integrands, point = hoisted([sympy.sympify(e) for e in integrands], spec.variables, point)
    if all(support.discrete for support in spec.supports):
        return _sums(spec, integrands, point, nonnegative_first)
    if len(spec.variables) == 1 and not nonnegative_first:
        return _one_variable(spec, integrands, point, digits)
    return _quadrature(spec, integrands, point, digits, nonnegative_first)


def _one_variable(spec, integrands, point, digits):
    """A factor with one continuous variable of its own, by the one-variable verify stage's
    quadrature (split at kinks, peaks and tails; tanh-sinh, whose own error estimates are
    added up), where the iterated rule's extrapolated estimate claimed 27 digits of a gamma
    factor's variance and held 25."""
    x, support = spec.variables[0], spec.supports[0]
    bounds = (support.lower, support.upper)
    results = [integrate_split(e, x, point, bounds, with_error=True) for e in integrands]
    first = [value for value, _, _ in results]
    scale = max(abs(v) for v in first) or mpmath.mpf(1)
    worst = max(error for _, error, _ in results)
    _cost["nodes"] = sum(evaluations for _, _, evaluations in results)
    if worst > scale * mpmath.mpf(10) ** (-digits):
        reached = float(-mpmath.log10(worst / scale))
        raise PrecisionUnreachable(f"the quadrature of a factor of one variable reached only "
                                   f"about {reached:.0f} of {digits:g} digits")
    return first


# ----------------------------------------------------------------------------- sums


def _sums(spec, integrands, point, nonnegative_first):
    parameters = sorted(point, key=lambda s: s.name)
    function = mpmath_function(integrands, [*spec.variables, *parameters], cse=True)
    arguments = [point[s] for s in parameters]
    support = spec.supports[0]
    if len(spec.variables) == 1 and support.kind == "integers" and not (
            support.lower.is_finite and support.upper.is_finite):
        # One variable of its own (a factor of a product density, the Poisson of a pair):
        # its infinite support is the one-variable family's series, not an enumeration.
        return _series_sums(support, function, arguments, point, len(integrands),
                            nonnegative_first)
    totals = [mpmath.mpf(0)] * len(integrands)
    count = 0
    for outcome in _outcomes(spec, point):
        values = function(*outcome, *arguments)
        if nonnegative_first and not values[0] >= 0:
            raise ValueError(f"{mpmath.nstr(values[0], 8)} at "
                             f"{_describe(spec.variables, outcome)}")
        totals = [t + v for t, v in zip(totals, values)]
        count += 1
    _cost["nodes"] = count
    return totals


def _series_sums(support, function, arguments, point, count, nonnegative_first):
    """Each integrand summed over the integers of ``support`` by the one-variable verify
    stage's series (the head added term by term, the tail extrapolated), the integrands
    evaluated once per term for all of them.

    The values are kept by term *and working precision*: the Euler-Maclaurin tail
    differentiates the terms numerically at raised precision, and a term kept from the head's
    precision among them made the difference quotients garbage (the mass of p**k at
    p = 0.999 came out 1007.67 instead of 1000)."""
    values_at = {}

    def values(k):
        key = (k, mpmath.mp.prec)
        if key not in values_at:
            values_at[key] = function(k, *arguments)
            if nonnegative_first and not values_at[key][0] >= 0:
                raise ValueError(f"{mpmath.nstr(values_at[key][0], 8)} at {mpmath.nstr(k, 8)}")
        return values_at[key]

    lower, upper = evaluate(support.lower, point), evaluate(support.upper, point)
    totals = [series_sum(lambda k, index=index: values(k)[index], lower, upper)
              for index in range(count)]
    _cost["nodes"] = len(values_at)
    return totals


def _outcomes(spec, point):
    numbers = {s: sympy.Float(v, mpmath.mp.dps + 5) for s, v in point.items()}
    found = [()]
    for position, support in enumerate(spec.supports):
        extended = []
        for outcome in found:
            earlier = dict(zip(spec.variables, outcome))
            if support.kind == "finite":
                values = [int(sympy.Integer(p.subs(earlier).subs(numbers))) for p in support.points]
            else:
                lower = support.lower.subs(earlier).subs(numbers)
                upper = support.upper.subs(earlier).subs(numbers)
                if not (lower.is_finite and upper.is_finite):
                    raise PrecisionUnreachable(
                        f"the support of {spec.variables[position]} is infinite; raosym sums "
                        "only finite supports of several variables")
                values = range(int(sympy.ceiling(lower)), int(sympy.floor(upper)) + 1)
            extended += [(*outcome, mpmath.mpf(v)) for v in values]
            if len(extended) > _ENUMERATION_LIMIT:
                raise PrecisionUnreachable(f"the support has more than {_ENUMERATION_LIMIT} "
                                           "outcomes at this point")
        found = extended
    return found


def _describe(variables, values) -> str:
    return ", ".join(f"{v} = {mpmath.nstr(x, 8)}" for v, x in zip(variables, values))


# ----------------------------------------------------------------------------- quadrature


class _Piece:
    """One product region: the integrands in the new variables (times the Jacobian), the kind
    of each new variable (``half`` for y > 0 with x at e^{-y} from an end, ``line`` for the
    real line), and how to map the new variables back to the sample variables."""

    def __init__(self, expressions, kinds, new, back):
        self.expressions, self.kinds, self.new, self.back = expressions, kinds, new, back


def _pieces(spec, integrands, point) -> list[_Piece]:
    """The symbolic substitutions of every variable, level by level (see the module doc),
    each variable's range first cut at the kinks of the integrands in it
    (:func:`_kink_ranges`)."""
    states = [(sympy.S.One, [], [], {})]  # (Jacobian, kinds, new symbols, x -> x(new))
    for index, (variable, support) in enumerate(zip(spec.variables, spec.supports)):
        fresh = sympy.Symbol(f"_y{index}", real=True)
        grown = []
        for jacobian, kinds, new, back in states:
            lower, upper = support.lower.subs(back), support.upper.subs(back)
            ranges, width = _kink_ranges(integrands, variable, back, lower, upper, point)
            for left, right in ranges:
                for kind, image, derivative in _maps(fresh, left, right, width):
                    grown.append((jacobian * derivative, [*kinds, kind], [*new, fresh],
                                  {**back, variable: image}))
        states = grown
    result = []
    for jacobian, kinds, new, back in states:
        expressions = [_fewer_transcendentals(e.subs(back) * jacobian) for e in integrands]
        result.append(_Piece(expressions, kinds, new, back))
    return result


def _fewer_transcendentals(expr: sympy.Expr) -> sympy.Expr:
    """Logarithms of products split (``log(e^{-y0} e^{-y1}/4) = -y0 - y1 - log 4``) and
    powers with a symbolic exponent written ``exp(e log b)`` so split too: the substituted
    integrands are then a few exponentials and logarithms of ``1 - w e^{-y}`` per node, half
    of the mpmath work. Valid because every base is positive on the support."""
    def split_log(argument):
        return sympy.expand_log(sympy.log(sympy.factor(argument)), force=True)

    expr = expr.replace(lambda e: isinstance(e, sympy.log), lambda e: split_log(e.args[0]))
    expr = expr.replace(
        lambda e: isinstance(e, sympy.Pow) and not e.exp.is_Integer and e.base.has(sympy.exp),
        lambda e: sympy.exp(e.exp * split_log(e.base)))
    return sympy.powsimp(expr, combine="exp")


def _kink_ranges(integrands, variable, back, lower, upper, point) -> tuple[list, sympy.Expr]:
    """``([(lower, k_1), (k_1, k_2), ..., (k_n, upper)], width)``: the range cut at the
    kinks ``k_i`` of the integrands in ``variable`` (the earlier
    variables already substituted): the points where an argument of ``Abs``, ``sign`` or
    ``Heaviside`` vanishes, located by the one-variable verify stage's
    :func:`~raosym.derive.integrals.kinks` (the Laplace factor's ``x_i = m_i``). A kink
    becomes the symbolic end of two pieces, so that ``x - m_i`` is the exact new variable
    ``w e^{-y}`` or ``y`` beside it and each piece is smooth for the double-exponential rule
    (across a kink it converges like a trapezoid: 2 of 25 digits). Only kinks and bounds
    that are numbers at ``point`` (free of the earlier variables) can be ordered and are cut
    at; a kink that moves with an earlier variable (``|x2 - x1|``) is left in its piece, and
    the error estimate reports the digits that then are not reached.

    ``width`` scales a half-line that begins at a kink, ``x = k + width y``: the family's
    widest positive parameter above 1 (:func:`~raosym.verify.quadrature.widest_parameter`,
    the width the one-variable quadrature scales its tails by), else 1. The rule's nodes run
    to y = 2200: unscaled, a Laplace factor of scale b = 60 would be cut where e^{-2200/60}
    (1e-16) of its mass remains, a loss the error estimate does not see. A range without a
    kink keeps width 1 (the families without kinks are integrated as before)."""
    whole = ([(lower, upper)], sympy.S.One)
    arguments = sympy.Tuple(*integrands).subs(back)
    located = kinks(arguments, variable)
    bounds = [evaluate(bound, point) if not bound.free_symbols - set(point) else None
              for bound in (lower, upper)]
    if not located or None in bounds:
        return whole
    inside: dict = {}  # value at the point -> the kink's symbolic form (equal ones once)
    for kink in located:
        if kink.free_symbols - set(point):
            continue
        value = evaluate(kink, point)
        if bounds[0] < value < bounds[1] and value not in inside:
            inside[value] = kink
    if not inside:
        return whole
    ends = [lower, *(inside[value] for value in sorted(inside)), upper]
    widest = widest_parameter(point)
    return list(itertools.pairwise(ends)), (sympy.S.One if widest is None else widest)


def _maps(y, lower, upper, width=sympy.S.One):
    """``(kind, x(y), dx/dy)`` for each piece of one variable's range; a half-line is
    ``x = L + width y`` (see :func:`_kink_ranges`)."""
    finite_lower, finite_upper = lower.is_finite is not False, upper.is_finite is not False
    if finite_lower and finite_upper:
        half = (upper - lower) / 2
        return [("half", lower + half * sympy.exp(-y), half * sympy.exp(-y)),
                ("half", upper - half * sympy.exp(-y), half * sympy.exp(-y))]
    # A half-line directly in the (0, ∞) rule: dense at the end, out to 2200 for the tail.
    if finite_lower:
        return [("half", lower + width * y, width)]
    if finite_upper:
        return [("half", upper - width * y, width)]
    return [("line", y, sympy.S.One)]


def _rule(kind, centre=0, scale=1, line_step=LINE_STEP):
    """Nodes ``(index, y, weight)`` of the finest rule (step :data:`STEP`, or
    :data:`LINE_STEP` on a line); an even index is also a node of the rule at 2h, a multiple
    of 4 of the rule at 4h."""
    if kind == "line":
        # The plain trapezoid in units of the spread: for a normal density its error is about
        # exp(-2π²/h²), 1e-34 at h = 1/2 (a sinh-sinh rule gave 7 digits at h = 1/8); tails
        # heavier than a normal's converge slowly and are reported as not reached.
        low, high = _LINE_RANGE
        return [(index, centre + scale * index * line_step, scale * line_step)
                for index in range(int(low / line_step), int(high / line_step) + 1)]
    low, high = _HALF_RANGE
    nodes = []
    for index in range(int(mpmath.ceil(low / STEP)), int(mpmath.floor(high / STEP)) + 1):
        t = index * STEP
        if kind == "half":
            # y = exp(t - e^{-t}): double-exponential at y -> 0, single where the integrand
            # already decays exponentially (exp-sinh, exp(π/2 sinh t), gave 6 digits at h = 1/8).
            y = mpmath.exp(t - mpmath.exp(-t))
            weight = STEP * y * (1 + mpmath.exp(-t))
        nodes.append((index, y, weight))
    return nodes


def _quadrature(spec, integrands, point, digits, nonnegative_first):
    """The iterated rule at :data:`LINE_STEP`, and where that falls short of the digits on a
    piece of lines, once more at a quarter of it: the trapezoid on a line converges at a rate
    set by the width of the strip where the integrand is analytic, wide for a normal
    density (exact at 1/2), narrow for a Gumbel factor's double exponential (6 digits at
    1/2, all of them at 1/8)."""
    try:
        return _quadrature_at(spec, integrands, point, digits, nonnegative_first, LINE_STEP)
    except PrecisionUnreachable:
        if not any(all(kind == "line" for kind in piece.kinds)
                   for piece in _pieces(spec, integrands, point)):
            raise
    return _quadrature_at(spec, integrands, point, digits, nonnegative_first, LINE_STEP / 4)


def _quadrature_at(spec, integrands, point, digits, nonnegative_first, line_step):
    parameters = sorted(point, key=lambda s: s.name)
    arguments = [point[s] for s in parameters]
    levels = [[mpmath.mpf(0)] * len(integrands) for _ in range(3)]  # steps h, 2h, 4h
    counter = {"nodes": 0}
    for piece in _pieces(spec, integrands, point):
        function = mpmath_function(piece.expressions, [*piece.new, *parameters], cse=True)
        builders = None
        if all(kind == "line" for kind in piece.kinds):
            builders = _centred_builders(piece, parameters, arguments, line_step)
        if builders is None:
            fixed = [_rule(kind, line_step=line_step) for kind in piece.kinds]
            builders = [lambda prefix, rule=rule: rule for rule in fixed]

        def innermost(nodes, piece=piece, function=function):
            counter["nodes"] += 1
            values = function(*(node[1] for node in nodes), *arguments)
            if nonnegative_first and not values[0] >= 0:
                at = {y: sympy.Float(node[1], 15) for y, node in zip(piece.new, nodes)}
                shown = [sympy.N(piece.back[v].subs(at), 8) for v in spec.variables]
                raise ValueError(f"{mpmath.nstr(values[0], 8)} at "
                                 f"{_describe(spec.variables, shown)}")
            return [values] * 3

        found = _nested(builders, (), innermost)
        levels = [[t + v for t, v in zip(total, part)] for total, part in zip(levels, found)]
    _cost["nodes"] = counter["nodes"]
    fine = levels[0]
    if fine[0] == 0:
        # The density is positive on its support: a rule that found no mass at any node
        # missed it (its three steps agree on 0, which would read as converged).
        raise PrecisionUnreachable(f"the rule's {counter['nodes']} nodes missed the "
                                   "density's mass (every value was 0)")
    scale = max(abs(v) for v in fine) or mpmath.mpf(1)
    for position, value in enumerate(fine):
        estimate = _error_estimate(value, levels[1][position], levels[2][position], scale)
        if estimate > scale * mpmath.mpf(10) ** (-digits):
            reached = float(-mpmath.log10(estimate / scale)) if estimate else digits
            raise PrecisionUnreachable(
                f"the iterated double-exponential rule reached only about {reached:.0f} of "
                f"{digits:g} digits ({counter['nodes']} nodes)")
    return fine


_NEWTON_STEPS = 40

#: A direction of a rule stops after this many nodes in a row whose contribution is below
#: the working precision relative to the running sum (the integrand has decayed there).
_NEGLIGIBLE_IN_A_ROW = 3


def _nested(builders, prefix, innermost):
    """The three rules (steps h, 2h, 4h) of the integral over the variables after
    ``prefix``, each a list over the integrands. Each direction of a node list is followed
    outwards from t = 0 and cut where the density's contributions (the first integrand) have
    fallen below the precision: the tails of the t-ranges, fixed for the worst case, are
    mostly negligible."""
    if len(prefix) == len(builders):
        return innermost(prefix)
    nodes = list(builders[len(prefix)](prefix))
    middle = min(range(len(nodes)), key=lambda position: abs(nodes[position][0]))
    negligible = mpmath.mpf(10) ** (-mpmath.mp.dps)
    kept = []  # (node, inner rules)
    mass = mpmath.mpf(0)
    for direction in (range(middle, len(nodes)), range(middle - 1, -1, -1)):
        quiet = 0
        for position in direction:
            node = nodes[position]
            inner = _nested(builders, (*prefix, node), innermost)
            kept.append((node, inner))
            contribution = abs(node[2] * inner[0][0])
            mass += contribution
            quiet = quiet + 1 if contribution <= negligible * mass else 0
            if quiet >= _NEGLIGIBLE_IN_A_ROW:
                break
    width = len(kept[0][1][0])
    totals = []
    for level in range(3):
        stride = 2 ** level
        chosen = [(node[2] * stride, inner[level]) for node, inner in kept
                  if node[0] % stride == 0]
        weights = [weight for weight, _ in chosen]
        totals.append([mpmath.fdot(weights, [values[c] for _, values in chosen])
                       for c in range(width)])
    return totals


def _error_estimate(fine, coarse, coarser, scale):
    """mpmath's estimate for double-exponential rules, in units of ``scale``: with
    D1 = |I_h - I_2h| and D2 = |I_2h - I_4h| (relative), the relative error of I_h is about
    D1^(log D1 / log D2) (the digits double with each halving); D1 itself when the rules
    have not started converging. Returned in the units of the integral."""
    # The rate of convergence is the component's own (relative to its own size: an entry
    # 200 times smaller than the largest converges at the same rate, not 200 times slower).
    own = max(abs(fine), abs(coarse), abs(coarser))
    if own < scale * mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
        own = scale  # an entry that is 0: its rules converge to 0, measured on the scale
    d1, d2 = abs(fine - coarse) / own, abs(coarse - coarser) / own
    if d1 == 0:
        return mpmath.mpf(0)
    if d2 == 0 or d1 >= d2 or d2 >= 1:
        return d1 * own
    return d1 ** (mpmath.log(d1) / mpmath.log(d2)) * own


def _mode(log_density, gradient, hessian, size):
    """The maximum of ``log_density`` by Newton's method from the origin, each step halved
    until the log-density rises (a plain Newton step from far out on a Gumbel factor's
    double-exponential side overshoots by dozens of spreads, and its next forty steps crawl
    back by one spread each); None unless the steps converge. A quadratic log-density (a
    normal) needs one step. The mode only places the nodes: a poor placement shows as
    digits not reached."""
    mode = mpmath.matrix([0] * size)
    height = log_density(mode)
    tolerance = mpmath.mpf(10) ** (-mpmath.mp.dps // 2)
    for _ in range(_NEWTON_STEPS):
        step = mpmath.lu_solve(mpmath.matrix(hessian(mode)), -mpmath.matrix(gradient(mode)))
        for _ in range(_HALVINGS):
            candidate = mode + step
            value = log_density(candidate)
            if mpmath.isfinite(value) and (not mpmath.isfinite(height) or value >= height):
                break
            step /= 2
        else:
            return None
        mode, height = candidate, value
        if mpmath.norm(step) <= tolerance * (1 + mpmath.norm(mode)):
            return list(mode)
    return None


#: How many times a Newton step toward the mode may be halved before the search gives up.
_HALVINGS = 60


def _centred_builders(piece, parameters, arguments, line_step=LINE_STEP):
    """Sinh-sinh rules centred at the mode ``m`` of the piece's density (its first integrand)
    and scaled by its curvature there, or None when Newton's method finds no mode. With
    ``C`` the inverse of minus the Hessian of ``log f`` at ``m``, the k-th variable is centred
    at its conditional mean given the earlier nodes, ``m_k + C_{k,<k} C_{<k,<k}^{-1}
    (y_<k - m_<k)``, with the conditional spread: exact for a normal density, and a
    sensible placement for any unimodal one."""
    log_density = sympy.log(piece.expressions[0])
    new = piece.new
    gradient = [sympy.diff(log_density, y) for y in new]
    hessian = [[sympy.diff(g, y) for y in new] for g in gradient]
    if any(entry.has(sympy.DiracDelta) for row in hessian for entry in row):
        return None  # a kink (|x - m| of a Laplace factor): no curvature to centre rules on
    evaluate_log = mpmath_function([log_density], [*new, *parameters], cse=True)
    evaluate_gradient = mpmath_function(gradient, [*new, *parameters], cse=True)
    evaluate_hessian = mpmath_function(hessian, [*new, *parameters], cse=True)
    try:
        mode = _mode(lambda y: evaluate_log(*y, *arguments)[0],
                     lambda y: evaluate_gradient(*y, *arguments),
                     lambda y: evaluate_hessian(*y, *arguments), len(new))
        if mode is None:
            return None
        covariance = (-mpmath.matrix(evaluate_hessian(*mode, *arguments))) ** -1
    except (ZeroDivisionError, ValueError, ArithmeticError, TypeError):
        return None
    builders = []
    for k in range(len(new)):
        if k == 0:
            slope, spread = [], covariance[0, 0]
        else:
            earlier = covariance[:k, :k] if k > 1 else mpmath.matrix([[covariance[0, 0]]])
            cross = mpmath.matrix([[covariance[k, j] for j in range(k)]])
            slope_matrix = cross * earlier ** -1
            slope = [slope_matrix[0, j] for j in range(k)]
            spread = covariance[k, k] - (slope_matrix * cross.T)[0, 0]
        if not spread > 0:
            return None

        def build(prefix, k=k, slope=slope, spread=spread):
            centre = mode[k] + mpmath.fsum(a * (node[1] - mode[j])
                                           for j, (a, node) in enumerate(zip(slope, prefix)))
            return _rule("line", centre, mpmath.sqrt(spread), line_step)

        builders.append(build)
    return builders


# ----------------------------------------------------------------------------- density and moments


def _number(bound: sympy.Expr) -> mpmath.mpf:
    if bound.is_infinite:
        return mpmath.inf if bound.is_extended_positive else -mpmath.inf
    return mpmath.mpf(sympy.N(bound, mpmath.mp.dps + 5))


def negative_value(spec: FamilySpec, point):
    """The first ``(value, outcome)`` where the density is negative or not real, on a grid
    of each variable's support (nine values, bounds evaluated at the earlier variables'
    values; every outcome of a finite discrete support), else None."""
    parameters = sorted(point, key=lambda s: s.name)
    density = mpmath_function(spec.density, [*spec.variables, *parameters])
    arguments = [point[s] for s in parameters]
    numbers = {s: sympy.Float(v, mpmath.mp.dps + 5) for s, v in point.items()}
    grid = [()]
    for variable, support in zip(spec.variables, spec.supports):
        extended = []
        for values in grid:
            earlier = {**numbers, **{v: sympy.Float(x, mpmath.mp.dps + 5)
                                     for v, x in zip(spec.variables, values)}}
            lower, upper = (_number(bound.subs(earlier)) for bound in (support.lower,
                                                                         support.upper))
            if support.kind == "finite":
                probes = [_number(p.subs(earlier)) for p in support.points]
            elif support.discrete:
                start = lower if lower > -mpmath.inf else (
                    upper - 8 if upper < mpmath.inf else mpmath.mpf(-4))
                top = min(upper, start + 8)
                probes = [mpmath.mpf(k) for k in range(int(start), int(top) + 1)]
            elif lower > -mpmath.inf and upper < mpmath.inf:
                probes = [lower + (upper - lower) * k / 10 for k in range(1, 10)]
            else:
                origin = lower if lower > -mpmath.inf else (upper if upper < mpmath.inf else 0)
                side = -1 if lower == -mpmath.inf and upper < mpmath.inf else 1
                offsets = [mpmath.mpf(x) for x in ("0.1", "0.5", "1", "3", "10")]
                probes = [origin + side * o for o in offsets]
                if lower == -mpmath.inf and upper == mpmath.inf:
                    probes += [-o for o in offsets] + [mpmath.mpf(0)]
            extended += [(*values, x) for x in probes]
        grid = extended
    for values in grid:
        value = density(*values, *arguments)
        if not (isinstance(value, mpmath.mpf) and value >= 0):
            return value, values
    return None


class _Space:
    """The variables and supports an expectation runs over: a whole family's, or one group
    of variables that the density does not couple to the others."""

    def __init__(self, variables, supports):
        self.variables, self.supports = tuple(variables), tuple(supports)


def independent_groups(spec: FamilySpec):
    """``(constant, [(space, log factor), ...])``: the derive stage's split of ``log f``
    (:func:`raosym.derive.multivariate.variable_groups`), each group of variables as the
    space an expectation runs over."""
    from raosym.derive.multivariate import variable_groups

    constant, groups = variable_groups(spec)
    return constant, [(_Space(variables, supports), log_factor)
                      for variables, supports, log_factor in groups]


def score_moments(spec: FamilySpec, point, *, digits: float, mass_only: bool = False):
    """``(mass, E[s s^T])`` at ``point``: the total mass of the density and the matrix of
    expected score products (None with ``mass_only``).

    One group of variables (:func:`independent_groups`): the integrals of ``f`` and
    ``s_i s_j f`` over all of them, the scores being the derive stage's. Several: with
    ``f = e^c ∏_g φ_g`` and ``a_gi = ∂_i log φ_g``, Fubini gives the mass ``e^c ∏ Z_g`` and
    ``E[s_i s_j] = Σ_g E_g[(a_gi − M_gi)(a_gj − M_gj)] + S_i S_j`` with ``M_gi = E_g[a_gi]``
    under the normalized factor and ``S_i = Σ_g M_gi + ∂_i c`` (0 for a regular family):
    integrals over each group's variables only, the centred products in a second pass so
    that a large mean does not cancel digits. The three-variable normal becomes a sum of
    one-dimensional quadratures."""
    from raosym.derive.fisher import scores

    coordinates = spec.coordinate_symbols
    k = len(coordinates)
    pairs = [(i, j) for i in range(k) for j in range(i + 1)]
    constant, groups = independent_groups(spec)
    if len(groups) == 1:
        integrands = [spec.density]
        if not mass_only:
            score = scores(spec)
            integrands += [score[i] * score[j] * spec.density for i, j in pairs]
        values = expectations(spec, integrands, point, digits=digits)
        if mass_only:
            return values[0], None
        return values[0], _symmetric(k, pairs, values[1:])
    nodes = 0
    mass = evaluate(sympy.exp(constant), point) if constant.free_symbols else mpmath.mpf(
        sympy.N(sympy.exp(constant), mpmath.mp.dps + 5))
    sums = [evaluate(sympy.diff(constant, c), point) if sympy.diff(constant, c) != 0
            else mpmath.mpf(0) for c in coordinates]
    covariance = [mpmath.mpf(0)] * len(pairs)
    for space, log_factor in groups:
        factor = sympy.exp(log_factor)
        derivatives = [sympy.diff(log_factor, c) for c in coordinates]
        first = expectations(space, [factor] + ([] if mass_only else
                                                [d * factor for d in derivatives]),
                             point, digits=digits)
        nodes += last_cost()
        total = first[0]
        mass *= total
        if mass_only:
            continue
        means = [v / total for v in first[1:]]
        shift = {sympy.Symbol(f"_mean{i}"): mean for i, mean in enumerate(means)}
        centred = [d - sympy.Symbol(f"_mean{i}") for i, d in enumerate(derivatives)]
        # The factor leads again: it places and cuts the nodes (see _quadrature).
        second = expectations(space, [factor] + [centred[i] * centred[j] * factor
                                                 for i, j in pairs],
                              {**point, **shift}, digits=digits)[1:]
        nodes += last_cost()
        covariance = [c + v / total for c, v in zip(covariance, second)]
        sums = [a + b for a, b in zip(sums, means)]
    _cost["nodes"] = nodes
    if mass_only:
        return mass, None
    return mass, _symmetric(k, pairs, [c + sums[i] * sums[j]
                                       for c, (i, j) in zip(covariance, pairs)])


def _symmetric(k, pairs, values):
    matrix = mpmath.matrix(k, k)
    for (i, j), value in zip(pairs, values):
        matrix[i, j] = matrix[j, i] = value
    return matrix


# ----------------------------------------------------------------------------- the checks

#: Working precision and required digits of the iterated quadrature (continuous supports);
#: sums over finite supports are exact and keep the usual 40 and 30.
QUADRATURE_WORKING_DIGITS = 34
QUADRATURE_REQUIRED_DIGITS = 25


#: Digits the quadrature must reach beyond those a Fisher check requires.
_ESTIMATE_MARGIN = 2


def fisher_precision(spec: FamilySpec) -> tuple[int, int]:
    """The working and required digits of a family's Fisher checks over several variables:
    exact sums over finite supports at the verify stage's own precision, the iterated
    double-exponential quadrature over continuous ones at fewer (its nested rules cost the
    cube of the digits)."""
    from raosym.verify.checks import REQUIRED_DIGITS, WORKING_DIGITS

    if all(support.discrete for support in spec.supports):
        return WORKING_DIGITS, REQUIRED_DIGITS
    return QUADRATURE_WORKING_DIGITS, QUADRATURE_REQUIRED_DIGITS


def fisher_checks(derivation, points, check, not_reached) -> list:
    """Every Fisher entry against its nested sum or iterated quadrature, all entries at once
    per point. ``check`` and ``not_reached`` are the verify stage's record makers (see
    :func:`raosym.verify.checks.fisher_checks`); the nodes evaluated are added up in
    ``derivation.timings["quadrature_nodes"]``, the cost the report prints."""
    spec, entries = derivation.spec, derivation.entries
    working, required = fisher_precision(spec)
    names = [f"g_{spec.coordinates[e.row].name}_{spec.coordinates[e.column].name}"
             for e in entries]
    checks, nodes = [], 0
    for point in points:
        with mpmath.workdps(working):
            try:
                # Asked for a margin beyond the digits the check requires: the rule's error
                # estimate is an extrapolation, optimistic at its limit. (It was off by more
                # than the margin for a gamma factor, which _one_variable now takes.)
                _, matrix = score_moments(spec, point, digits=required + _ESTIMATE_MARGIN)
            except PrecisionUnreachable as error:
                checks += [not_reached(name, point, str(error), required) for name in names]
                continue
            finally:
                nodes += last_cost()
            numeric = {e: matrix[e.row, e.column] for e in entries}
            diagonal = {e.row: numeric[e] for e in entries if e.row == e.column}
            for entry, name in zip(entries, names):
                scale = mpmath.sqrt(abs(diagonal[entry.row] * diagonal[entry.column]))
                symbolic = evaluate(entry.value, point)
                checks.append(check(name, point, symbolic, numeric[entry], scale,
                                    required=required))
    derivation.timings["quadrature_nodes"] = derivation.timings.get("quadrature_nodes", 0) + nodes
    return checks
