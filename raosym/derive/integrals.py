"""Closing one definite integral (or sum) exactly: the inner rungs of the Fisher ladder.

``close_integral`` takes an integrand and a range, and tries, in order: folding a symmetric
integrand onto (0, oo) (an odd one is 0), splitting at the kinks of ``Abs``/``sign``, SymPy's
``integrate`` under a time budget, and the closers of :mod:`raosym.derive.closers` for kernels
SymPy cannot integrate. Every transformation it applies is recorded as a :class:`ProofStep`.
Results are accepted only when they are closed (:func:`is_closed`); convergence conditions that
SymPy attaches become hypotheses.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from raosym.derive import closers, parametric
from raosym.derive.budget import BudgetExceeded, run_with_budget
from raosym.derive.steps import ProofStep
from raosym.errors import DerivationError

#: Heads of a result that SymPy left unevaluated (``Derivative(zeta(s), s)`` from a Zipf
#: sum is no closed form: neither NumPy nor SciPy evaluates it).
_UNCLOSED_HEADS = (sympy.Integral, sympy.Sum, sympy.meijerg, sympy.hyper, sympy.Limit,
                   sympy.Derivative, sympy.Subs)


@dataclass(frozen=True)
class ClosedIntegral:
    """The exact value of an integral, the steps that closed it, and its convergence conditions."""

    value: sympy.Expr
    steps: tuple[ProofStep, ...]
    conditions: tuple[sympy.Basic, ...] = ()


def is_closed(expr: sympy.Expr) -> bool:
    """Whether ``expr`` is a finite closed form (no integrals, sums, nan, zoo, oo or unevaluated
    special functions that SymPy uses to give up)."""
    if expr.has(*_UNCLOSED_HEADS):
        return False
    if expr.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return False
    return not isinstance(expr, sympy.Piecewise)


def tidy(expr: sympy.Expr) -> sympy.Expr:
    """Canonical form of a closed result: gamma functions combined, powers collected, and
    removable singularities such as ``(N - 1)*gamma(1 - 1/N)`` at ``N = 1`` removed."""
    tidied = sympy.powsimp(sympy.gammasimp(sympy.factor_terms(sympy.cancel(expr))))
    # expand_func turns gamma(z + 1)/gamma(z) into z, which gammasimp misses when z has a
    # symbolic half-integer offset (Student-t); keep the shortest candidate.
    # (simplify of the expanded form only when expanding changed something: the same call
    # again would give the same candidate, and simplify is most of a derivation's time.)
    expanded = sympy.expand_func(tidied)
    candidates = [tidied, simplified := sympy.simplify(tidied),
                  simplified if expanded == tidied else sympy.simplify(expanded),
                  sympy.factor(tidied)]
    shifted = shift_polygammas(tidied) if tidied.has(sympy.polygamma) else tidied
    if shifted != tidied:
        # polygamma(0, 2 + 1/N) and polygamma(0, 1/N) in one result: shifted to one argument,
        # the rational parts of the recurrence can cancel. (Only when some polygamma was
        # shifted: otherwise this candidate merely refactors the expanded form, which tied
        # with factor(tidied) or lost in every case measured, and it was a quarter of the
        # Kumaraswamy family's Christoffel symbols' time, 3.6 of 13 s.)
        candidates.append(sympy.factor(sympy.cancel(sympy.expand(shifted))))
    return absorb_into_gamma(min(candidates, key=sympy.count_ops))


def shift_polygammas(expr: sympy.Expr) -> sympy.Expr:
    """Every ``polygamma(m, z + k)`` written through ``polygamma(m, z)``, with ``z`` the argument
    of lowest offset among those that differ by integers ``k``: the recurrence
    ``psi^(m)(z + 1) = psi^(m)(z) + (-1)^m m!/z^(m+1)``."""
    functions = sorted(expr.atoms(sympy.polygamma), key=sympy.default_sort_key)
    groups: dict = {}
    for function in functions:
        constant, moving = sympy.expand(function.args[1]).as_coeff_Add()
        groups.setdefault((function.args[0], moving), []).append((constant, function))
    replacements = {}
    for (order, moving), members in groups.items():
        lowest = min(constant for constant, _ in members)
        base = moving + lowest
        for constant, function in members:
            offset = constant - lowest
            if not offset.is_Integer or offset == 0 or not order.is_Integer:
                continue
            terms = [(-1) ** order * sympy.factorial(order) / (base + j) ** (order + 1)
                     for j in range(int(offset))]
            replacements[function] = sympy.polygamma(order, base) + sympy.Add(*terms)
    return expr.xreplace(replacements)


def absorb_into_gamma(expr: sympy.Expr) -> sympy.Expr:
    """Rewrite ``q * gamma(z)`` as ``(q/z) * gamma(z + 1)`` when ``q/z`` has no pole where
    ``z`` vanishes (its denominator is free of the symbols of ``z``).

    ``(N - 1)*gamma(1 - 1/N)`` is 0*oo at N = 1 (numeric code would return nan there), while
    the equal ``N*gamma(2 - 1/N)`` is finite.
    """

    def absorb(term):
        factors = list(term.args)
        for g_index, factor in enumerate(factors):
            if not isinstance(factor, sympy.gamma):
                continue
            for q_index, other in enumerate(factors):
                argument = factor.args[0]
                ratio = sympy.cancel(other / argument)
                if q_index == g_index or sympy.denom(ratio).has(*argument.free_symbols):
                    continue
                rest = [f for k, f in enumerate(factors) if k not in (g_index, q_index)]
                return sympy.Mul(*rest, ratio, sympy.gamma(sympy.expand(argument + 1)))
        return term

    return expr.replace(lambda node: isinstance(node, sympy.Mul), absorb)


def kinks(expr: sympy.Expr, variable: sympy.Symbol) -> list[sympy.Expr]:
    """Points where ``Abs``, ``sign`` or ``Heaviside`` of an argument linear in ``variable``
    switch branch, sorted; an empty list when there are none or they cannot be located."""
    points = set()
    for node in expr.atoms(sympy.Abs, sympy.sign, sympy.Heaviside):
        argument = node.args[0]
        if not argument.has(variable):
            continue
        solutions = sympy.solve(argument, variable)
        if len(solutions) != 1:
            return []
        points.add(solutions[0])
    if not all(point.is_number for point in points):
        return sorted(points, key=sympy.default_sort_key)
    return sorted(points, key=lambda point: float(point))


def close_integral(
    integrand: sympy.Expr,
    variable: sympy.Symbol,
    lower: sympy.Expr,
    upper: sympy.Expr,
    *,
    budget: float,
) -> ClosedIntegral:
    """Close ``Integral(integrand, (variable, lower, upper))`` or raise DerivationError."""
    integral = sympy.Integral(integrand, (variable, lower, upper))
    if lower == -sympy.oo and upper == sympy.oo:
        translated = _translate(integrand, variable, budget=budget)
        if translated is not None:
            return translated
        folded = _fold_symmetric(integrand, variable, budget=budget)
        if folded is not None:
            return folded
    points = [point for point in kinks(integrand, variable) if _strictly_inside(point, lower, upper)]
    if points:
        return _split_at_kinks(integral, points, budget=budget)
    return _integrate(integrand, variable, lower, upper, budget=budget)


def _strictly_inside(point, lower, upper) -> bool:
    return bool(sympy.And(point > lower, point < upper) == sympy.true)


def _translate(integrand, variable, *, budget) -> ClosedIntegral | None:
    """An integrand over the real line that depends on ``variable`` only through
    ``variable - c``, for a real symbol ``c``, is integrated in ``u = variable - c``: the
    log-Cauchy's score products, mapped onto the line by t = log x, are rational in t and mu
    together, and SymPy's integrate spends its budget on the expanded polynomials that the
    translated integrand ``4 s u**2/(pi (u**2 + s**2)**3)`` does not have."""
    for centre in sorted(integrand.free_symbols - {variable}, key=lambda symbol: symbol.name):
        if not centre.is_real or centre.is_positive or centre.is_negative:
            continue  # a location is a real coordinate of either sign
        u = closers.fresh_symbol("u", integrand, real=True)
        translated = sympy.factor(sympy.cancel(integrand.xreplace({variable: u + centre})))
        if centre in translated.free_symbols:
            continue
        step = ProofStep(
            f"Substitute {variable} = {u} + {centre}.",
            sympy.Integral(integrand, (variable, -sympy.oo, sympy.oo)),
            sympy.Integral(translated, (u, -sympy.oo, sympy.oo)),
            f"the integrand depends on {variable} only through {variable} - {centre}, and the "
            "translation maps the real line onto itself",
            "substitution",
        )
        inner = close_integral(translated, u, -sympy.oo, sympy.oo, budget=budget)
        return ClosedIntegral(inner.value, (step, *inner.steps), inner.conditions)
    return None


def _fold_symmetric(integrand, variable, *, budget) -> ClosedIntegral | None:
    """An odd integrand integrates to 0 over the real line; an even one to twice its half."""
    mirrored = integrand.subs(variable, -variable)
    integral = sympy.Integral(integrand, (variable, -sympy.oo, sympy.oo))
    if sympy.simplify(mirrored + integrand) == 0:
        step = ProofStep(
            "The integrand is odd, so its integral over the real line vanishes.",
            integral,
            sympy.S.Zero,
            # Every caller integrates a Fisher entry's score product s_i s_j f (possibly
            # after a change of variables): the argument for absolute convergence is that.
            f"substituting {variable} -> -{variable} changes the sign of the integrand, so its "
            f"integrals over {variable} < 0 and {variable} > 0 cancel; both converge "
            "absolutely, since the integrand is, up to the constant factor a change of "
            "variables took out, a product of two different scores against the density, and "
            "2|s_i s_j| <= s_i^2 + s_j^2, whose integrals are diagonal "
            "entries of the Fisher matrix, finite by their own propositions",
            "fold",
        )
        return ClosedIntegral(sympy.S.Zero, (step,))
    if sympy.simplify(mirrored - integrand) != 0:
        return None
    half_line = sympy.Symbol(variable.name, positive=True)
    half = integrand.subs(variable, half_line)
    step = ProofStep(
        "The integrand is even, so the integral is twice the integral over the half-line.",
        integral,
        2 * sympy.Integral(half, (half_line, 0, sympy.oo)),
        f"{variable} -> -{variable} leaves the integrand unchanged; on the half-line "
        f"|{variable}| = {variable} and sign({variable}) = 1",
        "fold",
    )
    closed = _integrate(half, half_line, sympy.S.Zero, sympy.oo, budget=budget)
    return ClosedIntegral(tidy(2 * closed.value), (step, *closed.steps), closed.conditions)


def _split_at_kinks(integral: sympy.Integral, points, *, budget) -> ClosedIntegral:
    """Split the range at the kinks; on each piece every Abs and sign has a fixed branch."""
    integrand, (variable, lower, upper) = integral.function, integral.limits[0]
    bounds = [lower, *points, upper]
    offset = closers.fresh_symbol("u", integrand, positive=True)  # a constant may be called u
    pieces, closed_pieces = [], []
    for left, right in zip(bounds, bounds[1:]):
        # Parametrize each piece from its finite end so that the branch is fixed by u > 0.
        if left.is_finite:
            piece = integrand.subs(variable, left + offset)
            limits = (offset, 0, right - left)
        else:
            piece = integrand.subs(variable, right - offset)
            limits = (offset, 0, right - left if left.is_finite else sympy.oo)
        pieces.append(sympy.Integral(piece, limits))
        closed_pieces.append(_integrate(piece, offset, *limits[1:], budget=budget))
    step = ProofStep(
        "Split the range at the kinks of the integrand.",
        integral,
        sympy.Add(*pieces, evaluate=False),
        "on each piece every absolute value and sign keeps one branch; the kinks are at "
        + ", ".join(f"{variable} = {sympy.sstr(point)}" for point in points),
        "split",
    )
    value = tidy(sympy.Add(*(piece.value for piece in closed_pieces)))
    steps = (step, *(s for piece in closed_pieces for s in piece.steps))
    conditions = tuple(c for piece in closed_pieces for c in piece.conditions)
    return ClosedIntegral(value, steps, conditions)


def _integrate(integrand, variable, lower, upper, *, budget) -> ClosedIntegral:
    """The closers first on the half-line (they decline at once when the kernel is not
    theirs, and SymPy would spend its whole budget on those kernels), then SymPy's integrate
    under a budget."""
    if lower == 0 and upper == sympy.oo:
        for closer in (closers.close_by_beta_substitution, closers.close_by_exponential_series):
            closed = closer(integrand, variable, budget=budget)
            if closed is not None:
                value, steps = closed
                return ClosedIntegral(tidy(value), tuple(steps))
    closed = _close_by_euler_integrals(integrand, variable, lower, upper, budget=budget)
    if closed is not None:
        return closed
    mapped = parametric.close_by_logarithmic_substitution(integrand, variable, lower, upper,
                                                          budget=budget)
    if mapped is not None:
        *substitution, t_lower, t_upper = mapped
        closed = _close_substituted(substitution, t_lower, t_upper, budget)
        if closed is not None:
            return closed
    integral = sympy.Integral(integrand, (variable, lower, upper))
    obstacle = beyond_integrate(integrand, variable)
    if obstacle is not None:
        raise DerivationError(
            f"SymPy's integrate is not attempted on {sympy.sstr(integral)}: {obstacle}, which "
            "its algorithms do not integrate (they would run until the time budget)")
    try:
        result = run_with_budget(
            sympy.integrate, integrand, (variable, lower, upper), seconds=budget,
            what=f"integrate over {variable} in ({sympy.sstr(lower)}, {sympy.sstr(upper)})",
        )
    except BudgetExceeded as error:
        # Kept a BudgetExceeded: the ladder stops on it (a clock never picks the route).
        raise BudgetExceeded(f"could not close {sympy.sstr(integral)}: {error}") from None
    value, conditions = _split_conditions(result)
    if value is None or not is_closed(value):
        raise DerivationError(
            f"could not close {sympy.sstr(integral)}: SymPy's integrate returned no closed form")
    value = tidy(value)
    justification = integral_reason(integrand, variable, lower, upper)
    if conditions:
        justification += "; converges when " + " and ".join(map(sympy.sstr, conditions))
    step = ProofStep("Integrate.", integral, value, justification, "integrate")
    return ClosedIntegral(value, (step,), conditions)


def _close_by_euler_integrals(integrand, variable, lower, upper, *, budget) -> ClosedIntegral | None:
    """Euler's Gamma and Beta integrals, with logarithms as derivatives in an auxiliary
    exponent (:mod:`raosym.derive.parametric`); on the real line a doubly exponential kernel
    is first mapped onto the half-line."""
    if (lower, upper) in ((0, sympy.oo), (0, 1)):
        closed = parametric.close_by_euler_integrals(integrand, variable, lower, upper)
        if closed is not None:
            value, steps, conditions = closed
            return ClosedIntegral(tidy(value), tuple(steps), conditions)
        if upper == 1:
            return None
        return _close_substituted(parametric.close_by_decaying_exponential(integrand, variable),
                                  sympy.S.Zero, sympy.S.One, budget)
    elif (lower, upper) == (-sympy.pi, sympy.pi):
        closed = parametric.close_by_periodic_bessel(integrand, variable, lower, upper)
    elif (lower, upper) == (-sympy.oo, sympy.oo):
        return _close_substituted(
            parametric.close_by_exponential_substitution(integrand, variable), sympy.S.Zero,
            sympy.oo, budget)
    else:
        return None
    if closed is None:
        return None
    value, steps = closed
    return ClosedIntegral(tidy(value), tuple(steps))


def _close_substituted(mapped, lower, upper, budget) -> ClosedIntegral | None:
    """The integral a substitution closer mapped onto (``lower``, ``upper``), closed by the
    ladder, with the substitution's step first; None when there was no substitution or it did
    not close."""
    if mapped is None:
        return None
    step, substituted, u = mapped
    try:
        inner = close_integral(substituted, u, lower, upper, budget=budget)
    except BudgetExceeded:
        raise  # an error, not a decline (a clock never picks the route)
    except DerivationError:
        return None
    return ClosedIntegral(inner.value, (step, *inner.steps), inner.conditions)


def integral_reason(integrand, variable, lower, upper) -> str:
    """The mathematical fact that closes ``Integral(integrand, (variable, lower, upper))``, in
    the words a proof gives: an exponential of a polynomial of degree 1 or 2 in the variable
    (the pieces of Laplace and Gaussian integrals) is named, anything else is a standard
    definite integral. The proof says why a step holds, never which program computed it."""
    exponent = _exponent_of_exponential(integrand, variable)
    degree = None
    if exponent is not None:
        try:
            degree = sympy.Poly(exponent, variable).degree()
        except sympy.PolynomialError:
            degree = None
    if degree == 1:
        return (f"the antiderivative of exp(c {variable} + d) is exp(c {variable} + d)/c, "
                "evaluated at the ends of the interval")
    if degree == 2:
        whole_line = (lower, upper) == (-sympy.oo, sympy.oo)
        return ("completing the square in the exponent, by the Gaussian integral "
                + ("Integral(exp(-A (y - m)**2), (y, -oo, oo)) = sqrt(pi/A) for A > 0"
                   if whole_line else "(an error function between the ends of the interval)"))
    return "a standard definite integral (tables of integrals), checked numerically below"


def _exponent_of_exponential(integrand, variable) -> sympy.Expr | None:
    """``P`` when ``integrand = c exp(P)`` with ``c`` free of the variable, else None."""
    exponent = sympy.S.Zero
    for factor in sympy.Mul.make_args(sympy.powsimp(integrand, combine="exp")):
        if not factor.has(variable):
            continue
        if not isinstance(factor, sympy.exp):
            return None
        exponent += factor.args[0]
    return sympy.expand(exponent) if exponent != 0 else None


#: Functions whose appearance in a denominator keeps SymPy's integrate from closing an integral.
_TRANSCENDENTAL = (sympy.exp, sympy.erf, sympy.erfc, sympy.besseli, sympy.besselj,
                   sympy.besselk, sympy.log, sympy.cosh, sympy.sinh, sympy.tanh, sympy.cos,
                   sympy.sin, sympy.gamma, sympy.polygamma)


def beyond_integrate(integrand: sympy.Expr, variable: sympy.Symbol) -> str | None:
    """Why SymPy's integrate would not close the integral of ``integrand`` but run until the
    time budget, or None. A rule on the integrand's form, the same on every machine, so that a
    clock never picks the route to the numeric path."""
    quotient = transcendental_denominator(integrand, variable)
    if quotient is not None:
        return f"it divides by {sympy.sstr(quotient)}, a transcendental function of {variable}"
    nested = nested_exponential(integrand, variable)
    if nested is not None:
        return (f"it holds {sympy.sstr(nested)}, an exponential of a transcendental function "
                f"of {variable} that no substitution closer reduced")
    return None


def nested_exponential(integrand: sympy.Expr, variable: sympy.Symbol):
    """The first ``exp(A)`` of the integrand whose exponent holds an exponential, circular or
    hyperbolic function of ``variable`` (the Gompertz kernel ``exp(-eta*exp(b*x))``), or None.

    The closers reduce such kernels where an Euler or Bessel integral results (Gumbel on the
    real line, von Mises over a period); what is left (an incomplete Gamma function over
    (1, oo)) sends SymPy's Meijer G method searching without end."""
    for node in sympy.preorder_traversal(integrand):
        if isinstance(node, sympy.exp) and node.args[0].has(variable) and any(
                inner.has(variable) for inner in node.args[0].atoms(*_INNER_KERNELS)):
            return node
    return None


def transcendental_radical(expr: sympy.Expr, variable: sympy.Symbol):
    """The first power ``B**e`` of ``expr`` with ``e`` not an integer whose base holds a
    function of ``variable`` (``sqrt(-p - log(1 - p))``, ``sqrt(polygamma(1, nu))``), or None.

    The Risch algorithm decides transcendental integrands only without such radicals, and
    SymPy's heuristic methods search them without end (the logarithmic series' line element)."""
    for power in sorted(expr.atoms(sympy.Pow), key=sympy.default_sort_key):
        base, exponent = power.as_base_exp()
        if exponent.is_Integer or not base.has(variable):
            continue
        if any(node.has(variable) for node in base.atoms(sympy.Function)):
            return power
    return None


#: Functions of the variable that make an exponential around them a nested kernel.
_INNER_KERNELS = (sympy.exp, sympy.cos, sympy.sin, sympy.cosh, sympy.sinh)


def transcendental_denominator(integrand: sympy.Expr, variable: sympy.Symbol):
    """The first factor ``B**(-e)`` of the integrand whose base holds a transcendental function
    of ``variable`` inside a sum (``1 + erf(a*x)``, ``exp(-x) + exp(x)``) or is a Bessel or
    error function of it (``besseli(0, v*x)``), or None.

    Such quotients (the skew-normal's score, a mixture's) are beyond the Risch and Meijer G
    algorithms: the route to the numeric path is then chosen by this rule, the same on every
    machine, rather than by a time budget running out."""
    for factor in sympy.Mul.make_args(sympy.together(integrand)):
        base, exponent = factor.as_base_exp()
        if not (exponent.is_negative and base.has(variable)):
            continue
        if isinstance(base, _SPECIAL_QUOTIENTS):
            return factor  # the Rice score's besseli(1, v*x)/besseli(0, v*x)
        for term in sympy.Add.make_args(base) if base.is_Add else ():
            if any(node.has(variable) for node in term.atoms(*_TRANSCENDENTAL)):
                return factor
    return None


#: Non-elementary functions whose reciprocal, as a factor of its own, SymPy does not integrate.
_SPECIAL_QUOTIENTS = (sympy.erf, sympy.erfc, sympy.besseli, sympy.besselj, sympy.besselk)


def _split_conditions(result: sympy.Expr):
    """Separate SymPy's ``Piecewise((value, condition), (Integral, True))`` into its parts."""
    if not isinstance(result, sympy.Piecewise):
        return result, ()
    value, condition = result.args[0]
    if not is_closed(value):
        return None, ()
    return value, (condition,)
