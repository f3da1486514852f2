"""Fisher entries known only numerically, evaluated by quadrature or summation in the module.

Emit stage, Python backend. An entry no rung of the Fisher ladder closed (strategy
``numeric``, ``value`` None, :func:`raosym.derive.fisher.numeric_entries`) stands in the
derived matrix as its symbol ``g_a_b``. Here it is replaced by a call of a generated function
``_fisher_entry_ROW_COLUMN(parameters)``, evaluated at every point of its broadcast arguments:

- for a density, ``s_i s_j f`` integrated over the support by SciPy's adaptive quadrature
  (``scipy.integrate.quad``, relative tolerance 1e-12);
- for a mass function, the series ``sum_k s_i(k) s_j(k) f(k)`` (the module's ``_series_mean``:
  the terms around the mode added one by one, the tails by the Euler-Maclaurin formula with
  ``scipy.integrate.tanhsinh``), with ``f`` given by its ratio to the mode
  (:func:`log_ratio`), in which no two large log-Gammas are subtracted.

The emitted-code gate measures the float accuracy against the verify stage's mpmath
quadrature or sum, and the docstring states it.
"""

from __future__ import annotations

import math
from functools import partial

import sympy

from sympy.codegen.cfunctions import expm1
from sympy.printing.codeprinter import PrintMethodNotImplementedError

from raosym.emit.python.distance import ScalarPrinter
from raosym.emit.python.printer import (ModulePrinter, check_printable, loggamma_difference,
                                         loggamma_second_difference, printing_failure,
                                         scaled_bessel, stable_forms)
from raosym.errors import EmitError
from raosym.functions import with_complementary_erf

#: Relative tolerance asked of scipy.integrate.quad, and the accuracy the docstrings promise.
QUADRATURE_TOLERANCE = 1e-12
PROMISED_TOLERANCE = 1e-10


class numeric_fisher_entry(sympy.Function):
    """A call ``_fisher_entry_ROW_COLUMN(*parameters)`` (printed, never evaluated)."""


class IntegrandPrinter(ScalarPrinter):
    """The integrand's ``math`` code; modified Bessel functions through SciPy."""

    def _print_besseli(self, expr) -> str:
        return f"scipy.special.iv({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_scaled_besseli(self, expr) -> str:
        # i0e and i1e, not ive(0, z) and ive(1, z): SciPy 1.17's ive is nan beyond z = 1e10.
        order, argument = expr.args
        if order in (0, 1):
            return f"scipy.special.i{order}e({self._print(argument)})"
        return super()._print_scaled_besseli(expr)


def numerically_evaluated(derivation) -> dict:
    """``{(row, column): reason}`` for each entry the module evaluates numerically: those no
    rung closed (reason None), and, in a discrete family, a closed entry whose form has no float
    implementation in NumPy or SciPy (the zeta family's derivatives of zeta): the module sums
    its series instead, and the reason says why."""
    spec = derivation.spec
    numeric = {}
    for entry in derivation.entries:
        if entry.value is None:
            numeric[(entry.row, entry.column)] = None
        elif spec.support.discrete:
            reason = _without_float_form(entry.value)
            if reason is not None:
                numeric[(entry.row, entry.column)] = reason
    return numeric


def _without_float_form(expr: sympy.Expr) -> str | None:
    """Why the module's printer cannot print ``expr``, or None when it can."""
    stable = stable_forms(expr)
    try:
        check_printable(stable)
        ModulePrinter(set()).doprint(stable)
    except (EmitError, PrintMethodNotImplementedError) as error:
        derivatives = {f"derivatives of {d.expr.func}" for d in expr.atoms(sympy.Derivative)}
        functions = {str(f.func) for f in expr.atoms(sympy.Function)
                     if not _printable(f) and not f.has(sympy.Derivative)}
        missing = sorted(derivatives | functions)
        if not missing:
            return printing_failure(error)
        return f"NumPy and SciPy have no {' and no '.join(missing)}"
    return None


def _printable(expr: sympy.Expr) -> bool:
    try:
        ModulePrinter(set()).doprint(expr)
    except (EmitError, PrintMethodNotImplementedError):
        return False
    return True


def with_numeric_calls(derivation, fisher: sympy.Matrix, numeric: dict) -> sympy.Matrix:
    """The matrix with each numerically evaluated entry replaced by its generated call."""
    spec = derivation.spec
    fisher = sympy.Matrix(fisher)
    for row, column in numeric:
        call = numeric_fisher_entry(row, column, *spec.coordinate_symbols,
                                    *spec.constant_symbols)
        fisher[row, column] = fisher[column, row] = call
    return sympy.ImmutableMatrix(fisher)


def _scores(spec) -> list[sympy.Expr]:
    """``d log f / d theta_i``, as raosym.derive.fisher.scores (which emit may not import):
    an entry the derive stage closed kept no scores."""
    logf = sympy.expand_log(sympy.log(spec.density), force=True)
    return [sympy.diff(logf, theta) for theta in spec.coordinate_symbols]


def _exponential_parts(term: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """``(c, A)`` with ``term = c*exp(A)``: the term's exponential factors merged."""
    exponent, rest = sympy.S.Zero, []
    for factor in sympy.Mul.make_args(term):
        if isinstance(factor, sympy.exp):
            exponent += factor.args[0]
        else:
            rest.append(factor)
    return sympy.Mul(*rest), exponent


def _relative_to(terms: list[tuple], reference: sympy.Expr) -> sympy.Expr:
    """``sum c_i exp(A_i - reference)`` written as ``sum c_i + sum c_i expm1(A_i - reference)``
    (the rule ``w exp(y) - w = w (exp(y) - 1)``), the sum of the coefficients simplified: it
    holds the cancellation exactly (``(x - mu) - (x + mu) = -2 mu``)."""
    constant, increments = [], []
    for coefficient, exponent in terms:
        shift = sympy.expand(exponent - reference)
        constant.append(coefficient)
        if shift != 0:
            increments.append(coefficient * expm1(shift))
    return sympy.factor(sympy.Add(*constant)) + sympy.Add(*increments)


def stable_score(score: sympy.Expr) -> sympy.Expr:
    """A score ``sum a_i exp(A_i) / (exp(A_1) + exp(A_2))`` (a two-component mixture's)
    without its cancellation: ``(x - mu) exp(A_2) - (x + mu) exp(A_1)`` loses every digit of
    ``mu (x**2 - 1)`` as mu -> 0. Numerator and denominator are divided by the exponential of
    the larger exponent (a Piecewise on the sign of their difference, so that nothing
    overflows) and written with ``expm1`` (:func:`_relative_to`). Other scores are returned
    as they are."""
    numerator, denominator = sympy.fraction(sympy.together(score))
    below = [_exponential_parts(t) for t in sympy.Add.make_args(sympy.expand(denominator))]
    above = [_exponential_parts(t) for t in sympy.Add.make_args(sympy.expand(numerator))]
    if len(below) != 2:
        return score
    first, second = (exponent for _, exponent in below)
    exponents = {first, second}
    # Only a ratio of two exponentials with different exponents, each term above on one of
    # them: elsewhere (the skew-normal's exp(-a**2 x**2/2)/(2 - erfc)) the rewrite would add
    # a cancellation, 1 + expm1(y) for exp(y), instead of removing one.
    if sympy.expand(first - second) == 0 or any(
            not any(sympy.expand(exponent - e) == 0 for e in exponents) for _, exponent in above):
        return score

    def divided_by(reference):
        return _relative_to(above, reference) / _relative_to(below, reference)

    return sympy.Piecewise((divided_by(first), sympy.expand(second - first) <= 0),
                           (divided_by(second), True))


def numeric_contexts(derivation, rename: dict, numeric: dict) -> list[dict]:
    """The generated quadrature (or series) functions, one per numerically evaluated entry."""
    spec = derivation.spec
    if not numeric:
        return []
    scores = _scores(spec)
    entries = [(row, column, scores[row], scores[column], numeric[(row, column)])
               for row, column in sorted(numeric)]
    parameters = [rename.get(s, s).name for s in (*spec.coordinate_symbols,
                                                  *spec.constant_symbols)]
    if spec.support.discrete:
        return [_series_context(spec, entry, rename, parameters) for entry in entries]
    printer = IntegrandPrinter()
    x = spec.variable
    sign = {"positive": True} if spec.support.lower.is_nonnegative else {"real": True}
    variable = sympy.Symbol("_x", **sign)

    def code(expr):
        expr = with_complementary_erf(expr).xreplace(rename).xreplace({x: variable})
        # I_n(z) as exp(z)*ive(n, z) (z > 0), the exponentials merged and their exponent
        # factored: the Rice density's I_0(v*x/s**2) overflows beyond v*x/s**2 = 713 though
        # exp(-(x - v)**2/(2*s**2))*ive(0, v*x/s**2) does not.
        expr = scaled_bessel(expr).replace(
            lambda e: isinstance(e, sympy.exp) and e.args[0].has(variable),
            lambda e: sympy.exp(sympy.factor(e.args[0])))
        return printer.doprint(expr)

    # The quadrature is split at every coordinate's value and its negative (a location, or
    # the centres +-mu of a symmetric mixture, whose mass sits far from 0 at mu = 1e6), at 0,
    # and around them (the module's _quadrature_cuts).
    centres = [*(sign + rename.get(p.symbol, p.symbol).name for p in spec.coordinates
                 for sign in ("", "-")), "0.0"]
    contexts = []
    names = [p.name for p in spec.coordinates]
    for row, column, first, second, _ in entries:
        contexts.append({
            "kind": "integral",
            "name": f"_fisher_entry_{row}_{column}",
            "label": f"g[{names[row]}, {names[column]}]",
            "arguments": ", ".join(parameters),
            "density": code(spec.density),
            "scores": (code(stable_score(first)), code(stable_score(second))),
            "lower": code(spec.support.lower) if spec.support.lower.is_finite else "-math.inf",
            "upper": code(spec.support.upper) if spec.support.upper.is_finite else "math.inf",
            "breaks": "(" + "".join(f"{centre}, " for centre in centres) + ")",
            "tolerance": f"{QUADRATURE_TOLERANCE:g}",
            "promised": f"{PROMISED_TOLERANCE:g}",
        })
    return contexts


# ----------------------------------------------------------------------------- discrete families


class TermPrinter(ModulePrinter):
    """The module's NumPy code (and its helpers: ``_polygamma``, ``_polygamma_difference``,
    ...) for the terms of a series, on arrays of the summation variable and on the single
    floats the tails' quadrature asks for."""

    def __init__(self) -> None:
        super().__init__(scalars=set())


def series_log_density(density: sympy.Expr) -> sympy.Expr:
    """``log f`` with the logarithm distributed over products and powers (the density is
    positive on its support) and the logarithms of factorials, binomial coefficients and Gamma
    and Beta functions as log-Gammas: finite where ``f`` and ``Gamma(k + r)`` are not, at the
    far terms a heavy tail needs."""
    logf = sympy.expand_log(sympy.log(density), force=True)
    gamma = partial(sympy.loggamma, evaluate=False)  # loggamma(k + 1) stays (not log(k!))

    def logarithm(argument):
        if isinstance(argument, sympy.gamma):
            return gamma(argument.args[0])
        if isinstance(argument, sympy.factorial):
            return gamma(argument.args[0] + 1)
        if isinstance(argument, sympy.beta):
            a, b = argument.args
            return gamma(a) + gamma(b) - gamma(a + b)
        if isinstance(argument, sympy.binomial):
            n, k = argument.args
            return gamma(n + 1) - gamma(k + 1) - gamma(n - k + 1)
        return sympy.log(argument)

    return logf.replace(lambda e: isinstance(e, sympy.log), lambda e: logarithm(e.args[0]))


def log_ratio(log_density: sympy.Expr, k: sympy.Symbol, k0: sympy.Symbol) -> sympy.Expr:
    """``log f(k) - log f(k0)`` written without its large cancelling parts. ``log f`` itself is
    a difference of numbers as large as ``log(gamma(1e6))`` (a negative binomial with r = 1e6)
    and loses ten digits; the ratio to the mode keeps them, and the module divides by the sum
    of the ratios (the mass function sums to one). The terms free of ``k`` drop out; two
    log-Gammas whose arguments differ by a shift free of ``k`` are one
    :class:`loggamma_second_difference`; any other ``loggamma(A(k)) - loggamma(A(k0))`` is a
    :class:`loggamma_difference`, and the other terms are factored (``(k - k0)*log1p(-p)``)."""
    at_k0 = {k: k0}
    gammas, ratio = [], []
    for term in sympy.Add.make_args(sympy.expand(log_density)):
        if not term.has(k):
            continue
        coefficient, function = term.as_independent(k, as_Add=False)
        if isinstance(function, sympy.loggamma):
            gammas.append((coefficient, function.args[0]))
        else:
            ratio.append(sympy.factor_terms(term - term.xreplace(at_k0)))
    while gammas:
        coefficient, argument = gammas.pop(0)
        partner = next((index for index, (other, lower) in enumerate(gammas)
                        if other == -coefficient
                        and not sympy.expand(argument - lower).has(k)), None)
        if partner is None:
            ratio.append(coefficient * loggamma_difference(
                argument.xreplace(at_k0), sympy.expand(argument - argument.xreplace(at_k0))))
            continue
        lower = gammas.pop(partner)[1]
        ratio.append(coefficient * loggamma_second_difference(
            lower, lower.xreplace(at_k0), sympy.expand(argument - lower)))
    return sympy.Add(*ratio)


def _summation_variable(support) -> sympy.Symbol:
    """``_k``: real, and positive or nonnegative when the support's least point says so."""
    lower = support.lower if support.kind == "integers" else min(support.points, default=-1,
                                                                  key=_ordering)
    sign = {"positive": True} if lower.is_positive else \
        {"nonnegative": True} if lower.is_nonnegative else {}
    return sympy.Symbol("_k", real=True, **sign)


def _ordering(point: sympy.Expr) -> float:
    return float(point) if point.is_number else math.inf


def _series_context(spec, entry: tuple, rename: dict, parameters: list[str]) -> dict:
    """A numerically evaluated entry of a discrete family: ``sum_k s_i(k) s_j(k) f(k)`` over
    the support, its terms printed as NumPy code in the summation variable ``_k`` (the
    module's ``_series_mean`` adds them). A score whose part free of ``k`` has no float form
    (``-zeta'(s)/zeta(s)``) is centred instead: that part is minus the mean of the rest (a
    score has mean zero), summed first."""
    row, column, first, second, reason = entry
    printer = TermPrinter()
    k = _summation_variable(spec.support)

    def code(expr):
        # The terms are functions of a real k (the tails are integrated), so log(k!) stays
        # loggamma(k + 1); stable forms read its sign (psi(r) - psi(r + k) is summed term by
        # term for k >= 0, where the difference of the two loses digits at large r).
        expr = stable_forms(expr.xreplace({spec.variable: k})).xreplace(rename)
        try:
            return printer.doprint(expr)
        except (PrintMethodNotImplementedError, TypeError) as error:
            raise EmitError(f"the python backend cannot print a term of a numeric Fisher "
                            f"entry: {printing_failure(error)}") from None

    means, factors = {}, []
    for index, score in ((row, first), (column, second)):
        if _without_float_form(score) is None:
            factors.append(code(score))
            continue
        varying, _ = sympy.expand(score).as_independent(spec.variable, as_Add=True)[::-1]
        means[f"_mean_{index}"] = code(varying)
        factors.append(f"{code(varying)} - _mean_{index}")
    support = spec.support
    bound = ScalarPrinter()
    if support.kind == "finite":
        lower = upper = None
        points = "(" + "".join(f"{bound.doprint(p.xreplace(rename))}, "
                               for p in support.points) + ")"
    else:
        lower = bound.doprint(support.lower.xreplace(rename))
        upper = bound.doprint(support.upper.xreplace(rename)) if support.upper.is_finite \
            else "math.inf"
        points = None
    names = [p.name for p in spec.coordinates]
    return {
        "kind": "series",
        "name": f"_fisher_entry_{row}_{column}",
        "label": f"g[{names[row]}, {names[column]}]",
        "reason": reason,
        "arguments": ", ".join(parameters),
        "log_ratio": code(log_ratio(series_log_density(spec.density.xreplace({spec.variable: k})),
                                    k, sympy.Symbol("_k0", real=True))),
        "means": sorted(means.items()),
        "factors": factors,
        "lower": lower,
        "upper": upper,
        "points": points,
        "promised": f"{PROMISED_TOLERANCE:g}",
        "helpers": printer.helpers,
    }
