"""The SymPy printer of the Python backend, and the stable forms it prints.

Emit stage, Python backend. :class:`ModulePrinter` is SymPy's ``NumPyPrinter`` printing with
``strict=True`` (an unsupported function is an error, never a comment in the output); it
overrides only what NumPy lacks:

- ``polygamma(n, x)``: NumPy and SymPy 1.14's Python printers have none; printed as
  ``_polygamma(n, x)``, a vectorized helper the template adds to the module;
- ``gamma``/``loggamma``: NumPyPrinter prints the scalar ``math.gamma``. Applied to constants
  (plain floats in generated modules) that is right and stays so; applied to anything that
  depends on a coordinate it is printed as the vectorized helper ``_gamma``/``_loggamma``;
- :class:`polygamma_difference`, the cancellation-free form chosen by :func:`stable_forms`;
- :class:`scaled_besseli`: modified Bessel functions as SciPy's exponentially scaled ``ive``
  (NumPy has only ``i0``), the exponentials combined symbolically first.

The printer records the helpers it used, so a module only carries the helpers it needs.
"""

from __future__ import annotations

import sympy
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.precedence import PRECEDENCE

from raosym.errors import EmitError


class polygamma_difference(sympy.Function):
    """``polygamma(n, x) - polygamma(n, x + y)`` for ``n >= 1``, ``x > 0``, ``y > 0``.

    Never evaluated symbolically: it only tells the printer to compute the difference as one
    sum of positive terms (``_polygamma_difference``) instead of subtracting two nearly equal
    numbers, which loses every digit when ``y`` is small compared with ``x``.
    """

    nargs = 3


def _difference_pair(first: sympy.Expr, second: sympy.Expr) -> sympy.Expr | None:
    """``c*polygamma(n, A) - c*polygamma(n, A + y)`` with provably positive ``y``, as a
    :class:`polygamma_difference`, else None."""
    coefficient, function = first.as_coeff_Mul()
    other_coefficient, other = second.as_coeff_Mul()
    if not (isinstance(function, sympy.polygamma) and isinstance(other, sympy.polygamma)):
        return None
    order, argument = function.args
    if other.args[0] != order or other_coefficient != -coefficient or not order.is_Integer:
        return None
    if order < 1 or argument.is_positive is not True:
        return None
    shift = sympy.expand(other.args[1] - argument)
    if shift.is_positive is not True:
        return None
    return coefficient * polygamma_difference(order, argument, shift)


def _pair_differences(add: sympy.Add) -> sympy.Expr:
    terms = list(sympy.Add.make_args(add))
    paired = True
    while paired:
        paired = False
        for i, first in enumerate(terms):
            for j, second in enumerate(terms):
                pair = _difference_pair(first, second) if i != j else None
                if pair is not None:
                    terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [pair]
                    paired = True
                    break
            if paired:
                break
    return sympy.Add(*terms)


#: Functions whose argument is put over one denominator (see :func:`stable_forms`).
SPECIAL_FUNCTIONS = (sympy.gamma, sympy.loggamma, sympy.polygamma)


def _argument_together(function: sympy.Function) -> sympy.Function:
    *head, argument = function.args
    return function.func(*head, sympy.together(argument))


class scaled_besseli(sympy.Function):
    """``exp(-|z|) I_n(z)``, SciPy's ``ive``: finite where ``I_n(z)`` itself overflows."""

    nargs = 2


def _scaled_bessel(expr: sympy.Expr) -> sympy.Expr:
    """``I_n(z) = exp(z) ive(n, z)`` for positive ``z``, with the exponentials combined, so that
    a ratio such as ``I_1(kappa)/I_0(kappa)`` is computed as ``ive(1)/ive(0)`` and stays
    finite beyond kappa = 709, where ``I_0`` overflows."""
    functions = [f for f in expr.atoms(sympy.besseli) if f.args[1].is_positive]
    if not functions:
        return expr
    scaled = expr.xreplace({f: sympy.exp(f.args[1]) * scaled_besseli(*f.args) for f in functions})
    combined = sympy.powsimp(sympy.cancel(sympy.together(scaled)))
    # The overall power of exp(z) cancels in a ratio of products of the same degree.
    return combined if sympy.count_ops(combined) <= 3 * sympy.count_ops(scaled) else scaled


def stable_forms(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` rewritten into forms that keep their digits in floating point.

    - ``polygamma(n, x) - polygamma(n, x + y)`` becomes :class:`polygamma_difference`;
    - the argument of ``gamma``, ``loggamma`` and ``polygamma`` is put over one denominator:
      ``gamma(2 - 1/N)`` becomes ``gamma((2*N - 1)/N)``, which near its pole ``N = 1/2``
      keeps every digit (``2*N - 1`` is exact there) where ``2 - 1/N`` loses them all.

    The value is unchanged (each rewrite is an identity); only the way the module computes it.
    """
    expr = _scaled_bessel(expr)
    expr = expr.replace(lambda e: isinstance(e, SPECIAL_FUNCTIONS), _argument_together)
    return expr.replace(lambda e: isinstance(e, sympy.Add), _pair_differences)


def check_printable(expr: sympy.Expr) -> None:
    """Refuse what the helpers cannot evaluate, before CSE hides the assumptions.

    ``_polygamma`` and ``_polygamma_difference`` implement positive arguments only (the
    reflection formula is not implemented), so their arguments must be provably positive.
    """
    for function in expr.atoms(sympy.polygamma):
        order, argument = function.args
        if not (order.is_Integer and order >= 0):
            raise EmitError(f"cannot emit {function}: the order must be an integer >= 0")
        if argument.is_positive is not True:
            raise EmitError(f"cannot emit {function}: its argument is not provably positive, "
                            "and the generated polygamma helper implements x > 0 only")


class ModulePrinter(NumPyPrinter):
    """``NumPyPrinter`` writing ``np.`` for NumPy and helpers for what NumPy lacks."""

    def __init__(self, scalars: set[sympy.Symbol]) -> None:
        super().__init__({"strict": True, "fully_qualified_modules": True})
        #: Symbols that are plain floats in the generated function (constants, and CSE
        #: subexpressions of constants only): ``math`` functions apply to them directly.
        self.scalars = set(scalars)
        #: Names of the module helpers printed so far (``"polygamma"``, ``"gamma"``, ...).
        self.helpers: set[str] = set()

    def _module_format(self, fqn: str, register: bool = True) -> str:
        name = super()._module_format(fqn, register)
        return "np." + name[len("numpy."):] if name.startswith("numpy.") else name

    def _on_scalars(self, expr: sympy.Expr) -> bool:
        return expr.free_symbols <= self.scalars

    def _helper(self, name: str, *args) -> str:
        self.helpers.add(name)
        return f"_{name}({', '.join(self._print(arg) for arg in args)})"

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # x**-2 as 1/x**2: NumPy squares and divides fast, while its pow() with the exponent
        # -2.0 that NumPyPrinter writes is several times slower. Arrays here are always float.
        if expr.exp.is_Integer and expr.exp.is_negative:
            power = -expr.exp
            positive = expr.base if power == 1 else sympy.Pow(expr.base, power, evaluate=False)
            return f"1/{self.parenthesize(positive, PRECEDENCE['Mul'])}"
        return super()._print_Pow(expr, rational=rational)

    def _print_polygamma(self, expr: sympy.polygamma) -> str:
        return self._helper("polygamma", *expr.args)

    def _print_polygamma_difference(self, expr: polygamma_difference) -> str:
        self.helpers.add("polygamma")  # the difference helper shares the series coefficients
        return self._helper("polygamma_difference", *expr.args)

    def _print_scaled_besseli(self, expr: scaled_besseli) -> str:
        self.helpers.add("scipy.special")  # the module imports scipy.special for it
        return f"scipy.special.ive({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_gamma(self, expr: sympy.gamma) -> str:
        if self._on_scalars(expr):
            return f"math.gamma({self._print(expr.args[0])})"
        return self._helper("gamma", *expr.args)

    def _print_loggamma(self, expr: sympy.loggamma) -> str:
        if self._on_scalars(expr):
            return f"math.lgamma({self._print(expr.args[0])})"
        return self._helper("loggamma", *expr.args)

    # Min and Max of arrays that broadcast: nested np.minimum/np.maximum (NumPyPrinter's
    # np.amin of a tuple needs equal shapes).
    def _print_Min(self, expr: sympy.Min) -> str:
        return self._nested("np.minimum", expr.args)

    def _print_Max(self, expr: sympy.Max) -> str:
        return self._nested("np.maximum", expr.args)

    def _nested(self, function: str, args) -> str:
        code = self._print(args[0])
        for arg in args[1:]:
            code = f"{function}({code}, {self._print(arg)})"
        return code
