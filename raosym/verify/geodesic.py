"""Numeric Rao distances: geodesics of the derived metric, solved and certified with mpmath.

Verify stage. Input: a :class:`MetricModel` (the derived metric and Christoffel symbols of a
:class:`~raosym.derive.steps.Derivation`, constants fixed) and two points. Output: a
:class:`GeodesicDistance`, or :class:`~raosym.errors.VerificationError` when the solve does not
converge (never a silent number). Independent of the closed forms of
:mod:`raosym.derive.distance`, which it checks; for families without a closed form it is the
distance.

- One coordinate: ``d = |∫ sqrt(g(t)) dt|`` by tanh-sinh quadrature (with its error estimate).
- Several coordinates: the boundary-value problem ``γ'' = -Γ(γ)[γ', γ']``, ``γ(0) = p``,
  ``γ(1) = q`` by shooting on the initial velocity. In double precision, a damped Newton method
  inside a predictor-corrector continuation along the end point (p → q) finds a first velocity
  and the shooting Jacobian; chord-Newton steps at the working precision refine it. Each
  trajectory is integrated by Gragg-Bulirsch-Stoer extrapolation (modified midpoint rule,
  polynomial extrapolation in h², adaptive steps), whose tolerance follows the precision.
- Certificate: the final trajectory is integrated through Gauss-Legendre nodes of [0, 1]; its
  end must hit q to the working tolerance (measured in the metric), its speed
  ``sqrt(g(γ', γ'))`` must be constant along it (as on every geodesic), it must stay in the
  domain, and the distance is its length ``∫ sqrt(g(γ', γ')) dt`` by that quadrature.

The solve finds a geodesic from p to q; it is the shortest curve when geodesics are unique (as
for the catalog's two-coordinate families, whose curvature is negative).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mpmath
import sympy

from raosym.derive.steps import Derivation
from raosym.errors import VerificationError
from raosym.spec.model import Domain
from raosym.verify.evaluate import float_function, mpmath_function

#: Working precision of a geodesic solve, in decimal digits.
GEODESIC_DIGITS = 40
#: Precision at which the difference of the end points of a one-coordinate length is taken
#: (exact for the points the verify and emit stages draw, whatever the working precision).
_EXACT_DIFFERENCE_DIGITS = 120
#: Gauss-Legendre nodes for the length of the certified path.
_LENGTH_NODES = 8
#: Most columns of one extrapolation tableau (step sequence 2, 4, 6, ...), and most steps of
#: one integration at the working precision.
_MAX_COLUMNS = 16
_MAX_STEPS = 2000
#: The same for the double-precision first guess (a trajectory that needs more steps runs far
#: off: a bad Newton trial, abandoned early), and its relative tolerance.
_FLOAT_COLUMNS = 10
_FLOAT_STEPS = 60
_FLOAT_TOLERANCE = 1e-13


@dataclass(frozen=True)
class MetricModel:
    """The metric of one family with its constants fixed, as numeric functions."""

    coordinates: tuple[sympy.Symbol, ...]
    bounds: tuple[tuple, ...]  # (lower or None, upper or None) of each coordinate, open ends
    metric: Callable  # (*x) -> flat list g_00, g_01, ..., row by row
    christoffel: Callable | None  # (*x) -> [Γ^k_ij for k, i <= j]; None: a metric known
    float_christoffel: Callable | None  # only numerically (one coordinate: not needed)
    #: mpmath's rule for the length integral of one coordinate: tanh-sinh, or Gauss-Legendre
    #: for a metric whose every value is a quadrature (far fewer nodes for a smooth sqrt(g)).
    length_rule: str = "tanh-sinh"

    @property
    def size(self) -> int:
        return len(self.coordinates)

    def metric_matrix(self, x: Sequence) -> list[list]:
        flat = self.metric(*x)
        n = self.size
        return [[flat[i * n + j] for j in range(n)] for i in range(n)]

    def inside(self, x: Sequence) -> bool:
        """Whether a point lies in the (open) domain; complex or nan values never do."""
        for value, (lower, upper) in zip(x, self.bounds):
            if isinstance(value, (complex, mpmath.mpc)) or mpmath.isnan(value):
                return False
            # A bound in earlier coordinates (p2 in (0, 1 - p1)), at this point.
            lower, upper = (bound(*x) if callable(bound) else bound for bound in (lower, upper))
            if (lower is not None and not value > lower) or (upper is not None
                                                             and not value < upper):
                return False
        return True


@dataclass(frozen=True)
class GeodesicDistance:
    """A certified numeric Rao distance and the figures that certify it."""

    distance: mpmath.mpf
    endpoint_error: mpmath.mpf  # |γ(1) - q| in the metric, relative to the distance
    speed_spread: mpmath.mpf  # max relative deviation of the speed along the path
    iterations: int  # Newton iterations at the working precision
    digits: int  # working precision


def metric_model(derivation: Derivation, constants: dict | None = None) -> MetricModel:
    """The derivation's metric and Christoffel symbols with the constants set to numbers."""
    spec = derivation.spec
    # Exact binary rationals: both the mpmath and the double-precision functions print them.
    constants = {symbol: value if isinstance(value, sympy.Basic) else _exact(value)
                 for symbol, value in (constants or {}).items()}
    coordinates = spec.coordinate_symbols
    n = len(coordinates)
    fisher = derivation.fisher.xreplace(constants)
    gamma = derivation.geometry.christoffel
    symbols = [gamma[k][i][j].xreplace(constants) for k, i, j in _christoffel_indices(n)]
    missing = (fisher.free_symbols | set().union(*(s.free_symbols for s in symbols))) - set(
        coordinates)
    if missing:
        raise VerificationError(f"{spec.path}: no value for {sorted(map(str, missing))} in the "
                                "geodesic solve")
    return MetricModel(
        coordinates, tuple(domain_bounds(p.domain, coordinates) for p in spec.coordinates),
        mpmath_function(list(fisher), coordinates, cse=True),
        mpmath_function(symbols, coordinates, cse=True),
        float_function(symbols, coordinates, cse=True),
    )


def geodesic_distance(model: MetricModel, start: Sequence, end: Sequence, *,
                      digits: int = GEODESIC_DIGITS, max_iterations: int = 12) -> GeodesicDistance:
    """The Rao distance from ``start`` to ``end`` (coordinates as numbers), certified.

    ``digits`` is the working precision; the geodesic is accepted when its end point and the
    constancy of its speed are right to ``digits - 8`` digits, which bounds the error of the
    distance (about ``digits - 6`` digits in practice)."""
    with mpmath.workdps(digits):
        p = [mpmath.mpf(value) for value in start]
        q = [mpmath.mpf(value) for value in end]
        if not (model.inside(p) and model.inside(q)):
            raise VerificationError(f"geodesic endpoints {_show(p)}, {_show(q)} lie outside "
                                    "the domain")
        if p == q:
            return GeodesicDistance(mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0), 0, digits)
        if model.size == 1:  # from the points as given, unrounded (see _curve_length)
            return _curve_length(model, start[0], end[0], digits)
        return _shoot(model, p, q, digits, max_iterations)


def straight_segment_length(model: MetricModel, p, q, *, digits: int) -> mpmath.mpf:
    """The length of the straight coordinate segment from p to q (an upper bound of the Rao
    distance)."""
    with mpmath.workdps(digits):
        direction = [b - a for a, b in zip(p, q)]

        def speed(t):
            x = [a + t * d for a, d in zip(p, direction)]
            g = model.metric_matrix(x)
            return mpmath.sqrt(mpmath.fsum(g[i][j] * direction[i] * direction[j]
                                           for i in range(len(p)) for j in range(len(p))))

        return mpmath.quad(speed, [0, 1])


# ----------------------------------------------------------------------------- one coordinate


def _curve_length(model: MetricModel, a, b, digits: int) -> GeodesicDistance:
    # Over [0, 1] with theta = a + (b - a) u, b - a taken from the unrounded points: for
    # nearby points the rule's own nodes between a and b would hold only the digits of b - a
    # left after rounding to the working precision (13 digits keep 7 of a difference of 1e-6).
    with mpmath.workdps(_EXACT_DIFFERENCE_DIGITS):
        width = mpmath.mpf(b) - mpmath.mpf(a)
    a, width = +mpmath.mpf(a), +width

    def speed(u):
        return mpmath.sqrt(model.metric(a + width * u)[0])

    value, error = mpmath.quad(speed, [0, 1], error=True, method=model.length_rule)
    value = abs(value * width)
    error = abs(error * width)
    relative = error / value
    if not relative < mpmath.mpf(10) ** (10 - digits):
        raise VerificationError(f"the length integral from {_show([a])} to {_show([b])} did not "
                                f"converge (estimated relative error {mpmath.nstr(relative, 3)})")
    return GeodesicDistance(value, mpmath.mpf(0), mpmath.mpf(0), 0, digits)


# ----------------------------------------------------------------------------- shooting


@dataclass(frozen=True)
class _Flow:
    """The geodesic equation with the settings of one integration."""

    rhs: Callable
    tolerance: object  # float or mpf: the number type of the whole integration
    columns: int
    inside: Callable
    max_steps: int

    def run(self, state: list, stops: list) -> list[list]:
        return _integrate(self.rhs, state, stops, self.tolerance, columns=self.columns,
                          inside=self.inside, max_steps=self.max_steps)

    def end_point(self, start: list, velocity: list) -> list:
        return self.run(start + velocity, [self.tolerance * 0 + 1])[-1][:len(start)]


def _shoot(model: MetricModel, p, q, digits: int, max_iterations: int) -> GeodesicDistance:
    tolerance = mpmath.mpf(10) ** (8 - digits)
    velocity, jacobian = _float_shooting(model, [float(v) for v in p], [float(v) for v in q])
    inverse = mpmath.inverse(mpmath.matrix(jacobian))
    velocity = [mpmath.mpf(v) for v in velocity]
    flow = _Flow(geodesic_rhs(model.christoffel, model.size), mpmath.mpf(10) ** (3 - digits),
                 _MAX_COLUMNS, model.inside, _MAX_STEPS)
    nodes, weights = _gauss_legendre(_LENGTH_NODES)
    n = model.size
    for iteration in range(1, max_iterations + 1):
        # Through the quadrature nodes, so that the last trajectory is also the certified one.
        states = flow.run(p + velocity, nodes + [mpmath.mpf(1)])
        residual = [a - b for a, b in zip(states[-1][:n], q)]
        error = _metric_norm(model, q, residual) / _metric_norm(model, p, velocity)
        if error < tolerance:
            return _certify(model, p, q, velocity, states, weights, tolerance, iteration, digits)
        # A chord step: the double-precision Jacobian is good to ~1e-9, so each step gains
        # about nine digits.
        step = inverse * mpmath.matrix(residual)
        velocity = [v - step[i] for i, v in enumerate(velocity)]
    raise VerificationError(
        f"the geodesic from {_show(p)} to {_show(q)} did not converge in {max_iterations} "
        f"Newton steps at {digits} digits (relative endpoint error {mpmath.nstr(error, 3)})")


def _certify(model, p, q, velocity, states, weights, tolerance, iterations,
             digits) -> GeodesicDistance:
    """The certificate of a trajectory integrated through the Gauss-Legendre nodes: its
    length, the constancy of its speed and its end point (it stays in the domain, or the
    integration would have stopped)."""
    n = model.size
    initial_speed = _metric_norm(model, p, velocity)
    speeds = [_metric_norm(model, state[:n], state[n:]) for state in states[:-1]]
    length = mpmath.fsum(w * s for w, s in zip(weights, speeds))
    spread = max(abs(s - initial_speed) for s in speeds) / initial_speed
    residual = [a - b for a, b in zip(states[-1][:n], q)]
    endpoint_error = _metric_norm(model, q, residual) / length
    if not (spread < tolerance and endpoint_error < tolerance):
        raise VerificationError(
            f"the geodesic from {_show(p)} to {_show(q)} is not certified: speed varies by "
            f"{mpmath.nstr(spread, 3)}, end point misses by {mpmath.nstr(endpoint_error, 3)} "
            f"(tolerance {mpmath.nstr(tolerance, 3)})")
    return GeodesicDistance(length, endpoint_error, spread, iterations, digits)


def _float_shooting(model: MetricModel, p: list[float], q: list[float]):
    """A first initial velocity and the shooting Jacobian, in double precision.

    Predictor-corrector continuation along the end point ``p + λ (q - p)``: the geodesic to p
    itself has velocity 0 and Jacobian I; each step predicts the next velocity by the Jacobian
    (an Euler step along the solution path) and corrects it by Newton's method, halving the
    step in λ when Newton fails. The first try is the whole segment (λ: 0 → 1, the straight
    line as guess), which suffices for nearby points.
    """
    flow = _Flow(geodesic_rhs(model.float_christoffel, model.size), _FLOAT_TOLERANCE,
                 _FLOAT_COLUMNS, model.inside, _FLOAT_STEPS)
    n = model.size
    segment = [b - a for a, b in zip(p, q)]
    reached, increment = 0.0, 1.0
    velocity, jacobian = [0.0] * n, [[float(i == j) for j in range(n)] for i in range(n)]
    while reached < 1.0:
        if increment < 1e-4:
            raise VerificationError(f"the geodesic from {_show(p)} to {_show(q)} did not "
                                    "converge (double-precision shooting with continuation)")
        goal = min(1.0, reached + increment)
        target = [a + goal * d for a, d in zip(p, segment)]
        predicted = _solve(jacobian, [(goal - reached) * d for d in segment])
        guess = [v + dv for v, dv in zip(velocity, predicted)]
        try:
            velocity, jacobian = _float_newton(flow, p, target, guess, jacobian)
        except _NoConvergence:
            increment /= 4
            continue
        reached = goal
        increment *= 2
    try:
        return velocity, _float_jacobian(flow, p, velocity)
    except _NoConvergence:
        raise VerificationError(f"the shooting Jacobian of the geodesic from {_show(p)} to "
                                f"{_show(q)} could not be computed") from None


class _NoConvergence(Exception):
    pass


def _float_newton(flow, p, q, velocity, jacobian, *, iterations: int = 7):
    """Damped Newton in double precision, from ``velocity`` with the Jacobian there; returns
    the velocity and the Jacobian. The Jacobian is recomputed by differences at each step."""
    # Double precision resolves the end point to ~1e-14 of the coordinates' size only; the
    # working-precision steps take it from there.
    scale = max(abs(b - a) for a, b in zip(p, q))
    floor = 1e-13 * max(abs(v) for v in p + q)
    residual = _float_residual(flow, p, q, velocity)
    for iteration in range(iterations):
        if _norm(residual) <= 1e-11 * scale + floor:
            return velocity, jacobian
        if iteration:
            end = [r + b for r, b in zip(residual, q)]
            jacobian = _float_jacobian(flow, p, velocity, end)
        velocity, residual = _damped_step(flow, p, q, velocity, residual, jacobian)
        if velocity is None:
            raise _NoConvergence
    if _norm(residual) <= 1e-11 * scale + floor:
        return velocity, jacobian
    raise _NoConvergence


def _damped_step(flow, p, q, velocity, residual, jacobian):
    """The Newton step, shortened until the residual decreases; (None, None) if it does not."""
    step = _solve(jacobian, residual)
    size = _norm(residual)
    damping = 1.0
    while damping >= 1 / 64:
        trial = [v - damping * s for v, s in zip(velocity, step)]
        try:
            trial_residual = _float_residual(flow, p, q, trial)
            if _norm(trial_residual) < size:
                return trial, trial_residual
        except _NoConvergence:
            pass
        damping /= 4
    return None, None


def _norm(vector) -> float:
    return max(abs(x) for x in vector)


def _float_residual(flow, p, q, velocity):
    end = flow.end_point(p, velocity)
    if any(abs(x) == float("inf") for x in end):
        raise _NoConvergence
    return [a - b for a, b in zip(end, q)]


def _float_jacobian(flow, p, velocity, end=None):
    """d γ(1) / d γ'(0) by differences: forward ones from the known end point ``end`` (one
    integration per coordinate) for Newton steps, central ones when ``end`` is None (for the
    chord steps at the working precision, which need the more accurate Jacobian)."""
    n = len(p)
    columns = []
    # Near v = 0 the map is nearly linear (its derivative tends to the identity), so the
    # difference step need not shrink with v: that keeps rounding out of the quotient.
    size = max(max(abs(v) for v in velocity), 1e-3 * max(abs(x) for x in p))
    h = (1e-7 if end is not None else 1e-5) * size
    for j in range(n):
        plus = list(velocity)
        plus[j] += h
        high = flow.end_point(p, plus)
        if end is not None:
            columns.append([(a - b) / h for a, b in zip(high, end)])
            continue
        minus = list(velocity)
        minus[j] -= h
        low = flow.end_point(p, minus)
        columns.append([(a - b) / (2 * h) for a, b in zip(high, low)])
    return [[columns[j][i] for j in range(n)] for i in range(n)]


def _solve(matrix, vector):
    """A small dense linear solve (Gaussian elimination with partial pivoting) in floats."""
    n = len(vector)
    rows = [list(row) + [value] for row, value in zip(matrix, vector)]
    for column in range(n):
        pivot = max(range(column, n), key=lambda r: abs(rows[r][column]))
        if rows[pivot][column] == 0:
            raise _NoConvergence
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(column + 1, n):
            factor = rows[r][column] / rows[column][column]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column])]
    solution = [0.0] * n
    for r in reversed(range(n)):
        solution[r] = (rows[r][n] - sum(rows[r][c] * solution[c] for c in range(r + 1, n))) \
            / rows[r][r]
    return solution


# ----------------------------------------------------------------------------- the ODE


def _christoffel_indices(n: int) -> list[tuple[int, int, int]]:
    return [(k, i, j) for k in range(n) for i in range(n) for j in range(i, n)]


def geodesic_rhs(christoffel: Callable, n: int) -> Callable:
    """``(x, v) -> (v, -Γ^k_ij v^i v^j)`` as one function of the flat state."""
    terms = [(k, i, j, 1 if i == j else 2) for k, i, j in _christoffel_indices(n)]

    def rhs(state):
        x, v = state[:n], state[n:]
        values = christoffel(*x)
        acceleration = [0] * n
        for value, (k, i, j, multiplicity) in zip(values, terms):
            acceleration[k] -= multiplicity * value * v[i] * v[j]
        return v + acceleration

    return rhs


def _integrate(rhs: Callable, state: list, stops: list, tolerance, *,
               columns: int = _MAX_COLUMNS, inside: Callable | None = None,
               max_steps: int = 400) -> list[list]:
    """States at the times ``stops`` (increasing, in (0, 1]) of ``y' = rhs(y)``, ``y(0) = state``:
    Gragg-Bulirsch-Stoer steps, each accepted when its extrapolation tableau converged within
    ``columns`` columns. The step grows when the tableau converges early and shrinks when it
    converges late or not at all. A trajectory that leaves the domain (``inside`` of the
    position is false) stops the integration."""
    failure = _NoConvergence if isinstance(tolerance, float) else VerificationError
    n = len(state) // 2
    t, step, results = 0 * tolerance, 0 * tolerance + 0.125, []
    # In double precision a step below 1e-6 of the unit time means a trajectory running into a
    # singularity (a bad Newton trial); at the working precision, steps may get much smaller.
    minimum = 1e-6 if failure is _NoConvergence else 0 * tolerance + 1e-12
    target = max(3, columns - 3)
    attempts = 0
    for stop in stops:
        while t < stop:
            attempts += 1
            if attempts > max_steps:
                raise failure(f"the geodesic equation needs more than {max_steps} steps: the "
                              "trajectory runs far away")
            # A step cut short to land on a stop does not shrink the step that follows.
            taken = min(step, stop - t)
            candidate, used = _extrapolated_step(rhs, state, taken, tolerance, columns)
            if candidate is None:
                step = taken / 3
                if step < minimum:
                    raise failure("the geodesic equation could not be integrated (step size "
                                  "underflow): the trajectory blows up or leaves the domain")
                continue
            if inside is not None and not inside(candidate[:n]):
                raise failure(f"the trajectory leaves the domain at {_show(candidate[:n])}")
            t, state = t + taken, candidate
            if taken == step:
                step *= 2 if used < target - 1 else 1.25 if used <= target else 0.7
        results.append(state)
    return results


def _extrapolated_step(rhs, state, step, tolerance, columns: int):
    """One step of length ``step``: the extrapolated state and the columns used, or (None, 0)
    when the tableau did not converge (or the right-hand side failed)."""
    try:
        slope = rhs(state)
        table: list[list] = []
        counts = []
        for column in range(columns):
            count = 2 * (column + 1)
            counts.append(count)
            row = [_modified_midpoint(rhs, state, slope, step, count)]
            for k in range(1, column + 1):
                # Integer weights: a float ratio such as (10/6)² - 1 would cap the precision.
                low, high = counts[column - k] ** 2, counts[column] ** 2 - counts[column - k] ** 2
                row.append([a + (a - b) * low / high for a, b in zip(row[k - 1], table[-1][k - 1])])
            table.append(row)
            if column and _converged(row[-1], row[-2], state, tolerance):
                return row[-1], column + 1
    except (ArithmeticError, ValueError, TypeError, ZeroDivisionError, OverflowError,
            mpmath.libmp.NoConvergence):
        # A trial step that leaves the domain, overflows, or reaches a point where a special
        # function's series does not converge (mpmath's zeta of a stray shape's polygamma
        # argument) is a failed step: the integrator shrinks it.
        return None, 0
    return None, 0


def _modified_midpoint(rhs, state, slope, step, count):
    h = step / count
    previous = state
    current = [y + h * s for y, s in zip(state, slope)]
    for _ in range(count - 1):
        previous, current = current, [y + 2 * h * s for y, s in zip(previous, rhs(current))]
    return [(a + b + h * s) / 2 for a, b, s in zip(current, previous, rhs(current))]


def _converged(new, old, state, tolerance) -> bool:
    """Error below tolerance, relative to the position block and the velocity block apiece."""
    n = len(state) // 2
    if any(isinstance(y, (complex, mpmath.mpc)) for y in new):
        return False
    for block in (slice(0, n), slice(n, None)):
        scale = max(max(abs(y) for y in state[block]), max(abs(y) for y in new[block]))
        error = max(abs(a - b) for a, b in zip(new[block], old[block]))
        if isinstance(error, complex) or not error <= tolerance * scale:
            return False
    return True


# ----------------------------------------------------------------------------- helpers


def _metric_norm(model: MetricModel, x, vector):
    g = model.metric_matrix(x)
    n = model.size
    value = mpmath.fsum(g[i][j] * vector[i] * vector[j] for i in range(n) for j in range(n))
    return mpmath.sqrt(abs(value))


def _gauss_legendre(count: int):
    """Nodes and weights of Gauss-Legendre quadrature on [0, 1] at the working precision."""
    nodes, weights = [], []
    for k in range(1, count + 1):
        x = mpmath.cos(mpmath.pi * (k - mpmath.mpf(1) / 4) / (count + mpmath.mpf(1) / 2))
        for _ in range(100):
            p0, p1 = mpmath.mpf(1), x
            for m in range(2, count + 1):
                p0, p1 = p1, ((2 * m - 1) * x * p1 - (m - 1) * p0) / m
            derivative = count * (x * p1 - p0) / (x * x - 1)
            change = p1 / derivative
            x -= change
            if abs(change) < mpmath.eps * 4:
                break
        nodes.append((1 - x) / 2)
        weights.append(1 / ((1 - x * x) * derivative**2))
    order = sorted(range(count), key=lambda i: nodes[i])
    return [nodes[i] for i in order], [weights[i] for i in order]


def domain_bounds(domain: Domain, coordinates=()) -> tuple:
    """The ends of a domain as numbers (None when infinite), or functions of the coordinates
    for an end in earlier coordinates. Geodesics are checked against the open interval: a
    closed end is a boundary the metric does not reach."""
    def end_of(end):
        if end.free_symbols:
            return mpmath_function(end, coordinates)
        return _number(end) if end.is_finite else None

    return tuple(end_of(end) for end in (domain.lower, domain.upper))


def _exact(value) -> sympy.Rational:
    """An mpmath number as the exact binary fraction it is (``man_exp`` drops the sign: a
    negative constant, a correlation rho = -0.3, became +0.3)."""
    number = mpmath.mpf(value)
    mantissa, exponent = number.man_exp
    sign = -1 if number < 0 else 1
    return sign * sympy.Integer(mantissa) * sympy.Integer(2) ** exponent


def _number(expr: sympy.Expr) -> mpmath.mpf:
    if expr.is_Rational:
        return mpmath.mpf(expr.p) / expr.q
    return mpmath.mpf(str(sympy.N(expr, 60)))


def _show(x) -> str:
    return "(" + ", ".join(mpmath.nstr(v, 8) for v in x) + ")"
