"""Closers by Euler's integrals and differentiation under the integral sign.

Derive stage, inner rungs of the Fisher ladder (called from
:func:`raosym.derive.integrals.close_integral` before SymPy's ``integrate``). The scores of
shape parameters bring logarithms into the integrands: ``d/dk t**k = t**k log t``, and
``d/dnu (1 + t**2/nu)**(-(nu + 1)/2)`` gives ``log(1 + t**2/nu)``. One mechanism closes them
all: a factor ``log(B)**m`` next to a power ``B**e`` is ``d^m/d epsilon^m B**(e + epsilon)`` at
``epsilon = 0``, so the integral is the m-th derivative of a log-free integral with a shifted
exponent, and the log-free integrals are Euler's:

* Gamma: ``Integral(t**a * exp(-b*t**p), (t, 0, oo)) = gamma(s)/(|p| b**s)``, ``s = (a+1)/p``
  (Gumbel after ``u = exp(-t)``, Weibull, Frechet, generalized Gaussian shape);
* Beta on the half-line: ``Integral(t**a * (1 + lam*t**q)**e, (t, 0, oo)) =
  beta(s, -e - s)/(|q| lam**s)``, ``s = (a+1)/q`` (log-logistic, Student-t with nu, beta prime);
* Beta on the unit interval: ``Integral(t**a * (1 - t**q)**e, (t, 0, 1)) =
  beta((a+1)/q, e+1)/q`` (Kumaraswamy).

:func:`close_by_exponential_substitution` maps a doubly exponential kernel on the real line
(``exp(-t - exp(-t))``) onto the half-line by ``u = exp(c*t)``, and
:func:`close_by_decaying_exponential` the half-line onto (0, 1) by ``u = exp(-c*t)`` (the
exponentiated exponential's ``(1 - exp(-lam*t))**(a - 1)``); :func:`close_by_periodic_bessel`
closes ``Integral(P(cos t, sin t) * exp(b*cos t), (t, -pi, pi))`` (von Mises) through
``cos(t)**n exp(b cos t) = d^n/db^n exp(b cos t)`` and ``Integral(exp(b cos t)) = 2 pi I_0(b)``.

Each closer returns ``(value, steps)`` with the :class:`ProofStep` s it really took, or None
when the integrand is not of its shape (it never guesses: every value is checked by mpmath in
the verify stage anyway).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import sympy

from raosym.derive.budget import run_with_budget
from raosym.derive.closers import fresh_symbol
from raosym.derive.steps import ProofStep, UnitCircleIntegral

STRATEGY = "Euler integral"
#: The strategy of the integrals over a period closed through the modified Bessel function I_0.
BESSEL_STRATEGY = "periodic Bessel"
Closed = tuple[sympy.Expr, tuple[ProofStep, ...]]


class _NotMine(Exception):
    """The integrand is not of the shape a closer handles."""


# ------------------------------------------------------------------------ term decomposition


@dataclass
class _Term:
    """``coefficient * t**power * prod(base**e for base, e in kernel) * exp(exponent)
    * prod(log(B)**m for B, m in logs)``."""

    coefficient: sympy.Expr = sympy.S.One
    power: sympy.Expr = sympy.S.Zero
    kernel: dict = field(default_factory=lambda: defaultdict(lambda: sympy.S.Zero))
    exponent: sympy.Expr = sympy.S.Zero
    logs: dict = field(default_factory=lambda: defaultdict(lambda: sympy.S.Zero))

    def expression(self, t, with_logs: bool = True) -> sympy.Expr:
        value = self.coefficient * t**self.power * sympy.exp(self.exponent)
        value *= sympy.Mul(*(base**e for base, e in self.kernel.items()))
        if with_logs:
            value *= sympy.Mul(*(sympy.log(base) ** m for base, m in self.logs.items()))
        return value


def _decompose(integrand: sympy.Expr, t: sympy.Symbol) -> list[_Term]:
    """The integrand (in a positive variable ``t``) as a list of terms, or raise _NotMine."""
    logged = sympy.expand_log(integrand, force=True)
    terms = [_term(term, t) for term in _distributed(logged, t)]
    return [term for term in terms if term.coefficient != 0]


#: More terms than this after multiplying out: not an integrand these closers are for.
_MAX_TERMS = 400


def _distributed(expr: sympy.Expr, t: sympy.Symbol) -> list[sympy.Expr]:
    """The additive terms of ``expr`` with products of sums and positive integer powers of sums
    multiplied out, and nothing else touched: ``sympy.expand`` would also multiply out a
    denominator ``(1 + t**b)**4`` into one polynomial and hide the kernel."""
    if not expr.has(t):
        return [expr]
    if expr.is_Add:
        return [term for arg in expr.args for term in _distributed(arg, t)]
    if expr.is_Mul:
        products = [sympy.S.One]
        for factor in expr.args:
            products = [p * term for p in products for term in _distributed(factor, t)]
            if len(products) > _MAX_TERMS:
                raise _NotMine
        return products
    if expr.is_Pow and expr.base.is_Add and expr.exp.is_Integer and expr.exp > 1:
        return _distributed(sympy.Mul(*[expr.base] * int(expr.exp), evaluate=False), t)
    return [expr]


def _term(expr: sympy.Expr, t: sympy.Symbol) -> _Term:
    term = _Term()
    for factor in sympy.Mul.make_args(expr):
        _absorb(term, factor, t)
    return term


def _absorb(term: _Term, factor: sympy.Expr, t: sympy.Symbol) -> None:
    if not factor.has(t):
        term.coefficient *= factor
        return
    if factor == t:
        term.power += 1
        return
    if isinstance(factor, sympy.exp):
        term.exponent += factor.args[0]
        return
    if isinstance(factor, sympy.log):
        _add_log(term, factor.args[0], sympy.S.One, t)
        return
    if factor.is_Pow and not factor.exp.has(t):
        base, exponent = factor.base, factor.exp
        if base == t:
            term.power += exponent
        elif isinstance(base, sympy.log) and exponent.is_Integer and exponent > 0:
            _add_log(term, base.args[0], exponent, t)
        elif isinstance(base, sympy.exp):
            term.exponent += exponent * base.args[0]
        elif base.is_Mul:
            for inner in base.args:  # (c*t**j)**e = c**e * t**(j*e) needs c > 0 and t > 0
                if inner.is_positive is not True and not inner.has(t):
                    raise _NotMine
                _absorb(term, inner**exponent, t)
        elif base.is_Add:
            term.kernel[base] += exponent
        else:
            raise _NotMine
        return
    raise _NotMine


def _add_log(term: _Term, argument: sympy.Expr, multiplicity, t) -> None:
    if argument == t:
        term.logs[t] += multiplicity
    elif argument.is_Add:
        term.logs[argument] += multiplicity
    else:
        raise _NotMine  # expand_log(force=True) splits every other argument


# ------------------------------------------------------------------------------ base closers


@dataclass(frozen=True)
class _Euler:
    """A log-free integral closed: its value, the substitution and the integral used."""

    value: sympy.Expr
    substituted: sympy.Expr      # the integral after the substitution (for the proof)
    substitution: str
    identity: str
    conditions: tuple[sympy.Expr, ...]  # must be positive at epsilon = 0
    #: The value as the sum of the Gamma values of its terms, unevaluated (``Γ(3) - 2 Γ(2)
    #: + Γ(1)``), for the proof's line before the simplified value; None where not written.
    gamma_values: sympy.Expr | None = None


def _gamma_base(terms: list[_Term], t, lower, upper) -> _Euler:
    """``sum c t**a exp(-b t**p)`` on (0, oo), every term with the same ``b`` and ``p``."""
    if (lower, upper) != (0, sympy.oo) or any(term.kernel for term in terms):
        raise _NotMine
    shapes = {_power_law(term.exponent, t) for term in terms}
    if len(shapes) != 1:
        raise _NotMine
    (b, p), = shapes
    if b.is_positive is not True or (p.is_positive is not True and p.is_negative is not True):
        raise _NotMine
    u = sympy.Dummy("u", positive=True)
    scale = sympy.Abs(p) if p.is_positive is None else abs(p)
    value, substituted, gamma_values, conditions = sympy.S.Zero, sympy.S.Zero, sympy.S.Zero, []
    for term in terms:
        s = (term.power + 1) / p
        constant = term.coefficient / (scale * b**s)
        value += constant * sympy.gamma(s)
        gamma_values += constant * sympy.gamma(s, evaluate=False)
        substituted += constant * u ** (s - 1) * sympy.exp(-u)
        conditions.append(s)
    # No substitution when the kernel is exp(-t) already (t then plays the part of u).
    return _Euler(value, sympy.Integral(substituted, (u, 0, sympy.oo)),
                  "" if b * t**p == t else f"u = {sympy.sstr(b * t**p)}",
                  "Euler's Gamma integral: Integral(u**(s - 1)*exp(-u), (u, 0, oo)) = gamma(s) "
                  "for s > 0", tuple(conditions), gamma_values)


def _power_law(exponent: sympy.Expr, t) -> tuple[sympy.Expr, sympy.Expr]:
    """``(b, p)`` with ``exponent = -b * t**p``."""
    coefficient, power = sympy.expand(exponent).as_independent(t, as_Add=False)
    if power == t:
        return -coefficient, sympy.S.One
    if power.is_Pow and power.base == t and not power.exp.has(t):
        return -coefficient, power.exp
    raise _NotMine


def _beta_base(terms: list[_Term], t, lower, upper) -> _Euler:
    """``sum c t**a (1 + lam t**q)**e`` on (0, oo) or ``sum c t**a (1 - t**q)**e`` on (0, 1)."""
    if any(term.exponent != 0 or len(term.kernel) > 1 for term in terms):
        raise _NotMine
    bases = {base for term in terms for base in term.kernel}
    if len(bases) != 1:
        raise _NotMine
    (base,) = bases
    lam, q = _binomial_base(base, t)
    u = sympy.Dummy("u", positive=True)
    half_line = (lower, upper) == (0, sympy.oo) and lam.is_positive is True
    unit = (lower, upper) == (0, 1) and lam == -1
    if not (half_line or unit) or q.is_positive is not True:
        raise _NotMine
    value, substituted, conditions = sympy.S.Zero, sympy.S.Zero, []
    for term in terms:
        e = term.kernel.get(base, sympy.S.Zero)
        s = (term.power + 1) / q
        if half_line:
            constant = term.coefficient / (q * lam**s)
            b_parameter = -e - s
            substituted += constant * u ** (s - 1) * (1 - u) ** (b_parameter - 1)
        else:
            constant = term.coefficient / q
            b_parameter = e + 1
            substituted += constant * u ** (s - 1) * (1 - u) ** e
        value += constant * sympy.gamma(s) * sympy.gamma(b_parameter) / sympy.gamma(s + b_parameter)
        conditions += [s, b_parameter]
    substitution = (f"u = {sympy.sstr(lam * t**q)}/(1 + {sympy.sstr(lam * t**q)})" if half_line
                    else f"u = {sympy.sstr(t**q)}")
    return _Euler(value, sympy.Integral(substituted, (u, 0, 1)), substitution,
                  "Euler's Beta integral: Integral(u**(a - 1)*(1 - u)**(b - 1), (u, 0, 1)) = "
                  "gamma(a)*gamma(b)/gamma(a + b) for a, b > 0", tuple(conditions))


def _binomial_base(base: sympy.Expr, t) -> tuple[sympy.Expr, sympy.Expr]:
    """``(lam, q)`` with ``base = 1 + lam * t**q``."""
    constant, moving = base.as_independent(t, as_Add=True)
    if constant != 1:
        raise _NotMine
    lam, power = moving.as_independent(t, as_Add=False)
    if power == t:
        return lam, sympy.S.One
    if power.is_Pow and power.base == t and not power.exp.has(t):
        return lam, power.exp
    raise _NotMine


_BASES = (_gamma_base, _beta_base)


# ------------------------------------------------------------- differentiation under the sign


def close_by_euler_integrals(integrand: sympy.Expr, t: sympy.Symbol, lower, upper):
    """``(value, steps, conditions)`` for ``Integral(integrand, (t, lower, upper))`` on (0, oo)
    or (0, 1), or None. ``conditions`` are those of terms that converge only jointly with the
    others (summed by analytic continuation): the Fisher ladder checks the integral there."""
    positive = t if t.is_positive else sympy.Symbol(t.name, positive=True)
    integrand = integrand.xreplace({t: positive})
    try:
        terms = _decompose(integrand, positive)
        if not terms:
            return None
        closed = _close_terms(integrand, terms, positive, lower, upper)
    except (_NotMine, sympy.PolynomialError, TypeError, ValueError):
        return None
    if closed is None:
        return None
    value, steps, conditions = closed
    back = {positive: t}
    return value, tuple(ProofStep(s.claim, None if s.lhs is None else s.lhs.xreplace(back),
                                  s.rhs.xreplace(back), s.justification, s.strategy,
                                  chain=tuple(side.xreplace(back) for side in s.chain))
                        for s in steps), conditions


def _close_terms(integrand, terms, t, lower, upper) -> Closed | None:
    groups: dict[tuple, list[_Term]] = defaultdict(list)
    for term in terms:
        signature = tuple(sorted(((b, m) for b, m in term.logs.items() if m != 0),
                                 key=sympy.default_sort_key))
        groups[signature].append(term)
    epsilon = {}  # one auxiliary exponent per logarithm's argument
    for signature in groups:
        for base, _ in signature:
            epsilon.setdefault(base, sympy.Dummy(f"epsilon{len(epsilon) + 1}", real=True))
    at_zero = {e: 0 for e in epsilon.values()}
    value, derivative_form, substituted_form = (sympy.S.Zero,) * 3
    continued = False  # some term's Euler integral converges only by analytic continuation
    failing = []  # the conditions of those terms: the Fisher ladder tests the integral there
    base_steps = []
    for signature, members in sorted(groups.items(), key=lambda item: sympy.default_sort_key(item[0])):
        shifted = [_shifted(term, signature, epsilon, t) for term in members]
        euler = _first_base(shifted, t, lower, upper)
        for condition in euler.conditions:
            parameter = sympy.simplify(condition.xreplace(at_zero))
            if parameter.is_positive is not True:
                continued = True
                failing.append(parameter > 0)
        orders = [(epsilon[base], int(m)) for base, m in signature]
        log_free = sympy.Add(*(term.expression(t, with_logs=False) for term in shifted))
        plain = sympy.Integral(log_free, (t, lower, upper))
        derivative_form += _at_zero(plain, orders)
        substituted_form += _at_zero(euler.substituted, orders)
        value += _differentiated(euler.value, orders, at_zero)
        base_steps.append(euler)
    value = sympy.simplify(sympy.expand_func(value))
    if value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo, t):
        return None
    normal_form = sympy.Add(*(term.expression(t) for term in terms))
    steps = [ProofStep(
        "Expand the integrand into terms c t^a K log^m B (a power of the kernel K, powers "
        "of the logarithms of its bases B).",
        sympy.Integral(integrand, (t, lower, upper)),
        sympy.Integral(normal_form, (t, lower, upper)),
        "algebraic identity: products multiplied out, logarithms of products and powers "
        "split (every factor is positive on the range)", STRATEGY)]
    if epsilon:
        steps.append(ProofStep(
            "Write each logarithm as a derivative with respect to an auxiliary exponent.",
            sympy.Integral(normal_form, (t, lower, upper)), derivative_form,
            "`log(B)^m B^e = ∂^m/∂epsilon^m B^(e + epsilon)` at epsilon = 0; the log-free "
            "integrals below converge for all epsilon near 0 (their Euler parameters are "
            "positive at epsilon = 0), so differentiation under the integral sign is "
            "justified by dominated convergence", STRATEGY))
    substitutions = ", ".join(dict.fromkeys(euler.substitution for euler in base_steps
                                            if euler.substitution))
    identities = "; ".join(dict.fromkeys(euler.identity for euler in base_steps))
    termwise = _CONTINUATION if continued else (
        "every parameter is positive" + (" at epsilon = 0" if epsilon else "")
        + ", so each term converges")
    steps.append(ProofStep(
        f"Substitute {substitutions}: each term is an Euler integral." if substitutions
        else "Each term is an Euler integral.",
        derivative_form if epsilon else sympy.Integral(normal_form, (t, lower, upper)),
        substituted_form,
        ("the substitution is a smooth monotone bijection onto the new range; then "
         if substitutions else "") + f"{identities}; {termwise}", STRATEGY))
    # Without logarithms each term is a Gamma value: the sum of those values is shown before
    # the simplified one (the Gamma recurrence is what combines them).
    shown = ()
    if not epsilon and all(euler.gamma_values is not None for euler in base_steps):
        gamma_values = sympy.Add(*(euler.gamma_values for euler in base_steps))
        if sympy.sstr(gamma_values) != sympy.sstr(value):
            shown = (gamma_values,)
    steps.append(ProofStep(
        "Evaluate the Euler integrals" + (" and differentiate at epsilon = 0." if epsilon
                                          else "."),
        substituted_form, value,
        "`Γ'(z) = Γ(z) psi(z)` and the derivative of polygamma(n, z) is polygamma(n + 1, z); "
        "psi(1) = -gamma_E and polygamma(1, 1) = pi^2/6"
        if epsilon else ("each term is Euler's Gamma integral above at its exponent"
                         if substitutions else "each term is Euler's Gamma integral "
                         "`Integral(u**(z - 1)*exp(-u), (u, 0, oo)) = gamma(z)` at its "
                         "exponent") + ", with gamma(1) = 1 and gamma(z + 1) = z gamma(z)",
        STRATEGY, chain=shown))
    return value, tuple(steps), tuple(dict.fromkeys(failing))


#: Why a sum of Euler integrals that diverge one by one still gives the integral of the sum.
_CONTINUATION = (
    "some terms converge only for shifted parameters: their values are continued "
    "analytically in an auxiliary exponent beta and the sum taken at beta = 0, where the "
    "whole integral converges")


def _first_base(terms, t, lower, upper) -> _Euler:
    for base in _BASES:
        try:
            return base(terms, t, lower, upper)
        except _NotMine:
            continue
    raise _NotMine


def _shifted(term: _Term, signature, epsilon, t) -> _Term:
    """The term without its logarithms, each log base's exponent shifted by its epsilon."""
    shifted = _Term(term.coefficient, term.power, defaultdict(lambda: sympy.S.Zero, term.kernel),
                    term.exponent)
    for base, _ in signature:
        if base == t:
            shifted.power += epsilon[base]
        else:
            shifted.kernel[base] += epsilon[base]
    return shifted


def _at_zero(expr, orders):
    if not orders:
        return expr
    derivative = sympy.Derivative(expr, *orders)
    return sympy.Subs(derivative, [e for e, _ in orders], [0] * len(orders))


def _differentiated(expr, orders, at_zero):
    for symbol, order in orders:
        expr = sympy.diff(expr, symbol, order)
    return expr.xreplace(at_zero)


# -------------------------------------------------------------- u = exp(c t) on the real line


def close_by_exponential_substitution(integrand: sympy.Expr, t: sympy.Symbol) -> tuple | None:
    """``Integral(integrand, (t, -oo, oo))`` with a doubly exponential kernel
    (``exp(-t - exp(-t))``): substitute ``u = exp(c t)``. Returns ``(step, u_integrand, u)``
    for the caller to close on the half-line, or None."""
    inner = {exponential.args[0] for node in integrand.atoms(sympy.exp)
             for exponential in node.args[0].atoms(sympy.exp) if exponential.has(t)}
    slope = _one_slope(inner, t)
    if slope is None:
        return None
    return _substituted(integrand, t, slope, (-sympy.oo, sympy.oo), (0, sympy.oo),
                        "the doubly exponential kernel becomes a power of u times the "
                        "exponential of a power of u")


def close_by_decaying_exponential(integrand: sympy.Expr, t: sympy.Symbol) -> tuple | None:
    """``Integral(integrand, (t, 0, oo))`` in which ``t`` enters through ``exp(-c t)``
    (``c > 0``) and polynomially (the exponentiated exponential's
    ``(1 - exp(-lam*t))**(a - 1)``): substitute ``u = exp(-c t)``, which maps the half-line onto
    (0, 1), where Euler's Beta integral applies, with ``t = -log(u)/c`` a logarithm.
    Returns ``(step, u_integrand, u)`` for the caller to close on (0, 1), or None."""
    slope = _one_slope({node.args[0] for node in integrand.atoms(sympy.exp) if node.has(t)}, t)
    if slope is None or slope.is_negative is not True:
        return None
    return _substituted(integrand, t, slope, (0, sympy.oo), (0, 1),
                        "the powers of the exponential become powers of u")


def _one_slope(arguments, t):
    """The common ``c`` of exponents ``c*t`` (every argument linear in ``t`` with one slope of
    known sign), or None."""
    slopes = {sympy.expand(argument).coeff(t) for argument in arguments}
    if len(slopes) != 1:
        return None
    (slope,) = slopes
    if slope == 0 or slope.has(t) or (slope.is_positive is not True and slope.is_negative is not True):
        return None
    return slope


_RANGE_NAMES = {(-sympy.oo, sympy.oo): "the real line", (0, sympy.oo): "(0, oo)", (0, 1): "(0, 1)"}


def _substituted(integrand, t, slope, old_range, new_range, effect: str) -> tuple | None:
    u = sympy.Symbol("u", positive=True)
    substituted = integrand.subs(t, sympy.log(u) / slope) / (abs(slope) * u)
    substituted = sympy.powsimp(sympy.expand_power_exp(sympy.expand_log(substituted, force=True)))
    if substituted.has(t):
        return None
    old, new = _RANGE_NAMES[old_range], _RANGE_NAMES[new_range]
    step = ProofStep(
        f"Substitute u = exp({sympy.sstr(slope * t)}).",
        sympy.Integral(integrand, (t, *old_range)),
        sympy.Integral(substituted, (u, *new_range)),
        f"{t} -> exp({sympy.sstr(slope * t)}) is a smooth monotone bijection of {old} "
        f"onto {new}, with {t} = {sympy.sstr(sympy.log(u) / slope)} and "
        f"d{t} = {sympy.sstr(1 / (abs(slope) * u))} du; {effect}",
        STRATEGY)
    return step, substituted, u


def close_by_logarithmic_substitution(integrand: sympy.Expr, x: sympy.Symbol, lower, upper,
                                      *, budget: float) -> tuple | None:
    """``Integral(integrand, (x, lower, upper))`` in which ``x`` enters through one logarithm
    ``log(A(x))`` (the log-normal's ``log(x)``, the logit-normal's ``log(x/(1 - x))``):
    substitute ``t = log(A(x))`` when that leaves no logarithm of ``t`` (a Gaussian integral
    from a log-normal). Returns ``(step, t_integrand, t, t_lower, t_upper)`` or None."""
    t = fresh_symbol("t", integrand, real=True)
    for logarithm in sorted(integrand.atoms(sympy.log), key=sympy.default_sort_key):
        argument = logarithm.args[0]
        if not argument.has(x):
            continue
        mapped = _logarithmic_substitution(integrand, x, argument, t, lower, upper, budget)
        if mapped is not None:
            return mapped
    return None


def _logarithmic_substitution(integrand, x, argument, t, lower, upper, budget) -> tuple | None:
    inverses = run_with_budget(sympy.solve, sympy.Eq(argument, sympy.exp(t)), x, seconds=budget,
                               what=f"the inverse of t = log({sympy.sstr(argument)})")
    if len(inverses) != 1:
        return None
    (inverse,) = inverses
    slope = sympy.factor(sympy.simplify(sympy.diff(inverse, t)))
    if slope.is_positive is not True and slope.is_negative is not True:
        return None  # not shown to be monotone
    # cancel: (exp(t) + 1)**2/(exp(2*t) + 2*exp(t) + 1) is 1, which simplify alone leaves.
    substituted = sympy.simplify(sympy.cancel(sympy.expand_log(
        integrand.subs(x, inverse) * abs(slope), force=True)))
    if substituted.has(x) or any(node.has(t) for node in substituted.atoms(sympy.log)):
        return None
    ends = [sympy.limit(sympy.log(argument), x, lower, "+"),
            sympy.limit(sympy.log(argument), x, upper, "-")]
    if any(end.has(sympy.AccumBounds, sympy.zoo, sympy.nan) for end in ends):
        return None
    # A decreasing map sends the upper end to the lower one; |dx/dt| keeps the sign.
    t_lower, t_upper = reversed(ends) if slope.is_negative else ends
    step = ProofStep(
        f"Substitute {t} = log({sympy.sstr(argument)}).",
        sympy.Integral(integrand, (x, lower, upper)),
        sympy.Integral(substituted, (t, t_lower, t_upper)),
        f"{x} -> log({sympy.sstr(argument)}) is a smooth monotone bijection of "
        f"({sympy.sstr(lower)}, {sympy.sstr(upper)}) onto ({sympy.sstr(t_lower)}, "
        f"{sympy.sstr(t_upper)}), with {x} = {sympy.sstr(inverse)} and "
        f"d{x} = {sympy.sstr(slope)} d{t}",
        "substitution")
    return step, substituted, t, t_lower, t_upper


# ------------------------------------------------- rational functions of cos t, sin t, a period


def close_by_residues(integrand: sympy.Expr, t: sympy.Symbol, lower, upper,
                      interior: dict) -> Closed | None:
    """``Integral(R(cos t, sin t), (t, -pi, pi))`` with ``R`` rational (the wrapped Cauchy
    family, the cardioid): ``z = exp(i t)`` makes it a contour integral over the unit circle,
    ``2 pi i`` times the residues of ``R((z + 1/z)/2, (z - 1/z)/(2i))/(i z)`` at the poles inside.

    Which poles lie inside is read at ``interior``, a point of the parameters' domains: on the
    circle the function is the integrand, finite for every parameter of the (connected) domain,
    so no pole crosses the circle and the poles inside are the same at every point. Returns
    ``(value, steps)`` or None."""
    if (lower, upper) != (-sympy.pi, sympy.pi):
        return None
    c, s = sympy.Dummy("c"), sympy.Dummy("s")
    rational = sympy.expand_trig(integrand).subs({sympy.cos(t): c, sympy.sin(t): s})
    if rational.has(t) or not rational.is_rational_function(c, s):
        return None
    z = fresh_symbol("z", integrand)
    on_circle = sympy.cancel(sympy.together(
        rational.subs({c: (z + 1 / z) / 2, s: (z - 1 / z) / (2 * sympy.I)}) / (sympy.I * z)))
    poles = _poles(sympy.fraction(on_circle)[1], z)
    if poles is None:
        return None
    moduli = [_modulus(pole, interior) for pole, _ in poles]
    if any(abs(modulus - 1) < 1e-12 for modulus in moduli):
        return None
    inside = [pole for pole, modulus in zip(poles, moduli) if modulus < 1]
    residues = [_residue(on_circle, z, pole, order) for pole, order in inside]
    value = sympy.simplify(sympy.factor(2 * sympy.pi * sympy.I * sympy.Add(*residues)))
    if value.has(sympy.I, z):
        return None
    shown = sympy.factor(on_circle, z)  # its poles visible, not a polynomial of degree 12
    steps = (
        ProofStep(
            f"Substitute {z} = exp(i {t}): the integral over the period is one over the unit "
            "circle.", sympy.Integral(integrand, (t, lower, upper)),
            UnitCircleIntegral(shown, z),
            f"cos {t} = (z + 1/z)/2, sin {t} = (z - 1/z)/(2i) and d{t} = dz/(i z) on |z| = 1, "
            "traversed once counterclockwise as t runs over the period", "residues"),
        ProofStep(
            "Sum the residues at the poles inside the unit circle.",
            UnitCircleIntegral(shown, z), value,
            "the residue theorem; the poles inside are "
            + ", ".join(f"z = {sympy.sstr(pole)} (order {order})" for pole, order in inside)
            + ": which lie inside is the same for every parameter of the domain, since the "
            "integrand is finite on the circle (no pole crosses it), and is read at "
            + ", ".join(f"{symbol} = {sympy.sstr(value)}" for symbol, value in
                        sorted(interior.items(), key=lambda item: item[0].name)),
            "residues"),
    )
    return value, steps


def _residue(function: sympy.Expr, z: sympy.Symbol, pole: sympy.Expr, order: int) -> sympy.Expr:
    """The residue of a rational function at a pole: ``P(z0)/Q'(z0)`` at a simple one (the
    cardioid's poles are roots with radicals, where SymPy's series-based ``residue`` took
    minutes), else SymPy's ``residue``."""
    if order != 1:
        return sympy.residue(function, z, pole)
    numerator, denominator = sympy.fraction(function)
    return sympy.simplify(numerator.subs(z, pole) / sympy.diff(denominator, z).subs(z, pole))


def _poles(denominator, z):
    """``[(pole, order)]`` of ``1/denominator`` in ``z``, from its irreducible factors (so that
    ``rho z^2 - (1 + rho^2) z + rho`` gives ``rho`` and ``1/rho``, not square roots), or None
    when a factor has no roots in radicals."""
    poles = []
    for factor, multiplicity in sympy.factor_list(denominator, z)[1]:
        if not factor.has(z):
            continue
        roots = sympy.roots(sympy.Poly(factor, z))
        if sum(roots.values()) != sympy.degree(factor, z):
            return None
        poles += [(root, order * multiplicity) for root, order in roots.items()]
    return poles


def _modulus(pole, interior) -> float:
    return abs(complex(sympy.N(pole.subs(interior), 30)))


# ------------------------------------------------------------- exp(b cos t) over a full period


def close_by_periodic_bessel(integrand: sympy.Expr, t: sympy.Symbol, lower, upper) -> Closed | None:
    """``Integral(P(cos t, sin t) exp(b cos t), (t, -pi, pi))`` through modified Bessel
    functions, or None."""
    if (lower, upper) != (-sympy.pi, sympy.pi):
        return None
    c, s, b = sympy.Dummy("c"), sympy.Dummy("s"), sympy.Dummy("b", positive=True)
    expanded = sympy.expand(sympy.expand_trig(integrand))
    exponents = {e.args[0] for e in expanded.atoms(sympy.exp) if e.has(t)}
    if len(exponents) != 1:
        return None
    (argument,) = exponents
    rate, cosine = sympy.expand(argument).as_independent(t, as_Add=False)
    if cosine != sympy.cos(t) or rate.is_positive is not True:
        return None
    polynomial = expanded.subs(sympy.exp(argument), 1).subs({sympy.cos(t): c, sympy.sin(t): s})
    if polynomial.has(t) or not polynomial.is_polynomial(c, s):
        return None
    poly = sympy.Poly(polynomial, c, s)
    total, reduced = sympy.S.Zero, sympy.S.Zero
    for (i, j), coefficient in poly.terms():
        if j % 2:  # odd in sin t: the integrand changes sign under t -> -t
            continue
        # sin^2 = 1 - cos^2
        cos_polynomial = sympy.Poly(sympy.expand(c**i * (1 - c**2) ** (j // 2)), c)
        for (n,), k in cos_polynomial.terms():
            reduced += coefficient * k * c**n
            total += coefficient * k * sympy.diff(2 * sympy.pi * sympy.besseli(0, b), b, n)
    value = sympy.simplify(total.subs(b, rate))
    value = sympy.simplify(value.rewrite(sympy.besseli))
    steps = (
        ProofStep("Reduce the trigonometric polynomial: odd powers of sin t integrate to 0 and "
                  "sin^2 t = 1 - cos^2 t.", sympy.Integral(integrand, (t, lower, upper)),
                  sympy.Integral(reduced.subs(c, sympy.cos(t)) * sympy.exp(argument),
                                 (t, lower, upper)),
                  "the range is symmetric about 0 and cos is even, sin odd", BESSEL_STRATEGY),
        ProofStep("Write cos(t)^n exp(b cos t) as the n-th derivative in b and integrate: "
                  "the integral of exp(b cos t) over a period is 2 pi I_0(b).",
                  sympy.Integral(reduced.subs(c, sympy.cos(t)) * sympy.exp(argument),
                                 (t, lower, upper)), value,
                  "the n-th derivative in b of the integral representation of I_0, with I_1 "
                  "the derivative of I_0 and I_0 - I_1/b that of I_1", BESSEL_STRATEGY),
    )
    return value, steps
