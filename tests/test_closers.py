"""Tests of the closers (last rungs of the Fisher ladder) on Student's t and the logistic.

The reduced integrands are built as the ladder builds them: the score is d/dtheta log f,
x = mu + s*t, the entry E[s_i s_j] times s**2 (so the reduced integrand is s**2 * score**2 *
f * s, the last s being the Jacobian) over the real line, folded onto (0, oo). A closer
returns the half-line integral, so the Fisher entry is 2 * value / s**2.
"""

from __future__ import annotations

import time

import mpmath
import pytest
import sympy

from raosym.derive.closers import (
    BETA_STRATEGY,
    SERIES_STRATEGY,
    close_by_beta_substitution,
    close_by_exponential_series,
)
from raosym.derive.steps import ProofStep

x, mu = sympy.symbols("x mu", real=True)
s, nu = sympy.symbols("s nu", positive=True)
t = sympy.Symbol("t", positive=True)
BUDGET = 30.0
DIGITS = 30

STUDENT_T = (
    sympy.gamma((nu + 1) / 2)
    / (sympy.sqrt(nu * sympy.pi) * s * sympy.gamma(nu / 2))
    * (1 + ((x - mu) / s) ** 2 / nu) ** (-(nu + 1) / 2)
)
LOGISTIC = sympy.exp(-(x - mu) / s) / (s * (1 + sympy.exp(-(x - mu) / s)) ** 2)
GAUSSIAN_KERNEL = t**2 * sympy.exp(-(t**2) / 2) / sympy.sqrt(2 * sympy.pi)

# (parameter, Fisher entry g_ii)
STUDENT_T_ENTRIES = [(mu, (nu + 1) / ((nu + 3) * s**2)), (s, 2 * nu / ((nu + 3) * s**2))]
LOGISTIC_ENTRIES = [(mu, 1 / (3 * s**2)), (s, (sympy.pi**2 + 3) / (9 * s**2))]


def reduced(density, parameter):
    """s**2 * score**2 * f * s after x = mu + s*t: the integrand the ladder hands over."""
    score = sympy.diff(sympy.log(density), parameter)
    return (s**2 * score**2 * density * s).subs(x, mu + s * t)


def check_steps(steps, integrand, value, strategy):
    assert steps and all(isinstance(step, ProofStep) for step in steps)
    assert steps[0].lhs == sympy.Integral(integrand, (t, 0, sympy.oo))
    assert steps[-1].rhs == value
    for before, after in zip(steps, steps[1:]):
        assert after.lhs == before.rhs  # the steps chain
    for step in steps:
        assert step.strategy == strategy
        assert step.claim and step.justification
        assert isinstance(step.claim, str) and isinstance(step.justification, str)


def check_closed(value):
    assert not value.has(sympy.Integral, sympy.Sum, sympy.meijerg, sympy.hyper, sympy.Piecewise)
    assert not value.has(sympy.nan, sympy.zoo, sympy.oo, t)


def half_line_quad(integrand, substitutions):
    function = sympy.lambdify(t, integrand.subs(substitutions), "mpmath")
    return mpmath.quad(function, [0, 1, 10, 100, mpmath.inf])


def assert_digits(numeric, exact):
    exact = mpmath.mpf(sympy.N(exact, 60))
    assert abs(numeric - exact) <= mpmath.mpf(10) ** (-DIGITS) * max(1, abs(exact))


@pytest.fixture(autouse=True)
def high_precision():
    with mpmath.workdps(50):
        yield


# --------------------------------------------------------------------------------------------
# Closer 1: Student's t


@pytest.mark.parametrize("parameter, expected", STUDENT_T_ENTRIES, ids=["mu_mu", "s_s"])
@pytest.mark.parametrize("form", ["raw", "simplified"])
def test_beta_substitution_closes_student_t(parameter, expected, form):
    integrand = reduced(STUDENT_T, parameter)
    if form == "simplified":
        integrand = sympy.simplify(integrand)
    closed = close_by_beta_substitution(integrand, t, budget=BUDGET)
    assert closed is not None
    value, steps = closed
    check_closed(value)
    assert sympy.simplify(2 * value / s**2 - expected) == 0
    check_steps(steps, integrand, value, BETA_STRATEGY)
    beta_step = next(step for step in steps if "Beta integral" in step.claim)
    assert "> 0" in beta_step.justification  # the convergence conditions are stated
    assert beta_step.rhs.has(sympy.beta)
    assert any(step.rhs.has(sympy.Integral) and step.rhs.limits[0][1:] == (0, 1)
               for step in steps if isinstance(step.rhs, sympy.Integral))


@pytest.mark.parametrize("parameter", [mu, s], ids=["mu_mu", "s_s"])
@pytest.mark.parametrize("nu_value", ["7/10", "3", "11"])
def test_beta_substitution_matches_quadrature(parameter, nu_value):
    integrand = reduced(STUDENT_T, parameter)
    value, _ = close_by_beta_substitution(integrand, t, budget=BUDGET)
    point = {nu: sympy.Rational(nu_value), s: sympy.Rational(17, 10)}
    assert_digits(half_line_quad(integrand, point), value.subs(point))


def test_student_t_entries_match_full_line_quadrature():
    point = {nu: 3, s: sympy.Rational(17, 10), mu: sympy.Rational(3, 10)}
    for parameter, expected in STUDENT_T_ENTRIES:
        integrand = reduced(STUDENT_T, parameter)
        value, _ = close_by_beta_substitution(integrand, t, budget=BUDGET)
        score = sympy.diff(sympy.log(STUDENT_T), parameter)
        density_integrand = sympy.lambdify(x, (score**2 * STUDENT_T).subs(point), "mpmath")
        numeric = mpmath.quad(density_integrand, [-mpmath.inf, -10, 0, 10, mpmath.inf])
        assert_digits(numeric, (2 * value / s**2).subs(point))
        assert_digits(numeric, expected.subs(point))


def test_beta_substitution_declines_unprovable_convergence():
    # Converges only for nu > 2 (b = nu/2 - 1 > 0): nothing says so, so the closer declines.
    integrand = t**2 * (nu + t**2) ** (-(nu + 1) / 2)
    assert close_by_beta_substitution(integrand, t, budget=BUDGET) is None


def test_beta_substitution_handles_integer_exponents_and_plain_symbols():
    plain = sympy.Symbol("t")  # no assumptions: the closer works on the half-line itself
    integrand = 4 * plain**2 / (1 + plain**2) ** 3
    value, steps = close_by_beta_substitution(integrand, plain, budget=BUDGET)
    assert sympy.simplify(value - sympy.pi / 4) == 0
    assert steps[0].lhs == sympy.Integral(integrand, (plain, 0, sympy.oo))  # caller's symbol


@pytest.mark.parametrize(
    "integrand",
    [
        # constants spread over an expanded denominator
        t**2 * (nu + t**2) ** (-nu / 2) / sympy.expand(nu ** (nu / 2) * (nu + t**2) ** 2),
        sympy.sqrt(t) * (2 + 3 * t**2) ** sympy.Rational(-7, 3),  # c = 2/3, odd powers of t
        t**2 * ((nu + t**2) / nu) ** (-(nu + 5) / 2),
    ],
    ids=["expanded", "fractional", "quotient-base"],
)
def test_beta_substitution_other_kernels(integrand):
    value, steps = close_by_beta_substitution(integrand, t, budget=BUDGET)
    check_closed(value)
    check_steps(steps, integrand, value, BETA_STRATEGY)
    point = {nu: sympy.Rational(5, 2)}
    assert_digits(half_line_quad(integrand, point), value.subs(point))


# --------------------------------------------------------------------------------------------
# Closer 2: logistic


@pytest.mark.parametrize("parameter, expected", LOGISTIC_ENTRIES, ids=["mu_mu", "s_s"])
@pytest.mark.parametrize("form", ["raw", "simplified", "tanh"])
def test_exponential_series_closes_logistic(parameter, expected, form):
    integrand = reduced(LOGISTIC, parameter)
    if form == "simplified":
        integrand = sympy.simplify(integrand)
    elif form == "tanh":  # the score as tanh(t/2), the way one writes it by hand
        score = sympy.tanh(t / 2) if parameter == mu else t * sympy.tanh(t / 2) - 1
        integrand = score**2 * sympy.exp(-t) / (1 + sympy.exp(-t)) ** 2
    closed = close_by_exponential_series(integrand, t, budget=BUDGET)
    assert closed is not None
    value, steps = closed
    check_closed(value)
    assert sympy.simplify(2 * value / s**2 - expected) == 0
    check_steps(steps, integrand, value, SERIES_STRATEGY)
    assert any(step.rhs.has(sympy.Sum) for step in steps)


@pytest.mark.parametrize("parameter", [mu, s], ids=["mu_mu", "s_s"])
def test_exponential_series_matches_quadrature(parameter):
    integrand = reduced(LOGISTIC, parameter)
    value, _ = close_by_exponential_series(integrand, t, budget=BUDGET)
    assert_digits(half_line_quad(integrand, {s: sympy.Rational(17, 10)}), value)


def test_logistic_entries_match_full_line_quadrature():
    point = {s: sympy.Rational(17, 10), mu: sympy.Rational(3, 10)}
    for parameter, expected in LOGISTIC_ENTRIES:
        value, _ = close_by_exponential_series(reduced(LOGISTIC, parameter), t, budget=BUDGET)
        score = sympy.diff(sympy.log(LOGISTIC), parameter)
        density_integrand = sympy.lambdify(x, (score**2 * LOGISTIC).subs(point), "mpmath")
        numeric = mpmath.quad(density_integrand, [-mpmath.inf, -20, 0, 20, mpmath.inf])
        assert_digits(numeric, (2 * value / s**2).subs(point))
        assert_digits(numeric, expected.subs(point))


@pytest.mark.parametrize(
    "integrand, expected",
    [
        (t**3 / (sympy.exp(t) - 1), sympy.pi**4 / 15),  # Bose: absolutely convergent, zeta(4)
        (1 / (1 + sympy.exp(t)), sympy.log(2)),  # Fermi: eta(1)
        (t / sympy.cosh(t / 2) ** 2, 4 * sympy.log(2)),  # sech**2 with half-rate exponentials
        # Poles of R(q) at q = ±i (1 + q**2 in the denominator): Hurwitz zeta values at
        # quarters, combined by the reflection formula; the values are the tables' (Gradshteyn
        # and Ryzhik 3.523, Dirichlet's beta(1) = pi/4, beta(2) = Catalan, beta(3) = pi**3/32).
        (sympy.exp(-t) / (1 + sympy.exp(-2 * t)), sympy.pi / 4),
        (t / sympy.cosh(t), 2 * sympy.Catalan),
        (t**2 / sympy.cosh(t), sympy.pi**3 / 8),
        (t**2 / sympy.cosh(t) ** 3, sympy.pi * (sympy.pi**2 - 8) / 16),
    ],
    ids=["bose", "fermi", "sech2", "sech-rational", "sech-catalan", "sech-t2", "sech3-t2"],
)
def test_exponential_series_other_kernels(integrand, expected):
    value, steps = close_by_exponential_series(integrand, t, budget=BUDGET)
    assert sympy.simplify(value - expected) == 0
    check_steps(steps, integrand, value, SERIES_STRATEGY)
    assert_digits(half_line_quad(integrand, {}), value)


@pytest.mark.parametrize("parameter", [mu, s], ids=["mu", "s"])
def test_exponential_series_closes_the_hyperbolic_secant(parameter):
    """f = sech(pi (x - mu)/(2 s))/(2 s): the scores hold tanh, the kernel sech, so R(q) has
    its poles at q = ±i. Both entries are pi**2/(8 s**2) (the variance of the standard
    law is 1); checked against the full-line quadrature of the density here."""
    density = 1 / (2 * s * sympy.cosh(sympy.pi * (x - mu) / (2 * s)))
    integrand = reduced(density, parameter)
    value, steps = close_by_exponential_series(integrand, t, budget=BUDGET)
    check_steps(steps, integrand, value, SERIES_STRATEGY)
    entry = 2 * value / s**2
    assert sympy.simplify(entry - sympy.pi**2 / (8 * s**2)) == 0
    point = {mu: sympy.Rational(3, 10), s: sympy.Rational(17, 10)}
    score = sympy.diff(sympy.log(density), parameter)
    integrand = sympy.lambdify(x, (score**2 * density).subs(point), "mpmath")
    with mpmath.workdps(DIGITS + 10):
        numeric = mpmath.quad(integrand, [-mpmath.inf, point[mu], mpmath.inf])
    assert_digits(numeric, entry.subs(point))


def test_exponential_series_declines_divergent_integrals():
    assert close_by_exponential_series(1 / (sympy.exp(t) - 1), t, budget=BUDGET) is None  # t = 0
    assert close_by_exponential_series(t / (1 + sympy.exp(-t)), t, budget=BUDGET) is None  # oo


# --------------------------------------------------------------------------------------------
# Declining: quickly, without raising


@pytest.mark.parametrize(
    "closer, integrand",
    [
        (close_by_beta_substitution, GAUSSIAN_KERNEL),
        (close_by_exponential_series, GAUSSIAN_KERNEL),
        (close_by_beta_substitution, reduced(LOGISTIC, s)),
        (close_by_exponential_series, reduced(STUDENT_T, s)),
        (close_by_beta_substitution, sympy.log(1 + t**2) / (1 + t**2) ** 2),
        (close_by_exponential_series, sympy.exp(-t) / (1 + sympy.exp(-t) + sympy.exp(-2 * t))),
        (close_by_beta_substitution, sympy.Integer(3)),
    ],
    ids=["gauss-beta", "gauss-series", "logistic-beta", "student-series", "log",
         "cube-roots-of-unity", "const"],
)
def test_closers_decline_other_shapes_quickly(closer, integrand):
    start = time.perf_counter()
    assert closer(integrand, t, budget=BUDGET) is None
    assert time.perf_counter() - start < 2.0


def test_gamma_integrals_take_euler_s_route_not_a_series():
    """An elementary integral is not sent through series machinery: a sum of t**k exp(-c t)
    (Laplace's entries after the fold) is declined by the series closer and closed by Euler's
    Gamma integral, with the value of the Gamma function itself (k! / c**(k + 1))."""
    from raosym.derive.integrals import close_integral

    b = sympy.Symbol("b", positive=True)
    for integrand, expected in [(sympy.exp(-t), 1), ((t - 1) ** 2 * sympy.exp(-t), 1),
                                (t**3 * sympy.exp(-2 * t / b), 6 * (b / 2) ** 4)]:
        assert close_by_exponential_series(integrand, t, budget=BUDGET) is None
        closed = close_integral(integrand, t, 0, sympy.oo, budget=BUDGET)
        assert sympy.simplify(closed.value - expected) == 0
        assert all(step.strategy != SERIES_STRATEGY for step in closed.steps)
        assert any("Gamma integral" in step.justification for step in closed.steps)
    # a kernel with a sum in its denominator still needs the series
    assert close_by_exponential_series(sympy.exp(-t) / (1 + sympy.exp(-t)) ** 2, t,
                                       budget=BUDGET) is not None
