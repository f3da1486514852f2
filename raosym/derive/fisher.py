"""The Fisher ladder: the symbolic Fisher information matrix of a family, with its proof.

Input: a :class:`FamilySpec`. Output: the matrix and one :class:`FisherEntry` per entry, each
with the steps that closed it. The definition used is always the score product
``g_ij = E[s_i s_j]`` with ``s_i = d log f / d theta_i``; the Hessian form is used only where it
is a theorem (the exponential-family rung), never as a shortcut for densities with kinks.

The rungs, tried in this order (each closes what it can or declines):

1. ``exponential family``: ``log f = sum_a eta_a(theta) T_a(x) + h(x) - A(theta)`` with as many
   statistics as coordinates; then ``E[T] = (J^T)^-1 grad A`` and
   ``g = Hess A - sum_a Hess(eta_a) E[T_a]``: no integral at all. Closes the whole matrix.
2. ``finite sum`` and ``series`` for discrete supports; where they decline, the Hessian form
   ``-E[d_i d_j log f]`` when the zero-mean scores fix the means it needs
   (:mod:`raosym.derive.hessian`).
3. ``location-scale reduction``: ``x = mu + s t`` turns every entry into ``(1/s^2)`` times a
   parameter-free integral, closed by :func:`raosym.derive.integrals.close_integral` (fold,
   kink split, integrate, closers).
4. ``direct integration`` over the support, split at kinks.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

from raosym.derive.budget import DEFAULT_BUDGET, BudgetExceeded, run_with_budget
from raosym.derive.closers import fresh_symbol
from raosym.derive import parametric
from raosym.derive.expectation import Expectation
from raosym.derive.hessian import HESSIAN, hessian_entry
from raosym.derive.integrals import ClosedIntegral, close_integral, is_closed, kinks, tidy
from raosym.derive.steps import FisherEntry, ProofStep, fisher_symbol
from raosym.errors import DerivationError, SpecError
from raosym.spec.model import FamilySpec
from raosym.spec.names import hidden_arguments
from raosym.spec.points import sample_points


def sample_variables(spec: FamilySpec) -> tuple[sympy.Symbol, ...]:
    """The family's sample variables: ``(x,)``, or the ``variables`` of a file with several."""
    return spec.variables or (spec.variable,)


def log_density(spec: FamilySpec) -> sympy.Expr:
    """``log f`` with logarithms of products and powers expanded (the density is positive)."""
    return sympy.expand_log(sympy.log(spec.density), force=True)


def scores(spec: FamilySpec) -> tuple[sympy.Expr, ...]:
    """The score functions ``s_i = d log f / d theta_i``."""
    logf = log_density(spec)
    # No simplify here: it turns sign(x - mu) into a Piecewise that hides the kink.
    return tuple(sympy.diff(logf, theta) for theta in spec.coordinate_symbols)


# ----------------------------------------------------------------------------- exponential family


def _exponential_family_terms(spec: FamilySpec):
    """``(statistics, eta, log_partition)`` when ``log f`` separates, else None.

    Each additive term of ``log f`` must be a product of a factor free of the variable and a
    factor free of the coordinates; terms with both kinds of factor join a statistic ``T(x)``.
    """
    variables, coordinates = sample_variables(spec), set(spec.coordinate_symbols)
    logf = sympy.expand(sympy.expand_func(log_density(spec)))
    natural: dict[sympy.Expr, sympy.Expr] = {}
    minus_log_partition = sympy.S.Zero
    for term in sympy.Add.make_args(logf):
        coefficient, statistic = term.as_independent(*variables, as_Add=False)
        if statistic.free_symbols & coordinates:
            return None
        if not coefficient.free_symbols & coordinates:
            continue  # part of the base measure h(x)
        if statistic == 1:
            minus_log_partition += coefficient
        else:
            natural[statistic] = natural.get(statistic, 0) + coefficient
    statistics, eta = _merged_statistics(natural, coordinates)
    return statistics, eta, -minus_log_partition


def _merged_statistics(natural: dict, coordinates: set) -> tuple[list, list]:
    """The statistics whose natural parameters are constant multiples of one another joined
    into one, ``c eta T_1 + eta T_2 = eta (c T_1 + T_2)``: the symmetric Dirichlet's
    ``(a - 1)(log x1 + log x2 + log(1 - x1 - x2))`` has one statistic for its one coordinate,
    not three, and a product of gamma samples sharing a shape one ``log x1 + log x2``."""
    merged: list[list] = []  # [eta, statistic]
    for statistic in sorted(natural, key=sympy.default_sort_key):
        coefficient = natural[statistic]
        for group in merged:
            ratio = sympy.simplify(coefficient / group[0])
            if not ratio.free_symbols & coordinates and ratio.is_number and ratio != 0:
                group[1] += ratio * statistic
                break
        else:
            merged.append([coefficient, statistic])
    merged.sort(key=lambda group: sympy.default_sort_key(group[1]))
    return [statistic for _, statistic in merged], [eta for eta, _ in merged]


def exponential_family(spec: FamilySpec) -> tuple[FisherEntry, ...] | None:
    """Rung 1: the whole matrix from the log-partition function, when ``f`` is an exponential
    family with as many sufficient statistics as coordinates (so ``E[T]`` is determined)."""
    separated = _exponential_family_terms(spec)
    coordinates = spec.coordinate_symbols
    if separated is None or len(separated[0]) != len(coordinates):
        return None
    statistics, eta, log_partition = separated
    jacobian = sympy.Matrix([[sympy.diff(e, theta) for theta in coordinates] for e in eta])
    if sympy.simplify(jacobian.det()) == 0:
        return None
    gradient = sympy.Matrix([sympy.diff(log_partition, theta) for theta in coordinates])
    means = (jacobian.T.inv() * gradient).applyfunc(sympy.simplify)
    steps = _exponential_family_steps(spec, statistics, eta, log_partition, means,
                                      jacobian, gradient)
    names = _exponential_family_names(spec, len(eta))
    entries = []
    for i, theta_i in enumerate(coordinates):
        for j, theta_j in enumerate(coordinates[: i + 1]):
            hessian = sympy.diff(log_partition, theta_i, theta_j)
            curvature_of_eta = sum(
                sympy.diff(e, theta_i, theta_j) * mean for e, mean in zip(eta, means)
            )
            value = tidy(hessian - curvature_of_eta)
            # The combination the lemma evaluates, as the engine evaluated it: the entry of the
            # Hessian of A, less each nonzero second derivative of eta_a times E[T_a].
            # (A term whose second derivative of eta_a is negative is written with a plus.)
            combination = [sympy.simplify(hessian)]
            general = [sympy.Derivative(names["A"], theta_i, theta_j)]
            for e, mean, name, name_t in zip(eta, means, names["eta"], names["T"]):
                second = sympy.simplify(sympy.diff(e, theta_i, theta_j))
                if second == 0:
                    continue
                # A numerator with a negative sign of its own, (-rho**2 - 1)/d, does not
                # extract the minus sign (printed "- -(rho**2 + 1)/d"); factored, it does.
                if not second.could_extract_minus_sign() and \
                        sympy.factor_terms(second).could_extract_minus_sign():
                    second = sympy.factor_terms(second)
                combination.append(
                    sympy.Mul(-second, mean, evaluate=False) if second.could_extract_minus_sign()
                    else sympy.Mul(-1, sympy.Mul(second, mean, evaluate=False), evaluate=False))
                general.append(sympy.Mul(-1, sympy.Mul(sympy.Derivative(name, theta_i, theta_j),
                                                       Expectation(name_t), evaluate=False),
                                         evaluate=False))
            combined, general = (sympy.Add(*terms, evaluate=False) if len(terms) > 1
                                 else terms[0] for terms in (combination, general))
            chain = tuple(dict.fromkeys(c for c in (general, combined) if c != value))
            step = ProofStep(
                "The entry from the second derivatives and the means above.",
                fisher_symbol(theta_i.name, theta_j.name),
                value,
                "`g_ij = ∂_i ∂_j A - Σ_a (∂_i ∂_j eta_a) E[T_a]`, with the second "
                "derivatives and the means above",
                "exponential family",
                chain=chain,
            )
            entries.append(FisherEntry(i, j, value, "exponential family", (*steps, step)))
    return tuple(entries)


def _exponential_family_names(spec, count):
    """The symbols of the proof: ``T_a(x)``, ``eta_a(theta)`` and ``A(theta)`` as applied
    functions (indexed only when there are several statistics)."""
    x, coordinates = sample_variables(spec), spec.coordinate_symbols
    index = (lambda a: f"_{a + 1}") if count > 1 else (lambda a: "")
    return {
        "T": [sympy.Function(f"T{index(a)}")(*x) for a in range(count)],
        "eta": [sympy.Function(f"eta{index(a)}")(*coordinates) for a in range(count)],
        "A": sympy.Function("A")(*coordinates),
    }


def _base_measure_form(base: sympy.Expr) -> sympy.Expr:
    """``log h(x)`` as one writes it: a logarithm of a power split (simplify may fold
    ``-log(2 pi sigma^2)/2 - x^2/(2 sigma^2)`` into ``-(x^2 + log((2 pi sigma^2)^(sigma^2)))/
    (2 sigma^2)``, and writes ``log(1/(n - k)!)``), with the logarithms of numbers that share a
    coefficient kept as one (``-log(2 pi)/2``). The same function of x."""
    split = base
    if any(isinstance(node.args[0], sympy.Pow) for node in base.atoms(sympy.log)):
        split = sympy.expand(sympy.expand_log(base, force=True))
    numeric: dict[sympy.Expr, list[sympy.Expr]] = {}
    others = []
    for term in sympy.Add.make_args(split):
        coefficient, rest = term.as_coeff_Mul()
        if isinstance(rest, sympy.log) and not rest.free_symbols:
            numeric.setdefault(coefficient, []).append(rest.args[0])
        else:
            others.append(term)
    if split is base and all(len(numbers) < 2 for numbers in numeric.values()):
        return base
    logarithms = [coefficient * sympy.log(sympy.Mul(*numbers), evaluate=False)
                  for coefficient, numbers in numeric.items()]
    return sympy.Add(*others, *logarithms)


def _exponential_family_steps(spec, statistics, eta, log_partition, means, jacobian, gradient):
    x, coordinates = spec.variable, spec.coordinate_symbols
    names = _exponential_family_names(spec, len(eta))
    base = sympy.expand(log_density(spec)) - sum(e * t for e, t in zip(eta, statistics))
    base = _base_measure_form(sympy.simplify(base + log_partition))
    form = sympy.Add(
        *(sympy.Mul(e, t, evaluate=False) for e, t in zip(eta, statistics)),
        base,
        -log_partition,
        evaluate=False,
    )
    recognize = ProofStep(
        "The log-density has exponential-family form.",
        sympy.log(sympy.Function("f")(*sample_variables(spec))),
        form,
        "each term of log f is a function of the coordinates times a function of x, or a "
        "function of one of them alone: `log f = Σ_a eta_a T_a(x) - A + log h(x)`",
        "exponential family",
    )
    read_off = ProofStep(
        "Its sufficient statistics, natural parameters and log-partition function are:",
        names["T"][0], statistics[0],
        "read off the form above: the factors of x in the terms that carry both, their "
        "coefficients, and minus the terms free of x",
        "exponential family",
        also=(*((t, statistic) for t, statistic in zip(names["T"][1:], statistics[1:])),
              *((n, e) for n, e in zip(names["eta"], eta)),
              (names["A"], log_partition)),
    )
    derivatives = [(sympy.Derivative(names["A"], theta), sympy.simplify(g))
                   for theta, g in zip(coordinates, gradient)]
    # The natural parameters' zero derivatives go without saying (eta_2 = k has no
    # derivative in theta), as the Hessian step below leaves out their zero second ones.
    derivatives += [(sympy.Derivative(names["eta"][a], theta), value)
                    for a in range(len(eta)) for i, theta in enumerate(coordinates)
                    if (value := sympy.simplify(jacobian[a, i])) != 0]
    first = ProofStep(
        "The first derivatives of the log-partition function and the nonzero first "
        "derivatives of the natural parameters:",
        derivatives[0][0], derivatives[0][1],
        "differentiation of the functions read off above",
        "exponential family",
        also=tuple(derivatives[1:]),
    )
    # The means are solved for together (J^T E[T] = grad A), so they are one step.
    mean_step = ProofStep(
        "The scores have mean zero, which fixes the means of the sufficient statistics:",
        Expectation(statistics[0]),
        means[0],
        "`E[s_i] = 0` is `J^T E[T] = ∇A`, solved for `E[T]`: the Jacobian J of the natural "
        "parameters (their first derivatives above) is invertible",
        "exponential family",
        also=tuple((Expectation(statistic), mean)
                   for statistic, mean in zip(statistics[1:], means[1:])),
    )
    seconds = []
    for i, theta_i in enumerate(coordinates):
        for j, theta_j in enumerate(coordinates[: i + 1]):
            seconds.append((sympy.Derivative(names["A"], theta_i, theta_j),
                            sympy.simplify(sympy.diff(log_partition, theta_i, theta_j))))
    for a, e in enumerate(eta):
        for i, theta_i in enumerate(coordinates):
            for j, theta_j in enumerate(coordinates[: i + 1]):
                second = sympy.simplify(sympy.diff(e, theta_i, theta_j))
                if second != 0:
                    seconds.append((sympy.Derivative(names["eta"][a], theta_i, theta_j), second))
    second = ProofStep(
        "The second derivatives of the log-partition function (its Hessian) and the nonzero "
        "second derivatives of the natural parameters:",
        seconds[0][0], seconds[0][1],
        "differentiation of the first derivatives above",
        "exponential family",
        also=tuple(seconds[1:]),
    )
    return (recognize, read_off, first, mean_step, second)


# --------------------------------------------------------------------------- discrete supports


def _summation(spec: FamilySpec, summand: sympy.Expr, *, budget: float) -> ClosedIntegral:
    support, x = spec.support, spec.variable
    if support.kind == "finite":
        total = sympy.Add(*(summand.subs(x, point) for point in support.points), evaluate=False)
        value = tidy(total.doit())
        step = ProofStep(
            "Sum over the finite support.",
            sympy.Sum(summand, (x, support.points[0], support.points[-1]))
            if _is_integer_run(support.points)
            else sympy.Function("Sum")(summand),
            total,
            "the support is {" + ", ".join(map(sympy.sstr, support.points)) + "}",
            "finite sum",
        )
        return ClosedIntegral(value, (step,))
    series = sympy.Sum(summand, (x, support.lower, support.upper))
    beyond = [node for node in summand.atoms(sympy.polygamma, sympy.loggamma) if node.has(x)]
    if beyond:
        # Chosen by this rule, the same on every machine, not by a budget running out: no
        # algorithm of SymPy's summation closes sums of polygamma(0, k + r) against a pmf (the
        # negative binomial's shape score), and it searches until its budget.
        raise DerivationError(
            f"SymPy's summation is not attempted on {sympy.sstr(series)}: the summand holds "
            f"{sympy.sstr(beyond[0])}, a polygamma function of the summation variable, which "
            "its algorithms do not sum")
    # The factor free of x outside the sum: SymPy 1.14 sums p**k to 1/(1 - p) (p < 1) but
    # (1 - p)*p**k to 1 - p**oo.
    coefficient, varying = summand.as_independent(x, as_Add=False)
    result = run_with_budget(sympy.summation, varying, (x, support.lower, support.upper),
                             seconds=budget, what=f"summation over {x}")
    if isinstance(result, sympy.Piecewise):
        result = result.args[0][0]
    result = coefficient * result
    if not is_closed(result):
        raise DerivationError(f"SymPy could not close the sum {sympy.sstr(series)}")
    value = tidy(result)
    strategy = "finite sum" if support.upper.is_finite else "series"
    step = ProofStep("Sum the series.", series, value, _series_reason(summand, x), strategy)
    return ClosedIntegral(value, (step,))


def _series_reason(summand: sympy.Expr, x: sympy.Symbol) -> str:
    """The series a sum is, read off the ratio of consecutive terms of its kernel (the summand
    without its polynomial factors): geometric (a constant ratio), exponential (the ratio
    times x + 1 constant), otherwise hypergeometric (a ratio rational in x)."""
    factors = sympy.Mul.make_args(sympy.factor(summand))
    polynomial = any(f.has(x) and f.is_polynomial(x) for f in factors)
    kernel = sympy.Mul(*(f for f in factors if not (f.has(x) and f.is_polynomial(x))))
    ratio = sympy.simplify(kernel.subs(x, x + 1) / kernel)
    times = f"a polynomial in {x} times " if polynomial else ""
    derivatives = (" and its derivatives in q (which give the sums of the powers of "
                   f"{x} times the terms)" if polynomial else "")
    if not ratio.has(x):
        return f"{times}the geometric series Sum(q**n, (n, 0, oo)) = 1/(1 - q) for |q| < 1{derivatives}"
    if not sympy.simplify(ratio * (x + 1)).has(x):
        return (f"{times}the exponential series Sum(q**n/factorial(n), (n, 0, oo)) = exp(q)"
                f"{derivatives}")
    return (f"a hypergeometric series (the ratio of consecutive terms is rational in {x}), "
            "summed in closed form")


def _is_integer_run(points) -> bool:
    return all(p.is_integer for p in points) and list(points) == list(
        range(int(points[0]), int(points[-1]) + 1)
    )


# --------------------------------------------------------------------- location-scale reduction


def location_and_scale(spec: FamilySpec) -> tuple[sympy.Symbol | None, sympy.Symbol | None]:
    """The location coordinate (``f`` depends on ``x - mu`` only) and the scale parameter
    (coordinate or constant; ``s f(s t)`` free of ``s``), each None when absent."""
    if spec.support.discrete:
        return None, None
    x, density = spec.variable, spec.density
    location = None
    if spec.support.lower == -sympy.oo and spec.support.upper == sympy.oo:
        for theta in spec.coordinate_symbols:
            if theta not in sympy.simplify(density.subs(x, x + theta)).free_symbols:
                location = theta
                break
    centred = density.subs(x, x + location) if location is not None else density
    invariant = spec.support.lower in (0, -sympy.oo) and spec.support.upper == sympy.oo
    for parameter in spec.parameters:
        scale = parameter.symbol
        if not invariant or scale == location or not scale.is_positive:
            continue
        if scale not in sympy.simplify(scale * centred.subs(x, scale * x)).free_symbols:
            return location, scale
    return location, None


def _reduce_location_scale(spec, integrand, location, scale):
    """``Integral over x`` -> ``coefficient * Integral over t`` with ``x = mu + s t``."""
    x = spec.variable
    t = fresh_symbol("t", integrand, real=True)  # a constant may be called t
    shift = location if location is not None else 0
    stretch = scale if scale is not None else 1
    # Gentle rewrites first: simplify turns sign(t)**2 into a Piecewise that hides the fold.
    substituted = integrand.subs(x, shift + stretch * t) * stretch
    for rewrite in (sympy.powsimp, sympy.factor_terms, sympy.simplify):
        substituted = rewrite(substituted)
        coefficient, reduced = substituted.as_independent(t, as_Add=False)
        if not reduced.free_symbols & {location, scale}:
            break
    lower = spec.support.lower if location is None else -sympy.oo
    before = sympy.Integral(integrand, (x, spec.support.lower, spec.support.upper))
    after = coefficient * sympy.Integral(reduced, (t, lower, spec.support.upper))
    # written location first, as x = mu + s t (sstr would sort b*t + mu)
    stretched = sympy.sstr(t) if stretch == 1 else f"{sympy.sstr(stretch)}*{sympy.sstr(t)}"
    written = stretched if shift == 0 else f"{sympy.sstr(shift)} + {stretched}"
    step = ProofStep(
        "Change variables to the standardized variable t (location-scale reduction).",
        before,
        after,
        f"substitute {sympy.sstr(x)} = {written}, "
        f"d{sympy.sstr(x)} = {'' if stretch == 1 else sympy.sstr(stretch) + ' '}dt: the "
        "integrand is then a function of t alone",
        "location-scale",
    )
    return coefficient, reduced, t, lower, step


# ------------------------------------------------------------------------------------ the ladder


def fisher_entries(spec: FamilySpec, *, budget: float = DEFAULT_BUDGET) -> tuple[FisherEntry, ...]:
    """Close every entry ``g_ij`` (``j <= i``) of the Fisher matrix, rung by rung."""
    if spec.multivariate:
        from raosym.derive.multivariate import coupled_kinds
        if problem := coupled_kinds(spec):  # the load stage refuses it first, by its key
            raise DerivationError(f"{spec.path}: {problem}")
    closed = exponential_family(spec)
    if closed is not None:
        return closed
    if spec.multivariate:  # the rungs below integrate over one variable
        from raosym.derive.multivariate import factor_entries, iterated_entries
        by_factors = factor_entries(spec, budget=budget)
        if by_factors is not None:
            return by_factors
        return iterated_entries(spec, scores(spec), budget=budget)
    score = scores(spec)
    coordinates = spec.coordinate_symbols
    entries = []
    for i in range(len(coordinates)):
        for j in range(i + 1):
            entries.append(_close_entry(spec, score, i, j, budget=budget))
    return tuple(entries)


def _close_entry(spec, score, i, j, *, budget) -> FisherEntry:
    coordinates = spec.coordinate_symbols
    name = fisher_symbol(coordinates[i].name, coordinates[j].name)
    integrand = score[i] * score[j] * spec.density
    definition = ProofStep(
        "Definition: the Fisher information is the expected product of the scores.",
        name,
        expectation_over_support(spec, integrand),
        "the score-product form, which holds at kinks too",
        "definition",
    )
    found = closed_by_rungs(spec, integrand, f"the Fisher entry {name}", budget=budget)
    if found is not None:
        strategy, closed = found
        hypotheses = convergence_hypotheses(spec, name, closed.conditions, integrand)
        value, steps = closed.value, (definition, *closed.steps)
        if steps[-1].rhs != value:
            # The value as the rung simplified it, from the last form a step displayed.
            steps += (ProofStep("Simplify.", steps[-1].rhs, value,
                                "the right-hand side above with common factors cancelled, powers collected and "
                                "Gamma functions combined",
                                strategy),)
        if _shifted_polygammas(value):
            # A rung that adds closed pieces leaves polygamma(0, 1/N), polygamma(0, 1 + 1/N),
            # ... side by side; on one argument they combine (and the curvature, derived
            # from this entry, stays small enough to simplify).
            tidied = tidy(value)
            value = tidied if sympy.count_ops(tidied) < sympy.count_ops(value) else value
            if value != closed.value:
                steps += (ProofStep(
                    "Combine the polygamma functions on one argument.", closed.value, value,
                    "the recurrence polygamma(m, z + 1) = polygamma(m, z) + "
                    "(-1)**m*m!/z**(m + 1), then cancelled", "tidy"),)
        return FisherEntry(i, j, value, strategy, steps, hypotheses)
    closed = hessian_entry(spec, log_density(spec), i, j, name)
    if closed is not None:
        return FisherEntry(i, j, closed[0], HESSIAN, (definition, *closed[1]))
    return _numeric_entry(spec, i, j, name, definition, (score[i], score[j]))


def closed_by_rungs(spec: FamilySpec, integrand: sympy.Expr, what: str, *,
                    budget: float) -> tuple[str, ClosedIntegral] | None:
    """``(strategy, closed)``: the integral (sum) of ``integrand`` over the support of a
    one-variable family by the first rung of the ladder that closes it; None when none does.
    ``what`` names the integral in the error of a budget that runs out."""
    for strategy, rung in _entry_rungs(spec):
        try:
            closed = rung(spec, integrand, budget=budget)
        except BudgetExceeded as error:
            # An error, not the next rung: where a budget runs out must not decide the route.
            raise BudgetExceeded(f"{spec.path}: could not close {what}: {error}") from None
        except DerivationError:
            continue  # the next rung, or in the end the numeric path
        if closed is not None:
            return strategy, closed
    return None


def _numeric_entry(spec, i, j, name, definition, pair) -> FisherEntry:
    """An entry no rung closed: kept as its defining expectation, to be computed numerically.

    The verify stage certifies it by two independent numeric methods at every sampled point,
    and the generated module evaluates it by quadrature. Nothing here claims that no closed
    form exists: only that these rungs did not find one."""
    tried = ", ".join(strategy for strategy, _ in _entry_rungs(spec))
    step = ProofStep(
        "None of the methods tried gives this entry in closed form: it is computed "
        "numerically.",
        None, name,
        f"the methods tried ({tried}) found no closed form, which does not prove that none "
        "exists; the expectation is evaluated by "
        "quadrature (summation) and certified at every sampled point by two independent "
        "numeric methods", NUMERIC)
    return FisherEntry(i, j, None, NUMERIC, (definition, step), scores=pair)


#: The strategy of a Fisher entry computed numerically (its ``value`` is None).
NUMERIC = "numeric"


def convergence_hypotheses(spec: FamilySpec, name, conditions,
                           integrand=None) -> tuple[str, ...]:
    """The convergence conditions SymPy attached to an entry, as hypotheses.

    A condition implied by the declared domains is stated as such. One that fails somewhere in
    the declared domains means the entry diverges there: that is an error in the derivation
    file (the generalized Gaussian with ``N > 0`` instead of ``N > 1/2``), exit status 2.
    """
    hypotheses = []
    for condition in conditions:
        stated = _readable_condition(condition)
        if stated == sympy.true:
            continue
        if _implied_by_domains(spec, condition):
            hypotheses.append(f"{sympy.sstr(stated)} (implied by the declared domains)")
            continue
        counterexample = _counterexample(spec, condition)
        if counterexample is not None and integrand is not None and _integrable_at(
                spec, integrand, counterexample[0]):
            # The condition of a term, not of the integral (terms that converge only
            # jointly, summed by analytic continuation): the integral converges there.
            hypotheses.append(f"{sympy.sstr(stated)} for each term separately; the integral "
                              "itself converges where it fails (checked at "
                              f"{counterexample[1]})")
            continue
        if counterexample is not None:
            counterexample = counterexample[1]
            raise SpecError(
                f"the Fisher entry {name} diverges where {sympy.sstr(stated)} fails, e.g. at "
                f"{counterexample}, which the declared domains allow; restrict the domain of "
                "the constants (for example '> 1/2') so that the entry converges",
                path=spec.path, key="constants")
        hypotheses.append(f"{sympy.sstr(stated)} (assumed; true at every sampled point)")
    return tuple(hypotheses)


def _readable_condition(condition):
    symbols = condition.free_symbols
    if len(symbols) == 1:
        try:
            return sympy.solve_univariate_inequality(condition, symbols.pop(), relational=True)
        except (NotImplementedError, ValueError, TypeError):
            pass
    return sympy.simplify(condition)


def _implied_by_domains(spec: FamilySpec, condition) -> bool:
    """Substitute each parameter by a parametrization of its domain by a free positive epsilon;
    the condition is implied when it then simplifies to True."""
    substitution = {}
    for parameter in spec.parameters:
        domain = parameter.domain
        if domain.integer:
            return False
        epsilon = sympy.Dummy(f"epsilon_{parameter.name}", positive=True)
        if domain.lower.is_finite and domain.upper.is_finite:
            value = domain.lower + (domain.upper - domain.lower) * epsilon / (1 + epsilon)
        elif domain.lower.is_finite:
            value = domain.lower + epsilon
        elif domain.upper.is_finite:
            value = domain.upper - epsilon
        else:
            continue
        substitution[parameter.symbol] = value
    return bool(sympy.simplify(condition.subs(substitution)) == sympy.true)


def _counterexample(spec: FamilySpec, condition):
    """``(point, description)``: a sampled point of the declared domains where ``condition``
    is false, or None."""
    for point in sample_points(spec, 8):
        values = {symbol: sympy.Float(str(value), 30) for symbol, value in point.items()}
        if condition.subs(values) == sympy.false:
            involved = sorted(condition.free_symbols, key=lambda symbol: symbol.name)
            return values, ", ".join(f"{symbol} = {values[symbol]:.6g}" for symbol in involved)
    return None


def _integrable_at(spec: FamilySpec, integrand, values) -> bool:
    """Whether ``integrand`` (at the parameter values) is integrable next to every end of the
    support and every kink: its local power ``p`` (``|f| ~ |x - c|**p``, or ``|x|**p`` far
    out), read from points 1e-20 and 1e-40 away (1e20 and 1e40 out), must be above -1 at a
    finite point and below -1 at infinity. An estimate, used only to tell a condition of the
    separate terms from one of the integral (which then still must verify numerically)."""
    import mpmath

    x, support = spec.variable, spec.support
    (hidden,), expr = hidden_arguments([x], integrand.subs(values))
    function = sympy.lambdify(hidden, expr, modules="mpmath")
    ends = [support.lower, support.upper, *(k.subs(values) for k in kinks(integrand, x))]
    with mpmath.workdps(60):
        for end in ends:
            for side in (-1, 1):
                if end.is_infinite:
                    if (end > 0) != (side > 0):
                        continue
                    near, far, centre = side * mpmath.mpf(10) ** 20, side * mpmath.mpf(10) ** 40, 0
                else:
                    centre = mpmath.mpf(sympy.N(end, 60))
                    near = centre + side * mpmath.mpf(10) ** -20
                    far = centre + side * mpmath.mpf(10) ** -40
                    if not (_in_support(spec, near) and _in_support(spec, far)):
                        continue
                try:
                    first, second = abs(function(near)), abs(function(far))
                except (ZeroDivisionError, ValueError, TypeError):
                    return False
                if second == 0:
                    continue
                if first == 0 or not (mpmath.isfinite(first) and mpmath.isfinite(second)):
                    return False
                power = mpmath.log(second / first) / mpmath.log(abs(far - centre)
                                                               / abs(near - centre))
                if (end.is_infinite and power >= -1) or (not end.is_infinite and power <= -1):
                    return False
    return True


def _in_support(spec: FamilySpec, value) -> bool:
    lower, upper = spec.support.lower, spec.support.upper
    return ((lower.is_infinite or value > sympy.N(lower, 60))
            and (upper.is_infinite or value < sympy.N(upper, 60)))


def expectation_over_support(spec, integrand):
    """``integrand`` under the sum or integral over a one-variable family's support (the
    form a proof displays)."""
    x, support = spec.variable, spec.support
    if support.kind == "finite":
        return sympy.Function("Sum")(integrand)
    if support.discrete:
        return sympy.Sum(integrand, (x, support.lower, support.upper))
    return sympy.Integral(integrand, (x, support.lower, support.upper))


def _entry_rungs(spec) -> list[tuple[str, Callable]]:
    if spec.support.discrete:
        return [("sum", _sum_rung)]
    return [("location-scale", _location_scale_rung),
            ("periodic location", _periodic_location_rung),
            ("direct integration", _direct_rung)]


def _sum_rung(spec, integrand, *, budget):
    return _summation(spec, integrand, budget=budget)


def _location_scale_rung(spec, integrand, *, budget):
    location, scale = location_and_scale(spec)
    if location is None and scale is None:
        return None
    coefficient, reduced, t, lower, step = _reduce_location_scale(spec, integrand, location, scale)
    closed = close_integral(reduced, t, lower, spec.support.upper, budget=budget)
    value = tidy(coefficient * closed.value)
    product = sympy.Mul(coefficient, closed.value, evaluate=False)
    combine = ProofStep(
        "Multiply the integral's value by the factor the change of variables took out.",
        step.rhs, value,
        f"the integral over t is {sympy.sstr(closed.value)} by the steps above; the product is "
        "simplified by cancelling common factors",
        "location-scale", chain=(product,) if product != value else ())
    return ClosedIntegral(value, (step, *closed.steps, combine), closed.conditions)


def periodic_location(spec: FamilySpec) -> sympy.Symbol | None:
    """The coordinate ``mu`` of a density ``f(x - mu)`` periodic over its bounded support (the
    von Mises family on (-pi, pi)), or None."""
    support, x = spec.support, spec.variable
    if support.discrete or not (support.lower.is_finite and support.upper.is_finite):
        return None
    period = support.upper - support.lower
    if sympy.simplify(spec.density.subs(x, x + period) - spec.density) != 0:
        return None
    for theta in spec.coordinate_symbols:
        if theta not in sympy.simplify(spec.density.subs(x, x + theta)).free_symbols:
            return theta
    return None


def _periodic_location_rung(spec, integrand, *, budget):
    location = periodic_location(spec)
    if location is None:
        return None
    x, support = spec.variable, spec.support
    y = fresh_symbol("y", integrand, real=True)  # a constant may be called y
    shifted = sympy.simplify(integrand.subs(x, y + location))
    if location in shifted.free_symbols:
        return None
    step = ProofStep(
        "Shift the variable by the location; the integrand is periodic, so the range of "
        "integration is unchanged.",
        sympy.Integral(integrand, (x, support.lower, support.upper)),
        sympy.Integral(shifted, (y, support.lower, support.upper)),
        f"substitute {x} = y + {location}: the integral of a function of period "
        f"{sympy.sstr(support.upper - support.lower)} over any interval of that length is the "
        "same", "periodic location")
    interior = {parameter.symbol: parameter.domain.interior_point()
                for parameter in (*spec.coordinates, *spec.constants)}
    by_residues = parametric.close_by_residues(shifted, y, support.lower, support.upper, interior)
    if by_residues is not None:
        value, steps = by_residues  # factored: (1 - rho)**2 is exact in float, not expanded
        return ClosedIntegral(value, (step, *steps))
    closed = close_integral(shifted, y, support.lower, support.upper, budget=budget)
    return ClosedIntegral(closed.value, (step, *closed.steps), closed.conditions)


def _direct_rung(spec, integrand, *, budget):
    support = spec.support
    return close_integral(integrand, spec.variable, support.lower, support.upper, budget=budget)


def _shifted_polygammas(expr: sympy.Expr) -> bool:
    """Whether ``expr`` holds polygamma functions at arguments an integer apart (``1/N`` and
    ``2 + 1/N``), which the recurrence puts on one argument."""
    arguments = [f.args[1] for f in expr.atoms(sympy.polygamma)]
    return any((first - second).is_Integer and first != second
               for first in arguments for second in arguments)


def fisher_matrix(spec: FamilySpec, entries: tuple[FisherEntry, ...]) -> sympy.ImmutableMatrix:
    """The symmetric matrix assembled from the lower-triangle entries; a numeric entry is
    represented by its symbol ``g_a_b`` (see :func:`numeric_entries`)."""
    size = len(spec.coordinates)
    matrix = sympy.zeros(size, size)
    for entry in entries:
        value = entry.value
        if value is None:  # a numeric entry: its name stands for it
            value = fisher_symbol(spec.coordinates[entry.row].name,
                                  spec.coordinates[entry.column].name)
        matrix[entry.row, entry.column] = value
        matrix[entry.column, entry.row] = value
    return sympy.ImmutableMatrix(matrix)


def numeric_entries(entries: tuple[FisherEntry, ...]) -> tuple[FisherEntry, ...]:
    """The entries computed numerically (no closed form was found for them)."""
    return tuple(entry for entry in entries if entry.value is None)


__all__ = ["NUMERIC", "fisher_entries", "fisher_matrix", "log_density", "location_and_scale",
           "numeric_entries", "scores"]
