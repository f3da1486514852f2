"""SymPy expressions as mpmath functions, for the verify stage.

SymPy 1.14's ``MpmathPrinter`` cannot print ``polygamma``/``digamma``/``zeta`` and prints
``binomial`` through gamma functions (poles at integers). This subclass overrides only those
heads and prints with ``strict=True``, so anything it cannot print is an error, never a comment.
"""

from __future__ import annotations

import functools
import math

from collections.abc import Callable, Sequence

import mpmath
import sympy
from sympy.printing.pycode import MpmathPrinter

from raosym.functions import with_complementary_erf
from raosym.spec.names import hidden_arguments


class VerificationPrinter(MpmathPrinter):
    """``MpmathPrinter`` with the special functions raosym's families need."""

    def _print_polygamma(self, expr):
        order, argument = expr.args
        return f"mpmath.polygamma({self._print(order)}, {self._print(argument)})"

    def _print_zeta(self, expr):
        return f"mpmath.zeta({', '.join(map(self._print, expr.args))})"

    def _print_binomial(self, expr):
        return f"mpmath.binomial({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_Derivative(self, expr):
        """``Derivative(zeta(s), s)`` (a Zipf score), which SymPy leaves unevaluated, by
        ``mpmath.diff`` (differences at raised precision, to the working precision)."""
        if len(expr.variable_count) != 1:
            raise sympy.printing.codeprinter.PrintMethodNotImplementedError(
                f"a mixed derivative {expr} cannot be evaluated")
        ((variable, order),) = expr.variable_count
        dummy = sympy.Dummy("h")
        function = self._print(expr.expr.xreplace({variable: dummy}))
        return (f"mpmath.diff(lambda {self._print(dummy)}: {function}, {self._print(variable)}, "
                f"{int(order)})")


#: Beyond this argument, exp is taken as 0 or inf: mpmath would otherwise spend minutes on
#: exp(exp(1e8)) (a Gumbel density far in its left tail), whose argument has 4e7 digits. Up to
#: 1e30 exp is exact and quick (0.2 ms), and needed: a Borel pmf at k = 1e8 is
#: exp(-0.999e8) (0.999e8)^(1e8 - 1)/(1e8)!, 7e-35 of a mass spread out to there.
_EXP_ARGUMENT_LIMIT = 10**30


def _bounded_exp(argument):
    if isinstance(argument, mpmath.mpf):
        if argument > _EXP_ARGUMENT_LIMIT:
            return mpmath.inf
        if argument < -_EXP_ARGUMENT_LIMIT:
            return mpmath.mpf(0)
    return mpmath.exp(argument)


class _MpmathNamespace:
    """mpmath as seen by generated verification code: ``exp`` bounded, the rest unchanged."""

    exp = staticmethod(_bounded_exp)

    def __getattr__(self, name):
        return getattr(mpmath, name)


def mpmath_function(expr: sympy.Expr, symbols: Sequence[sympy.Symbol], *,
                    cse: bool = False) -> Callable:
    """A function of ``symbols`` (positional) evaluating ``expr`` at mpmath's working precision.

    ``cse`` evaluates common subexpressions once (worth it for lists of expressions that share
    costly special functions, such as Christoffel symbols with polygamma). Made once per
    expression: :func:`evaluate` is called for the same forms at hundreds of points (a
    conversion's search over the order), and printing the code costs a hundred evaluations."""
    return _lambdified(_frozen(expr), tuple(symbols), cse)


def _frozen(expr):
    """Lists of expressions (a Hessian's rows) as tuples, hashable; :func:`_thawed` undoes it."""
    return tuple(map(_frozen, expr)) if isinstance(expr, list) else expr


def _thawed(expr):
    return list(map(_thawed, expr)) if isinstance(expr, tuple) else expr


@functools.lru_cache(maxsize=1024)
def _lambdified(expr: sympy.Expr, symbols: tuple, cse: bool) -> Callable:
    printer = VerificationPrinter({"fully_qualified_modules": True, "strict": True})
    namespace = {"mpmath": _MpmathNamespace()}
    # Lists of expressions, kept as (hashable) tuples, give lists as lambdify's did.
    expr = with_complementary_erf(_thawed(expr))
    symbols, expr = hidden_arguments(symbols, expr)
    return sympy.lambdify(symbols, expr, modules=[namespace, "mpmath"], printer=printer,
                          cse=cse and not _has_derivative(expr))


def _has_derivative(expr) -> bool:
    """Whether an expression (or a nested list of them) holds an unevaluated derivative, such as
    the zeta family's zeta'(s): SymPy's cse would name zeta(s) and differentiate the name,
    giving 0."""
    if isinstance(expr, (list, tuple)):
        return any(map(_has_derivative, expr))
    return isinstance(expr, sympy.Basic) and expr.has(sympy.Derivative)


def float_function(expr: sympy.Expr, symbols: Sequence[sympy.Symbol], *,
                   cse: bool = False) -> Callable:
    """The same in double precision (mpmath's ``fp`` context): for quick first guesses that a
    high-precision computation then refines, never for a checked value."""
    printer = VerificationPrinter({"fully_qualified_modules": True, "strict": True})
    symbols, expr = hidden_arguments(symbols, expr)
    return sympy.lambdify(symbols, expr, modules=[{"mpmath": _FloatNamespace()}],
                          printer=printer, cse=cse and not _has_derivative(expr))


class _FloatNamespace:
    """mpmath's ``fp`` context, with SciPy's compiled special functions where ``fp`` would
    sum hypergeometric series in Python (its besseli made a von Mises geodesic first guess
    take three minutes)."""

    def besseli(self, order, argument):
        import scipy.special

        return float(scipy.special.iv(order, argument))

    def polygamma(self, order, argument):
        """SciPy's compiled digamma and Hurwitz zeta (``psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x)``,
        as ``scipy.special.polygamma`` computes it, without its array wrapper): ``fp.polygamma``
        goes through mpmath's zeta in Python, and the Christoffel symbols of a polygamma
        metric (Kumaraswamy, exponentiated exponential), evaluated at every step of the
        double-precision shooting, were a third of those families' verification time.

        Only for a positive real argument, where the two agree to rounding. Elsewhere ``fp``
        as before: SciPy's zeta(s, q) for q < 0 is real and wrong by orders of magnitude
        (``fp`` gives a complex value there, which ends a trajectory that strayed outside a
        shape's domain; with SciPy's values the Gamma family's shooting ran for minutes)."""
        import scipy.special

        if isinstance(argument, float) and argument > 0:
            order = int(order)
            if order == 0:
                value = float(scipy.special.psi(argument))
            else:
                value = ((-1) ** (order + 1) * math.factorial(order)
                         * float(scipy.special.zeta(order + 1, argument)))
            if math.isfinite(value):
                return value
        return mpmath.fp.polygamma(order, argument)

    def __getattr__(self, name):
        # Kept on the instance: the generated code looks a name up at every call.
        value = getattr(mpmath.fp, name)
        setattr(self, name, value)
        return value


def evaluate(expr: sympy.Expr, point: dict[sympy.Symbol, mpmath.mpf]) -> mpmath.mpf:
    """``expr`` at ``point`` (every free symbol must have a value)."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    return mpmath_function(expr, symbols)(*(point[s] for s in symbols))


#: The most digits :func:`evaluate_to_precision` works with.
MAX_DIGITS = 1280


def evaluate_to_precision(expr: sympy.Expr, point: dict[sympy.Symbol, mpmath.mpf]) -> mpmath.mpf:
    """``expr`` at ``point`` to the working precision's digits, however much its form cancels:
    evaluated at twice the digits, and twice again, until two values agree (the point's
    values are exact binary numbers, the same at any precision). The cardioid's curvature, a
    form of 993 operations whose terms cancel, has no correct digit at 40 digits and all of
    them at 80. Raises ArithmeticError when even MAX_DIGITS do not settle it."""
    target = mpmath.mp.dps
    digits = target
    with mpmath.workdps(digits):
        value = evaluate(expr, point)
    while digits < MAX_DIGITS:
        digits *= 2
        with mpmath.workdps(digits):
            finer = evaluate(expr, point)
            # Two zeros settle nothing: a form can cancel to 0 at 40 and at 80 digits alike.
            if finer != 0 and abs(finer - value) <= abs(finer) * mpmath.mpf(10) ** (3 - target):
                return +finer
            value = finer
    if value == 0:
        return value  # zero at every precision up to MAX_DIGITS (a flat metric's K)
    raise ArithmeticError(f"the derived form does not settle at {MAX_DIGITS} digits here")
