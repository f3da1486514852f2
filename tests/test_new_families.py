"""Reach: textbook families of the kinds the catalog lacked derive, verify and agree with an
independent computation.

Each family's Fisher matrix is compared at seeded points with a reference computed here and
nowhere else: the log-density written as plain mpmath code, the scores by mpmath's numerical
differentiation (``mpmath.diff``) and the expectation by mpmath quadrature (or summation), at
40 working digits; where the literature states the matrix (MATH.md section 6: Gumbel, Weibull,
von Mises, Student-t with nu) it is checked as well. Closed entries must agree to 25 digits.

The families come in two groups: those that joined ``derivations/`` (taken from the
session's ``catalog`` fixture) and others written here as derivation files, derived in the
test through the CLI. No code in
raosym knows any of them by name.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath
import numpy as np
import pytest
import sympy
from conftest import REPOSITORY, derivation_text, verified

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_new_families")

EULER = mpmath.euler

# ------------------------------------------------------------------ independent references


def log_gumbel(x, mu, s):
    z = (x - mu) / s
    return -z - mpmath.exp(-z) - mpmath.log(s)


def log_weibull(x, k, lam):
    return mpmath.log(k / lam) + (k - 1) * mpmath.log(x / lam) - (x / lam) ** k


def log_von_mises(x, mu, kappa):
    return kappa * mpmath.cos(x - mu) - mpmath.log(2 * mpmath.pi * mpmath.besseli(0, kappa))


def log_student(x, mu, s, nu):
    return (mpmath.loggamma((nu + 1) / 2) - mpmath.loggamma(nu / 2)
            - mpmath.log(mpmath.sqrt(nu * mpmath.pi) * s)
            - (nu + 1) / 2 * mpmath.log1p(((x - mu) / s) ** 2 / nu))


def log_lognormal(x, mu, sigma):
    return (-(mpmath.log(x) - mu) ** 2 / (2 * sigma**2) - mpmath.log(x * sigma)
            - mpmath.log(2 * mpmath.pi) / 2)


def log_frechet(x, k, s):
    return mpmath.log(k / s) - (1 + k) * mpmath.log(x / s) - (x / s) ** (-k)


def log_loglogistic(x, a, b):
    return mpmath.log(b / a) + (b - 1) * mpmath.log(x / a) - 2 * mpmath.log1p((x / a) ** b)


def log_inverse_gamma(x, a, b):
    return a * mpmath.log(b) - mpmath.loggamma(a) - (a + 1) * mpmath.log(x) - b / x


def log_gengauss(x, mu, s, N):
    return mpmath.log(N / (2 * s)) - mpmath.loggamma(1 / N) - (abs(x - mu) / s) ** N


def log_hypsecant(x, mu, s):
    return -mpmath.log(2 * s) - mpmath.log(mpmath.cosh(mpmath.pi * (x - mu) / (2 * s)))


def log_negative_binomial(k, p, r):
    return (mpmath.loggamma(k + r) - mpmath.loggamma(r) - mpmath.loggamma(k + 1)
            + r * mpmath.log(p) + k * mpmath.log1p(-p))


def reference_fisher(log_density, theta, support, constants=(), breaks=()):
    """``E[s_i s_j]`` with ``s_i = d/d theta_i log f`` by mpmath.diff, at 40 digits.

    ``theta`` and ``constants`` are decimal strings (converted at 40 digits, as the derived
    side is evaluated); ``support`` and ``breaks`` may be functions of theta."""
    with mpmath.workdps(40):
        theta = [mpmath.mpf(value) for value in theta]
        constants = [mpmath.mpf(value) for value in constants]
        support = support(theta) if callable(support) else support
        breaks = breaks(theta) if callable(breaks) else breaks
    size = len(theta)

    def scores(x):
        return [mpmath.diff(lambda h, i=i: log_density(
            x, *theta[:i], h, *theta[i + 1:], *constants), theta[i]) for i in range(size)]

    def entry(i, j):
        def integrand(x):
            s = scores(x)
            return s[i] * s[j] * mpmath.exp(log_density(x, *theta, *constants))
        if support == "integers":  # terms fall geometrically (p = 0.3): 0.7**400 < 1e-61
            return mpmath.fsum(integrand(mpmath.mpf(k)) for k in range(400))
        return mpmath.quad(integrand, [support[0], *breaks, support[1]])

    with mpmath.workdps(40):
        return [[entry(i, j) for j in range(size)] for i in range(size)]


def symbolic_fisher(result, point):
    """The derived matrix at ``point`` (name -> value), at 40 digits."""
    spec = result.derivation.spec
    values = {s: sympy.Float(point[s.name], 45) for s in (*spec.coordinate_symbols,
                                                           *spec.constant_symbols)}
    matrix = result.derivation.fisher
    with mpmath.workdps(40):
        return [[mpmath.mpf(sympy.N(matrix[i, j].subs(values), 45))
                 for j in range(matrix.cols)] for i in range(matrix.rows)]


def assert_agree(derived, reference, digits=25):
    size = len(reference)
    with mpmath.workdps(40):  # the comparison itself at the precision of the values
        for i in range(size):
            for j in range(size):
                scale = mpmath.sqrt(abs(reference[i][i] * reference[j][j]))
                error = abs(derived[i][j] - reference[i][j]) / scale
                assert error < mpmath.mpf(10) ** -digits, (i, j, derived[i][j],
                                                           reference[i][j])


# ------------------------------------------------------------------------- catalog newcomers

NEWCOMERS = {
    # name: (log density, support, points as name -> value, breaks for the quadrature)
    # Gumbel on (mu - 8 s, mu + 200 s): beyond, the density is below exp(-e**8) on the left
    # and exp(-200) on the right (and mpmath would spend minutes on exp(exp(1e10)) there).
    "gumbel": (log_gumbel, lambda p: (p[0] - 8 * p[1], p[0] + 200 * p[1]),
               [{"mu": "0.3", "s": "1.7"}, {"mu": "-2", "s": "0.25"}], lambda p: [p[0]]),
    "weibull": (log_weibull, (0, mpmath.inf),
                [{"k": "0.7", "lam": "2.5"}, {"k": "3.5", "lam": "0.4"}], lambda p: [p[1]]),
    "lognormal": (log_lognormal, (0, mpmath.inf),
                  [{"mu": "0.2", "sigma": "0.8"}, {"mu": "3", "sigma": "0.3"}],
                  lambda p: [mpmath.exp(p[0])]),
    # pi taken at the working precision (a module-level mpmath.pi has 15 digits only)
    "von_mises": (log_von_mises, lambda p: (p[0] - mpmath.pi, p[0] + mpmath.pi),
                  [{"mu": "0.4", "kappa": "2.5"}, {"mu": "-2", "kappa": "30"}], lambda p: [p[0]]),
    "student_t_shape": (log_student, (-mpmath.inf, mpmath.inf),
                        [{"mu": "0.5", "s": "1.3", "nu": "2.5"},
                         {"mu": "-1", "s": "0.4", "nu": "40"}], lambda p: [p[0]]),
}


@pytest.mark.parametrize("name", sorted(NEWCOMERS))
def test_newcomer_fisher_matches_quadrature(catalog, name):
    log_density, support, points, breaks = NEWCOMERS[name]
    result = verified(catalog, name)
    assert all(entry.strategy != "numeric" for entry in result.derivation.entries)
    for point in points:
        theta = [point[p.name] for p in result.derivation.spec.coordinates]
        reference = reference_fisher(log_density, theta, support, breaks=breaks)
        assert_agree(symbolic_fisher(result, point), reference)


def _literature(name, point):
    """The Fisher matrices MATH.md section 6 states."""
    p = {key: mpmath.mpf(value) for key, value in point.items()}
    if name == "gumbel":
        s = p["s"]
        return [[1 / s**2, (EULER - 1) / s**2],
                [(EULER - 1) / s**2, ((1 - EULER) ** 2 + mpmath.pi**2 / 6) / s**2]]
    if name == "weibull":
        k, lam = p["k"], p["lam"]
        return [[((1 - EULER) ** 2 + mpmath.pi**2 / 6) / k**2, -(1 - EULER) / lam],
                [-(1 - EULER) / lam, k**2 / lam**2]]
    if name == "von_mises":
        kappa = p["kappa"]
        a = mpmath.besseli(1, kappa) / mpmath.besseli(0, kappa)
        return [[kappa * a, 0], [0, 1 - a / kappa - a**2]]
    s, nu = p["s"], p["nu"]
    g_nn = ((mpmath.psi(1, nu / 2) - mpmath.psi(1, (nu + 1) / 2)) / 4
            - (nu + 5) / (2 * nu * (nu + 1) * (nu + 3)))
    g_sn = -2 / (s * (nu + 1) * (nu + 3))
    return [[(nu + 1) / ((nu + 3) * s**2), 0, 0], [0, 2 * nu / ((nu + 3) * s**2), g_sn],
            [0, g_sn, g_nn]]


@pytest.mark.parametrize("name", ["gumbel", "weibull", "von_mises", "student_t_shape"])
def test_newcomer_fisher_matches_the_literature(catalog, name):
    result = verified(catalog, name)
    for point in NEWCOMERS[name][2]:
        with mpmath.workdps(40):
            assert_agree(symbolic_fisher(result, point), _literature(name, point), digits=30)


def test_skew_normal_shape_is_certified_numeric_and_emitted_by_quadrature(catalog,
                                                                          generated_tree):
    """No rung closes the skew-normal's shape entry: it is numeric (null in --json), verified
    by two numeric methods, and the generated module integrates it by quadrature to 1e-10
    of an mpmath quadrature written here."""
    result = verified(catalog, "skew_normal")
    (entry,) = result.derivation.entries
    assert entry.strategy == "numeric" and entry.value is None
    checks = [c for c in result.checks if c.quantity == "g_a_a"]
    assert checks and all(c.digits >= 25 for c in checks)
    module = _import(generated_tree / "python" / "skew_normal.py")
    # Up to |a| = 1e6, where the scores live within 1e-6 of 0 (the module once returned 0
    # there, and 7.7 % off at a = 1e3: its quadrature stepped over the feature).
    shapes = [-1e4, -40.0, -3.0, -0.5, 0.0, 0.7, 2.0, 12.0, 1e3, 1e6]
    values = module.fisher_information([[a] for a in shapes])[..., 0, 0]
    with mpmath.workdps(30):
        for a, value in zip(shapes, values):
            reference = _skew_normal_metric(mpmath.mpf(a))
            assert abs(value - reference) <= 1e-10 * reference, (a, value, reference)


def _skew_normal_metric(a):
    """g(a) = E[(x phi(a x)/Phi(a x))**2] under 2 phi(x) Phi(a x), by mpmath quadrature."""
    cut = [0] if a == 0 else sorted([0, 1 / a, -1 / a, 10 / a, -10 / a])
    return mpmath.quad(lambda x: 2 * mpmath.npdf(x) * x**2 * mpmath.npdf(a * x) ** 2
                       / mpmath.ncdf(a * x), [-mpmath.inf, *cut, mpmath.inf])


def test_skew_normal_distance_integrates_its_numeric_metric(catalog, generated_tree):
    """The metric is known only numerically, yet on a line the distance is the length of the
    segment: it is delivered (verified by two nested quadratures), and the generated
    rao_distance agrees to 1e-10 with |∫ sqrt(g)| computed here by mpmath, the metric by
    its own quadrature, at nearby, ordinary, far and sign-crossing pairs."""
    result = verified(catalog, "skew_normal")
    assert result.derivation.distance is not None
    assert all(item.quantity != "Rao distance" for item in result.unavailable)
    checks = [c for c in result.checks if c.quantity == "rao_distance"]
    assert len(checks) == 2 and all(c.digits >= 10 for c in checks)
    module = _import(generated_tree / "python" / "skew_normal.py")
    pairs = [(1.2, 1.2 + 1.2e-9), (0.4, 2.9), (-1.5, 0.8), (-6.0, 9.0), (0.7, 0.7)]
    values = module.rao_distance([[p] for p, _ in pairs], [[q] for _, q in pairs])
    with mpmath.workdps(20):
        for (p, q), value in zip(pairs, values):
            if p == q:
                assert value == 0.0
                continue
            width = mpmath.mpf(q) - mpmath.mpf(p)
            reference = abs(width) * mpmath.quad(
                lambda u, p=p, width=width: mpmath.sqrt(_skew_normal_metric(p + width * u)),
                [0, *([(-p / width)] if p < 0 < q else []), 1], method="gauss-legendre")
            assert abs(value - reference) <= 1e-10 * reference, (p, q, value, reference)


def _import(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relative_error(value, reference):
    """0 when value is the float nearest reference (a subnormal has fewer digits than 1e-14
    asks), else the relative error."""
    if value == float(reference):
        return 0.0
    return abs(mpmath.mpf(value) - reference) / abs(reference)


def test_von_mises_emitted_metric_keeps_its_digits_where_the_closed_form_cancels(
        generated_tree):
    """g_kk = 1 - A/k - A**2 (A = I1/I0) is about 1/(2 k**2) left by terms of size 1, and
    SciPy's ive returns nan past k = 1e9: the module recomputes in mpmath where its float sum
    cancels or fails. Reference: the MATH.md matrix in mpmath at 400 digits, here."""
    module = _import(generated_tree / "python" / "von_mises.py")
    kappas = [5e-324, 1e-300, 1e-8, 0.5, 4.0857, 30.0, 1e3, 1e8, 1e12, 1e160]
    values = module.fisher_information([[0.25, k] for k in kappas])
    with mpmath.workdps(400):
        for kappa, value in zip(kappas, values):
            kappa = mpmath.mpf(kappa)
            a = mpmath.besseli(1, kappa) / mpmath.besseli(0, kappa)
            assert value[0, 1] == value[1, 0] == 0.0
            # kappa*A underflows below kappa = 1e-154 or so: compare where it is a float
            if kappa * a > mpmath.mpf(2) ** -1022:
                assert _relative_error(value[0, 0], kappa * a) <= 1e-14, kappa
            assert _relative_error(value[1, 1], 1 - a / kappa - a**2) <= 1e-14, kappa


def test_von_mises_distance_is_between_directions_modulo_a_turn(generated_tree):
    """mu is an angle: (mu, kappa) and (mu + 2 pi, kappa) are one distribution. References,
    in mpmath here: for equal directions the geodesic runs along kappa (the metric is
    diagonal and free of mu, so mu = const is totally geodesic), d = int sqrt(g_kk) dkappa;
    for others, d lies between that integral and the length of the straight segment between
    the representatives a half turn apart at most."""
    module = _import(generated_tree / "python" / "von_mises.py")
    turn = 2 * math.pi

    def ratio(kappa):
        return mpmath.besseli(1, kappa) / mpmath.besseli(0, kappa)

    def g(kappa):
        a = ratio(kappa)
        return kappa * a, 1 - a / kappa - a**2

    with mpmath.workdps(30):
        along = mpmath.quad(lambda k: mpmath.sqrt(g(k)[1]), [1.5, 4])
        for turns in (0, 1, -3):
            value = float(module.rao_distance([0.7, 1.5], [0.7 + turns * turn, 4.0]))
            assert _relative_error(value, along) <= 1e-10, turns
        first, second = (0.3, 2.0), (0.3 + 4.0, 5.0)  # 4 radians apart: 4 - 2 pi the short way
        value = float(module.rao_distance(first, second))
        assert value == pytest.approx(module.rao_distance(first, (0.3 + 4.0 - turn, 5.0)),
                                      rel=1e-10)
        assert value == pytest.approx(module.rao_distance((-0.3, 2.0), (-0.3 - 4.0, 5.0)),
                                      rel=1e-10)  # the reflection mu -> -mu

        def straight_speed(t):
            mu_speed, kappa_speed = 4.0 - turn, 3.0
            g_mm, g_kk = g(2 + 3 * t)
            return mpmath.sqrt(g_mm * mu_speed**2 + g_kk * kappa_speed**2)

        straight = mpmath.quad(straight_speed, [0, 1])
        lower = mpmath.quad(lambda k: mpmath.sqrt(g(k)[1]), [2, 5])
        assert lower < value <= straight * (1 + 1e-12)


def test_student_t_emitted_shape_entry_keeps_its_digits_at_large_nu(generated_tree):
    """g_nu_nu: a trigamma difference minus a rational function, both near 1/nu**2, their
    difference near 1/nu**4. Reference: the MATH.md formula in mpmath at 200 digits."""
    module = _import(generated_tree / "python" / "student_t_shape.py")
    nus = [1e-8, 0.5, 3.0, 40.0, 1e4, 1e8, 1e15]
    values = module.fisher_information([[0.5, 1.3, nu] for nu in nus])
    with mpmath.workdps(200):
        for nu, value in zip(nus, values):
            nu = mpmath.mpf(nu)
            g = ((mpmath.psi(1, nu / 2) - mpmath.psi(1, (nu + 1) / 2)) / 4
                 - (nu + 5) / (2 * nu * (nu + 1) * (nu + 3)))
            assert _relative_error(value[2, 2], g) <= 1e-14, nu
            sigma = mpmath.mpf(1.3)
            assert _relative_error(value[1, 2], -2 / (sigma * (nu + 1) * (nu + 3))) <= 1e-14


def test_lognormal_verifies_far_out_where_its_mass_is(catalog):
    """mu = 40 puts the mass near x = e**40: the verification sampled it (an edge point of mu)
    and agreed, where quadrature that looked near x = 1 used to report a disagreement."""
    result = verified(catalog, "lognormal")
    far = [check for check in result.checks
           if check.quantity.startswith("g_") and check.point.get("mu") == "40.0"]
    assert far and all(check.digits >= 30 for check in far)


# ------------------------------------------------------------------------ families written here

WRITTEN = {
    "frechet": ('support = "positive"\ndensity = "k/s*(x/s)**(-1 - k)*exp(-(x/s)**(-k))"',
                {"k": "positive", "s": "positive"}, {}),
    "loglogistic": ('support = "positive"\n'
                    'density = "(b/a)*(x/a)**(b - 1)/(1 + (x/a)**b)**2"',
                    {"a": "positive", "b": "positive"}, {}),
    "inverse_gamma": ('support = "positive"\ndensity = "b**a/gamma(a)*x**(-a - 1)*exp(-b/x)"',
                      {"a": "positive", "b": "positive"}, {}),
    "negative_binomial": ('support = "integers >= 0"\n'
                          'density = "gamma(x + r)/(gamma(r)*factorial(x))*p**r*(1 - p)**x"',
                          {"p": "(0, 1)"}, {"r": "positive"}),
    # a shape coordinate with a kink: digamma/trigamma of 1/N on shifted arguments
    "gengauss_shape": ('support = "real"\n'
                       'density = "N/(2*s*gamma(1/N))*exp(-(Abs(x - mu)/s)**N)"',
                       {"mu": "real", "s": "positive", "N": "> 1/2"}, {}),
    # sech kernel: its power series in exp(-t) has poles at ±i (Dirichlet-beta sums)
    "hypsecant": ('support = "real"\ndensity = "1/(2*s*cosh(pi*(x - mu)/(2*s)))"',
                  {"mu": "real", "s": "positive"}, {}),
}
NUMERIC_WRITTEN = {
    # A symmetric two-component normal mixture in its separation: no rung closes it.
    "mixture": ('support = "real"\n'
                'density = "(exp(-(x - mu)**2/2) + exp(-(x + mu)**2/2))/(2*sqrt(2*pi))"',
                {"mu": "positive"}, {}),
}


#: Additive Gumbel noise: D_alpha = +oo for alpha >= e**d/(e**d - 1), d = Delta/s (MATH.md 6).
GUMBEL_NOISE = """name = "gumbel_noise"
variable = "x"
support = "real"
density = "exp(-(x - mu)/s - exp(-(x - mu)/s))/s"

[coordinates]
mu = "real"
s = "positive"

[mechanism]
location = "mu"
scale = "s"
"""


def log_mixture(x, mu):
    return mpmath.log((mpmath.exp(-(x - mu) ** 2 / 2) + mpmath.exp(-(x + mu) ** 2 / 2))
                      / (2 * mpmath.sqrt(2 * mpmath.pi)))


WRITTEN_POINTS = {
    "frechet": (log_frechet, (0, mpmath.inf), {"k": "1.6", "s": "0.7"}, ()),
    "loglogistic": (log_loglogistic, (0, mpmath.inf), {"a": "1.4", "b": "2.2"}, ()),
    "inverse_gamma": (log_inverse_gamma, (0, mpmath.inf), {"a": "2.5", "b": "1.5"}, ()),
    "negative_binomial": (log_negative_binomial, "integers", {"p": "0.3", "r": "2.5"},
                          ("r",)),
    "hypsecant": (log_hypsecant, (-mpmath.inf, mpmath.inf), {"mu": "0.3", "s": "1.7"}, ()),
    "gengauss_shape": (log_gengauss, (-mpmath.inf, mpmath.inf),
                       {"mu": "0.3", "s": "1.4", "N": "1.7"}, ()),
}
#: Breaks of the reference quadrature (the kink of |x - mu|), by family.
WRITTEN_BREAKS = {"gengauss_shape": lambda theta: [theta[0]]}


def _derivation_file(name):
    return derivation_text(name, *{**WRITTEN, **NUMERIC_WRITTEN}[name])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Derive and verify the families of WRITTEN, through the CLI, as a user would."""
    folder = tmp_path_factory.mktemp("derivations")
    paths = []
    for name in [*WRITTEN, *NUMERIC_WRITTEN]:
        path = folder / f"{name}.toml"
        path.write_text(_derivation_file(name))
        paths.append(str(path))
    path = folder / "gumbel_noise.toml"
    path.write_text(GUMBEL_NOISE)
    paths.append(str(path))
    run = subprocess.run([sys.executable, "-m", "raosym", "derive", "--json", *paths],
                         capture_output=True, text=True, cwd=REPOSITORY, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    return {report["name"]: report for report in map(json.loads, run.stdout.splitlines())}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_written_family_fisher_matches_quadrature(written, name):
    report = written[name]
    assert "numeric" not in {s for row in report["fisher_strategies"] for s in row}
    log_density, support, point, constant_names = WRITTEN_POINTS[name]
    coordinates = report["coordinates"]
    theta = [point[c] for c in coordinates]
    constants = [point[c] for c in constant_names]
    reference = reference_fisher(log_density, theta, support, constants,
                                 WRITTEN_BREAKS.get(name, ()))
    symbols = {name: sympy.Symbol(name, positive=True) for name in point}
    values = {symbols[key]: sympy.Float(value, 45) for key, value in point.items()}
    with mpmath.workdps(40):
        derived = [[mpmath.mpf(sympy.N(sympy.sympify(cell, locals=symbols).subs(values), 45))
                    for cell in row] for row in report["fisher"]]
        assert_agree(derived, reference)


def test_an_entry_without_closed_form_is_certified_numeric(written):
    """The mixture's entry is numeric: null in --json, checked by two numeric methods to 25
    digits at every sampled point, and its value there agrees with the reference here."""
    report = written["mixture"]
    assert report["fisher"] == [[None]] and report["fisher_strategies"] == [["numeric"]]
    checks = [c for c in report["verification"] if c["quantity"] == "g_mu_mu"]
    assert len(checks) >= 5 and all(c["digits"] >= 25 for c in checks)
    for check in checks[:3]:
        mu = check["point"]["mu"]
        reference = reference_fisher(log_mixture, [mu], (-mpmath.inf, mpmath.inf),
                                     breaks=lambda theta: (-theta[0], 0, theta[0]))
        with mpmath.workdps(40):
            value = mpmath.mpf(check["symbolic"])
            # the point is printed to 15 digits: compare to the precision of that input
            assert abs(value - reference[0][0]) <= mpmath.mpf(10) ** -12 * reference[0][0]


def test_a_numeric_metric_of_one_coordinate_still_delivers_its_distance(written):
    """The mixture's metric is numeric; its distance, the integral of sqrt(g), is delivered
    with its verification, and agrees with an mpmath quadrature of the reference metric."""
    report = written["mixture"]
    assert "Rao distance" not in [item["quantity"] for item in report["unavailable"]]
    checks = [c for c in report["verification"] if c["quantity"] == "rao_distance"]
    assert checks and all(c["digits"] >= 10 for c in checks)
    check = max(checks, key=lambda c: abs(float(c["point"]["mu_2"]) - float(c["point"]["mu_1"])))

    def metric(mu):
        # the score of the symmetric mixture, worked out by hand: x tanh(mu x) - mu
        return mpmath.quad(lambda x: (x * mpmath.tanh(mu * x) - mu) ** 2
                           * mpmath.exp(log_mixture(x, mu)), [-mpmath.inf, -mu, 0, mu,
                                                              mpmath.inf])

    with mpmath.workdps(15):
        one, two = (mpmath.mpf(check["point"][name]) for name in ("mu_1", "mu_2"))
        reference = mpmath.quad(lambda mu: mpmath.sqrt(metric(mu)), [one, two],
                                method="gauss-legendre")
        assert abs(mpmath.mpf(check["numeric"]) - abs(reference)) <= 1e-9 * abs(reference)


def test_unavailable_quantities_are_reported_with_reasons(written):
    for report in written.values():
        for item in report["unavailable"]:
            assert item["quantity"] and item["reason"]


def test_strict_makes_an_unavailable_quantity_an_error(catalog):
    """student_t_shape has three coordinates and a polygamma metric: its scalar curvature is
    beyond symbolic simplification and is reported unavailable (its distance is a numeric
    geodesic, tests/test_numeric_geodesic.py). The family exits 0 (its
    Fisher matrix verified) unless --strict is given. The CLI runs answer from the session's
    derivation cache, which the catalog fixture filled."""
    assert [item.quantity for item in verified(catalog, "student_t_shape").unavailable] == [
        "scalar curvature"]
    path = str(REPOSITORY / "derivations" / "student_t_shape.toml")
    for options, status in (((), 0), (("--strict",), 1)):
        run = subprocess.run([sys.executable, "-m", "raosym", "derive", "--json", *options,
                              path], capture_output=True, text=True, cwd=REPOSITORY,
                             timeout=600)
        assert run.returncode == status, run.stderr[-2000:]
        report = json.loads(run.stdout.splitlines()[0])
        assert [item["quantity"] for item in report["unavailable"]] == ["scalar curvature"]


def test_a_domain_bounded_by_pi_is_sampled(tmp_path):
    """Issue 17: ``mu = "(-pi, pi)"`` (von Mises) ended in ``TypeError: cannot create mpf from
    -pi``. The points drawn lie inside the interval, at the working precision."""
    from raosym import pipeline
    from raosym.spec.points import sample_points

    path = tmp_path / "circle.toml"
    text = (REPOSITORY / "derivations" / "von_mises.toml").read_text()
    path.write_text(text.replace('name = "von_mises"', 'name = "circle"')
                    .replace('mu = "real"', 'mu = "(-pi, pi)"'))
    spec = pipeline.load(str(path))
    with mpmath.workdps(40):
        values = [point[spec.coordinate_symbols[0]] for point in sample_points(spec, 5)]
        assert all(-mpmath.pi < value < mpmath.pi for value in values)
        assert any(mpmath.pi - value < mpmath.pi / 100 for value in values)  # the edge point


def _gumbel_renyi(alpha, d):
    """D_alpha between Gumbel densities whose locations differ by d*s (either sign), from
    the integral e**((1 - alpha) d)/(alpha + (1 - alpha) e**d) of MATH.md section 6."""
    rate = alpha + (1 - alpha) * mpmath.exp(d)
    if rate <= 0:
        return mpmath.inf
    return mpmath.log(mpmath.exp((1 - alpha) * d) / rate) / (alpha - 1)


def test_gumbel_noise_curve_is_infinite_beyond_its_threshold(written):
    """Issue 10, item 6: the RDP curve of additive Gumbel noise is closed, +oo from
    alpha = e**d/(e**d - 1) on (never a complex log or nan), and its KL is the limit."""
    report = written["gumbel_noise"]
    assert report["unavailable"] == [] and report["mechanism"]["rdp_closed"] is True
    names = ("alpha", "Delta", "s")
    symbols = {name: sympy.Symbol(name, positive=True) for name in names}
    curve = sympy.sympify(report["mechanism"]["rdp_curve"], locals=symbols)
    kl = sympy.sympify(report["mechanism"]["kl"], locals=symbols)
    with mpmath.workdps(30):
        for alpha, delta, s in (("1.5", "1", "1"), ("1.58", "1", "1"), ("1.6", "1", "1"),
                                ("2", "1", "1"), ("40", "0.5", "20"), ("1.001", "3", "2")):
            alpha, delta, s = mpmath.mpf(alpha), mpmath.mpf(delta), mpmath.mpf(s)
            d = delta / s
            expected = max(_gumbel_renyi(alpha, d), _gumbel_renyi(alpha, -d))
            value = sympy.N(curve.subs({symbols["alpha"]: alpha, symbols["Delta"]: delta,
                                        symbols["s"]: s}), 30)
            if expected == mpmath.inf:
                assert value == sympy.oo, (alpha, d, value)
            else:
                assert abs(mpmath.mpf(value) - expected) <= 1e-25 * expected, (alpha, d)
        d = mpmath.mpf("0.7")
        expected_kl = mpmath.exp(d) - 1 - d  # the larger direction's limit alpha -> 1
        value = sympy.N(kl.subs({symbols["Delta"]: sympy.Float("0.7", 30), symbols["s"]: 1}), 30)
        assert abs(mpmath.mpf(value) - expected_kl) <= 1e-25 * expected_kl


def test_gumbel_noise_stable_curve_keeps_its_digits_in_float(written):
    """The curve's directions differ (no symmetric log-sum-exp form): each is rewritten into
    terms of one sign of order alpha - 1 (expm1mx, log1pmx, with the generated helpers' contract
    of a correctly rounded value, taken from mpmath here) so that, evaluated in float, it keeps
    its digits as alpha -> 1 (the textbook form lost 5 at alpha = 1 + 1e-12) and at small
    Delta/s, and stays finite or +oo where exp(Delta/s) overflows. Reference: MATH.md's
    integral in mpmath at 60 digits."""
    from sympy.codegen.cfunctions import expm1, log1p

    from raosym.derive.divergence import expm1mx, log1pmx

    report = written["gumbel_noise"]
    symbols = {name: sympy.Symbol(name, positive=True) for name in ("alpha", "Delta", "s")}
    functions = {"log1p": log1p, "expm1": expm1, "expm1mx": expm1mx, "log1pmx": log1pmx}
    curve = sympy.sympify(report["mechanism"]["rdp_curve_stable"],
                          locals={**symbols, **functions})
    assert not curve.has(sympy.log)  # every logarithm is a log1p or log1pmx

    def correctly_rounded(function):  # the generated helpers' contract, from mpmath here
        def value(v):
            with mpmath.workdps(60):
                return float(function(mpmath.mpf(float(v))))
        return np.vectorize(value, otypes=[float])

    helpers = {"log1p": np.log1p, "expm1": np.expm1,
               "expm1mx": correctly_rounded(lambda v: mpmath.expm1(v) - v),
               # log(1 + u) - u, nan below -1 (the branch np.select computes but discards)
               "log1pmx": correctly_rounded(
                   lambda v: mpmath.log1p(v) - v if v > -1 else mpmath.nan)}
    evaluate = sympy.lambdify([symbols[n] for n in ("alpha", "Delta", "s")], curve,
                              modules=[helpers, "numpy"])
    for alpha in (1 + 2.0**-40, 1 + 1e-12, 1 + 1e-6, 1.001, 1.2, 1.5):
        for s in (1e-3, 0.5, 1.0, 3.0, 1e6, 1e9):
            with mpmath.workdps(60):
                d = 1 / mpmath.mpf(s)
                expected = max(_gumbel_renyi(mpmath.mpf(alpha), d),
                               _gumbel_renyi(mpmath.mpf(alpha), -d))
            with np.errstate(all="ignore"):  # the branch not taken may overflow
                value = float(evaluate(np.float64(alpha), np.float64(1.0), np.float64(s)))
            if expected == mpmath.inf:
                assert value == math.inf, (alpha, s, value)
            else:
                assert math.isfinite(value), (alpha, s, value)
                assert abs(value - expected) <= 1e-14 * expected, (alpha, s, value, expected)
