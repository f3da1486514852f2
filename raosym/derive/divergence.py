"""Rényi and KL divergences between the outputs of a mechanism on adjacent datasets.

Derive stage, called by :mod:`raosym.derive.mechanism`. Input: the family, the two adjacent
densities (``f_D`` and ``f_D'``), the order ``alpha`` as a symbol. Output: a
:class:`RenyiCurve` holding

- the closed form of ``D_alpha(f_D || f_D') = log(∫ f_D^alpha f_D'^(1-alpha)) / (alpha - 1)``
  for a symbolic ``alpha > 1`` (the integral split at every kink, a finite sum for a discrete
  support), the larger of the two directions when they differ;
- the KL divergence, the limit ``alpha -> 1``, as its own result;
- a *stable* form of each, produced by the rewrite rules below and proved equal to the closed
  form (every rule application is a :class:`ProofStep` whose equality SymPy checked):

  1. *exponential split*: each term of the sum ``S`` is ``c_i * exp(x_i)``;
  2. *second order*: ``sum w_i exp(y_i) + r = sum w_i phi(y_i) + (r + sum w_i + sum w_i y_i)``
     with ``phi(y) = exp(y) - 1 - y >= 0`` (:class:`expm1mx`), which removes the first-order
     terms that cancel when the mechanism is nearly private (``alpha -> 1``, large noise);
  3. *log-sum-exp*: ``log sum c_i exp(x_i) = M + log sum c_i exp(x_i - M)``, ``M = max x_i``,
     which removes the overflow when the noise is small;
  4. *log1p/expm1*: ``log(A) = log1p(A - 1) = -log1p(1/A - 1)`` (:class:`log_ratio` picks
     the non-negative argument) and ``w exp(y) - w = w expm1(y)`` where the difference
     simplifies (``log(p/(1-p)) = log1p((2p-1)/(1-p))``).

  The stable Rényi form is ``Piecewise((log1p(second order)/(alpha-1), M <= 2),
  (log-sum-exp, True))``: below the switch every added term is non-negative and nothing
  overflows; above it the log-sum-exp form loses at most a factor 1.5 to cancellation.

When SymPy does not close the integral within its time budget, the curve is numeric only:
``reason`` says why and the verify and emit stages integrate numerically.
"""

from __future__ import annotations

import contextvars
import dataclasses
import itertools
from dataclasses import dataclass

import sympy
from sympy.codegen.cfunctions import expm1, log1p

from raosym.derive import parametric
from raosym.derive.budget import DEFAULT_BUDGET, BudgetExceeded, run_with_budget
from raosym.derive.integrals import integral_reason, is_closed, kinks
from raosym.derive.steps import ProofStep
from raosym.errors import DerivationError
from raosym.functions import RULES, expm1mx, log1pmx, log_ratio
from raosym.spec.model import FamilySpec
from raosym.spec.names import EXCESS_NAME, excess_letter

#: The order of the Rényi divergence (``alpha > 1`` is a hypothesis of every result).
ALPHA = sympy.Symbol("alpha", positive=True)
#: ``alpha - 1``, positive: the symbol the integrals are taken in (SymPy then knows the sign).
_EXCESS = sympy.Symbol(EXCESS_NAME, positive=True)
#: Substitutions under which identities are checked: a parameter in (0, 1) is written
#: ``u/(1 + u)`` with ``u > 0``, so that SymPy knows ``1 - p`` is positive and may split the
#: logarithms of products (a bijection of (0, 1) onto (0, oo), so no generality is lost).
_CHECK_SUBSTITUTION: contextvars.ContextVar = contextvars.ContextVar("substitution",
                                                                   default=None)
#: Above this largest exponent the stable form switches from second order to log-sum-exp.
SWITCH = 2


@dataclass(frozen=True)
class RenyiCurve:
    """The RDP curve of a mechanism and its KL divergence (see the module docstring)."""

    arguments: tuple[sympy.Symbol, ...]
    textbook: sympy.Expr | None
    stable: sympy.Expr | None
    kl: sympy.Expr | None
    kl_stable: sympy.Expr | None
    symmetric: bool | None
    rho: sympy.Expr | None  # D_alpha = rho * alpha for every alpha (zCDP), else None
    first: sympy.Expr       # f_D
    second: sympy.Expr      # f_D'
    steps: tuple[ProofStep, ...] = ()
    reason: str | None = None
    #: lim_{alpha -> oo} D_alpha (the epsilon of pure DP; oo where there is none), or None
    #: when SymPy finds no limit or the curve has no closed form.
    order_infinity_limit: sympy.Expr | None = None
    #: The symbol of the order alpha in the curve's expressions.
    order: sympy.Symbol = ALPHA

    @property
    def closed(self) -> bool:
        return self.textbook is not None

    def integrand(self, reverse: bool = False) -> sympy.Expr:
        """``f_D^alpha f_D'^(1 - alpha)`` (``reverse`` swaps the two), for numeric checks."""
        first, second = (self.second, self.first) if reverse else (self.first, self.second)
        # In log space: far in a tail first**alpha underflows and second**(1 - alpha) would
        # divide by that zero.
        return sympy.exp(ALPHA * log_density(first) + (1 - ALPHA) * log_density(second))

    def kl_integrand(self, reverse: bool = False) -> sympy.Expr:
        first, second = (self.second, self.first) if reverse else (self.first, self.second)
        return first * (log_density(first) - log_density(second))


def log_density(density: sympy.Expr) -> sympy.Expr:
    """``log f`` with the logarithm distributed over products and powers (valid: f > 0), so
    that it stays finite where f itself underflows."""
    return sympy.expand_log(sympy.log(density), force=True)


def unrewritten(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with ``expm1mx``, ``log1pmx``, ``expm1`` and ``log1p`` written out (for
    checks)."""
    return expr.replace(lambda e: isinstance(e, expm1mx), lambda e: e.rewrite(sympy.exp)) \
        .replace(lambda e: isinstance(e, log1pmx), lambda e: e.rewrite(sympy.log)) \
        .replace(lambda e: isinstance(e, expm1), lambda e: sympy.exp(e.args[0]) - 1) \
        .replace(lambda e: isinstance(e, log1p), lambda e: sympy.log(1 + e.args[0])) \
        .replace(lambda e: isinstance(e, log_ratio), lambda e: sympy.log(1 + e.args[0]))


# ----------------------------------------------------------------------------- integrals


def _resolve_kinks(expr: sympy.Expr, x: sympy.Symbol, inside: sympy.Expr) -> sympy.Expr:
    """Replace ``Abs(u)``/``sign(u)`` by ``±u``/``±1``, their values on a piece containing
    the point ``inside`` (the piece lies between consecutive kinks, so the sign is constant)."""

    def sign_at(u):
        value = u.subs(x, inside)
        sign = sympy.sign(sympy.simplify(value))
        if sign not in (1, -1):
            raise DerivationError(f"cannot decide the sign of {u} between two kinks")
        return sign

    expr = expr.replace(lambda e: isinstance(e, sympy.Abs), lambda e: sign_at(e.args[0]) * e.args[0])
    return expr.replace(lambda e: isinstance(e, sympy.sign), lambda e: sign_at(e.args[0]))


def _merged(expr: sympy.Expr) -> sympy.Expr:
    """Powers of products split and exponentials merged (``(e^u/c)^a -> e^(a u) c^-a``)."""
    # No force=True: it would take the real variable for positive and turn |x| into x.
    return sympy.powsimp(sympy.expand_power_base(sympy.powdenest(expr)))


def _beyond_gaussian_integrals(piece: sympy.Expr, x: sympy.Symbol, letter: str) -> str | None:
    """Why SymPy's integrate is not attempted on a piece, or None when it is.

    It is attempted only when every factor raised to the symbolic order is an exponential of a
    polynomial of degree at most 2 in ``x`` (Gaussian and Laplace pieces: it closes those in
    seconds). Otherwise (``(1 + t**2)**(-alpha)``, ``exp(-alpha*|t|**N)``) it would run until
    its time budget, and a clock would choose the route: the curve is computed numerically,
    whatever the machine's speed. ``letter`` is the family's name for the excess."""
    for factor in sympy.Mul.make_args(piece):
        if not (factor.has(_EXCESS) and factor.has(x)):
            continue
        if isinstance(factor, sympy.exp):
            try:
                if sympy.Poly(sympy.expand(factor.args[0]), x).degree() <= 2:
                    continue
            except sympy.PolynomialError:
                pass
        written = factor.xreplace({_EXCESS: sympy.Symbol(letter)})
        return (f"the integrand has the factor {sympy.sstr(written)}, a power whose exponent "
                f"depends on alpha (through {letter} = alpha - 1): it is not an exponential of a "
                f"polynomial of degree at most 2 in {x}, the kind of integral closed "
                "symbolically here")
    return None


def _by_euler_gamma(piece: sympy.Expr, x: sympy.Symbol, lower, upper) -> tuple | None:
    """``Integral(piece, (x, lower, upper))`` of a positive piece by Euler's Gamma integral
    (after ``u = exp(c x)`` on the real line: Gumbel noise), where the decay rate ``b`` of
    ``exp(-b u**p)`` may have either sign: ``(Piecewise((value, b > 0), (oo, True)), steps)``,
    or None when the piece is not of that shape. For ``b <= 0`` the integrand does not decay
    and the integral of a positive function diverges: ``D_alpha = +oo`` there."""
    steps = []
    if (lower, upper) == (-sympy.oo, sympy.oo):
        mapped = parametric.close_by_exponential_substitution(piece, x)
        if mapped is None:
            return None
        step, integrand, u = mapped
        steps.append(step)
    elif (lower, upper) == (0, sympy.oo):
        integrand, u = piece, x
    else:
        return None
    for _ in range(3):  # exp((mu + s*log(u))/s) -> u*exp(mu/s), nested once or twice
        integrand = sympy.expand_power_exp(integrand.replace(
            lambda node: isinstance(node, sympy.exp),
            lambda node: sympy.exp(sympy.expand(node.args[0]))))
    integrand = sympy.powsimp(integrand, combine="exp")  # one exponential, one rate
    rates: dict[sympy.Dummy, sympy.Expr] = {}
    integrand = sympy.expand_power_exp(integrand.replace(
        lambda node: isinstance(node, sympy.exp) and node.has(u),
        lambda node: _with_positive_rate(node, u, rates)))
    if len(rates) != 1:
        return None
    closed = parametric.close_by_euler_integrals(integrand, u, 0, sympy.oo)
    if closed is None or closed[2]:
        return None
    value, euler_steps, _ = closed
    ((rate_symbol, rate),) = rates.items()
    back = {rate_symbol: rate}
    steps += [ProofStep(step.claim, None if step.lhs is None else step.lhs.xreplace(back),
                        step.rhs.xreplace(back), step.justification, step.strategy)
              for step in euler_steps]
    # The sign of the rate is that of its factors not known to be positive.
    sign_part = sympy.Mul(*(factor for factor in sympy.Mul.make_args(rate)
                            if factor.is_positive is not True))
    sign_part = -sympy.expand(-sign_part) if sign_part.could_extract_minus_sign() else sign_part
    value = sympy.simplify(value.xreplace(back))
    if _provably_positive(sign_part):
        steps.append(ProofStep("The rate is positive for every order: the integral converges.",
                               sympy.Integral(integrand.xreplace(back), (u, 0, sympy.oo)),
                               value, f"{sympy.sstr(sign_part)} > 0, since exp(z) > 1 for "
                               "z > 0", "convergence"))
        return value, tuple(steps)
    result = sympy.Piecewise((value, sign_part > 0), (sympy.oo, True))
    steps.append(ProofStep(
        "Where the rate is not positive the integrand does not decay: the integral diverges.",
        sympy.Integral(integrand.xreplace(back), (u, 0, sympy.oo)), result,
        f"for {sympy.sstr(rate)} <= 0 the positive integrand is bounded below by a positive "
        "power of u times a constant, so its integral over (0, oo) is +oo", "divergence"))
    return result, tuple(steps)


def _provably_positive(expr: sympy.Expr) -> bool:
    """``expr > 0`` by SymPy's assumptions, after writing each ``exp(z)`` with a provably
    positive ``z`` as ``1 + w`` with ``w > 0``."""
    ones = {node: 1 + sympy.Dummy("w", positive=True) for node in expr.atoms(sympy.exp)
            if node.args[0].is_positive}
    return bool(sympy.expand(expr.xreplace(ones)).is_positive)


def near_order_one(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with each ``Piecewise((value, condition), (oo, True))`` of a curve replaced by
    ``value`` when the condition holds as the order tends to 1 (``a -> 0+``), as for the
    limit that gives the KL divergence."""
    def branch(piecewise):
        (value, condition), (rest, _) = piecewise.args
        # The margin is continuous in a (a sum of exponentials of a): its value at a = 0.
        margin = (condition.lhs - condition.rhs).subs(_EXCESS, 0)
        holds = margin.is_positive if condition.rel_op in (">", ">=") else margin.is_negative
        return value if rest == sympy.oo and holds else piecewise
    return expr.replace(lambda node: isinstance(node, sympy.Piecewise) and len(node.args) == 2
                        and isinstance(node.args[0][1], sympy.core.relational.Relational),
                        branch)


def _with_positive_rate(node: sympy.exp, u: sympy.Symbol, rates: dict) -> sympy.Expr:
    """``exp(c - b u**p)`` with ``b`` of unknown sign as ``exp(c - beta u**p)``, ``beta`` a
    positive symbol recorded in ``rates`` (the Gamma closer needs a positive rate)."""
    parts = sympy.collect(sympy.expand(node.args[0]), u, evaluate=False)
    powers = [key for key in parts if key.has(u)]
    if len(powers) != 1:
        return node
    (power,) = powers
    rate = sympy.factor(-parts[power])
    if rate.is_positive:
        return node
    symbol = sympy.Dummy("beta", positive=True)
    rates[symbol] = rate
    return sympy.exp(parts.get(sympy.S.One, 0) - symbol * power)


def _integrate(integrand, x, lower, upper):
    return sympy.integrate(integrand, (x, lower, upper), conds="none")


def _shown_value(value: sympy.Expr) -> sympy.Expr:
    """A piece's value as its proof shows it: on the whole line the error functions of a
    Gaussian antiderivative take their limits ±1 and cancel, so the value is simplified
    (the sum of the pieces, which the later steps use, is simplified the same way); else
    each product of exponentials is merged into one (``e^{-Delta/b} e^{-a Delta/b}`` as
    ``e^{-Delta (a + 1)/b}``, the form the sum of the pieces shows it in)."""
    if value.has(sympy.erf, sympy.erfc):
        return sympy.powsimp(sympy.simplify(value))
    return sympy.powsimp(value)


def _sorted_kinks(points: list[sympy.Expr], sample: dict) -> list[sympy.Expr]:
    unique = list(dict.fromkeys(points))
    return sorted(unique, key=lambda point: float(point.subs(sample)))


def _inside(lower: sympy.Expr, upper: sympy.Expr) -> sympy.Expr:
    """A point strictly between two breaks (either may be infinite)."""
    if lower.is_infinite and upper.is_infinite:
        return sympy.S.Zero
    if lower.is_infinite:
        return upper - 1
    if upper.is_infinite:
        return lower + 1
    return (lower + upper) / 2


def _piecewise_integral(integrand, spec: FamilySpec, arguments, budget) -> tuple:
    """``∫ integrand`` over the support, split at the kinks; (value, steps) or (None, reason)."""
    x = spec.variable
    support = spec.support
    if support.kind == "finite":
        terms = [integrand.subs(x, point) for point in support.points]
        value = sympy.Add(*[_merged(term) for term in terms])
        step = ProofStep("The sum over the points of the support.",
                         over_support(integrand, spec),
                         value, f"x takes the values {support.text}", "finite sum")
        return value, (step,)
    if support.kind != "interval":
        return None, "an infinite discrete support (series not attempted)"
    sample = {symbol: sympy.Rational(k + 2, k + 3) for k, symbol in enumerate(arguments)}
    breaks = [support.lower, *_sorted_kinks(kinks(integrand, x), sample), support.upper]
    steps, total = [], sympy.S.Zero
    for lower, upper in itertools.pairwise(breaks):
        inside = _inside(lower, upper)
        piece = _merged(_resolve_kinks(_merged(integrand), x, inside))
        unsuited = _beyond_gaussian_integrals(piece, x, excess_letter(spec))
        if unsuited is not None:
            closed = _by_euler_gamma(piece, x, lower, upper)
            if closed is None:
                return None, unsuited
            value, euler_steps = closed
            steps += euler_steps
            total += value
            continue
        try:
            value = run_with_budget(_integrate, piece, x, lower, upper, seconds=budget,
                                    what=f"the Rényi integral over ({lower}, {upper})")
        except BudgetExceeded as error:
            # An error of the family, not the numeric route and not "accounting
            # unavailable": a clock must not choose what the generated files hold.
            raise BudgetExceeded(f"the Rényi integral: {error}") from None
        except (DerivationError, NotImplementedError, ValueError, TypeError) as error:
            return None, f"SymPy's integrate failed ({type(error).__name__}: {error})"
        if not is_closed(value):
            return None, (f"SymPy returned no closed form on ({lower}, {upper}) for symbolic "
                          f"alpha (it gave {sympy.sstr(value)[:120]})")
        claim = ("The integral over the support." if len(breaks) == 2 else
                 f"The piece between {sympy.sstr(lower)} and {sympy.sstr(upper)} (no kink "
                 "inside: each absolute value has a fixed sign there).")
        steps.append(ProofStep(claim, sympy.Integral(piece, (x, lower, upper)),
                               _shown_value(value), integral_reason(piece, x, lower, upper),
                               "split at kinks"))
        total += value
    return total, tuple(steps)


# ----------------------------------------------------------------------------- rewrite rules


def exponential_terms(expr: sympy.Expr) -> tuple[list[tuple], sympy.Expr]:
    """Rule 1: ``expr = sum c_i exp(x_i) + rest``: each term's factors ``exp(u)`` and
    ``b**e`` with a symbolic exponent go into ``x_i`` (``b**e = b**e0 * exp((e - e0) log b)``
    with ``e0`` the exponent's constant part), the others into ``c_i``."""
    terms, rest = [], sympy.S.Zero
    for term in _additive_terms(expr):
        coefficient, exponent = sympy.S.One, sympy.S.Zero
        for factor in sympy.Mul.make_args(term):
            if isinstance(factor, sympy.exp):
                exponent += factor.args[0]
            elif factor.is_Pow and factor.exp.free_symbols and factor.base.free_symbols:
                constant, moving = factor.exp.as_independent(*factor.exp.free_symbols,
                                                            as_Add=True)
                coefficient *= factor.base**constant
                exponent += moving * sympy.log(factor.base)
            else:
                coefficient *= factor
        if exponent == 0:
            rest += term
        else:
            terms.append((coefficient, exponent))
    return _combined(terms), rest


def _has_exponential(expr: sympy.Expr) -> bool:
    return any(isinstance(node, sympy.exp) or (node.is_Pow and node.exp.free_symbols)
               for node in sympy.preorder_traversal(expr))


def _additive_terms(expr: sympy.Expr) -> list[sympy.Expr]:
    """The terms of ``expr`` with sums that hold exponentials distributed (a denominator such
    a sum is factored first), and every other factor left alone: expanding ``(1 - p) * X``
    would split a coefficient into two terms of opposite signs."""
    found = []
    for term in sympy.Add.make_args(expr):
        factors = sympy.Mul.make_args(term)
        if any(f.is_Pow and f.exp.is_negative and f.base.is_Add and _has_exponential(f.base)
               for f in factors):
            term = sympy.powsimp(sympy.factor(term))
            factors = sympy.Mul.make_args(term)
        if any(f.is_Add and _has_exponential(f) for f in factors):
            found += _additive_terms(sympy.expand_mul(term, deep=False))
        else:
            found.append(sympy.powsimp(term))
    return found


def _combined(terms: list[tuple]) -> list[tuple]:
    """Terms with equal exponents added (``c1 e^x + c2 e^x = (c1 + c2) e^x``); an exponent
    that is minus an earlier one is written so (``-a*log(p/(1-p))``, not
    ``a*log((1-p)/p)``), so that later sums see the common logarithm."""
    merged: dict = {}
    for coefficient, exponent in terms:
        exponent = _tidy_exponent(exponent)
        for known in merged:
            if _proved_zero(exponent + known):
                exponent = -known
                break
        merged[exponent] = merged.get(exponent, 0) + coefficient
    return [(sympy.factor(c), x) for x, c in merged.items()]


def _proved_zero(expr: sympy.Expr) -> bool:
    """Whether SymPy proves ``expr == 0`` (under the checking substitution)."""
    expr = unrewritten(expr).subs(_CHECK_SUBSTITUTION.get() or {})
    return sympy.simplify(expr) == 0 or sympy.simplify(_forced(expr)) == 0


def _tidy_remainder(expr: sympy.Expr) -> sympy.Expr:
    """A sum of logarithms with rational coefficients: each coefficient over one
    denominator and factored, common factors pulled out, logarithms combined."""
    expr = sympy.expand(expr, log=False)
    logs = sorted(expr.atoms(sympy.log), key=sympy.default_sort_key)
    plain = expr.subs({log: 0 for log in logs})
    total = sympy.factor(sympy.together(plain))
    total += sympy.Add(*[sympy.factor(sympy.together(expr.coeff(log))) * log for log in logs])
    return _tidy_exponent(total)


def _tidy_exponent(exponent: sympy.Expr) -> sympy.Expr:
    """Factored, with sums of logarithms combined: ``a*(log(p) - log(1 - p))`` becomes
    ``a*log(p/(1 - p))``, whose argument rule 4 can then shift by 1 without cancellation."""
    # factor_terms, not factor: factor would expand log(p/(1 - p)) into a difference.
    return sympy.factor_terms(exponent).replace(lambda e: e.is_Add, _combine_logs)


def _combine_logs(add: sympy.Add) -> sympy.Expr:
    """``sum k_i C log(u_i)`` (integers k_i, a common factor C) as ``C log(prod u_i**k_i)``;
    valid for positive ``u_i`` (values of densities and positive parameters)."""
    common, product = None, sympy.S.One
    for term in add.args:
        logs = [f for f in sympy.Mul.make_args(term) if isinstance(f, sympy.log)]
        if len(logs) != 1:
            return add
        coefficient = term / logs[0]
        common = coefficient if common is None else common
        ratio = sympy.cancel(coefficient / common)
        if not ratio.is_Integer:
            return add
        product *= logs[0].args[0] ** ratio
    return common * sympy.log(product)


def second_order(expr: sympy.Expr) -> sympy.Expr:
    """Rule 2: ``sum w_i exp(y_i) + r = sum w_i phi(y_i) + (r + sum w_i + sum w_i y_i)``."""
    terms, rest = exponential_terms(expr)
    remainder = _tidy_remainder(rest + sum(w + w * y for w, y in terms))
    return sympy.Add(*[w * expm1mx(y) for w, y in terms]) + remainder


def log1p_form(expr: sympy.Expr) -> sympy.Expr:
    """Rule 4: every ``log(A)`` (A not a bare symbol or number) becomes ``log1p(A - 1)``, with
    ``A - 1`` over one denominator (``p/(1 - p) - 1 = (2p - 1)/(1 - p)``: the 1 cancels
    exactly) or, when ``A`` holds exponentials whose coefficients add up to 1, as
    ``sum w_i expm1(y_i)``. Top-down, so that an outer logarithm is shifted before the
    logarithms inside it are rewritten."""
    if isinstance(expr, sympy.log) and not (expr.args[0].is_Symbol or expr.args[0].is_Number):
        argument = expr.args[0]
        if exponential_terms(argument - 1)[0]:
            shifted = expm1_form(argument - 1)
        else:
            shifted = sympy.factor(sympy.together(argument - 1))
            inverse = sympy.factor(sympy.together(1 / argument - 1))
            if _proved_zero((1 + shifted) * (1 + inverse) - 1):
                return log_ratio(log1p_form(shifted), log1p_form(inverse))
        return log1p(log1p_form(shifted))
    if not expr.args or isinstance(expr, (sympy.Symbol, sympy.Number)):
        return expr
    return expr.func(*[log1p_form(argument) for argument in expr.args])


def expm1_form(expr: sympy.Expr) -> sympy.Expr:
    """``sum w_i exp(y_i) + r -> sum w_i expm1(y_i)`` when ``r = -sum w_i`` exactly."""
    terms, rest = exponential_terms(expr)
    if not terms or sympy.simplify(rest + sum(w for w, _ in terms)) != 0:
        return expr
    return sympy.Add(*[w * expm1(y) for w, y in terms])


# ----------------------------------------------------------------------------- the curve


def derive_renyi(spec: FamilySpec, first: sympy.Expr, second: sympy.Expr, arguments,
                 *, budget: float = DEFAULT_BUDGET) -> RenyiCurve:
    """The RDP curve ``D_alpha(first || second)`` and the KL divergence, with proof steps."""
    token = _CHECK_SUBSTITUTION.set(_unit_interval_substitution(spec))
    try:
        return _derive_renyi(spec, first, second, arguments, budget)
    finally:
        _CHECK_SUBSTITUTION.reset(token)


def _unit_interval_substitution(spec: FamilySpec) -> dict:
    substitution = {}
    for parameter in spec.parameters:
        domain = parameter.domain
        if domain.lower == 0 and domain.upper == 1 and not domain.integer:
            u = sympy.Dummy(f"u_{parameter.name}", positive=True)
            substitution[parameter.symbol] = u / (1 + u)
    return substitution


def _derive_renyi(spec, first, second, arguments, budget) -> RenyiCurve:
    a = _EXCESS
    # The definition names the two outputs' densities f_D and f_D' instead of substituting
    # them (the next step shows their product); a discrete family sums over its support.
    x = spec.variable
    f_first, f_second = sympy.Function("f_D")(x), sympy.Function("f_D'")(x)
    steps = [ProofStep(
        "Definition of the Rényi divergence of order alpha > 1 between the adjacent outputs "
        f"f_D and f_D' (the family at the two points); below, {excess_letter(spec)} = alpha - 1 "
        "> 0.",
        sympy.Symbol("D_alpha"), sympy.log(over_support(
            f_first**ALPHA * f_second ** (1 - ALPHA), spec)) / (ALPHA - 1),
        "Rényi (1961); Mironov (2017), Definition 3", "definition")]
    forward, found = _sum_of_powers(spec, first, second, arguments, budget)
    common = {"arguments": tuple(arguments), "first": first, "second": second}
    if forward is None:
        return RenyiCurve(textbook=None, stable=None, kl=None, kl_stable=None, symmetric=None,
                          rho=None, steps=tuple(steps), reason=found, **common)
    steps += found
    backward, found_back = _sum_of_powers(spec, second, first, arguments, budget)
    symmetric = backward is not None and sympy.simplify(forward - backward) == 0
    if symmetric:
        total = "sum" if spec.support.discrete else "integral"
        steps.append(ProofStep(f"Both directions give the same {total}: the divergence is "
                               "symmetric between the adjacent outputs.",
                               forward, backward,
                               f"the difference of the two {total}s is identically 0",
                               "symmetry"))
    textbook = sympy.log(forward) / a
    if not symmetric:
        if backward is None:
            return RenyiCurve(textbook=None, stable=None, kl=None, kl_stable=None,
                              symmetric=None, rho=None, steps=tuple(steps),
                              reason=f"the reverse direction has no closed form: {found_back}",
                              **common)
        textbook = sympy.Max(textbook, sympy.log(backward) / a)
        steps.append(ProofStep("The directions differ; the mechanism's curve is the larger.",
                               sympy.Symbol("D_alpha"), textbook, "definition of RDP",
                               "larger direction"))
    kl = _kl_limit(textbook, steps, "sum" if spec.support.discrete else "integral")
    if symmetric:
        stable, kl_stable = _stable_renyi(forward, steps), _stable_kl(forward, kl, steps)
    else:
        stable, kl_stable = _stable_directions(forward, backward, textbook, kl, steps)
    in_alpha = {a: ALPHA - 1}
    textbook_alpha = textbook.subs(in_alpha)
    steps.append(ProofStep("The RDP curve of the mechanism (closed form).",
                           sympy.Symbol("D_alpha"), textbook_alpha, "the steps above",
                           "rdp curve"))
    rho = sympy.simplify(textbook_alpha / ALPHA)
    rho = rho if not rho.has(ALPHA) else None
    if rho is not None:
        steps.append(ProofStep("The curve is linear in alpha: the mechanism is rho-zCDP.",
                               sympy.Symbol("rho"), rho,
                               "Bun and Steinke (2016): D_alpha <= rho*alpha for all alpha > 1",
                               "zCDP"))
    if stable is not None:
        stable = stable.subs(in_alpha)
        stable = stable if stable.has(sympy.Piecewise) else sympy.factor(stable)
    return RenyiCurve(textbook=textbook_alpha, stable=stable,
                      kl=kl, kl_stable=kl_stable, symmetric=symmetric, rho=rho,
                      steps=tuple(steps),
                      order_infinity_limit=_order_infinity_limit(textbook_alpha, budget),
                      **common)


def _order_infinity_limit(curve: sympy.Expr, budget: float) -> sympy.Expr | None:
    """``lim_{alpha -> oo} D_alpha`` by SymPy (the epsilon of pure DP where finite), or None
    when it finds none."""
    try:
        return run_with_budget(sympy.limit, curve, ALPHA, sympy.oo, seconds=budget,
                               what="the limit of the RDP curve as alpha -> oo")
    except (NotImplementedError, ValueError):
        return None


def _sum_of_powers(spec, first, second, arguments, budget):
    """``S(a) = ∫ first^(1+a) second^(-a)``, tidied: (S, steps) or (None, reason)."""
    integrand = first ** (1 + _EXCESS) * second ** (-_EXCESS)
    value, found = _piecewise_integral(integrand, spec, arguments, budget)
    if value is None:
        return None, found
    tidied = sympy.powsimp(value)
    if tidied.has(sympy.erf, sympy.erfc):  # whole-line Gaussian integrals: erf limits cancel
        tidied = sympy.powsimp(sympy.simplify(tidied))
    if len(found) == 1:
        # One piece (no kink, or a finite sum): its step already is the whole sum or
        # integral; adding "the pieces" would repeat it.
        piece = found[0]
        chain = (piece.rhs,) if tidied != piece.rhs else ()
        claim = piece.claim.removesuffix(".") + " (alpha = 1 + a, a > 0)."
        return tidied, (dataclasses.replace(piece, claim=claim, chain=chain, rhs=tidied),)
    step = ProofStep("Adding the pieces (alpha = 1 + a, a > 0).",
                     over_support(integrand, spec), tidied, "sum of the pieces", "sum")
    return tidied, (*found, step)


def over_support(summand: sympy.Expr, spec: FamilySpec) -> sympy.Expr:
    """``summand`` summed (a discrete family) or integrated (a density) over the support."""
    x, support = spec.variable, spec.support
    if support.kind == "finite":
        points = support.points
        if all(point.is_integer for point in points) and (
                points[-1] - points[0] == len(points) - 1):  # consecutive integers
            return sympy.Sum(summand, (x, points[0], points[-1]))
        return sympy.Add(*(summand.subs(x, point) for point in points), evaluate=False)
    if support.kind == "integers":
        return sympy.Sum(summand, (x, support.lower, support.upper))
    return sympy.Integral(summand, (x, support.lower, support.upper))


def _kl_limit(textbook: sympy.Expr, steps: list, total: str = "sum") -> sympy.Expr:
    """KL = lim_{a -> 0} D_{1+a} (L'Hôpital: the sum, or the ``total`` the family has, is 1
    at a = 0)."""
    near_one = near_order_one(textbook)
    # max is continuous: the limit of the larger direction is the larger of the limits.
    directions = near_one.args if isinstance(near_one, sympy.Max) else (near_one,)
    try:
        kl = sympy.Max(*(sympy.simplify(sympy.limit(direction, _EXCESS, 0, "+"))
                         for direction in directions))
    except (NotImplementedError, ValueError) as error:
        raise DerivationError(f"the limit alpha -> 1 of the Rényi divergence: SymPy's limit "
                              f"failed ({type(error).__name__}: {error})") from None
    # force=True splits logarithms of products: their arguments are density values (> 0).
    combined = _tidy_remainder(sympy.expand_log(kl, force=True))
    kl = min((kl, combined), key=sympy.count_ops)
    if not is_closed(kl):
        raise DerivationError(f"the limit alpha -> 1 of the Rényi divergence is not closed: {kl}")
    steps.append(ProofStep("The KL divergence is the limit alpha -> 1 of the Rényi divergence.",
                           sympy.Limit(textbook.subs(_EXCESS, ALPHA - 1), ALPHA, 1, "+"), kl,
                           f"van Erven and Harremoës (2014), Theorem 5; the {total} S(a) inside the "
                           "logarithm has S(0) = 1, so log S(a)/a tends to S'(0) as a -> 0", "KL"))
    return kl


def _checked_equal(lhs: sympy.Expr, rhs: sympy.Expr) -> bool:
    """Whether SymPy proves ``lhs == rhs`` (with the rewritten functions written out); for
    logarithms divided by ``a``, ``exp(a*lhs) == exp(a*rhs)`` (exp is injective on the reals)."""
    substitution = _CHECK_SUBSTITUTION.get() or {}
    lhs, rhs = unrewritten(lhs).subs(substitution), unrewritten(rhs).subs(substitution)
    exponentials = sympy.exp(sympy.expand(_EXCESS * lhs)) - sympy.exp(sympy.expand(_EXCESS * rhs))
    if sympy.simplify(_forced(exponentials)) == 0:
        return True
    difference = lhs - rhs
    # force=True splits powers and logarithms of products: valid here because every base
    # is a value of a density (positive), or a positive parameter.
    for attempt in (sympy.simplify,
                    lambda e: sympy.simplify(_forced(e)),
                    lambda e: sympy.simplify(sympy.exp(_forced(e)) - 1)):
        if attempt(difference) == 0:
            return True
    return False


def _forced(expr: sympy.Expr) -> sympy.Expr:
    """Powers with symbolic exponents as ``exp(e*log(b))``, logarithms of products split,
    exponentials merged: one normal form for both sides of an identity."""
    expr = expr.replace(lambda e: e.is_Pow and bool(e.exp.free_symbols),
                        lambda e: sympy.exp(e.exp * sympy.log(e.base)))
    expr = sympy.expand_log(sympy.expand(expr), force=True)
    return sympy.powsimp(sympy.expand(expr), force=True)


#: The rewrite rules of the module docstring, as the proofs state them.
def _rules(*numbers: int) -> str:
    return "; ".join(RULES[number] for number in numbers)


def _rewrite_step(claim, lhs, rhs, rule, steps) -> None:
    if not _checked_equal(lhs, rhs):
        raise DerivationError(f"the rewrite '{rule}' changed the value: {lhs} vs {rhs}")
    steps.append(ProofStep(claim, lhs, rhs, rule, "stable form"))


def _stable_renyi(forward: sympy.Expr, steps: list) -> sympy.Expr | None:
    """Piecewise((log1p(second order)/a, M <= SWITCH), (log-sum-exp, True))."""
    a = _EXCESS
    terms, rest = exponential_terms(forward)
    if rest != 0 or not terms:
        return None
    total = sympy.Add(*[c * sympy.exp(x) for c, x in terms])
    _rewrite_step("Each term of the sum is a coefficient times an exponential.",
                  forward, total, _rules(1), steps)
    if len(terms) == 1:
        (c, x), = terms
        stable = sympy.expand((sympy.log(c) + x) / a)
        stable = log1p_form(stable)
        _rewrite_step("One exponential: its logarithm is its exponent.", sympy.log(forward) / a,
                      stable, "`log(c*exp(x)) = log(c) + x`", steps)
        return stable
    small = log1p(second_order(total - 1)) / a
    _rewrite_step("Near privacy (largest exponent at most 2): the sum minus 1 as non-negative "
                  "second-order terms, phi(y) = exp(y) - 1 - y.", sympy.log(forward) / a, small,
                  _rules(2), steps)
    exponents = [x for _, x in terms]
    # log(sum c_i e^x_i) = M + log(sum c_i e^(x_i - M)) holds for every M: proved with M a
    # free symbol, then M is the largest exponent (no overflow, and the rest lies in (0, 1]).
    shift = sympy.Dummy("M", real=True)
    generic = shift / a + sympy.log(sympy.Add(*[c * sympy.exp(x - shift) for c, x in terms])) / a
    _rewrite_step("Far from privacy: any M taken out of the logarithm of the sum.",
                  sympy.log(forward) / a, generic, _rules(3), steps)
    largest, largest_over_a = _largest(exponents, a)
    # x - largest unfactored: factor() would split log(p/(1 - p)) into a difference again.
    inner = sympy.Add(*[c * sympy.exp(x - largest) for c, x in terms])
    shifted = log1p_form(sympy.log(inner))
    _rewrite_step("The remaining logarithm, with M the largest exponent, as log(1 + u), where u "
                  "is a sum of terms w (exp(y) - 1).", sympy.log(inner), shifted, _rules(4), steps)
    large = log1p_form(largest_over_a) + shifted / a
    small = log1p_form(small)
    return sympy.Piecewise((small, largest <= SWITCH), (large, True))


def _stable_directions(forward, backward, textbook, kl, steps) -> tuple:
    """``(stable curve, stable KL)`` of a curve whose directions differ (the larger of the
    two), or ``(None, None)`` where a direction is not of the shape below.

    Each direction's ``log(S)/a`` is split into logarithms (``force``: S is a sum of density
    values, positive); a logarithm of ``X(a)``, polynomial in ``a``, becomes ``log(X(0)) +
    log1p((X(a) - X(0))/X(0))`` with ``(X(a) - X(0))/a`` divided out exactly; the terms free
    of ``a`` then add up to ``log(S(0)) = 0`` and are dropped. What is left is of order ``a``
    term by term and divides by ``a`` without the cancellation of ``log(S)/a`` as the order
    tends to 1 (additive Gumbel noise lost 5 digits at alpha = 1 + 1e-12). The KL of each
    direction is put in second order (rule 2)."""
    forms = [_stable_direction(direction) for direction in (forward, backward)]
    if any(form is None for form in forms):
        return None, None
    for direction, form in zip((forward, backward), forms):
        # Checked branch by branch (the infinite branch of a direction is the same in both).
        pairs = (zip((v for v, _ in direction.args), (v for v, _ in form.args))
                 if isinstance(direction, sympy.Piecewise) else [(direction, form)])
        for value, stable_value in pairs:
            if value == sympy.oo:
                continue
            _rewrite_step("A direction as terms of order alpha - 1, divided by alpha - 1.",
                          sympy.log(value) / _EXCESS, stable_value,
                          "`log(X(a)) = log(X(0)) + log(1 + (X(a) - X(0))/X(0))`; the logarithm "
                          "of the sum at a = 0 is log(1) = 0", steps)
    stable = sympy.Max(*forms)
    directions = kl.args if isinstance(kl, sympy.Max) else (kl,)
    kl_stable = sympy.Max(*(log1p_form(second_order(sympy.expand(d))) for d in directions))
    _rewrite_step("The KL divergence of each direction as non-negative second-order terms.",
                  kl, kl_stable, _rules(2), steps)
    return stable, kl_stable


def _stable_direction(total: sympy.Expr) -> sympy.Expr | None:
    """``log(S)/a`` of one direction in the form of :func:`_stable_directions`, or None."""
    a = _EXCESS
    if isinstance(total, sympy.Piecewise):  # (value, condition), (oo, True): a finite branch
        branches = [(_stable_direction(value) if value != sympy.oo else value, condition)
                    for value, condition in total.args]
        if any(value is None for value, _ in branches):
            return None
        return sympy.Piecewise(*branches)
    logarithm = sympy.expand_log(sympy.log(total), force=True)
    free, of_order_a = [], []
    for term in sympy.Add.make_args(sympy.expand(logarithm)):
        if not term.has(a):
            free.append(term)
            continue
        coefficient, rest = term.as_independent(a, as_Add=False)
        if isinstance(rest, sympy.log):
            argument = sympy.cancel(rest.args[0])
            if not argument.is_polynomial(a):
                return None
            at_zero = argument.subs(a, 0)
            if at_zero == 0:
                return None
            free.append(coefficient * sympy.log(at_zero))
            increment = _expm1_increment(sympy.cancel((argument - at_zero) / (a * at_zero)))
            of_order_a.append(coefficient * log1p(a * increment) / a)
        elif term.is_polynomial(a):  # a monomial in a of degree >= 1
            of_order_a.append(sympy.cancel(term / a))
        else:
            return None
    if not _proved_zero(sympy.Add(*free)):
        return None
    return _without_first_order(of_order_a)


def _without_first_order(terms: list) -> sympy.Expr:
    """``sum of terms`` with each ``c*log1p(a*y)/a`` split as ``c*y + c*log1pmx(a*y)/a``
    and the terms free of ``a`` (``d - y``, of first order each, their sum of second) put in
    second order (rule 2): ``d - log1p(a*(1 - exp(-d)))/a`` becomes ``expm1mx(-d) -
    log1pmx(a*(1 - exp(-d)))/a``, two terms of one sign, where ``d`` and the logarithm
    cancelled for small ``d`` (additive Gumbel noise lost 4 digits at Delta/s = 1e-6)."""
    a = _EXCESS
    free, rest = [], []
    for term in terms:
        coefficient, function = term.as_independent(a, as_Add=False)
        inner = [f for f in sympy.Mul.make_args(function) if isinstance(f, log1p)]
        if len(inner) == 1 and sympy.cancel(function * a / inner[0]) == 1:
            y = sympy.cancel(inner[0].args[0] / a)
            if not y.has(a):
                free.append(coefficient * y)
                rest.append(coefficient * log1pmx(a * y) / a)
                continue
        (rest if term.has(a) else free).append(term)
    second = second_order(sympy.expand(unrewritten(sympy.Add(*free))))
    return second + sympy.Add(*rest)


def _expm1_increment(increment: sympy.Expr) -> sympy.Expr:
    """``increment`` with each ``exp(y) - 1`` as ``expm1(y)``: factored, or expanded when that
    is no longer (``(exp(d) - 1)*exp(-d)`` expands to ``1 - exp(-d)``, i.e. ``-expm1(-d)``,
    finite where ``exp(d)`` overflows)."""
    def rewritten(expr):
        return expr.replace(lambda e: e.is_Add, expm1_form)

    factored = rewritten(sympy.factor(increment))
    expanded = rewritten(sympy.expand(increment))
    return expanded if sympy.count_ops(expanded) <= sympy.count_ops(factored) else factored


def _largest(exponents: list[sympy.Expr], a: sympy.Symbol) -> tuple:
    """The largest exponent M and M/a: one provably at least every other, ``Abs`` for a pair
    of opposite exponents, else their ``Max``."""
    for candidate in exponents:
        if all(sympy.simplify(candidate - other).is_nonnegative for other in exponents):
            return candidate, _tidy_exponent(candidate / a)
    if len(exponents) == 2 and _proved_zero(exponents[0] + exponents[1]):
        return sympy.Abs(exponents[0]), sympy.Abs(_tidy_exponent(exponents[0] / a))
    return sympy.Max(*exponents), sympy.Max(*[_tidy_exponent(x / a) for x in exponents])


def _stable_kl(forward: sympy.Expr, kl: sympy.Expr, steps: list) -> sympy.Expr:
    """KL = dS/da at a = 0, put in second-order form (rules 1, 2, 4)."""
    derivative = sympy.diff(forward, _EXCESS).subs(_EXCESS, 0)
    stable = log1p_form(second_order(sympy.expand(derivative)))
    stable = stable if sympy.count_ops(stable) <= 3 * sympy.count_ops(kl) + 10 else kl
    _rewrite_step("The KL divergence as non-negative second-order terms (KL = S'(0), the "
                  "derivative of the sum S at a = 0, since S(0) = 1).", kl, stable,
                  _rules(1, 2, 4), steps)
    return stable
