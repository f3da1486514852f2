"""Exact recomputation where a closed form cancels in floating point.

Emit stage, Python backend, used when the Fisher matrix and the Gaussian curvature are printed
(:func:`raosym.emit.python._printed`). Some closed forms have no cancellation-free float form
that :func:`~raosym.emit.python.printer.stable_forms` knows: the von Mises
``g_kk = 1 - A/k - A**2`` with ``A = I1(k)/I0(k) -> 1`` (a value near ``1/(2 k**2)`` left by
terms of size 1), the Student-t ``g_nu_nu`` (a trigamma difference minus a rational function,
both near ``1/nu**2``, differing by far less). No float formula of those terms keeps its digits,
so the module measures the loss instead of guessing it:

- for each factor of the printed expression that is a sum of terms of both signs depending on
  a coordinate through a function (:func:`cancelling_sums`), the module computes the sum of
  the absolute values of its terms next to the sum itself;
- where the first exceeds ``_CANCELLATION`` times the second (the float value has lost more
  than a digit), or the value is not finite, the module recomputes it with mpmath from the
  verified symbolic expression, doubling the precision until two successive results agree to
  2**-64 relative (the helper ``_recompute_where`` in ``helpers.py.j2``; mpmath is imported
  there, only when a point needs it).

Everywhere else the float formula is kept, at NumPy speed. The emitted-code gate
(:mod:`raosym.gate.emitted`) checks both paths against mpmath like any other function.
"""

from __future__ import annotations

import sympy
from sympy.printing.pycode import MpmathPrinter

from raosym.emit.python.printer import log1p_forms
from raosym.errors import EmitError


def cancelling_sums(expr: sympy.Expr, coordinates: set[sympy.Symbol]) -> list[sympy.Add]:
    """The factors of ``expr`` (numerator and denominator) that are sums whose terms can
    cancel: terms of both signs, depending on a coordinate through a function. A sum of
    rational terms is left alone: its cancellations are those SymPy's factoring removes, and
    the gate measures what remains."""
    numerator, denominator = sympy.fraction(expr)
    sums = []
    for part in (numerator, denominator):
        for factor in sympy.Mul.make_args(part):
            base = factor.base if factor.is_Pow and factor.exp.is_Integer else factor
            if isinstance(base, sympy.Add) and _can_cancel(base, coordinates) \
                    and base not in sums:
                sums.append(base)
    return sums


def _can_cancel(total: sympy.Add, coordinates: set[sympy.Symbol]) -> bool:
    """Terms of both signs, or one of a sign SymPy cannot tell (``log(1 - p)``, negative on
    the whole domain though written without a minus, cancels the ``p`` beside it)."""
    signs = {_sign(term) for term in sympy.Add.make_args(total)}
    return (len(signs) == 2 or None in signs) and needs_guard(total, coordinates)


def _sign(term: sympy.Expr) -> int | None:
    if term.is_nonnegative:
        return 1
    if term.is_nonpositive:
        return -1
    if term.has(sympy.Function):
        return None  # a function of unknown sign, however the term is written
    return -1 if term.could_extract_minus_sign() else 1


def absolute_size(total: sympy.Add) -> sympy.Expr:
    """The sum of the absolute values of the terms of ``total``."""
    return sympy.Add(*(sympy.Abs(term) for term in sympy.Add.make_args(total)))


class ExactPrinter(MpmathPrinter):
    """SymPy's ``MpmathPrinter`` (strict: an unsupported function is an error), with the
    functions it lacks that raosym's closed forms use."""

    def __init__(self) -> None:
        super().__init__({"strict": True, "fully_qualified_modules": True})

    def _print_polygamma(self, expr: sympy.polygamma) -> str:
        order, argument = expr.args
        return f"mpmath.polygamma({self._print(order)}, {self._print(argument)})"

    def _print_zeta(self, expr: sympy.zeta) -> str:
        return f"mpmath.zeta({', '.join(self._print(arg) for arg in expr.args)})"

    def _print_Catalan(self, expr) -> str:
        return "mpmath.catalan"


def needs_guard(expr: sympy.Expr, coordinates: set[sympy.Symbol]) -> bool:
    """Whether the float value of ``expr`` is checked at run time: it depends on a coordinate
    through a function (SciPy's ``ive`` returns nan beyond 1e9, a cancelling sum loses its
    digits); a rational function of the coordinates is left to the gate."""
    return any(function.free_symbols & coordinates for function in expr.atoms(sympy.Function))


def exact_function(name: str, expr: sympy.Expr, coordinates: set[sympy.Symbol]) -> dict:
    """The definition of ``name(arguments)`` (arguments: the free symbols of ``expr``, in name
    order), returning ``expr`` in mpmath and, for each of its sums that can cancel, the pair
    (sum of the absolute values of its terms, sum): ``_exact_value`` raises the precision
    until every sum keeps enough digits. Subexpressions are shared (``_e0 = ...``)."""
    # log(1 + u) at p = 1e-300 would need 300 digits of u beyond the 1.
    expr = log1p_forms(expr)
    sums = cancelling_sums(expr, coordinates)
    watched = [quantity for total in sums for quantity in (absolute_size(total), total)]
    replacements, reduced = sympy.cse([expr, *watched], symbols=sympy.numbered_symbols("_e"),
                                      order="canonical")
    printer = ExactPrinter()
    try:
        assignments = [(str(symbol), printer.doprint(value)) for symbol, value in replacements]
        printed = [printer.doprint(quantity) for quantity in reduced]
    except Exception as error:  # SymPy's printers raise a bare PrintMethodNotImplementedError
        raise EmitError(f"cannot print {name} for mpmath: {error}") from error
    pairs = "".join(f"({size}, {total}), " for size, total in zip(printed[1::2], printed[2::2],
                                                                   strict=True))
    arguments = sorted(expr.free_symbols, key=lambda symbol: symbol.name)
    code = f"{printed[0]}, ({pairs})"
    return {"name": name, "arguments": ", ".join(symbol.name for symbol in arguments),
            "assignments": assignments, "code": code,
            # A rational function of the arguments needs no mpmath function (ruff's F401).
            "uses_mpmath": "mpmath." in code + " ".join(text for _, text in assignments)}
