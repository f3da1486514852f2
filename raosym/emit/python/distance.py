"""The Rao distance of a generated Python module: ``rao_distance(theta1, theta2, **constants)``.

Emit stage, Python backend (kept apart from :mod:`raosym.emit.python` so that later functions
of the backend do not mix with it). Input: the family's
:class:`~raosym.derive.steps.RaoDistance`. Output: the context of the ``rao_distance`` block of
``module.py.j2``, either

- **closed form**: the derive stage's ``stable`` expression (its cancellation-free rewrite,
  proved equal to the textbook form there) printed by :class:`ModulePrinter`; nothing is
  rewritten here beyond the printer's own stable forms (and
  :func:`~raosym.emit.python.printer.far_apart_forms`: a ``log1p`` or ``asinh`` of a quotient
  through a helper that stays finite where the quotient overflows), so that the printed code
  is the proved expression; or
- **numeric**: for a family without a closed form, the metric and Christoffel symbols printed
  twice, as scalar code (:class:`ScalarPrinter`) and as NumPy code on arrays
  (:class:`ArrayPrinter`), for the solver in the module (``distance.py.j2``): SciPy's
  collocation solver ``solve_bvp`` finds the geodesic in a chart where every coordinate's open
  domain is the real line (so no iterate can leave the domain), shooting with ``odeint``
  (LSODA) polishes its initial velocity by Newton's method, and the result is certified by the
  end point, the constancy of the speed and the length of the path it found.
"""

from __future__ import annotations

import math
import textwrap

import mpmath
import sympy
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from raosym.derive.steps import RaoDistance
from raosym.emit.python.exact import ExactPrinter, exact_function
from raosym.emit.python.printer import FloatPrinter, far_apart_forms, scaled_bessel
from raosym.errors import EmitError

WIDTH = 92  # as the backend's docstrings

#: Relative tolerance the numeric path guarantees (stated in the generated docstring, checked
#: by the certificate in the generated solver and by tests/test_distance_accuracy.py).
NUMERIC_TOLERANCE = 1e-10
#: Most pieces of 16 Gauss-Legendre nodes the arc length of a line takes before it gives up
#: (then falling back on mpmath's quadrature of the metric); for a metric known only
#: numerically, where every node is a quadrature (and there is no mpmath form to fall back
#: on), fewer: up to 64 pieces are 16 (1 + 2 + ... + 64) = 2,032 quadratures a pair.
MOST_PIECES = 4096
NUMERIC_METRIC_MOST_PIECES = 64


class ScalarPrinter(PythonCodePrinter):
    """Python ``math`` code for single floats (the numeric geodesic's right-hand side is called
    thousands of times per pair: ``math`` on floats is many times faster than NumPy on
    0-d arrays). ``polygamma(n, x)`` is SciPy's Hurwitz zeta, ``(-1)**(n+1) n! zeta(n+1, x)``
    for ``n >= 1`` (``psi`` for ``n = 0``). SciPy's functions give NumPy floats: each is
    made a Python float at once, so that the arithmetic after it is Python's (a third of
    the right-hand side's time, in NumPy's scalars)."""

    def __init__(self) -> None:
        super().__init__({"strict": True, "fully_qualified_modules": True})

    def _scipy(self, call: str) -> str:
        return f"float({call})"

    def _print_polygamma(self, expr: sympy.polygamma) -> str:
        order, argument = expr.args
        if not (order.is_Integer and order >= 0):
            raise EmitError(f"cannot emit {expr}: the order must be an integer >= 0")
        if order == 0:
            return self._scipy(f"scipy.special.psi({self._print(argument)})")
        factor = (-1) ** (int(order) + 1) * math.factorial(int(order))
        zeta = self._scipy(f"scipy.special.zeta({int(order) + 1}, {self._print(argument)})")
        return zeta if factor == 1 else f"({factor}*{zeta})"

    def _print_loggamma(self, expr: sympy.loggamma) -> str:
        return f"math.lgamma({self._print(expr.args[0])})"

    def _print_zeta(self, expr: sympy.zeta) -> str:
        return self._scipy(f"scipy.special.zeta({', '.join(self._print(a) for a in expr.args)})")

    def _print_scaled_besseli(self, expr) -> str:
        order, argument = expr.args
        return self._scipy(f"scipy.special.ive({self._print(order)}, {self._print(argument)})")


class ArrayPrinter(NumPyPrinter):
    """NumPy code on arrays of points (the collocation solver evaluates the Christoffel symbols
    at every mesh node at once); ``polygamma`` as in :class:`ScalarPrinter`, through SciPy's
    Hurwitz zeta, which broadcasts."""

    def __init__(self) -> None:
        super().__init__({"strict": True, "fully_qualified_modules": True})

    def _module_format(self, fqn: str, register: bool = True) -> str:
        name = super()._module_format(fqn, register)
        return "np." + name[len("numpy."):] if name.startswith("numpy.") else name

    def _scipy(self, call: str) -> str:
        return call  # SciPy's functions broadcast

    _print_polygamma = ScalarPrinter._print_polygamma
    _print_scaled_besseli = ScalarPrinter._print_scaled_besseli

    def _print_loggamma(self, expr: sympy.loggamma) -> str:
        return f"scipy.special.gammaln({self._print(expr.args[0])})"


def distance_context(derivation, rename: dict, scalars: set, printed) -> dict | None:
    """The ``distance`` entry of the module context (None when the derive stage had none).

    ``printed(exprs, rename, scalars)`` is the backend's CSE-and-print function; ``rename`` maps
    the spec's symbols to their local names in the generated functions.
    """
    distance: RaoDistance | None = derivation.distance
    spec = derivation.spec
    if distance is None:
        return None
    first, second = distance.points
    locals_ = {symbol: sympy.Symbol(_local(symbol.name), **symbol.assumptions0)
               for symbol in (*first, *second)}
    constants = [rename.get(p.symbol, p.symbol).name for p in spec.constants]
    unpack = {
        "first": _unpacking([locals_[s].name for s in first] + constants),
        "second": _unpacking([locals_[s].name for s in second] + ["_" for _ in constants]),
    }
    coordinates = [rename.get(p.symbol, p.symbol).name for p in spec.coordinates]
    unpack["periods"] = _periods(distance, spec)
    if not distance.closed:
        context = {"closed": False, "structure": distance.structure, "reason": distance.reason,
                   **unpack, "tolerance": NUMERIC_TOLERANCE, "k": len(spec.coordinates),
                   "bounds": _bounds(spec)}
        if derivation.numeric_metric:
            # A metric known only numerically (one coordinate): the arc length integrates
            # the module's own quadrature of it, and has no mpmath metric to fall back on.
            return {**context, "exact_arguments": None,
                    "most_pieces": NUMERIC_METRIC_MOST_PIECES}
        return {**context, "most_pieces": MOST_PIECES,
                "field_unpack": _unpacking(_used_or_unused(coordinates, derivation, rename)),
                # Printed for one coordinate too, though its arc length uses none of it: the
                # float printers refuse, in words, a metric without a float implementation
                # (Zipf's derivatives of zeta) before the mpmath printer would.
                **numeric_code(derivation.fisher, derivation.geometry.christoffel, rename),
                **(_exact_metric(derivation, rename) if len(coordinates) == 1 else {})}
    stable, differences = _translation_differences(distance.stable, first, second)
    code, printer = printed([far_apart_forms(stable)], {**rename, **locals_}, scalars)
    differences = [(delta.name, f"{locals_[one].name} - {locals_[two].name}")
                   for delta, one, two in differences]
    one = _one_pair_context(printed, far_apart_forms(stable), {**rename, **locals_}, scalars,
                            differences, spec, locals_, first, second)
    return {
        "closed": True,
        "structure": distance.structure,
        "assignments": differences + code["assignments"],
        "code": code["results"][0],
        "printed": code["printed"],
        "helpers": printer.helpers | (one["helpers"] if one else set()),
        "one": one,
        **unpack,
    }


def _exact_metric(derivation, rename: dict) -> dict:
    """A one-coordinate family's metric in mpmath (``exact_metric``, defined among the module's
    exact functions), and ``exact_arguments``, its arguments with the coordinate as ``_t``: the
    arc length falls back on its quadrature where float nodes cannot resolve the metric."""
    coordinate = derivation.spec.coordinate_symbols[0]
    local = rename.get(coordinate, coordinate)
    function = exact_function("_exact_metric", derivation.fisher[0, 0].xreplace(rename), {local})
    arguments = ["_t" if name == local.name else name
                 for name in function["arguments"].split(", ")]
    return {"exact_metric": function, "exact_arguments": ", ".join(arguments)}


def _one_pair_context(printed, expr, rename, scalars, differences, spec, locals_, first,
                      second) -> dict | None:
    """The closed distance of one pair printed for Python floats (:class:`FloatPrinter`:
    the array code's operations in its order), with the domain checks as comparisons; None
    when some operation has no float form that NumPy computes alike."""
    try:
        code, printer = printed([expr], rename, scalars, printer_class=FloatPrinter)
    except EmitError:
        return None
    conditions = []
    for points in (first, second):
        # A domain that uses earlier coordinates (p2 in (0, 1 - p1)) in this point's locals.
        at_point = {p.symbol: locals_[symbol] for symbol, p in zip(points, spec.coordinates)}
        conditions += [_float_condition(locals_[symbol].name, p.domain,
                                        lambda end, at=at_point: printer.doprint(
                                            end.xreplace(at)))
                       for symbol, p in zip(points, spec.coordinates, strict=True)]
    conditions += [_float_condition(rename.get(p.symbol, p.symbol).name, p.domain)
                   for p in spec.constants]
    return {
        "first": _unpacking([locals_[s].name for s in first]),
        "second": _unpacking([locals_[s].name for s in second]),
        "condition": " and ".join(conditions),
        "assignments": differences + code["assignments"],
        "code": code["results"][0],
        "helpers": printer.helpers,
    }


def _float_condition(name: str, domain, printed=None) -> str:
    """Whether the Python float ``name`` lies in the domain, as comparisons (nan fails them;
    infinite ends are open); an end in earlier coordinates is ``printed(end)``."""
    def end_code(end, infinity: str) -> str:
        if end.free_symbols:
            return f"({printed(end)})"
        return repr(float(end)) if end.is_finite else infinity

    lower, upper = end_code(domain.lower, "-math.inf"), end_code(domain.upper, "math.inf")
    left = "<=" if not domain.lower_open and domain.lower.is_finite is not False else "<"
    right = "<=" if not domain.upper_open and domain.upper.is_finite is not False else "<"
    condition = f"{lower} {left} {name} {right} {upper}"
    return f"({condition} and {name} == math.floor({name}))" if domain.integer else condition


def _periods(distance: RaoDistance, spec) -> list[tuple[int, str, str, str]]:
    """``(index, the period in three parts as a tuple literal, the period as mpmath code, name)``
    of each periodic coordinate (see :func:`period_parts`)."""
    index = {p.symbol: i for i, p in enumerate(spec.coordinates)}
    return [(index[c], repr(period_parts(period)), ExactPrinter().doprint(period), c.name)
            for c, period in distance.periods]


def period_parts(period: sympy.Expr) -> tuple[float, float, float]:
    """Three floats adding up to ``period`` to about 3 * 53 bits, the first two with 26
    significant bits (Cody and Waite): ``n * part`` is then exact in floats for ``|n| < 2**27``,
    and ``x - n * period`` taken part by part keeps the digits of a small result."""
    with mpmath.workdps(80):
        rest = mpmath.mpf(sympy.N(period, 80))
        parts = []
        for bits in (26, 26):
            mantissa, exponent = math.frexp(float(rest))
            part = math.ldexp(math.floor(mantissa * 2**bits), exponent - bits)
            parts.append(part)
            rest -= part
        parts.append(float(rest))
    return tuple(parts)


def _translation_differences(stable, first, second):
    """The distance with each coordinate that enters only as a difference ``mu_1 - mu_2``
    written through a symbol ``_delta_mu``, computed first: printed inside a longer sum,
    ``(g - 1)*(s_1 - s_2) + mu_1 - mu_2`` is evaluated from the left and loses the digits of
    the small term to ``mu_1`` (a sheared half-plane at nearby points, Gumbel's)."""
    differences = []
    for one, two in zip(first, second):
        delta = sympy.Symbol(f"_delta_{_local(one.name[:-2])}", real=True)
        candidate = stable.subs(one, delta + two)
        if not candidate.has(two) and candidate.has(delta):
            stable = candidate
            differences.append((delta, one, two))
    return stable, differences


def _local(name: str) -> str:
    return name if name.isidentifier() else "_" + "".join(c if c.isalnum() else "_" for c in name)


def _used_or_unused(coordinates: list[str], derivation, rename: dict) -> list[str]:
    """The coordinates' local names for the geodesic's right-hand side, with ``_unused_``
    before those the metric does not depend on (von Mises' mean direction): an unpacked name
    never read is a lint error in the generated module."""
    metric = derivation.fisher.xreplace(rename)
    used = {symbol.name for symbol in metric.free_symbols}
    return [name if name in used else f"_unused_{name}" for name in coordinates]


def _unpacking(names: list[str]) -> str:
    """``mu_1, sigma_1, nu`` or ``(lam_1,)``: the target of an assignment from _point (the
    constants, checked, are taken from the first point's call; the second's are ``_``)."""
    return ", ".join(names) if len(names) > 1 else f"({names[0]},)"


def numeric_code(fisher: sympy.Matrix, christoffel, rename: dict) -> dict:
    """``metric``: the flat row-major entries of g, ``christoffel``: Γ^k_ij for k, i <= j, each
    printed by :class:`ScalarPrinter` after common subexpressions are shared; ``array_*``: the
    same printed by :class:`ArrayPrinter`."""
    n = fisher.rows
    exprs = [fisher[i, j] for i in range(n) for j in range(n)]
    indices = [(k, i, j) for k in range(n) for i in range(n) for j in range(i, n)]
    exprs += [christoffel[k][i][j] for k, i, j in indices]
    # Bessel functions scaled (I_0 overflows beyond 709; the metric holds their ratios).
    exprs = [scaled_bessel(sympy.sympify(e)).xreplace(rename) for e in exprs]
    replacements, reduced = sympy.cse(exprs, symbols=sympy.numbered_symbols("_c"),
                                      order="canonical")
    printer, array_printer = ScalarPrinter(), ArrayPrinter()
    assignments = [(str(symbol), printer.doprint(value)) for symbol, value in replacements]
    results = [printer.doprint(e) for e in reduced]
    return {
        "christoffel_index": repr(tuple(indices)),
        "assignments": assignments,
        "metric": results[: n * n],
        "christoffel": [{"k": k, "i": i, "j": j, "code": code}
                        for (k, i, j), code in zip(indices, results[n * n:], strict=True)],
        "array_assignments": [(str(symbol), array_printer.doprint(value))
                              for symbol, value in replacements],
        "array_christoffel": [array_printer.doprint(e) for e in reduced[n * n:]],
        "contraction": _contraction_code(n, indices),
    }


def _contraction_code(n: int, indices: list[tuple[int, int, int]]) -> dict:
    """The names and the written-out sums of the geodesic equation's right-hand side
    (``_geodesic_equations``): the acceleration -Γ^k_ij v^i v^j of each coordinate k, with the
    symbols ``_gkij`` for i <= j (an off-diagonal one twice)."""
    def name(k: int, i: int, j: int) -> str:
        return f"_g{k}{i}{j}" if n <= 10 else f"_g{k}_{i}_{j}"

    def term(k: int, i: int, j: int) -> str:
        return f"{'' if i == j else '2.0*'}{name(k, i, j)}*_v{i}*_v{j}"

    return {
        "starts": ", ".join(f"_s{i}" for i in range(n)),
        "state": ", ".join([f"_y{i}" for i in range(n)] + [f"_v{i}" for i in range(n)]),
        "bounds": ", ".join(f"(_lower{i}, _upper{i})" for i in range(n)),
        "position": ", ".join(f"_x{i}" for i in range(n)),
        "moved": ", ".join(f"_s{i} + _y{i}" for i in range(n)),
        "inside": " and ".join(f"_lower{i} < _x{i} < _upper{i}" for i in range(n)),
        "symbols": ", ".join(name(*index) for index in indices),
        "velocities": ", ".join(f"_v{i}" for i in range(n)),
        "accelerations": ", ".join(
            "-(" + " + ".join(term(*index) for index in indices if index[0] == k) + ")"
            for k in range(n)),
    }


def distance_docstring(verified) -> str:
    """The docstring of the generated ``rao_distance``: formulas, accuracy, errors."""
    # Imported here: the backend's package imports this module.
    from raosym.emit.python import _constant_lines, _docstring, _formula, _raises, _wrapped

    derivation = verified.derivation
    spec, distance = derivation.spec, derivation.distance
    k = len(spec.coordinates)
    names = ", ".join(p.name for p in spec.coordinates)
    lines = [
        "Fisher-Rao distance between the points theta1 and theta2, an array of shape (...).",
        "",
        *textwrap.wrap(f"theta1 and theta2 hold ({names}): sequences, or arrays of shape "
                       f"(..., {k}) that broadcast together.", WIDTH - 4),
    ]
    lines += _constant_lines(spec)
    lines += [""]
    for c, period in distance.periods:
        lines += textwrap.wrap(
            f"{c.name} is periodic with period {_formula(period)}: points whose {c.name} differ "
            f"by a multiple of it are one distribution, and the distance is taken between the "
            f"representatives whose {c.name} differ by at most half a period.", WIDTH - 4) + [""]
    if distance.closed:
        lines += [f"Structure of the metric: {distance.structure} (proof in latex/{spec.name}.tex)."]
        lines += _wrapped(f"d = {_formula(distance.textbook)}")
        lines += ["computed as the equal cancellation-free form"]
        lines += _wrapped(f"d = {_formula(distance.stable)}")
        lines += [
            "(_1 and _2 name the coordinates of theta1 and theta2). Accurate to a few units in",
            "the last place for nearby, far apart and translated points alike; d(p, p) == 0.",
        ]
    else:
        reason = distance.reason or ""
        if not reason.lower().startswith("no closed form"):
            reason = f"No closed form: {reason}"
        lines += textwrap.wrap(reason[0].upper() + reason[1:], WIDTH - 4)
        lines += [""] + (_arc_length_lines(derivation.numeric_metric) if k == 1
                         else _geodesic_lines())
    lines += ["", _raises()]
    return _docstring(lines)


def _arc_length_lines(numeric_metric: bool) -> list[str]:
    """How a one-coordinate family's distance is computed (arc_length.py.j2)."""
    metric = ("sqrt(fisher_information) (this module's quadrature of the metric, so each "
              "node costs a quadrature: a pair takes at least 112 of them)"
              if numeric_metric else
              "sqrt(fisher_information) (the cancellation-free metric of this module)")
    fallback = (f"A length that does not settle with {NUMERIC_METRIC_MOST_PIECES} pieces "
                "raises GeodesicError (the metric has no mpmath form here to fall back on)."
                if numeric_metric else
                f"A length that does not settle with {MOST_PIECES} pieces (float nodes next to "
                "a finite "
                "end of the domain cannot resolve the metric) is computed by mpmath quadrature "
                "of the metric at 30 digits instead.")
    return textwrap.wrap(
        "On a line the geodesic is the segment, so d = |integral of sqrt(g) from theta1 to "
        f"theta2|, computed by composite 16-node Gauss-Legendre quadrature of {metric}, the "
        "pieces doubled until two estimates agree to a tenth of the relative tolerance "
        f"{NUMERIC_TOLERANCE:g}; points far apart relative to the domain's ends are joined in "
        "coordinates where the open domain is the real line (log(theta - lower) and the like). "
        f"{fallback} Vectorized over pairs; d(p, p) == 0.", WIDTH - 4) + [
        "", "Raises GeodesicError where the metric cannot be evaluated between the points",
        "(never a silent number), with the other distances in its .distances (nan where a",
        "pair failed) and the failed indices in its .failures."]


def _geodesic_lines() -> list[str]:
    """How the distance of a family of two or more coordinates is computed (distance.py.j2)."""
    return textwrap.wrap(
        "Computed numerically, pair by pair: the geodesic boundary-value problem is solved "
        "by collocation (SciPy solve_bvp, from the straight line, in coordinates where each "
        "open domain is the real line: log(theta_i - lower) and the like), and the initial "
        "velocity it finds is polished by shooting (SciPy odeint, LSODA at rtol 1e-13, "
        "on the displacement from theta1) with damped Newton steps. The path is certified: "
        "it must end at theta2 and keep a constant speed to 1e-11 of its length, which is "
        "the distance (16-node Gauss-Legendre quadrature of the speed). Points closer than "
        "1e-7 (relative) take the midpoint metric, exact to O(separation**2). Relative "
        f"tolerance: {NUMERIC_TOLERANCE:g}. Costs about 0.01 to 0.1 s per pair (see "
        "benchmarks/rao_distance.py).", WIDTH - 4) + [
        "", "Raises GeodesicError when a solve does not converge or fails its",
        "certificate (never a silent number); for a batch, only after every pair",
        "was tried, with the others' distances in its .distances (nan where a pair",
        "failed) and the failed indices in its .failures."]


def _bounds(spec) -> str:
    """``((lower, upper), ...)`` of the coordinates as float literals (infinite ends open)."""
    def end(value, infinite):
        return repr(float(value)) if value.is_finite else infinite

    return "(" + ", ".join(f"({end(p.domain.lower, '-math.inf')}, {end(p.domain.upper, 'math.inf')})"
                           for p in spec.coordinates) + ("," if len(spec.coordinates) == 1 else "") + ")"
