"""Reach, fourth round: names users pick and sample points the quadrature must not trip on.

- a gamma family in shape and *rate* with the rate called ``beta``, as most textbooks write
  it: a function's name is free for a parameter (``beta`` bare is the parameter, ``beta(...)``
  the function), and the family derives, verifies and emits;
- a Laplace mechanism whose scale is called ``a``, the letter the proofs once wrote the
  excess ``alpha - 1`` with (refused at spec time before): the proof now writes the excess
  with a letter the family leaves free and says so, and the RDP curve is Mironov's;
- the geometric family at p = 1/2, whose score vanishes at a probe of the series' scan (the
  same mistake in a sum);
- the same family at the rate 1/8 (a sample point the verification really drew): the score in
  the rate, ``a/beta - x``, vanishes *exactly* at the probe ``x = 8a`` of the tail search,
  which took that single zero for the end of the tail and cut the integral there
  (E[s_a s_beta] = -3.57 instead of -8: a true result refused).

References come from the literature (the gamma family's Fisher matrix in shape and rate:
``[[psi'(a), -1/beta], [-1/beta, a/beta**2]]``), evaluated with mpmath here.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy
from conftest import generate_through_cli

from raosym.spec import load_spec

pytestmark = pytest.mark.xdist_group("test_reach_names_and_probes")

GAMMA_RATE = """\
name = "gamma_rate"
title = "Gamma family in shape a and rate beta"
variable = "x"
support = "positive"
density = "beta**a/gamma(a)*x**(a - 1)*exp(-beta*x)"

[coordinates]
a = "positive"
beta = "positive"
"""


def gamma_rate_fisher(a, rate):
    """The literature's Fisher matrix of the gamma family in (shape, rate), at 40 digits."""
    with mpmath.workdps(40):
        a, rate = mpmath.mpf(a), mpmath.mpf(rate)
        return [[mpmath.psi(1, a), -1 / rate], [-1 / rate, a / rate**2]]


#: The normal family with its variable and parameters named after the modules the verify
#: stage and the generated code call (lambdify once bound an argument "mpmath" over the
#: module: "'mpf' object has no attribute 'mpf'").
MODULE_NAMES = """\
name = "module_names"
variable = "scipy"
support = "real"
density = "exp(-(scipy - itertools)**2/(2*mpmath**2))/sqrt(2*pi*mpmath**2)"

[coordinates]
itertools = "real"
mpmath = "positive"
"""


#: The Laplace mechanism with its scale called ``a``.
LAPLACE_A = """\
name = "laplace_a"
variable = "x"
support = "real"
density = "exp(-Abs(x - mu)/a)/(2*a)"

[coordinates]
mu = "real"
a = "positive"

[mechanism]
location = "mu"
scale = "a"
"""


def laplace_rdp(alpha, sensitivity, scale):
    """Mironov (2017), Table II: the Laplace mechanism's RDP curve at order alpha > 1, with
    t = sensitivity/scale, at 50 digits."""
    with mpmath.workdps(50):
        alpha, t = mpmath.mpf(alpha), mpmath.mpf(sensitivity) / mpmath.mpf(scale)
        inner = (alpha / (2 * alpha - 1) * mpmath.exp((alpha - 1) * t)
                 + (alpha - 1) / (2 * alpha - 1) * mpmath.exp(-alpha * t))
        return mpmath.log(inner) / (alpha - 1)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_through_cli(tmp_path_factory.mktemp("names"),
                                {"gamma_rate": GAMMA_RATE, "module_names": MODULE_NAMES,
                                 "laplace_a": LAPLACE_A}, "names")


def test_a_mechanism_scale_may_be_called_a(generated):
    summary, modules = generated
    assert summary["laplace_a"]["status"] == "ok"
    module = modules["laplace_a"]
    for alpha, sensitivity, scale in ((2.0, 1.0, 0.5), (1.0 + 1e-6, 1.0, 3.0), (64.0, 0.1, 2.0)):
        expected = laplace_rdp(alpha, sensitivity, scale)
        got = module.rdp_epsilon(alpha, sensitivity=sensitivity, a=scale)
        assert abs(got - expected) <= 1e-14 * expected, (alpha, sensitivity, scale)
    # The proof writes the excess alpha - 1 with b (a is the scale) and introduces it.
    proof = (Path(module.__file__).parent.parent / "latex" / "laplace_a.tex").read_text()
    assert r"below, $b = \alpha - 1 > 0$" in proof
    assert "excess" not in proof and r"\frac{e^{\frac{\Delta b}{a}}}{2}" in proof


def test_parameters_named_after_modules_derive_and_emit(generated):
    """The normal family's metric diag(1, 2)/sigma**2 and its distance
    2 sqrt(2) asinh(sqrt(dmu**2/2 + dsigma**2)/(2 sqrt(sigma1 sigma2))), in mpmath here."""
    summary, modules = generated
    assert summary["module_names"]["status"] == "ok"
    module = modules["module_names"]
    assert module.COORDINATES == ("itertools", "mpmath")
    for mu, sigma in ((0.3, 1.7), (-40.0, 1e-3)):
        expected = [[1 / sigma**2, 0.0], [0.0, 2 / sigma**2]]
        assert np.allclose(module.fisher_information([mu, sigma]), expected, rtol=1e-15, atol=0)
    with mpmath.workdps(30):
        one, two = (mpmath.mpf("0.3"), mpmath.mpf("1.7")), (mpmath.mpf("-2"), mpmath.mpf("0.5"))
        inner = mpmath.sqrt((one[0] - two[0]) ** 2 / 2 + (one[1] - two[1]) ** 2)
        distance = 2 * mpmath.sqrt(2) * mpmath.asinh(inner / (2 * mpmath.sqrt(one[1] * two[1])))
    got = module.rao_distance([0.3, 1.7], [-2.0, 0.5])
    assert abs(got - distance) <= 1e-14 * distance


def test_a_parameter_may_take_a_function_name(generated):
    summary, modules = generated
    assert summary["gamma_rate"]["status"] == "ok"
    for a, rate in ((1.9432639556302, 0.125), (0.3, 40.0), (250.0, 1e-3)):
        expected = gamma_rate_fisher(a, rate)
        got = modules["gamma_rate"].fisher_information([a, rate])
        for i in range(2):
            for j in range(2):
                assert abs(got[i, j] - expected[i][j]) <= 1e-13 * abs(expected[i][j])


def test_the_module_documents_the_parameter_under_its_own_name(generated):
    _, modules = generated
    assert modules["gamma_rate"].COORDINATES == ("a", "beta")
    density = next(line for line in modules["gamma_rate"].__doc__.splitlines()
                   if line.strip().startswith("f(x) ="))
    assert "beta**a" in density and "gamma(a)" in density and "exp(-beta*x)" in density


def test_a_tail_probe_on_a_zero_of_the_integrand_does_not_end_the_tail(tmp_path):
    """E[s_a s_beta] at beta = 1/8, where a/beta - x is exactly 0 at a probe, is -1/beta."""
    quadrature = importlib.import_module("raosym.verify.quadrature")
    path = tmp_path / "gamma_rate.toml"
    path.write_text(GAMMA_RATE)
    spec = load_spec(path)
    a, rate = spec.coordinate_symbols
    log_density = sympy.log(spec.density)
    score_a, score_rate = (sympy.diff(log_density, symbol) for symbol in (a, rate))
    with mpmath.workdps(40):
        point = {a: mpmath.mpf("1.9432639556302"), rate: mpmath.mpf(1) / 8}
        value = quadrature.expectation(spec, score_a * score_rate * spec.density, point)
        assert abs(value - gamma_rate_fisher(point[a], point[rate])[0][1]) < mpmath.mpf(10)**-35


def test_a_probe_on_a_zero_of_a_summand_does_not_end_the_series(tmp_path):
    """The geometric family p (1 - p)**k at p = 1/2: its score squared, (2 - 2k)**2, is
    exactly 0 at the probe k = 1 of the series' scan, which took that single zero for the end
    of the tail (the same scan summed (k/p - 2)**2 p**k at p = 1/2 to 3.99 instead of 16, and
    gave the geometric pair's entry 1.99 instead of 8); E[s**2] is 1/(p**2 (1 - p)) = 8."""
    quadrature = importlib.import_module("raosym.verify.quadrature")
    path = tmp_path / "geometric.toml"
    path.write_text('name = "geometric"\nvariable = "k"\nsupport = "integers >= 0"\ndensity = "p*(1 - p)**k"\n'
                    '[coordinates]\np = "(0, 1)"\n')
    spec = load_spec(path)
    p, = spec.coordinate_symbols
    score = sympy.diff(sympy.log(spec.density), p)
    with mpmath.workdps(40):
        value = quadrature.expectation(spec, score**2 * spec.density, {p: mpmath.mpf(1) / 2})
        assert abs(value - 8) < mpmath.mpf(10)**-35


def test_a_constant_name_is_still_refused(tmp_path):
    from raosym.errors import SpecError

    path = tmp_path / "gamma_pi.toml"
    path.write_text(GAMMA_RATE.replace("beta", "pi").replace('"gamma_rate"', '"gamma_pi"'))
    with pytest.raises(SpecError, match="shadows the constant 'pi'"):
        load_spec(path)


# ----------------------------------------------- one coordinate: the distance is an arc length

ONE_COORDINATE = {
    "logseries": """\
name = "logseries"
variable = "k"
support = "integers >= 1"
density = "-p**k/(k*log(1 - p))"

[coordinates]
p = "(0, 1)"
""",
    "poisson_log": """\
name = "poisson_log"
variable = "k"
support = "integers >= 0"
density = "exp(k*eta - exp(eta))/factorial(k)"

[coordinates]
eta = "real"
""",
    "ztpoisson": """\
name = "ztpoisson"
variable = "k"
support = "integers >= 1"
density = "lam**k*exp(-lam)/(factorial(k)*(1 - exp(-lam)))"

[coordinates]
lam = "positive"
""",
}


def logseries_metric(p):
    """The logarithmic series family's Fisher information: Var(k)/(p^2) in its exponential
    form, with mean m = -p/((1 - p) log(1 - p)) and Var(k) = m (1/(1 - p) - m)."""
    with mpmath.workdps(_digits_for(p)):  # 1/(1 - p) - m cancels to p/2 as p -> 0
        mean = -p / ((1 - p) * mpmath.log1p(-p))
        return +(mean * (1 / (1 - p) - mean) / p**2)


def ztpoisson_metric(lam):
    """The zero-truncated Poisson family's: Var(k)/lam^2, with mean m = lam/(1 - e^-lam) and
    Var(k) = m (1 + lam - m)."""
    with mpmath.workdps(_digits_for(lam)):  # 1 + lam - m cancels to lam/2 as lam -> 0
        mean = lam / -mpmath.expm1(-lam)
        return +(mean * (1 + lam - mean) / lam**2)


def _digits_for(small):
    """The working precision plus the digits a difference of size ``small`` cancels."""
    return mpmath.mp.dps + max(0, int(-mpmath.log10(small))) + 10


@pytest.fixture(scope="module")
def one_coordinate(tmp_path_factory):
    return generate_through_cli(tmp_path_factory.mktemp("one"), ONE_COORDINATE, "one")


@pytest.mark.parametrize("name, metric, pairs", [
    ("logseries", logseries_metric,
     [(0.3, 0.7), (1e-12, 1 - 1e-12), (0.999999, 0.9999990009999989),
      (0.999999999999, 0.999999998999), (0.5, 0.5 + 1e-13), (1e-300, 1e-200)]),
    # A closed form, 2|e^(eta_1/2) - e^(eta_2/2)|, written with expm1 of the difference and the
    # larger exponential factored out; d(p, p) = 0 where e^(eta/2) overflows.
    ("poisson_log", mpmath.exp,
     [(0.6089308784643315, 0.6089318784643315), (-700.0, 700.0), (1e6, 1e6), (-3.0, -3.0 + 1e-12),
      (1400.0, 1400.0 + 1e-9)]),
    ("ztpoisson", ztpoisson_metric,
     [(0.5, 3.0), (1e-6, 1.0000000009999999e-06), (1e-8, 1e8), (700.0, 710.0), (2.0, 2.0)]),
])
def test_one_coordinate_distance_is_the_arc_length(one_coordinate, name, metric, pairs):
    """Against the integral of sqrt(g) written here (literature metric, mpmath quadrature at
    30 digits): within the stated 1e-10, for nearby, far apart and near-the-end pairs (an
    overflowing true value, e^700 apart, must be inf)."""
    summary, modules = one_coordinate
    assert summary[name]["status"] == "ok", summary[name]
    module = modules[name]
    got = module.rao_distance([[a] for a, _ in pairs], [[b] for _, b in pairs])
    for (a, b), value in zip(pairs, got):
        with mpmath.workdps(30):
            expected = abs(mpmath.quad(lambda t: mpmath.sqrt(metric(t)),
                                       [mpmath.mpf(a), mpmath.mpf(b)]))
        if expected == 0:
            assert value == 0.0
        elif expected > 1.7e308:
            assert value == np.inf
        else:
            assert abs(value - expected) <= 1e-10 * expected, (a, b, value, expected)


# --------------------------------------- an end-point singularity spread over many decades

SHIFTED_ARCSINE = """\
name = "shifted_arcsine"
variable = "x"
support = "(0, 1)"
density = "sin(pi*a)/pi*x**(a - 1)*(1 - x)**(-a)"

[coordinates]
a = "(0, 1)"
"""


@pytest.mark.parametrize("shape", ["0.001", "0.3", "0.999"])
def test_a_slowly_vanishing_end_point_mass_is_integrated(tmp_path, shape):
    """x**(a - 1) at a = 0.001 holds 96 % of its mass below x = 1e-20 (and (1 - x)**-a at
    a = 0.999 likewise next to 1): the density integrates to 1 and E[s_a**2] is the
    literature's pi**2/sin(pi a)**2 to 35 digits (the quadrature found 3.9e5 of 1e6)."""
    with mpmath.workdps(40):
        mass, information = _mass_and_information(tmp_path, SHIFTED_ARCSINE, shape)
        a = mpmath.mpf(shape)
        expected = mpmath.pi**2 / mpmath.sin(mpmath.pi * a) ** 2
        assert abs(mass - 1) < mpmath.mpf(10) ** -35
        assert abs(information - expected) < mpmath.mpf(10) ** -35 * expected


def _mass_and_information(folder, text: str, value: str):
    """The verification's quadrature of f and of s**2 f for a one-coordinate family (the
    derivation file ``text``) at the coordinate ``value``, at the working precision."""
    quadrature = importlib.import_module("raosym.verify.quadrature")
    path = folder / "family.toml"
    path.write_text(text)
    spec = load_spec(path)
    (coordinate,) = spec.coordinate_symbols
    score = sympy.diff(sympy.log(spec.density), coordinate)
    point = {coordinate: mpmath.mpf(value), **{c: mpmath.mpf(2) for c in spec.constant_symbols}}
    return (quadrature.expectation(spec, spec.density, point),
            quadrature.expectation(spec, score**2 * spec.density, point))


# ----------------------------------------------------------- a peak narrower than the grid

WEIBULL_SHAPE = """\
name = "weibull_shape"
variable = "x"
support = "positive"
density = "k*x**(k - 1)*exp(-x**k)"

[coordinates]
k = "positive"
"""


@pytest.mark.parametrize("shape", ["40", "1000", "0.3"])
def test_a_narrow_peak_between_the_grid_points_keeps_every_digit(tmp_path, shape):
    """The Weibull density at k = 40 is a bump of width 1/40 at x = 1, which the geometric
    grid of breaks (spaced by the shape, 40) framed by 0.625 and 2.5: 21 of 40 digits, a true
    result refused. E[s_k**2] is the literature's (pi**2/6 + (1 - euler)**2)/k**2."""
    with mpmath.workdps(40):
        _, information = _mass_and_information(tmp_path, WEIBULL_SHAPE, shape)
        expected = (mpmath.pi**2 / 6 + (1 - mpmath.euler) ** 2) / mpmath.mpf(shape) ** 2
        assert abs(information - expected) < mpmath.mpf(10) ** -35 * expected


ASYMMETRIC_LAPLACE = """\
name = "asymmetric_laplace"
variable = "x"
support = "real"
density = "l/(k + 1/k)*(exp(-l*k*x)*Heaviside(x) + exp(l*x/k)*Heaviside(-x))"

[coordinates]
k = "positive"

[constants]
l = "positive"
"""


@pytest.mark.parametrize("kappa", ["3.62244659776495", "0.01", "1"])
def test_a_density_written_with_heaviside_steps_integrates_on_both_sides(tmp_path, kappa):
    """The asymmetric Laplace density (Kotz, Kozubowski and Podgorski 2001; rate l = 2 here)
    written with Heaviside steps: a piece left of 0 read Heaviside(x) as 1 (its variable was
    taken positive) and the density 'did not integrate to 1' (4.8e18764822526353). Its
    Fisher information in kappa, from the moments of x+ and x- (independent of l), is
    1/kappa**2 + 4/(1 + kappa**2)**2."""
    with mpmath.workdps(40):
        mass, information = _mass_and_information(tmp_path, ASYMMETRIC_LAPLACE, kappa)
        k = mpmath.mpf(kappa)
        assert abs(mass - 1) < mpmath.mpf(10) ** -35
        expected = 1 / k**2 + 4 / (1 + k**2) ** 2
        assert abs(information - expected) < mpmath.mpf(10) ** -30 * expected


# -------------------- positivity read from the declared domains, and a symmetry's true zero

BETA_MEAN_PRECISION = """\
name = "beta_mp"
variable = "x"
support = "(0, 1)"
density = "x**(m*t - 1)*(1 - x)**((1 - m)*t - 1)/beta(m*t, (1 - m)*t)"

[coordinates]
m = "(0, 1)"
t = "positive"
"""


def beta_mean_precision_fisher(m, t):
    """The literature's Fisher matrix of the beta family in mean m and precision t (a = m t,
    b = (1 - m) t), at 40 digits."""
    with mpmath.workdps(40):
        m, t = mpmath.mpf(m), mpmath.mpf(t)
        one, two = mpmath.psi(1, m * t), mpmath.psi(1, (1 - m) * t)
        return [[t**2 * (one + two), t * (m * one - (1 - m) * two)],
                [t * (m * one - (1 - m) * two),
                 m**2 * one + (1 - m) ** 2 * two - mpmath.psi(1, t)]]


def test_a_polygamma_of_one_minus_a_mean_is_emitted_and_a_symmetric_zero_is_exact(tmp_path):
    """psi1(t (1 - m)) needs 1 - m > 0, which SymPy's assumptions cannot say of m in (0, 1):
    the module was refused ('not provably positive'). At m = 1/2, g[m, t] is exactly 0, and
    its recomputation in mpmath raised ('a sum cancels beyond 5000 digits')."""
    summary, modules = generate_through_cli(tmp_path, {"beta_mp": BETA_MEAN_PRECISION}, "mp")
    assert summary["beta_mp"]["status"] == "ok", summary["beta_mp"]
    for m, t in ((0.5, 4.244507345680607), (0.3, 2.0), (1e-6, 50.0), (0.999, 1e3)):
        got = modules["beta_mp"].fisher_information([m, t])
        expected = beta_mean_precision_fisher(m, t)
        # Off the diagonal, relative to sqrt(|g_mm g_tt|): the entry may vanish (m = 1/2).
        scale = mpmath.sqrt(abs(expected[0][0] * expected[1][1]))
        for i in range(2):
            for j in range(2):
                reference = abs(expected[i][j]) if i == j else scale
                assert abs(got[i, j] - expected[i][j]) <= 1e-12 * reference, (m, t, i, j)
    assert modules["beta_mp"].fisher_information([0.5, 4.244507345680607])[0, 1] == 0.0


# ---------------------------------------- a Bessel ratio of a constant beyond ten billion

VON_MISES_LOCATION = """\
name = "von_mises_location"
variable = "x"
support = "(-pi, pi)"
density = "exp(k*cos(x - mu))/(2*pi*besseli(0, k))"

[coordinates]
mu = "real"

[constants]
k = "positive"
"""


def test_a_bessel_ratio_of_a_constant_stays_finite_at_any_concentration(tmp_path):
    """g = k I_1(k)/I_0(k) (Mardia and Jupp 2000) with the concentration a constant: the
    module's exp(-k) I_n(k) came from SciPy's ive, nan beyond 1e10, and nothing recomputed
    it (a constant's function is not guarded): the family was refused at k = 1e12."""
    summary, modules = generate_through_cli(tmp_path, {"von_mises_location": VON_MISES_LOCATION},
                                            "vm")
    assert summary["von_mises_location"]["status"] == "ok", summary["von_mises_location"]
    for k in (0.3, 3e9, 1e12, 1e15, 1e300):
        with mpmath.workdps(60):
            expected = k * mpmath.besseli(1, k) / mpmath.besseli(0, k)
        got = modules["von_mises_location"].fisher_information([-1.97], k=k)[0, 0]
        assert abs(got - expected) <= 1e-14 * expected, (k, got)

    # The distance, sqrt(g) |mu_1 - mu_2| between representatives modulo 2 pi: mu = 1e6 moved
    # by one float subtraction of n * 2 pi was off by 4e-11, and 1e12 by 1.2e-5.
    k = 1.3774236524640329
    module = modules["von_mises_location"]
    for one, two in ((1e6, 2.495492886786238), (-1e12, 2.495492886786238), (1e160, 1.0),
                     (3.0, -3.0), (0.1, 0.6 + 2 * math.pi * 1000)):
        with mpmath.workdps(400):
            period = 2 * mpmath.pi
            gap = mpmath.mpf(two) - mpmath.mpf(one)
            gap -= period * mpmath.nint(gap / period)
            expected = mpmath.sqrt(k * mpmath.besseli(1, k) / mpmath.besseli(0, k)) * abs(gap)
        got = module.rao_distance([one], [two], k=k)
        # A few ulp of the reduced coordinates (3.28 - 3 loses a digit of 0.28).
        assert abs(got - expected) <= 4e-15 * expected, (one, two, got)
