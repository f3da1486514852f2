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
  (NumPy has only ``i0``), the exponentials combined symbolically first, through the helper
  ``_ive`` (SciPy's ``ive(1, x)`` is 35 ulp off at x = 1e-300: the helper sums the power
  series below x = 1e-3).

The printer records the helpers it used, so a module only carries the helpers it needs.
"""

from __future__ import annotations

import re
from contextvars import ContextVar

import sympy
from sympy.codegen.cfunctions import log1p
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.precedence import PRECEDENCE

from raosym.errors import EmitError
from raosym.functions import log1pmx


class polygamma_difference(sympy.Function):
    """``polygamma(n, x) - polygamma(n, x + y)`` for ``n >= 0``, ``x > 0``, ``y >= 0``.

    Never evaluated symbolically: it only tells the printer to compute the difference as one
    sum of positive terms (``_polygamma_difference``) instead of subtracting two nearly equal
    numbers, which loses every digit when ``y`` is small compared with ``x``.
    """

    nargs = 3


class loggamma_difference(sympy.Function):
    """``loggamma(x + y) - loggamma(x)`` for ``x > 0``, ``x + y > 0``, printed as the helper
    ``_loggamma_difference`` (no subtraction of the two log-Gammas). Never evaluated."""

    nargs = 2


class loggamma_second_difference(sympy.Function):
    """``[loggamma(v + c) - loggamma(v)] - [loggamma(v0 + c) - loggamma(v0)]``, printed as the
    helper ``_loggamma_second_difference``. Never evaluated."""

    nargs = 3


def _difference_pair(first: sympy.Expr, second: sympy.Expr) -> tuple | None:
    """``c*polygamma(n, A) - c*polygamma(n, A + y)`` with provably positive ``y``: the
    :class:`polygamma_difference` and its shift ``y``, else None."""
    coefficient, function = first.as_coeff_Mul()
    other_coefficient, other = second.as_coeff_Mul()
    if not (isinstance(function, sympy.polygamma) and isinstance(other, sympy.polygamma)):
        return None
    order, argument = function.args
    if other.args[0] != order or other_coefficient != -coefficient or not order.is_Integer:
        return None
    if order < 0 or argument.is_positive is not True:
        return None
    shift = sympy.expand(other.args[1] - argument)
    if shift.is_nonnegative is not True:
        return None
    return coefficient * polygamma_difference(order, argument, shift), shift


def _square_root_of_term(term: sympy.Expr) -> sympy.Expr | None:
    """``a`` for a term ``a**2`` (a symbol's square, or a rational square such as 1 or 1/4),
    else None."""
    if term.is_Pow and term.exp == 2 and term.base.is_Symbol:
        return term.base
    if term.is_Rational and term > 0:
        root = sympy.sqrt(term)
        return root if root.is_Rational else None
    return None


def _difference_of_squares(add: sympy.Add) -> sympy.Expr:
    """``a**2 - b**2`` as ``(a - b)*(a + b)``: ``1 - rho**2`` near rho = 1 keeps every digit
    this way (``1 - rho`` is exact there) where the rounded square loses them (1e-12 of
    the bivariate normal's Fisher entry at rho = 1 - 1e-12)."""
    terms = sympy.Add.make_args(add)
    if len(terms) != 2:
        return add
    positive, negative = sorted(terms, key=lambda t: t.could_extract_minus_sign())
    if not negative.could_extract_minus_sign():
        return add
    a, b = _square_root_of_term(positive), _square_root_of_term(-negative)
    if a is None or b is None:
        return add
    return sympy.Mul(sympy.Add(a, -b, evaluate=False), sympy.Add(a, b, evaluate=False),
                     evaluate=False)


def _repeated_factors(add: sympy.Add) -> sympy.Expr:
    """A polynomial with a repeated factor as the product of its square-free factors' powers:
    ``rho**4 - 2*rho**2 + 1`` as ``(rho**2 - 1)**2``, whose factor then keeps its digits near
    rho = ±1 as a difference of squares (:func:`_difference_of_squares`), where the expanded
    quartic loses them (7.5e-13 of the bivariate normal's g_rho_rho at rho = -0.998)."""
    symbols = add.free_symbols
    if not symbols or add.has(sympy.Float) or not add.is_polynomial(*symbols):
        return add
    try:
        polynomial = sympy.Poly(add, *symbols)
    except sympy.PolynomialError:  # e.g. a power of a difference of the symbols, unexpanded
        return add
    if polynomial.total_degree() < 2:
        return add
    coefficient, factors = polynomial.sqf_list()
    if all(multiplicity == 1 for _, multiplicity in factors):
        return add
    return coefficient * sympy.Mul(*(base.as_expr()**multiplicity
                                     for base, multiplicity in factors))


class complement(sympy.Function):
    """``c - x_1 - ... - x_k`` (``c`` a number, ``k >= 2``), printed as the helper
    ``_complement``, which sums the x_i exactly (the float sum and its rounding error) before
    taking them from c: a simplex's last coordinate ``1 - p1 - p2`` as written loses every
    digit when p1 + p2 comes close to 1 from a small p1 (the rounded 1 - p1 carries an
    error as large as the result). Never evaluated symbolically."""

    def _eval_rewrite_as_Add(self, total, *terms, **kwargs):
        return total - sympy.Add(*terms)


def _as_complement(add: sympy.Add) -> sympy.Expr:
    """``c - x - y - ...`` (a positive number less two or more symbols) as
    :class:`complement`, and its negation ``x + y + ... - c`` as ``-complement(...)``."""
    number, rest = add.as_coeff_Add()
    sign = 1 if number.is_positive else -1
    subtracted = [-sign * term for term in sympy.Add.make_args(rest)]
    if not (number != 0 and len(subtracted) >= 2
            and all(term.is_Symbol for term in subtracted)):
        return add
    return sign * complement(sign * number, *sorted(subtracted, key=sympy.default_sort_key))


def _pair_differences(add: sympy.Add) -> sympy.Expr:
    """The polygamma functions of a sum paired into :class:`polygamma_difference` terms,
    those whose arguments differ by parameters alone first: in the beta-binomial's
    score ``psi(_k + a) - psi(a) + psi(a + b) - psi(_k + a + b)`` the pairs that cancel as
    b -> 0 are ``psi(a) - psi(a + b)`` and ``psi(_k + a) - psi(_k + a + b)``, not the pairs
    _k apart (which left a difference of size b computed from numbers of size 1: 7.5e-10 of
    the entry at b = 1e-6)."""
    terms = list(sympy.Add.make_args(add))
    for small_only in (True, False):
        while (found := _first_pair(terms, small_only)) is not None:
            i, j, pair = found
            terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [pair]
    return sympy.Add(*terms)


def _first_pair(terms, small_only: bool):
    """``(i, j, pair)`` for the first two terms that pair (with ``small_only``, only a shift
    of parameters alone, which can be as small as they are: no numeric part and no internal
    variable such as the summation variable ``_k``, whose names start with ``_``, which no
    parameter's may), or None."""
    for i, first in enumerate(terms):
        for j, second in enumerate(terms):
            found = _difference_pair(first, second) if i != j else None
            if found is None:
                continue
            pair, shift = found
            if not small_only or (shift.as_coeff_Add()[0] == 0 and not any(
                    symbol.name.startswith("_") for symbol in shift.free_symbols)):
                return i, j, pair
    return None


def log1p_forms(expr: sympy.Expr) -> sympy.Expr:
    """Every ``log(1 + u)`` as ``log1p(u)``: exact for a tiny ``u`` in floats and at any
    mpmath precision, where ``log(1 + u)`` needs the digits of ``u`` beyond the 1."""
    return expr.replace(lambda e: isinstance(e, sympy.log) and e.args[0].is_Add
                        and sympy.S.One in e.args[0].args, lambda e: log1p(e.args[0] - 1))


def _log1pmx_pairs(add: sympy.Add) -> sympy.Expr:
    """``c*log(1 + u) - c*u + r`` as ``c*log1pmx(u) + r`` (``u`` with a variable, every term of
    ``-c*u`` a term of the sum): the log-series family's ``p + log(1 - p)`` cancels to
    ``-p**2/2`` and loses three digits at p = 0.001 written out."""
    terms = set(add.args)
    for term in add.args:
        coefficient, function = term.as_independent(sympy.log, log1p, as_Add=False)
        if isinstance(function, sympy.log):
            u = sympy.expand(function.args[0] - 1)
        elif isinstance(function, log1p):
            u = function.args[0]
        else:
            continue
        if not u.free_symbols:
            continue
        linear = set(sympy.Add.make_args(sympy.expand(-coefficient * u)))
        if linear <= terms - {term}:
            rest = terms - {term} - linear
            return sympy.Add(coefficient * log1pmx(u), *rest)
    return add


class hypot(sympy.Function):
    """``sqrt(x**2 + y**2 + ...)`` of its arguments, printed as ``np.hypot``/``math.hypot``:
    the squares are never formed, so they cannot overflow (a location 1e160 apart) or
    underflow. Never evaluated symbolically."""

    def _eval_rewrite_as_sqrt(self, *args, **kwargs):
        return sympy.sqrt(sympy.Add(*(a**2 for a in args)))


def _square_root(term: sympy.Expr) -> sympy.Expr | None:
    """``sqrt(c)*X`` for a term ``c*X**2`` with ``c`` not provably negative (else None).

    The identity needs ``c >= 0``. The coefficients met here are metric entries (the
    generalized Gaussian's ``gamma((2N - 1)/N)/gamma((N + 1)/N)``, positive for N > 1/2, which
    SymPy cannot prove from the domain); a negative one would print nan, which the
    emitted-code gate refuses."""
    squares = [f for f in sympy.Mul.make_args(term) if f.is_Pow and f.exp == 2]
    if not squares:
        return None
    coefficient = sympy.Mul(*(f for f in sympy.Mul.make_args(term) if f is not squares[0]))
    if coefficient.is_negative is True:
        return None
    return sympy.sqrt(coefficient) * squares[0].base


def _as_hypot(root: sympy.Pow) -> sympy.Expr:
    roots = [_square_root(term) for term in sympy.Add.make_args(root.base)]
    if len(roots) < 2 or any(r is None for r in roots):
        return root
    return hypot(*roots)


def _as_atan2(function: sympy.asin) -> sympy.Expr:
    """``asin(u)`` as ``atan2(u, sqrt(1 - u**2))`` when ``1 - u**2`` factors into a product:
    near ``u = ±1`` (``u = 2p - 1`` at p = 1e-12) asin is ill-conditioned, while the factored
    ``sqrt(4p(1 - p))`` keeps its digits and atan2 is well-conditioned everywhere."""
    argument = function.args[0]
    complement = sympy.factor(1 - argument**2)
    if not complement.is_Mul:
        return function
    return sympy.atan2(argument, sympy.sqrt(complement))


class trigamma_excess(sympy.Function):
    """``k*(k*polygamma(1, k) - 1)``, of order 1 for every k > 0 (-> 1 as k -> 0, -> 1/2 as
    k -> oo), computed by a helper from the recurrence and asymptotic series of polygamma:
    written out, ``k*polygamma(1, k) - 1`` cancels (6 % wrong at k = 1e14, all digits gone
    at 1e15) and ``polygamma(1, k)`` overflows at k = 1e-160. Never evaluated symbolically."""

    nargs = 1


class trigamma_excess_slope(sympy.Function):
    """``k**2*(polygamma(1, k) + k*polygamma(2, k))``: k**2 times the derivative of
    ``k*polygamma(1, k) - 1``, of order 1 for every k > 0 (-> -1 and -> -1/2), by the same
    helper series. Never evaluated symbolically."""

    nargs = 1


def _trigamma_forms(add: sympy.Add) -> sympy.Expr:
    """``k*polygamma(1, k) - 1`` as ``trigamma_excess(k)/k`` and ``k*polygamma(2, k) +
    polygamma(1, k)`` as ``trigamma_excess_slope(k)/k**2`` (the Gamma family's curvature)."""
    terms = set(sympy.Add.make_args(add))
    for function in add.atoms(sympy.polygamma):
        order, k = function.args
        if order == 1 and terms == {k * function, sympy.S.NegativeOne}:
            return trigamma_excess(k) / k
        if order == 1 and terms == {k * sympy.polygamma(2, k), function}:
            return trigamma_excess_slope(k) / k**2
    return add


#: Functions whose argument is put over one denominator (see :func:`stable_forms`).
SPECIAL_FUNCTIONS = (sympy.gamma, sympy.loggamma, sympy.polygamma)


def _argument_together(function: sympy.Function) -> sympy.Function:
    *head, argument = function.args
    return function.func(*head, sympy.together(argument))


class scaled_besseli(sympy.Function):
    """``exp(-|z|) I_n(z)``, SciPy's ``ive``: finite where ``I_n(z)`` itself overflows."""

    nargs = 2


def scaled_bessel(expr: sympy.Expr) -> sympy.Expr:
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

    - ``sqrt(a*X**2 + b*Y**2)`` with ``a``, ``b`` >= 0 becomes
      ``hypot(sqrt(a)*X, sqrt(b)*Y)`` (no square overflows);
    - ``k*polygamma(1, k) - 1`` and ``k*polygamma(2, k) + polygamma(1, k)`` become
      :class:`trigamma_excess` and :class:`trigamma_excess_slope` over powers of ``k``;
    - ``asin(u)`` becomes ``atan2(u, sqrt(1 - u**2))`` with ``1 - u**2`` factored, when it
      factors (see :func:`_as_atan2`);
    - a polynomial with a repeated factor becomes the product of its square-free factors'
      powers (``rho**4 - 2*rho**2 + 1`` becomes ``(rho**2 - 1)**2``, see
      :func:`_repeated_factors`);
    - ``a**2 - b**2`` becomes ``(a - b)*(a + b)`` (see :func:`_difference_of_squares`), and
      ``1 - p1 - p2`` becomes :class:`complement`;
    - ``c*log(1 + u) - c*u`` becomes ``c*log1pmx(u)`` (see :func:`_log1pmx_pairs`), and any
      other ``log(1 + u)`` becomes ``log1p(u)``: ``log(1 - p)`` from the rounded ``1 - p``
      loses three digits at p = 0.001.

    The value is unchanged (each rewrite is an identity); only the way the module computes it.
    """
    expr = scaled_bessel(expr)
    expr = expr.replace(lambda e: isinstance(e, SPECIAL_FUNCTIONS), _argument_together)
    expr = expr.replace(lambda e: isinstance(e, sympy.Add) and e.has(sympy.polygamma),
                        _trigamma_forms)
    expr = expr.replace(lambda e: e.is_Pow and e.exp == sympy.S.Half and e.base.is_Add, _as_hypot)
    expr = expr.replace(lambda e: isinstance(e, sympy.asin), _as_atan2)
    expr = expr.replace(lambda e: isinstance(e, sympy.Add) and e.has(sympy.log, log1p),
                        _log1pmx_pairs)
    expr = log1p_forms(expr)
    expr = expr.replace(lambda e: isinstance(e, sympy.Add), _repeated_factors)
    expr = expr.replace(lambda e: isinstance(e, sympy.Add), _difference_of_squares)
    expr = expr.replace(lambda e: isinstance(e, sympy.Add), _as_complement)
    return expr.replace(lambda e: isinstance(e, sympy.Add), _pair_differences)


class log1p_quotient(sympy.Function):
    """``log1p(n/d)`` of a quotient ``n/d >= 0``, printed as the helper ``_log1p_quotient``,
    which takes ``log(n) - log(d)`` where the quotient overflows: the distance between rates
    more than 1.8e308 apart is log1p(inf) = inf written out, about 714 this way. Never
    evaluated symbolically."""

    nargs = 2


class asinh_quotient(sympy.Function):
    """``asinh(n/d)`` of a quotient ``n/d >= 0``, printed as the helper ``_asinh_quotient``,
    which takes ``log(2) + log(n) - log(d)`` where the quotient overflows (half-plane points
    whose ``(Δμ² + Δσ²)/(σ₁σ₂)`` exceeds the float range). Never evaluated symbolically."""

    nargs = 2


#: The functions of a quotient that :func:`far_apart_forms` rewrites, and their forms.
_OF_A_QUOTIENT = {log1p: log1p_quotient, sympy.asinh: asinh_quotient}


def far_apart_forms(expr: sympy.Expr) -> sympy.Expr:
    """``log1p(n/d)`` and ``asinh(n/d)`` as :class:`log1p_quotient` and
    :class:`asinh_quotient`, whose helpers stay finite where the quotient overflows though
    its logarithm does not. For the closed Rao distances (non-negative quotients, which
    grow without bound as the points move apart); the accounting curves' ``log1p`` have
    arguments bounded by the switch to log-sum-exp and keep their plain form."""
    def rewritten(function):
        # A numeric coefficient stays with the numerator: sqrt(s_1)*sqrt(s_2) is a float
        # for every pair of floats, 2*sqrt(s_1)*sqrt(s_2) overflows above 9e307.
        coefficient, quotient = function.args[0].as_coeff_Mul()
        numerator, denominator = sympy.fraction(quotient, exact=True)
        if denominator == 1:
            return function
        return _OF_A_QUOTIENT[type(function)](coefficient * numerator, denominator)

    return expr.replace(lambda e: type(e) in _OF_A_QUOTIENT, rewritten)


def printing_failure(error: Exception) -> str:
    """A printer's refusal in words: SymPy's "Unsupported by <class ...>: zeta" becomes "no
    float implementation of zeta (NumPy, SciPy)"."""
    first = str(error).splitlines()[0]
    match = re.fullmatch(r"Unsupported by <class '[^']*'>: (?:<class '(?:[\w.]*\.)?(\w+)'>|(\w+))",
                         first)
    if match is None:
        return first
    name = match.group(1) or match.group(2)
    what = "derivatives of special functions" if name == "Derivative" else name
    return f"no float implementation of {what} (NumPy, SciPy)"


#: The declared domains of the family being emitted (``module_context`` sets them), by symbol:
#: positivity that SymPy's assumptions cannot express (``1 - m`` for m in (0, 1)) is read
#: from them.
assumed_domains: ContextVar[dict | None] = ContextVar("assumed_domains", default=None)


def provably_positive(expr: sympy.Expr) -> bool:
    """Whether ``expr`` is positive on the declared domains: by SymPy's assumptions, or with
    each parameter of an open interval written through a positive ``u`` (``lo + (hi - lo)/(1 +
    u)``, ``lo + u``, ``hi - u``) and the result factored (``t*(1 - m)`` becomes
    ``t*u/(u + 1)``)."""
    if expr.is_positive:
        return True
    domains = assumed_domains.get() or {}
    substitution = {}
    for symbol in expr.free_symbols:
        domain = domains.get(symbol)
        if domain is None:
            continue
        u = sympy.Dummy("u", positive=True)
        lower_open = domain.lower.is_finite and domain.lower_open
        upper_open = domain.upper.is_finite and domain.upper_open
        if lower_open and upper_open:
            substitution[symbol] = domain.lower + (domain.upper - domain.lower) / (1 + u)
        elif lower_open and domain.upper.is_infinite:
            substitution[symbol] = domain.lower + u
        elif upper_open and domain.lower.is_infinite:
            substitution[symbol] = domain.upper - u
    return bool(substitution) and sympy.factor(expr.xreplace(substitution)).is_positive is True


def check_printable(expr: sympy.Expr) -> None:
    """Refuse what the helpers cannot evaluate, before CSE hides the assumptions.

    ``_polygamma`` and ``_polygamma_difference`` implement positive arguments only (the
    reflection formula is not implemented), so their arguments must be provably positive
    (:func:`provably_positive`).
    """
    for function in expr.atoms(sympy.polygamma):
        order, argument = function.args
        if not (order.is_Integer and order >= 0):
            raise EmitError(f"cannot emit {function}: the order must be an integer >= 0")
        if not provably_positive(argument):
            raise EmitError(f"cannot emit {function}: its argument is not provably positive, "
                            "and the generated polygamma helper implements x > 0 only")


def _ratios_of_equal_powers(expr: sympy.Mul, constants: set) -> tuple[sympy.Expr, list[tuple]]:
    """``(rest, [(x, y, n), ...])`` with ``expr = rest * (x/y)**n * ...``: each pair of
    factors ``x**n`` and ``y**-n`` of the product with an integer ``n >= 2``, in canonical
    order, and ``x/y`` (``n = 1``) where the product is two variables' ratio times constants
    (``sqrt(nu + 1)/sqrt(nu + 3)*sensitivity/s``), or a variable over another's power
    ``x/y**m`` (``k/theta**2``): then ``(x, y, 1)`` is followed by ``(None, y, m - 1)``, ``y``
    divided out ``m - 1`` more times."""
    factors = list(sympy.Mul.make_args(expr))
    ratios = []
    for factor in list(factors):
        base, power = factor.as_base_exp()
        if factor not in factors or not (power.is_Integer and power >= 2):
            continue
        partners = [f for f in factors if f.is_Pow and f.exp == -power]
        if partners:
            factors.remove(factor)
            factors.remove(partners[0])
            ratios.append((base, partners[0].base, int(power)))
    variables = [f for f in factors if f.free_symbols - constants]
    if (not ratios and len(variables) == 2 and variables[0].is_Symbol and variables[1].is_Pow
            and variables[1].exp.is_Integer and variables[1].exp <= -1
            and variables[1].base.is_Symbol):
        factors = [f for f in factors if f not in variables]
        numerator, (denominator, power) = variables[0], variables[1].as_base_exp()
        ratios.append((numerator, denominator, 1))
        if power < -1:
            ratios.append((None, denominator, int(-power) - 1))
    return sympy.Mul(*factors), ratios


class RangeSafeProducts:
    """The backend's printing of products (a mixin of its NumPy and Python printers), so that
    no intermediate leaves the float range where the product itself does not:

    - ``x**n/y**n`` (and ``x/y``, ``x/y**m``, see :func:`_ratios_of_equal_powers`) as the
      ratio ``(x/y)`` multiplied in ``n`` times (``x/y**m`` as ``(x/y)/y...``), after the
      other factors: ``alpha*sensitivity**2/(2*sigma**2)`` is
      ``(1/2)*alpha*(sensitivity/sigma)*(sensitivity/sigma)``, where ``sensitivity**2``
      underflowed to 0 (Δ = 1e-170) or ``sigma**2`` (σ = 1e-203) though the curve is an
      ordinary float, and ``sensitivity*sqrt(nu + 1)/(s*sqrt(nu + 3))`` (two variables'
      ratio times constants) is ``sqrt(nu + 1)/sqrt(nu + 3)*(sensitivity/s)``, where the first
      product overflowed.
      Multiplied in one at a time, a ratio ``r`` cannot push a partial product out of range
      that the result stays in: with ``a`` a normal float, ``|a*r|`` lies between ``|a|``
      and ``|a*r*r|`` (``r*r`` alone may underflow where ``a*r*r`` does not);
    - a numeric coefficient larger than 1 multiplies the quotient, not its numerator:
      ``2*(|Δ|/(sqrt(a) + sqrt(b)))``, where ``2*|Δ|`` overflowed for a rate above 9e307.
    """

    def _print_Mul(self, expr: sympy.Mul) -> str:
        rest, ratios = _ratios_of_equal_powers(expr, getattr(self, "scalars", set()))
        if ratios and not (rest == 1 and [n for _, _, n in ratios] == [1]):  # not x/y alone
            quotients = "".join(
                f"/{self.parenthesize(y, PRECEDENCE['Mul'], strict=True)}" * n if x is None
                else f"*({self.parenthesize(x, PRECEDENCE['Mul'], strict=True)}/"
                     f"{self.parenthesize(y, PRECEDENCE['Mul'])})" * n for x, y, n in ratios)
            if rest in (sympy.S.One, sympy.S.NegativeOne):
                return ("-" if rest == -1 else "") + quotients[1:]
            # A product is printed as it is (it ends in a factor); a rational 1/2 or a sum
            # is put in parentheses.
            factors = self._print(rest) if rest.is_Mul else self.parenthesize(
                rest, PRECEDENCE["Mul"])
            return factors + quotients
        coefficient, quotient = expr.as_coeff_Mul()
        numerator, denominator = sympy.fraction(quotient, exact=True)
        if abs(coefficient) > 1 and numerator != 1 and denominator != 1:
            return f"{self._print(coefficient)}*({self._print(quotient)})"
        return super()._print_Mul(expr)


class ModulePrinter(RangeSafeProducts, NumPyPrinter):
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

    def _print_log1pmx(self, expr: log1pmx) -> str:
        return self._helper("log1pmx", *expr.args)

    def _print_polygamma_difference(self, expr: polygamma_difference) -> str:
        self.helpers.add("polygamma")  # the difference helper shares the series coefficients
        return self._helper("polygamma_difference", *expr.args)

    def _print_numeric_fisher_entry(self, expr) -> str:
        """A Fisher entry known only numerically: the call of its generated quadrature
        (:mod:`raosym.emit.python.numeric`)."""
        row, column, *arguments = expr.args
        return (f"_fisher_entry_{int(row)}_{int(column)}("
                f"{', '.join(self._print(argument) for argument in arguments)})")

    def _print_zeta(self, expr: sympy.zeta) -> str:
        # Riemann's zeta(s), or Hurwitz's zeta(s, a); SciPy's broadcasts.
        return f"scipy.special.zeta({', '.join(self._print(arg) for arg in expr.args)})"

    def _print_loggamma_difference(self, expr: loggamma_difference) -> str:
        self.helpers |= {"polygamma", "polygamma_difference"}  # Bernoulli numbers, differences
        return self._helper("loggamma_difference", *expr.args)

    def _print_loggamma_second_difference(self, expr: loggamma_second_difference) -> str:
        self.helpers |= {"polygamma", "polygamma_difference", "loggamma_difference"}
        return self._helper("loggamma_second_difference", *expr.args)

    def _print_scaled_besseli(self, expr: scaled_besseli) -> str:
        self.helpers.add("scipy.special")  # the module imports scipy.special for it
        return self._helper("ive", *expr.args)

    def _print_trigamma_excess(self, expr) -> str:
        self.helpers.add("polygamma")  # shares the Bernoulli numbers
        return self._helper("trigamma_excess", *expr.args)

    def _print_trigamma_excess_slope(self, expr) -> str:
        self.helpers.add("polygamma")
        return self._helper("trigamma_excess", *expr.args).replace(
            "_trigamma_excess(", "_trigamma_excess_slope(", 1)

    def _print_log1p_quotient(self, expr: log1p_quotient) -> str:
        return self._helper("log1p_quotient", *expr.args)

    def _print_asinh_quotient(self, expr: asinh_quotient) -> str:
        return self._helper("asinh_quotient", *expr.args)

    def _print_complement(self, expr: complement) -> str:
        # The helper's +, - are the same operations on floats and arrays (no float version).
        self.helpers.add("complement")
        return f"_complement({', '.join(self._print(a) for a in expr.args)})"

    def _print_hypot(self, expr: hypot) -> str:
        # On arrays the helper _hypot: np.hypot costs ~30 ns a point, most of the distance.
        if self._on_scalars(expr):
            return self._nested("np.hypot", expr.args)
        self.helpers.add("hypot")
        return self._nested("_hypot", expr.args)

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



class FloatPrinter(ModulePrinter):
    """The module printer for Python floats: the operations of :class:`ModulePrinter`'s code
    in the same order, so that they give the same value (``+``, ``-``, ``*``, ``/`` and
    square roots are correctly rounded in NumPy and in Python alike; NumPy's own functions
    are called on the floats, and the helpers have ``_float`` versions that raise where
    the array helper would take its out-of-range branch). An expression with anything else
    (a power NumPy computes through ``pow``, a helper without a float version) raises
    :class:`EmitError`: then no float path is emitted."""

    #: Helpers with a version for floats in helpers.py.j2 (``_hypot_float``, ...).
    FLOAT_HELPERS = frozenset({"hypot", "asinh_quotient", "log1p_quotient"})

    def _helper(self, name: str, *args) -> str:
        if name not in self.FLOAT_HELPERS:
            raise EmitError(f"no float version of the helper _{name}")
        return super()._helper(f"{name}_float", *args)

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        base = self.parenthesize(expr.base, PRECEDENCE["Mul"], strict=True)
        # x**2 is x*x for NumPy's arrays (np.square) but pow() for Python's floats.
        if expr.exp == sympy.S.Half:
            return f"math.sqrt({self._print(expr.base)})"
        if expr.exp == -sympy.S.Half:
            return f"1/math.sqrt({self._print(expr.base)})"
        if expr.exp == 2:
            return f"{base}*{base}"
        if expr.exp == -1:
            return f"1/{base}"
        if expr.exp == -2:
            return f"1/({base}*{base})"
        raise EmitError(f"no float form of the power {expr} that NumPy computes alike")

    def _print_hypot(self, expr: hypot) -> str:
        if self._on_scalars(expr):
            return self._nested("np.hypot", expr.args)
        self.helpers.add("hypot_float")
        return self._nested("_hypot_float", expr.args)

    def _print_gamma(self, expr: sympy.gamma) -> str:
        if not self._on_scalars(expr):
            raise EmitError("no float version of the helper _gamma")
        return super()._print_gamma(expr)

    def _print_loggamma(self, expr: sympy.loggamma) -> str:
        if not self._on_scalars(expr):
            raise EmitError("no float version of the helper _loggamma")
        return super()._print_loggamma(expr)


#: Terms of the series of (log(1 + u) - u)/u**2 + 1/2 the helper sums for |u| < 1/4: the
#: first term left out is below 0.25**31/33 ~ 7e-21.
_LOG1PMX_TERMS = 30


def log1pmx_coefficients() -> list[str]:
    """The coefficients (-1)**(k + 1)/(k + 2) of u**k, k = 1 .. _LOG1PMX_TERMS, in
    (log(1 + u) - u)/u**2 = -1/2 + u/3 - u**2/4 + ... (lowest first): the ``_log1pmx``
    helper's series."""
    return [repr((-1) ** (k + 1) / (k + 2)) for k in range(1, _LOG1PMX_TERMS + 1)]
