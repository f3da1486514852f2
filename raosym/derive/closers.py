"""Closers: exact values of the half-line integrals that SymPy's ``integrate`` cannot close.

They are the last rungs of the Fisher ladder, in the derive stage. For a location-scale family
the ladder substitutes ``x = mu + s*t``, factors out ``1/s**2`` and folds the symmetric
integrand onto ``(0, oo)``, leaving a *reduced integrand* ``g(t)``. :func:`raosym.derive.
integrals.close_integral` first tries ``sympy.integrate`` on it; when that gives up on the
half-line, it asks the closers here, one after the other. Each closer recognises one family of
kernels, and either returns the exact value of ``Integral(g, (t, 0, oo))`` together with the
:class:`~raosym.derive.steps.ProofStep`s it really took, or declines with ``None``:

* :func:`close_by_beta_substitution` -- ``K * t**k * (c + t**2)**E`` summed over a few
  ``(k, E)`` (Student's t): ``w = t**2/(c + t**2)`` turns each term into Euler's Beta integral.
* :func:`close_by_exponential_series` -- ``sum_k t**k * R_k(exp(-t))`` with rational ``R_k``
  (logistic): expand ``R_k`` in powers of ``q = exp(-t)``, integrate term by term, and sum the
  Dirichlet series to zeta / Dirichlet-eta values; when the poles of ``R_k`` lie elsewhere on
  the unit circle (``1 + q**2``: the hyperbolic secant), each residue class of exponents sums
  to Hurwitz zeta values, combined by the reflection formula (powers of pi, Catalan's
  constant).

Every ``integrate``/``summation`` call runs under :func:`~raosym.derive.budget.run_with_budget`.
A closer that meets an expression it cannot analyse declines too; one whose SymPy call runs
out of budget raises :class:`~raosym.derive.budget.BudgetExceeded` (never a decline: a clock
must not choose the route).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import reduce

import sympy
from sympy.polys.polyerrors import CoercionFailed, PolynomialError

from raosym.derive.budget import BudgetExceeded, run_with_budget
from raosym.derive.steps import ProofStep
from raosym.errors import DerivationError

BETA_STRATEGY = "beta_substitution"
SERIES_STRATEGY = "exponential_series"

Closed = tuple[sympy.Expr, tuple[ProofStep, ...]]

# Errors that only mean "this expression is not of my shape". BudgetExceeded (a
# DerivationError) is re-raised before them: running out of time is not a decline.
_DECLINE = (PolynomialError, CoercionFailed, NotImplementedError, DerivationError)

# Heads that mark a result SymPy did not really close.
_UNCLOSED = (sympy.Integral, sympy.Sum, sympy.meijerg, sympy.hyper, sympy.Piecewise)

# Functions rewritten through exp before looking for q = exp(-t).
_HYPERBOLIC = (sympy.tanh, sympy.sinh, sympy.cosh, sympy.coth, sympy.sech, sympy.csch)


# --------------------------------------------------------------------------------------------
# Shared helpers


def _on_half_line(integrand: sympy.Expr, t: sympy.Symbol) -> tuple[sympy.Expr, sympy.Symbol]:
    """The integrand in a positive variable of the same name: t > 0 on (0, oo), and SymPy
    needs to know it to split powers and drop absolute values."""
    if t.is_positive:
        return integrand, t
    positive = sympy.Symbol(t.name, positive=True)
    return integrand.xreplace({t: positive}), positive


def fresh_symbol(name: str, *exprs: sympy.Basic, **assumptions) -> sympy.Symbol:
    """A symbol called ``name`` (or ``name_1``, ...) that clashes with no symbol in ``exprs``:
    the constants may contain a user symbol of the same name."""
    taken = {symbol.name for expr in exprs for symbol in expr.free_symbols}
    candidate, index = name, 0
    while candidate in taken:
        index += 1
        candidate = f"{name}_{index}"
    return sympy.Symbol(candidate, **assumptions)


def _is_closed(value: sympy.Expr, t: sympy.Symbol) -> bool:
    return not (
        value.has(t, *_UNCLOSED)
        or value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo)
    )


def _in_variable(closed: Closed | None, used: sympy.Symbol, wanted: sympy.Symbol) -> Closed | None:
    """The steps written in the caller's variable again (the value is free of it)."""
    if closed is None or used == wanted:
        return closed
    swap = {used: wanted}
    value, steps = closed
    return value, tuple(
        replace(step, lhs=None if step.lhs is None else step.lhs.xreplace(swap),
                rhs=step.rhs.xreplace(swap))
        for step in steps
    )


def _half_line(integrand: sympy.Expr, t: sympy.Symbol) -> sympy.Integral:
    return sympy.Integral(integrand, (t, 0, sympy.oo))


# --------------------------------------------------------------------------------------------
# Closer 1: t**2 = c*w/(1 - w) and Euler's Beta integral


@dataclass(frozen=True)
class _BetaShape:
    """``integrand = sum(K * t**k * (c + t**2)**E for K, k, E in terms)``."""

    c: sympy.Expr
    terms: tuple[tuple[sympy.Expr, sympy.Expr, sympy.Expr], ...]


def close_by_beta_substitution(
    integrand: sympy.Expr, t: sympy.Symbol, *, budget: float
) -> Closed | None:
    """Close ``Integral(integrand, (t, 0, oo))`` for ``integrand = R(t) * (c + t**2)**e``.

    ``c > 0`` is free of ``t``, ``e`` is any exponent free of ``t`` (typically symbolic, e.g.
    ``-(nu + 1)/2``), and ``R`` is a polynomial in ``t`` divided by powers of ``t`` and of
    ``c + t**2``. The substitution ``w = t**2/(c + t**2)`` turns every term into a Beta
    integral. Declines (returns ``None``) for other shapes, and when the convergence of a Beta
    integral cannot be established for the symbols' assumptions.
    """
    positive_integrand, positive = _on_half_line(integrand, t)
    try:
        shape = _beta_shape(positive_integrand, positive)
        if shape is None:
            return None
        closed = _close_beta(positive_integrand, positive, shape, budget)
    except BudgetExceeded:
        raise
    except _DECLINE:
        return None
    return _in_variable(closed, positive, t)


class _NotBetaShape(Exception):
    """Raised inside the term collector: the integrand is not of the Beta kernel's shape."""


def _beta_shape(integrand: sympy.Expr, t: sympy.Symbol) -> _BetaShape | None:
    """Recognise ``sum K * t**k * (c + t**2)**E``, or return None."""
    if not integrand.has(t):
        return None
    collector = _TermCollector(t)
    try:
        terms = collector.terms(integrand)
    except _NotBetaShape:
        return None
    if collector.c is None:  # no factor c + t**2 anywhere: not this closer's kernel
        return None
    terms = {key: _tidy_constant(K) for key, K in terms.items()}
    ordered = sorted(terms.items(), key=sympy.default_sort_key)
    return _BetaShape(collector.c, tuple((K, k, E) for (k, E), K in ordered if K != 0))


def _tidy_constant(K: sympy.Expr) -> sympy.Expr:
    return sympy.factor(sympy.powsimp(sympy.cancel(K), combine="exp"))


class _TermCollector:
    """Writes an expression as ``{(k, E): K}`` meaning ``sum K * t**k * (c + t**2)**E``.

    It walks the tree itself instead of calling ``expand``: ``expand`` multiplies out negative
    powers of sums into one long denominator and splits symbolic exponents, which hides the
    factor ``c + t**2``. Only positive integer powers of sums are multiplied out here; any
    other power of a sum must be a power of ``b * t**j * (c + t**2)**m``.
    """

    def __init__(self, t: sympy.Symbol) -> None:
        self.t = t
        self.c: sympy.Expr | None = None

    def terms(self, expr: sympy.Expr) -> dict:
        t = self.t
        if not expr.has(t):
            return {(sympy.S.Zero, sympy.S.Zero): expr}
        if expr == t:
            return {(sympy.S.One, sympy.S.Zero): sympy.S.One}
        if expr.is_Add:
            return _add_terms(*(self.terms(arg) for arg in expr.args))
        if expr.is_Mul:
            return reduce(_multiply_terms, (self.terms(arg) for arg in expr.args))
        if expr.is_Pow and not expr.exp.has(t):
            return self._power(self.terms(expr.base), expr.exp)
        raise _NotBetaShape  # exp, log, Abs, ... of t

    def _power(self, base: dict, exponent: sympy.Expr) -> dict:
        if exponent.is_Integer and exponent > 0 and len(base) > 1:
            return reduce(_multiply_terms, [base] * int(exponent))  # (a + b)**2: multiply out
        (k, E), K = self._monomial(base)
        if not exponent.is_integer and K.is_positive is not True:
            return self._fail()  # (K*...)**e = K**e*... needs K > 0 for non-integer e
        return {(k * exponent, E * exponent): K**exponent}

    def _monomial(self, terms: dict) -> tuple[tuple, sympy.Expr]:
        """The single term ``K * t**k * (c + t**2)**E`` equal to a sum of terms."""
        if len(terms) == 1:
            return next(iter(terms.items()))
        t = self.t
        k_ref, e_ref = sorted(terms, key=sympy.default_sort_key)[0]
        quotient = sympy.S.Zero  # the sum divided by t**k_ref * (c + t**2)**e_ref
        for (k, E), K in terms.items():
            if not ((k - k_ref).is_integer and (E - e_ref).is_integer):
                return self._fail()
            shift = (self.c + t**2) ** (E - e_ref) if E != e_ref else sympy.S.One
            quotient += K * t ** (k - k_ref) * shift
        numerator, denominator = sympy.fraction(sympy.cancel(sympy.together(quotient)))
        top, bottom = self._factor(numerator), self._factor(denominator)
        return (k_ref + top[1] - bottom[1], e_ref + top[2] - bottom[2]), top[0] / bottom[0]

    def _factor(self, polynomial: sympy.Expr) -> tuple:
        """``polynomial = scale * t**j * (c + t**2)**m``: (scale, j, m), fixing c if unknown."""
        t = self.t
        scale, rest = polynomial.as_independent(t, as_Add=False)
        if rest == 1:
            return scale, 0, 0
        # Divide by the leading coefficient first: constants such as nu**(nu/2) would reach
        # factor_list as factors with symbolic multiplicities, which it cannot sort.
        leading = sympy.Poly(rest, t).LC()
        try:
            unit, factors = sympy.factor_list(sympy.cancel(rest / leading), t)
        except TypeError:
            return self._fail()
        scale *= leading * unit
        t_power, c_power = 0, 0
        for factor, multiplicity in factors:
            if not factor.has(t):  # factor_list may list constants such as (pi, 1/2)
                scale *= factor**multiplicity
            elif factor == t:
                t_power += multiplicity
            else:
                scale *= self._shifted_square(factor) ** multiplicity
                c_power += multiplicity
        return scale, t_power, c_power

    def _shifted_square(self, factor: sympy.Expr) -> sympy.Expr:
        """b for ``factor = b * (c + t**2)`` with c > 0 (the common c of the integrand)."""
        poly = sympy.Poly(factor, self.t)
        if poly.degree() != 2 or poly.coeff_monomial(self.t) != 0:
            return self._fail()
        b = poly.LC()
        c = sympy.cancel(poly.coeff_monomial(1) / b)
        # c > 0 keeps c + t**2 away from 0 on the half-line and makes the substitution real.
        if c.is_positive is not True or (self.c is not None and sympy.cancel(c - self.c) != 0):
            return self._fail()
        self.c = c if self.c is None else self.c
        return b

    @staticmethod
    def _fail():
        raise _NotBetaShape


def _add_terms(*dicts: dict) -> dict:
    total = defaultdict(lambda: sympy.S.Zero)
    for terms in dicts:
        for key, K in terms.items():
            total[key] += K
    return dict(total)


def _multiply_terms(left: dict, right: dict) -> dict:
    product = defaultdict(lambda: sympy.S.Zero)
    for (k1, e1), K1 in left.items():
        for (k2, e2), K2 in right.items():
            product[(k1 + k2, e1 + e2)] += K1 * K2
    return dict(product)


def _close_beta(integrand, t, shape: _BetaShape, budget) -> Closed | None:
    c = shape.c
    w = fresh_symbol("w", integrand, positive=True)
    normal_form = sympy.Add(*(K * t**k * (c + t**2) ** E for K, k, E in shape.terms))
    # t**k (c + t**2)**E dt = c**((k+1)/2 + E)/2 * w**(a - 1) (1 - w)**(b - 1) dw, with
    # a = (k + 1)/2 and b = -E - (k + 1)/2.
    betas = [
        (_tidy_constant(K * c ** ((k + 1) / 2 + E) / 2), (k + 1) / 2, -E - (k + 1) / 2)
        for K, k, E in shape.terms
    ]
    if any(parameter.is_positive is not True for _, a, b in betas for parameter in (a, b)):
        return None  # a Beta integral diverges, or its convergence cannot be proved
    conditions = [f"a = {sympy.sstr(a)} > 0 and b = {sympy.sstr(b)} > 0" for _, a, b in betas]
    kernel, kernel_a, kernel_b = _euler_beta_kernel(budget)
    beta_form = sympy.Add(*(coefficient * sympy.beta(a, b) for coefficient, a, b in betas))
    value = sympy.Add(
        *(
            coefficient * kernel.xreplace({kernel_a: a, kernel_b: b})
            for coefficient, a, b in betas
        )
    )
    value = _tidy_gamma(value)
    if not _is_closed(value, t):
        return None
    w_integrand = sympy.Add(
        *(coefficient * w ** (a - 1) * (1 - w) ** (b - 1) for coefficient, a, b in betas)
    )
    c_text = sympy.sstr(c)
    steps = (
        ProofStep(
            claim=f"Write the integrand as a sum of terms K*t**k*(c + t**2)**E with c = {c_text}.",
            lhs=_half_line(integrand, t),
            rhs=_half_line(normal_form, t),
            justification=(
                "(b*t**j*(c + t**2)**m)**e = b**e * t**(j*e) * (c + t**2)**(m*e) for a "
                "positive base; what remains is a polynomial in t over powers of t and c + t**2."
            ),
            strategy=BETA_STRATEGY,
        ),
        ProofStep(
            claim=f"Substitute t = sqrt(c*w/(1 - w)), i.e. w = t**2/(c + t**2), with c = {c_text}.",
            lhs=_half_line(normal_form, t),
            rhs=sympy.Integral(w_integrand, (w, 0, 1)),
            justification=(
                "the substitution maps t**k*(c + t**2)**E dt to one half of "
                "c**((k + 1)/2 + E) * w**((k - 1)/2) * (1 - w)**(-E - (k + 3)/2) dw."
            ),
            strategy=BETA_STRATEGY,
        ),
        ProofStep(
            claim="Integrate each term with Euler's Beta integral.",
            lhs=sympy.Integral(w_integrand, (w, 0, 1)),
            rhs=beta_form,
            justification=(
                "Integral(w**(a - 1)*(1 - w)**(b - 1), (w, 0, 1)) = beta(a, b), which converges "
                "if and only if a > 0 and b > 0; here " + "; ".join(conditions) + " (true for "
                "the positive symbols), so every term converges and the integral of the sum is "
                "the sum of the integrals."
            ),
            strategy=BETA_STRATEGY,
        ),
        ProofStep(
            claim="Express the Beta functions through gamma functions and simplify.",
            lhs=beta_form,
            rhs=value,
            justification=(
                "beta(a, b) = gamma(a)*gamma(b)/gamma(a + b) for a, b > 0, then "
                "gamma(z + 1) = z*gamma(z)."
            ),
            strategy=BETA_STRATEGY,
        ),
    )
    return value, steps


_KERNEL_A = sympy.Dummy("a", positive=True)
_KERNEL_B = sympy.Dummy("b", positive=True)
_KERNEL_W = sympy.Dummy("w", positive=True)
_kernel_cache: list[sympy.Expr] = []


def _integrate_beta_kernel() -> sympy.Expr:
    # The Meijer G route closes it in about a second, the default route takes several; it
    # comes back as a 2F1 at 1, which hyperexpand turns into gamma functions (Gauss).
    integral = sympy.integrate(
        _KERNEL_W ** (_KERNEL_A - 1) * (1 - _KERNEL_W) ** (_KERNEL_B - 1),
        (_KERNEL_W, 0, 1),
        meijerg=True,
    )
    return sympy.gammasimp(sympy.hyperexpand(integral))


def _euler_beta_kernel(budget: float) -> tuple[sympy.Expr, sympy.Symbol, sympy.Symbol]:
    """Euler's Beta integral for symbolic a, b > 0, closed once by SymPy and then reused."""
    if not _kernel_cache:
        kernel = run_with_budget(
            _integrate_beta_kernel, seconds=budget, what="integrate the Beta kernel"
        )
        expected = sympy.gamma(_KERNEL_A) * sympy.gamma(_KERNEL_B) / sympy.gamma(
            _KERNEL_A + _KERNEL_B
        )
        if sympy.simplify(sympy.gammasimp(kernel / expected)) != 1:
            raise DerivationError(f"unexpected Beta kernel {sympy.sstr(kernel)}")
        _kernel_cache.append(kernel)
    return _kernel_cache[0], _KERNEL_A, _KERNEL_B


def _tidy_gamma(value: sympy.Expr) -> sympy.Expr:
    # gammasimp leaves gamma(nu/2 + 3/2)/gamma(nu/2 + 5/2) alone; expand_func writes both
    # through gamma(nu/2 + 1/2) so that cancel can divide them out.
    tidied = sympy.factor(sympy.gammasimp(sympy.cancel(sympy.expand_func(value))))
    simplified = sympy.simplify(tidied)
    return simplified if sympy.count_ops(simplified) <= sympy.count_ops(tidied) else tidied


# --------------------------------------------------------------------------------------------
# Closer 2: power series in q = exp(-t), termwise integration, zeta and eta values


@dataclass(frozen=True)
class _SeriesShape:
    """``integrand = sum(t**k * R_k(q) for k, R_k in coefficients.items())``, q = exp(-rate*t)."""

    rate: sympy.Expr
    q: sympy.Symbol
    coefficients: dict[int, sympy.Expr]


@dataclass(frozen=True)
class _PowerSeries:
    """``R(q) = sum_i finite[i]*q**i + sum_{n>=0} sum_(A, m, r) A*binomial(n+m-1, m-1)*r**n*q**n``
    for 0 < q < 1, r = +1 or -1 (partial fractions A/(1 - r*q)**m)."""

    finite: dict[int, sympy.Expr]
    pieces: tuple[tuple[sympy.Expr, int, int], ...]

    def coefficient(self, n: sympy.Symbol, r: int) -> sympy.Expr:
        """The polynomial in n multiplying r**n*q**n (from the pieces with this r)."""
        return sympy.expand_func(
            sympy.Add(*(A * sympy.binomial(n + m - 1, m - 1) for A, m, r_ in self.pieces if r_ == r))
        )


def close_by_exponential_series(
    integrand: sympy.Expr, t: sympy.Symbol, *, budget: float
) -> Closed | None:
    """Close ``Integral(integrand, (t, 0, oo))`` for ``integrand = sum_k t**k * R_k(exp(-t))``.

    The ``R_k`` are rational with ``R_k(0) = 0`` and poles only at ``q = 1`` (of order at most
    ``k``) and ``q = -1``; the integrand may be written with ``exp(t)``, ``exp(-t/2)``,
    ``tanh(t/2)``, ``cosh``, ... Declines (returns ``None``) for other shapes.
    """
    positive_integrand, positive = _on_half_line(integrand, t)
    if _gamma_kernels_only(positive_integrand, positive):
        return None  # Euler's Gamma integral closes it directly: no series to sum
    try:
        rate = _common_rate(positive_integrand, positive)
        if rate is None:
            return None
        if rate != 1:  # exp(-pi*t/2): in u = pi*t the exponentials are powers of exp(-u/2)
            return _rescaled_series(positive_integrand, positive, rate, t, budget)
        shape = _exponential_shape(positive_integrand, positive)
        if shape is None:
            return None
        closed = _close_series(positive_integrand, positive, shape, budget)
    except BudgetExceeded:
        raise
    except _DECLINE:
        return None
    return _in_variable(closed, positive, t)


def _gamma_kernels_only(integrand, t) -> bool:
    """Whether every term of the integrand is ``t**k * exp(-c*t + d)`` with a constant
    ``c > 0``: a sum of Gamma integrals, whose series in ``q = exp(-t)`` would have one term
    (the simplest route is Euler's integral, not a series)."""
    expanded = sympy.expand(sympy.powsimp(integrand.rewrite(_HYPERBOLIC, sympy.exp),
                                          combine="exp"))
    for term in sympy.Add.make_args(expanded):
        for factor in sympy.Mul.make_args(term):
            if not factor.has(t):
                continue
            base, exponent = factor.as_base_exp()
            if base == t and exponent.is_number and exponent.is_nonnegative:
                continue
            if isinstance(factor, sympy.exp):
                slope = sympy.expand(factor.args[0]).coeff(t)
                if not (sympy.expand(factor.args[0]) - slope * t).has(t) and slope.is_negative:
                    continue
            return False
    return True


def _common_rate(integrand, t) -> sympy.Expr | None:
    """The positive constant ``c`` with every exponential ``exp(r*c*t + ...)`` at a rational
    ``r`` (1 when the rates are rational already), or None."""
    rewritten = integrand.rewrite(_HYPERBOLIC, sympy.exp)
    slopes = [sympy.expand(e.exp).coeff(t) for e in rewritten.atoms(sympy.exp) if e.has(t)]
    if not slopes or any(slope == 0 or slope.has(t) for slope in slopes):
        return None
    rate = sympy.Mul(*[f for f in sympy.Mul.make_args(slopes[0]) if not f.is_Rational])
    if rate.is_positive is not True or any(not sympy.cancel(s / rate).is_Rational for s in slopes):
        return None
    return rate


def _rescaled_series(integrand, t, rate, caller, budget) -> Closed | None:
    u = fresh_symbol("u", integrand, positive=True)
    rescaled = sympy.powsimp(integrand.xreplace({t: u / rate}) / rate)
    closed = close_by_exponential_series(rescaled, u, budget=budget)
    if closed is None:
        return None
    value, steps = closed
    step = ProofStep(
        claim=f"Substitute t = u/{sympy.sstr(rate)}.",
        lhs=_half_line(integrand, t).xreplace({t: caller}),
        rhs=sympy.Integral(rescaled, (u, 0, sympy.oo)),
        justification=f"a linear change of variable, dt = du/{sympy.sstr(rate)}: the "
                      "exponentials become powers of exp(-u) with rational exponents",
        strategy=SERIES_STRATEGY,
    )
    return value, (step, *steps)


def _exponential_shape(integrand, t) -> _SeriesShape | None:
    """Recognise ``sum_k t**k * R_k(exp(-rate*t))``, or return None."""
    if not integrand.has(t):
        return None
    rewritten = integrand.rewrite(_HYPERBOLIC, sympy.exp)
    exponentials = [e for e in rewritten.atoms(sympy.exp) if e.has(t)]
    if not exponentials:
        return None
    slopes = {}
    for exponential in exponentials:
        argument = sympy.expand(exponential.exp)
        slope = argument.coeff(t)
        rest = argument - slope * t
        if not slope.is_Rational or slope == 0 or rest.has(t):
            return None  # exp(-t**2/2), exp(nu*t), ...: not a power of exp(-t)
        slopes[exponential] = (slope, rest)
    # p = exp(-t/L) makes every exponential an integer power of p.
    lcm = reduce(sympy.ilcm, (slope.q for slope, _ in slopes.values()), 1)
    p = fresh_symbol("p", rewritten, positive=True)
    in_p = rewritten.xreplace(
        {e: sympy.exp(rest) * p ** (-slope * lcm) for e, (slope, rest) in slopes.items()}
    )
    if not in_p.is_rational_function(t, p):
        return None
    numerator, denominator = sympy.fraction(sympy.cancel(sympy.together(in_p)))
    if denominator.has(t):
        return None
    numerator_poly = sympy.Poly(numerator, t, p)
    denominator_poly = sympy.Poly(denominator, p)
    # The largest d with everything a function of p**d gives the slowest exponential q.
    degrees = [j for (_, j) in numerator_poly.monoms()] + [
        j for (j,) in denominator_poly.monoms()
    ]
    step = reduce(sympy.igcd, degrees, 0)
    if step == 0:
        return None
    q = fresh_symbol("q", rewritten, positive=True)
    denominator_q = sympy.Add(
        *(coeff * q ** (j // step) for (j,), coeff in denominator_poly.terms())
    )
    by_power = defaultdict(lambda: sympy.S.Zero)
    for (k, j), coeff in numerator_poly.terms():
        by_power[k] += coeff * q ** (j // step)
    coefficients = {k: sympy.cancel(num / denominator_q) for k, num in by_power.items()}
    return _SeriesShape(sympy.Rational(step, lcm), q, coefficients)


def _power_series(R, q, k) -> _PowerSeries | None:
    """Partial fractions of R in q, read as a power series on 0 < q < 1, or None: the pieces
    of :func:`_binomial_pieces` when every pole is at q = 1 or q = -1 (``A/(1 - r*q)**m`` with
    a constant ``A``; other poles on the unit circle take the Hurwitz path)."""
    split = _binomial_pieces(R, q, k)
    if split is None:
        return None
    finite, pieces = split
    if any(d != 1 or A.has(q) for A, _, _, d in pieces):
        return None  # e.g. 1/(1 + q**2): poles off the real axis
    return _PowerSeries(finite, tuple((A, m, r) for A, m, r, _ in pieces))


@dataclass
class _DirichletForm:
    """The integral as ``finite + sum_p zeta[p]*zeta(p) + sum_p eta[p]*eta(p)``, with the
    intermediate forms of the integrand that the proof steps show."""

    rewritten: sympy.Expr = sympy.S.Zero  # sum_k t**k * R_k(exp(-rate*t))
    expanded: sympy.Expr = sympy.S.Zero  # the same with every R_k as a series
    finite: sympy.Expr = sympy.S.Zero  # from the polynomial parts of the R_k
    zeta: dict = field(default_factory=lambda: defaultdict(lambda: sympy.S.Zero))
    eta: dict = field(default_factory=lambda: defaultdict(lambda: sympy.S.Zero))
    absolute: bool = True  # whether termwise integration converges absolutely


def _close_series(integrand, t, shape: _SeriesShape, budget) -> Closed | None:
    n = fresh_symbol("n", integrand, integer=True, positive=True)
    form = _dirichlet_form(shape, t, n)
    if form is None:
        return _close_hurwitz_series(integrand, t, shape)
    zeta = {p: a for p, a in ((p, sympy.simplify(a)) for p, a in form.zeta.items()) if a != 0}
    eta = {p: a for p, a in ((p, sympy.simplify(a)) for p, a in form.eta.items()) if a != 0}
    if any(p <= 1 for p in zeta):
        return None  # a harmonic-type divergence (excluded by the pole check; kept as a guard)
    summands = [a / n**p for p, a in zeta.items()]
    summands += [a * (-1) ** (n + 1) / n**p for p, a in eta.items() if p >= 1]
    continued = {p: a for p, a in eta.items() if p < 1}  # eta(p) by analytic continuation
    dirichlet_form = (
        form.finite
        + sympy.Add(*(sympy.Sum(summand, (n, 1, sympy.oo)) for summand in summands))
        + sympy.Add(*(a * sympy.dirichlet_eta(p, evaluate=False) for p, a in continued.items()))
    )
    sums = run_with_budget(
        _sum_each, summands, n, seconds=budget, what="summation of the Dirichlet series"
    )
    value = form.finite + sympy.Add(*sums)
    value += sympy.Add(*(a * sympy.dirichlet_eta(p) for p, a in continued.items()))
    value = sympy.simplify(value.rewrite(sympy.zeta))
    if not _is_closed(value, t) or value.has(sympy.dirichlet_eta):
        return None
    steps = _series_steps(integrand, t, shape, form, dirichlet_form, value)
    return value, steps


def _dirichlet_form(shape: _SeriesShape, t, n) -> _DirichletForm | None:
    """Expand every R_k and integrate termwise: the coefficients of n**(-p) and of
    (-1)**(n + 1)*n**(-p) in sum_k c_{k,n}*k!/(rate*n)**(k + 1)."""
    q, rate, form = shape.q, shape.rate, _DirichletForm()
    exp_q = sympy.exp(-rate * t)
    for k, R in sorted(shape.coefficients.items()):
        series = _power_series(R, q, k)
        if series is None:
            return None
        scale = sympy.factorial(k) / rate ** (k + 1)
        # The constant terms (n = 0 and finite[0]) add up to R(0) = 0 and are dropped.
        finite = {i: d for i, d in series.finite.items() if i >= 1}
        form.finite += sympy.Add(
            *(scale * d / sympy.Integer(i) ** (k + 1) for i, d in finite.items())
        )
        plus, minus = (series.coefficient(n, sign) for sign in (1, -1))
        form.rewritten += t**k * sympy.factor(R).subs(q, exp_q)
        coefficient = sympy.factor(plus) + (-1) ** n * sympy.factor(minus)
        form.expanded += t**k * (
            sympy.Add(*(d * exp_q**i for i, d in finite.items()))
            + sympy.Sum(coefficient * sympy.exp(-rate * n * t), (n, 1, sympy.oo))
        )
        # (-1)**n * n**j * k!/(rate*n)**(k + 1) = -scale * (-1)**(n + 1) * n**(j - k - 1)
        for polynomial, target, sign in ((plus, form.zeta, 1), (minus, form.eta, -1)):
            if polynomial == 0:
                continue
            poly = sympy.Poly(polynomial, n)
            for (j,), coeff in poly.terms():
                target[k + 1 - j] += sign * scale * coeff
            # Absolute convergence needs sum |c_n|/n**(k + 1) < oo, i.e. degree <= k - 1.
            form.absolute &= poly.degree() <= k - 1
    return form


# --------------------------------------------------------------------------------------------
# Closer 2, poles on the unit circle: binomial denominators (1 - r*q**d)**m, Hurwitz zeta values


def _binomial_pieces(R, q, k) -> tuple[dict, list] | None:
    """``R(q)`` as a polynomial part ``{i: c_i}`` plus pieces ``(A(q), m, r, d)`` standing for
    ``A(q)/(1 - r*q**d)**m`` (r = +1 or -1, deg A < d*m), from partial fractions over the
    rationals; None when a denominator is not a power of a binomial ``1 - r*q**d`` (its poles
    at d-th roots of r, e.g. q = ±i for 1 + q**2), or R does not vanish at 0, or a pole at
    q = 1 of order above k makes t**k*R non-integrable at t = 0."""
    numerator, denominator = sympy.fraction(sympy.cancel(R))
    if denominator.subs(q, 0) == 0 or sympy.simplify(numerator.subs(q, 0)) != 0:
        return None
    finite, pieces = defaultdict(lambda: sympy.S.Zero), []
    for term in sympy.Add.make_args(sympy.apart(R, q)):
        term_numerator, term_denominator = sympy.fraction(sympy.factor(term))
        if not term_denominator.has(q):
            for (i,), coeff in sympy.Poly(term, q).terms():
                finite[i] += coeff
            continue
        scale, power = term_denominator.as_independent(q, as_Add=False)
        base, m = power.as_base_exp()
        if not (m.is_Integer and m >= 1):
            return None
        base_poly = sympy.Poly(base, q)
        monomials = base_poly.monoms()
        if len(monomials) != 2 or (0,) not in monomials:
            return None
        d = base_poly.degree()
        constant, leading = base_poly.coeff_monomial(1), base_poly.coeff_monomial(q**d)
        r = sympy.cancel(-leading / constant)
        if r not in (1, -1):
            return None
        if r == 1 and (d != 1 or m > k):
            return None
        pieces.append((sympy.expand(term_numerator / (scale * constant**m)), int(m), int(r), d))
    return dict(finite), pieces


def _hurwitz_tail(r: int, s: int, shift: sympy.Expr) -> sympy.Expr:
    """``Sum(r**n*(n + shift)**(-s), (n, 0, oo))`` as Hurwitz zeta values (by analytic
    continuation in s where it diverges; for r = -1 the continuation is entire). At s = 1 the
    finite part -polygamma(0, a) stands for zeta(1, a): the pieces' poles cancel."""
    def zeta(a):
        return -sympy.polygamma(0, a) if s == 1 else sympy.zeta(s, a)

    if r == 1:
        return zeta(shift)
    return sympy.Integer(2) ** (-s) * (zeta(shift / 2) - zeta((shift + 1) / 2))


def _hurwitz_reflected(value: sympy.Expr) -> sympy.Expr:
    """Combine ``zeta(s, a)`` and ``zeta(s, 1 - a)`` by the reflection formula of the
    polygamma function: ``zeta(s, 1 - a) + (-1)**s zeta(s, a) = -pi/(s - 1)! *
    d**(s-1)/dx**(s-1) cot(pi x)`` at x = a (integer s >= 2), leaving the other combination
    ``zeta(s, 1 - a) - (-1)**s zeta(s, a)`` as it is (Catalan's constant is one)."""
    expanded = sympy.expand(value)
    terms = defaultdict(lambda: sympy.S.Zero)
    rest = sympy.S.Zero
    for term in sympy.Add.make_args(expanded):
        coefficient, function = term.as_independent(sympy.zeta, as_Add=False)
        if isinstance(function, sympy.zeta) and len(function.args) == 2:
            s, a = function.args
            if s.is_Integer and s >= 2 and a.is_Rational and 0 < a < 1:
                terms[(int(s), a)] += coefficient
                continue
        rest += term
    x = sympy.Symbol("x")
    done = set()
    for (s, a), c_a in list(terms.items()):
        if (s, a) in done:
            continue
        b = 1 - a
        c_b = terms.get((s, b), sympy.S.Zero)
        done |= {(s, a), (s, b)}
        if a == b:  # a = 1/2: zeta(s, 1/2) = (2**s - 1) zeta(s)
            rest += c_a * (2**s - 1) * sympy.zeta(s)
            continue
        sign = sympy.Integer(-1) ** s
        closed = (c_b + sign * c_a) / 2
        other = (c_b - sign * c_a) / 2
        reflection = -sympy.pi / sympy.factorial(s - 1) * sympy.diff(
            sympy.cot(sympy.pi * x), x, s - 1).subs(x, a)
        rest += closed * reflection
        if s == 2 and {a, b} == {sympy.Rational(1, 4), sympy.Rational(3, 4)}:
            # Dirichlet's beta(2): zeta(2, 1/4) - zeta(2, 3/4) = 16*Catalan
            rest += other * 16 * sympy.Catalan * (1 if b == sympy.Rational(1, 4) else -1)
        else:
            rest += other * (sympy.zeta(s, b) - sign * sympy.zeta(s, a))
    return rest


def _close_hurwitz_series(integrand, t, shape: _SeriesShape) -> Closed | None:
    """Poles of the R_k on the unit circle (``1 + q**2``: the hyperbolic secant): expand
    ``A(q)/(1 - r*q**d)**m = Sum(binomial(n + m - 1, m - 1)*r**n*A(q)*q**(d*n), (n, 0, oo))``,
    integrate termwise (``Integral(t**k*q**N, (t, 0, oo)) = k!/(rate*N)**(k + 1)``) and sum
    over each residue class of N = d*n + i as Hurwitz zeta values."""
    q, rate = shape.q, shape.rate
    n = fresh_symbol("n", integrand, integer=True, nonnegative=True)
    exp_q = sympy.exp(-rate * t)
    value, rewritten, expanded = sympy.S.Zero, sympy.S.Zero, sympy.S.Zero
    for k, R in sorted(shape.coefficients.items()):
        split = _binomial_pieces(R, q, k)
        if split is None:
            return None
        finite, pieces = split
        scale = sympy.factorial(k) / rate ** (k + 1)
        value += sympy.Add(*(scale * c / sympy.Integer(i) ** (k + 1)
                             for i, c in finite.items() if i >= 1))
        rewritten += t**k * sympy.factor(R).subs(q, exp_q)
        series = sympy.Add(*(c * exp_q**i for i, c in finite.items() if i >= 1))
        for A, m, r, d in pieces:
            weight = sympy.binomial(n + m - 1, m - 1)
            series += sympy.Sum(weight * r**n * A.subs(q, exp_q) * exp_q ** (d * n),
                                (n, 0, sympy.oo))
            for (i,), a_i in sympy.Poly(A, q).terms():
                # Sum over n >= n0 of r**n*P(n)/(d*n + i)**(k + 1), P = the binomial weight;
                # N = d*n + i = 0 (n = 0, i = 0) is the constant term, dropped as R(0) = 0.
                start = 1 if i == 0 else 0
                N = sympy.Symbol("N")
                weight_in_N = sympy.Poly(sympy.expand_func(weight).subs(n, (N - i) / d), N)
                for (j,), c_j in weight_in_N.terms():
                    exponent = k + 1 - j
                    # Sum_{n>=start} r**n (d n + i)**(-exponent)
                    shift = sympy.Rational(i, d) + start
                    tail = r**start * sympy.Integer(d) ** (-exponent) * _hurwitz_tail(r, exponent, shift)
                    value += scale * a_i * c_j * tail
        expanded += t**k * series
    value = sympy.simplify(_hurwitz_reflected(sympy.expand_func(value)))
    if not _is_closed(value, t) or value.has(sympy.polygamma) and value.free_symbols:
        return None
    steps = (
        ProofStep(
            claim=f"Write the integrand as a polynomial in t, rational in q = exp(-{sympy.sstr(rate * t)}).",
            lhs=_half_line(integrand, t), rhs=_half_line(rewritten, t),
            justification=(
                "Hyperbolic functions rewritten through exp; each coefficient R_k(q) vanishes "
                "at q = 0 and its denominator is a power of binomials 1 - r*q**d (r = ±1), "
                "whose zeros lie on the unit circle"),
            strategy=SERIES_STRATEGY),
        ProofStep(
            claim="Expand each coefficient in a power series in q.",
            lhs=_half_line(rewritten, t), rhs=_half_line(expanded, t),
            justification=(
                "partial fractions over the rationals, and A(q)/(1 - r*q**d)**m = "
                "Sum(binomial(n + m - 1, m - 1)*r**n*A(q)*q**(d*n), (n, 0, oo)) for 0 < q < 1"),
            strategy=SERIES_STRATEGY),
        ProofStep(
            claim="Integrate term by term and sum over each residue class.",
            lhs=_half_line(expanded, t), rhs=value,
            justification=(
                f"Integral(t**k*q**N, (t, 0, oo)) = k!/({sympy.sstr(rate)}*N)**(k + 1); the "
                "terms with N = d*n + i give Sum(r**n*(n + i/d)**(-s), (n, 0, oo)), a Hurwitz "
                "zeta value (for r = -1 the difference 2**(-s)*(zeta(s, a/2) - "
                "zeta(s, (a + 1)/2)), entire in s, which by the identity theorem gives the "
                "value of the termwise integral where the series converges only after "
                "continuation); zeta(s, a) and zeta(s, 1 - a) combine by the reflection "
                "formula of the polygamma function (derivatives of the cotangent) into powers "
                "of pi, and zeta(2, 1/4) - zeta(2, 3/4) = 16*Catalan"),
            strategy=SERIES_STRATEGY),
    )
    return value, steps


def _sum_each(summands, n):
    return [sympy.summation(summand, (n, 1, sympy.oo)) for summand in summands]


def _series_steps(integrand, t, shape, form: _DirichletForm, dirichlet_form, value):
    q_text = f"q = exp(-{sympy.sstr(shape.rate * t)})"
    # the exponential rate r of q = exp(-r*t), written out (1 is left out)
    rate_n = "n" if shape.rate == 1 else f"({sympy.sstr(shape.rate)}*n)"
    rate_power = "" if shape.rate == 1 else f"{sympy.sstr(shape.rate)}**(-s)*"
    laplace = (f"Integral(t**k*exp(-{rate_n}*t), (t, 0, oo)) = k!/{rate_n}**(k + 1)")
    if form.absolute:
        termwise = (
            "For t > 0, 0 < q < 1 and the series converges absolutely; since "
            f"Sum(Abs(c_n)*k!/{rate_n}**(k + 1), (n, 1, oo)) < oo, termwise integration is "
            f"justified by Fubini-Tonelli (dominated convergence), with {laplace}."
        )
    else:
        termwise = (
            f"{laplace}. The alternating "
            "coefficients grow polynomially, so the termwise series is summed by analytic "
            "continuation: for Re(s) large, Integral(t**(s - 1)*R_k(q), (t, 0, oo)) = "
            f"gamma(s)*{rate_power}Sum(c_n*n**(-s), (n, 1, oo)) by dominated convergence; the "
            "left side is "
            "analytic for Re(s) > (order of the pole of R_k at q = 1), which includes "
            "s = k + 1, and the right side is a combination of zeta(s - j), regular there, and "
            "of the entire Dirichlet eta(s - j); by the identity theorem they agree at "
            "s = k + 1. So Sum((-1)**(n + 1)*n**(-p), (n, 1, oo)) stands for eta(p) (its Abel "
            "sum; the "
            "ordinary sum when p >= 1)."
        )
    return (
        ProofStep(
            claim=f"Write the integrand as a polynomial in t, rational in {q_text}.",
            lhs=_half_line(integrand, t),
            rhs=_half_line(form.rewritten, t),
            justification=(
                "Hyperbolic functions rewritten through exp (e.g. tanh(u) = (1 - exp(-2*u))/"
                "(1 + exp(-2*u))); each coefficient R_k(q) vanishes at q = 0 (so the integrand "
                "decays exponentially) and has poles only at q = -1 and at q = 1, the latter of "
                "order at most k (so t**k*R_k is integrable at t = 0)."
            ),
            strategy=SERIES_STRATEGY,
        ),
        ProofStep(
            claim=f"Expand each coefficient in a power series in {q_text}.",
            lhs=_half_line(form.rewritten, t),
            rhs=_half_line(form.expanded, t),
            justification=(
                "Partial fractions in q: A/(1 - r*q)**m = Sum(A*binomial(n + m - 1, m - 1)"
                "*r**n*q**n, (n, 0, oo)) for |q| < 1 and r = +1 or -1, plus a polynomial part; "
                "the n = 0 terms cancel because R_k(0) = 0."
            ),
            strategy=SERIES_STRATEGY,
        ),
        ProofStep(
            claim="Integrate term by term.",
            lhs=_half_line(form.expanded, t),
            rhs=dirichlet_form,
            justification=termwise,
            strategy=SERIES_STRATEGY,
        ),
        ProofStep(
            claim="Sum the series.",
            lhs=dirichlet_form,
            rhs=value,
            justification=(
                "the Dirichlet series Sum(n**(-p), (n, 1, oo)) = zeta(p) for p >= 2 and "
                "Sum((-1)**(n + 1)*n**(-p), (n, 1, oo)) = eta(p) = (1 - 2**(1 - p))*zeta(p) for "
                "p >= 1 (eta(1) = log(2)); at p <= 0 the continued values eta(0) = 1/2, "
                "eta(-1) = 1/4, eta(-2) = 0, and so on"
            ),
            strategy=SERIES_STRATEGY,
        ),
    )
