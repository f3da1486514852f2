"""SymPy expressions as mpmath functions, for the verify stage.

SymPy 1.14's ``MpmathPrinter`` cannot print ``polygamma``/``digamma``/``zeta`` and prints
``binomial`` through gamma functions (poles at integers). This subclass overrides only those
heads and prints with ``strict=True``, so anything it cannot print is an error, never a comment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mpmath
import sympy
from sympy.printing.pycode import MpmathPrinter


class VerificationPrinter(MpmathPrinter):
    """``MpmathPrinter`` with the special functions raosym's families need."""

    def _print_polygamma(self, expr):
        order, argument = expr.args
        return f"mpmath.polygamma({self._print(order)}, {self._print(argument)})"

    def _print_zeta(self, expr):
        return f"mpmath.zeta({', '.join(map(self._print, expr.args))})"

    def _print_binomial(self, expr):
        return f"mpmath.binomial({self._print(expr.args[0])}, {self._print(expr.args[1])})"


def mpmath_function(expr: sympy.Expr, symbols: Sequence[sympy.Symbol]) -> Callable:
    """A function of ``symbols`` (positional) evaluating ``expr`` at mpmath's working precision."""
    printer = VerificationPrinter({"fully_qualified_modules": True, "strict": True})
    return sympy.lambdify(list(symbols), expr, modules=[{"mpmath": mpmath}, "mpmath"], printer=printer)


def evaluate(expr: sympy.Expr, point: dict[sympy.Symbol, mpmath.mpf]) -> mpmath.mpf:
    """``expr`` at ``point`` (every free symbol must have a value)."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    return mpmath_function(expr, symbols)(*(point[s] for s in symbols))
