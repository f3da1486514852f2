"""Rao distances: the closed forms against the literature (MATH.md §2 and the standard
one-parameter results), the stable forms against the textbook ones, the numeric geodesic
solver against the half-plane formula written here, the numeric-only families against an
independent finite-difference geodesic written here, and the solver's failures."""

from __future__ import annotations

import itertools
import json
import math

import mpmath
import numpy
import pytest
import sympy
from sympy import Abs, acosh, asin, atanh, gamma, log, pi, sqrt
from test_core import run_cli

from raosym.cli import report
from raosym.errors import VerificationError
from raosym.verify.geodesic import MetricModel, geodesic_distance, metric_model

R = sympy.Rational


def names(expr):
    return {s.name: s for s in expr.free_symbols}


def literature(name):
    """The distance as MATH.md §2 (and the standard one-parameter results) write it, in
    symbols named like raosym's points."""
    mu1, mu2 = sympy.symbols("mu_1 mu_2", real=True)
    sigma1, sigma2, s1, s2, b1, b2, l1, l2, p1, p2 = sympy.symbols(
        "sigma_1 sigma_2 s_1 s_2 b_1 b_2 lam_1 lam_2 p_1 p_2", positive=True)
    sigma, b, N, nu = sympy.symbols("sigma b N nu", positive=True)
    n = sympy.Symbol("n", integer=True, positive=True)

    def half_plane(scale, ratio, one, two):
        return sqrt(scale) * acosh(1 + ((mu1 - mu2) ** 2 * ratio + (one - two) ** 2) / (2 * one * two))

    return {
        "gaussian": sqrt(2) * acosh(1 + ((mu1 - mu2) ** 2 / 2 + (sigma1 - sigma2) ** 2)
                                    / (2 * sigma1 * sigma2)),
        "gaussian_location": Abs(mu1 - mu2) / sigma,
        "laplace": half_plane(1, 1, b1, b2),
        "laplace_location": Abs(mu1 - mu2) / b,
        # a = N Γ(2 - 1/N)/Γ(1 + 1/N), c = N (MATH.md §2).
        "generalized_gaussian": half_plane(N, gamma(2 - 1 / N) / gamma(1 + 1 / N), sigma1, sigma2),
        "cauchy": half_plane(R(1, 2), 1, s1, s2),
        "logistic": half_plane((pi**2 + 3) / 9, 3 / (pi**2 + 3), s1, s2),
        "student_t": half_plane(2 * nu / (nu + 3), (nu + 1) / (2 * nu), s1, s2),
        "exponential": Abs(log(l2 / l1)),
        "poisson": 2 * Abs(sqrt(l1) - sqrt(l2)),
        "bernoulli": 2 * Abs(asin(sqrt(p1)) - asin(sqrt(p2))),
        "binomial": 2 * sqrt(n) * Abs(asin(sqrt(p1)) - asin(sqrt(p2))),
        "geometric": 2 * Abs(atanh(sqrt(1 - p1)) - atanh(sqrt(1 - p2))),
    }[name]


STRUCTURES = {
    "gaussian": "location-scale half-plane", "laplace": "location-scale half-plane",
    "generalized_gaussian": "location-scale half-plane", "cauchy": "location-scale half-plane",
    "logistic": "location-scale half-plane", "student_t": "location-scale half-plane",
    "gaussian_location": "constant metric", "laplace_location": "constant metric",
    "exponential": "one coordinate", "poisson": "one coordinate", "bernoulli": "one coordinate",
    "binomial": "one coordinate", "geometric": "one coordinate",
    "gamma": "numeric only", "beta": "numeric only",
}

#: Exact values of each coordinate (scales s and b take sigma's), far apart and one (the last)
#: nearly equal to the second; and of each constant.
VALUES = {
    "mu": [R(-3, 2), R(1, 3), R(20), R(1, 3) + R(1, 10**9)],
    "sigma": [R(7, 3), R(1, 2), R(50), R(1, 2) * (1 + R(1, 10**9))],
    "lam": [R(7, 3), R(1, 50), R(51, 2), R(1, 50) * (1 + R(1, 10**9))],
    "p": [R(317, 1000), R(1, 1000), R(999, 1000), R(1, 1000) * (1 + R(1, 10**9))],
}
CONSTANTS = {"sigma": R(3, 2), "b": R(3, 2), "N": R(3, 2), "nu": R(5, 2), "n": 7}
#: Pairs of indices into VALUES: ordinary, both orders, far apart, nearly identical.
PAIRS = [(0, 1), (1, 0), (1, 2), (2, 0), (3, 1)]


def coordinate_values(name: str) -> list:
    return VALUES["sigma"] if name in ("s", "b") else VALUES[name]


def exact_point(expr, first: int, second: int) -> dict:
    """Values for the symbols of ``expr``: ``x_1`` from VALUES[x][first], ``x_2`` from
    VALUES[x][second], constants from CONSTANTS."""
    values = {}
    for name, symbol in names(expr).items():
        base, _, suffix = name.rpartition("_")
        if suffix in ("1", "2"):
            values[symbol] = coordinate_values(base)[first if suffix == "1" else second]
        else:
            values[symbol] = CONSTANTS[name]
    return values


def exact_pairs(expr) -> list[dict]:
    return [exact_point(expr, i, j) for i, j in PAIRS]


def assert_equal_at_exact_points(left, right, digits=50):
    """Equal at exact rational points, each side evaluated by SymPy to twice the digits."""
    for values in exact_pairs(left + right):
        a = sympy.N(left.xreplace(values), 2 * digits)
        b = sympy.N(right.xreplace(values), 2 * digits)
        assert abs(a - b) <= abs(b) * sympy.Float(10) ** -digits, (values, a, b)


def _distance(catalog, name):
    verified = catalog[name].verified
    assert verified is not None, str(catalog[name].error)
    return verified.derivation.distance


# --- closed forms against the literature -----------------------------------------------------

@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_structure_is_recognized_from_the_metric(catalog, name):
    distance = _distance(catalog, name)
    assert distance.structure == STRUCTURES[name]
    assert [s.name for s in distance.points[0]] == [
        f"{p.name}_1" for p in catalog[name].verified.derivation.spec.coordinates]


@pytest.mark.parametrize("name", sorted(n for n, s in STRUCTURES.items() if s != "numeric only"))
def test_closed_form_is_the_literature_distance(catalog, name):
    distance = _distance(catalog, name)
    expected = literature(name).xreplace(
        {s: names(distance.textbook).get(s.name, s) for s in literature(name).free_symbols})
    difference = sympy.simplify(distance.textbook - expected)
    if difference != 0:  # SymPy cannot always see it (atanh against acosh): exact points
        assert_equal_at_exact_points(distance.textbook, expected)


@pytest.mark.parametrize("name", sorted(n for n, s in STRUCTURES.items() if s != "numeric only"))
def test_stable_form_equals_textbook_form(catalog, name):
    distance = _distance(catalog, name)
    assert_equal_at_exact_points(distance.stable, distance.textbook)
    assert any(step.strategy == "stable form" for step in distance.steps)


def test_half_plane_proofs_show_the_curvature_and_the_identity(catalog):
    for name in ["gaussian", "logistic", "student_t", "generalized_gaussian"]:
        steps = _distance(catalog, name).steps
        strategies = [step.strategy for step in steps]
        assert "half-plane" in strategies and "curvature" in strategies, name
        assert any("acosh(1 + 2z) = 2·asinh(√z)" in step.justification for step in steps)


@pytest.mark.parametrize("name", sorted(n for n, s in STRUCTURES.items() if s != "numeric only"))
def test_stable_form_keeps_its_digits_in_double_precision(catalog, name):
    """Evaluated with Python floats, the stable form stays within 1e-13 of the exact distance
    for nearby pairs (relative 1e-9 and 1e-12) and far pairs; the textbook form of the
    half-plane families loses most digits at the nearby pairs (the reason for the stable
    form)."""
    distance = _distance(catalog, name)
    symbols = sorted(distance.stable.free_symbols | distance.textbook.free_symbols,
                     key=lambda s: s.name)
    stable = sympy.lambdify(symbols, distance.stable, modules="math")
    textbook = sympy.lambdify(symbols, distance.textbook, modules="math")
    one, two = distance.points
    for relative in (1e-9, 1e-12, None):
        point = {s: float(v) for s, v in exact_point(distance.stable, 1, 2).items()}
        if relative is not None:  # the second point: the first nudged
            point.update({b: point[a] * (1 + relative) for a, b in zip(one, two)})
        exact = float(sympy.N(distance.stable.xreplace(
            {s: sympy.Float(v, 30) for s, v in point.items()}), 40))
        got = stable(*(point[s] for s in symbols))
        assert abs(got - exact) <= 1e-13 * exact, (name, relative, got, exact)
        if relative == 1e-12 and distance.structure == "location-scale half-plane":
            naive = textbook(*(point[s] for s in symbols))
            assert abs(naive - exact) > 1e-6 * exact


def test_numeric_only_families_say_why(catalog):
    for name in ["gamma", "beta"]:
        distance = _distance(catalog, name)
        assert distance.textbook is None and distance.stable is None
        assert "not diagonal" in distance.reason and "numeric geodesic" in distance.reason


# --- the JSON report -------------------------------------------------------------------------

def test_json_reports_the_distance_and_its_checks(catalog):
    record = report.as_json(catalog["gaussian"].verified)
    textbook = sympy.sympify(record["rao_distance"])
    expected = literature("gaussian")
    assert {s.name for s in textbook.free_symbols} == {"mu_1", "mu_2", "sigma_1", "sigma_2"}
    assert sympy.simplify(textbook - expected.xreplace(
        {s: sympy.Symbol(s.name) for s in expected.free_symbols})) == 0
    assert "asinh" in record["rao_distance_stable"]
    assert record["rao_distance_structure"] == "location-scale half-plane"
    assert record["rao_distance_reason"] is None
    checks = [c for c in record["verification"] if c["quantity"] == "rao_distance"]
    assert len(checks) >= 5 and all(c["digits"] >= 20 for c in checks)
    assert set(checks[0]["point"]) == {"mu_1", "sigma_1", "mu_2", "sigma_2"}

    gamma_record = report.as_json(catalog["gamma"].verified)
    assert gamma_record["rao_distance"] is None and gamma_record["rao_distance_stable"] is None
    assert gamma_record["rao_distance_structure"] == "numeric only"
    assert "numeric geodesic" in gamma_record["rao_distance_reason"]
    assert any(c["quantity"] == "rao_distance" for c in gamma_record["verification"])


def test_cli_json_has_the_distance():
    result = run_cli("derive", "exponential", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    lam_1, lam_2 = sympy.symbols("lam_1 lam_2", positive=True)
    parsed = sympy.sympify(record["rao_distance"], locals={"lam_1": lam_1, "lam_2": lam_2})
    assert sympy.simplify(parsed - Abs(log(lam_2 / lam_1))) == 0
    assert record["rao_distance_structure"] == "one coordinate"


# --- the numeric geodesic ----------------------------------------------------------------------

def gaussian_distance(p, q):
    """MATH.md §2, in its stable asinh form."""
    (m1, s1), (m2, s2) = p, q
    return 2 * mpmath.sqrt(2) * mpmath.asinh(
        mpmath.sqrt(((m1 - m2) ** 2 / 2 + (s1 - s2) ** 2) / (4 * s1 * s2)))


@pytest.mark.parametrize("p, q", [
    (("0.3", "1.2"), ("1.1", "0.7")),
    (("0.3", "1.2"), ("0.3000003", "1.1999988")),
    (("-10", "0.5"), ("10", "25")),
    (("5", "3"), ("-5", "3")),
])
def test_geodesic_solver_matches_the_half_plane_at_30_digits(catalog, p, q):
    model = metric_model(catalog["gaussian"].verified.derivation)
    with mpmath.workdps(50):
        p, q = [mpmath.mpf(v) for v in p], [mpmath.mpf(v) for v in q]
        exact = gaussian_distance(p, q)
    solved = geodesic_distance(model, p, q, digits=40)
    assert abs(solved.distance - exact) <= exact * mpmath.mpf(10) ** -30
    assert solved.speed_spread < 1e-30 and solved.endpoint_error < 1e-30


def test_one_coordinate_length_is_a_quadrature(catalog):
    model = metric_model(catalog["poisson"].verified.derivation)
    with mpmath.workdps(50):
        exact = 2 * abs(mpmath.sqrt(mpmath.mpf(3)) - mpmath.sqrt(mpmath.mpf("0.25")))
    assert abs(geodesic_distance(model, [3], ["0.25"]).distance - exact) < 1e-35


def finite_difference_geodesic_length(metric_and_christoffel, p, q, nodes):
    """The length of the solution of the central-difference geodesic equation on ``nodes``
    intervals (Newton's method, dense Jacobian by differences), in double precision."""
    p, q = numpy.array(p, float), numpy.array(q, float)
    h = 1.0 / nodes
    path = p + numpy.outer(numpy.linspace(0, 1, nodes + 1), q - p)

    def residual(x):
        out = numpy.empty((nodes - 1, 2))
        for m in range(1, nodes):
            _, christoffel = metric_and_christoffel(*x[m])
            w = (x[m + 1] - x[m - 1]) / (2 * h)
            out[m - 1] = x[m + 1] - 2 * x[m] + x[m - 1] + h * h * numpy.einsum(
                "kij,i,j->k", christoffel, w, w)
        return out.ravel()

    for _ in range(30):
        r = residual(path)
        if numpy.abs(r).max() < 1e-15:
            break
        # The residual at node m involves nodes m-1, m, m+1: nodes three apart are perturbed
        # together, six residuals give the whole (block tridiagonal) Jacobian.
        jacobian = numpy.zeros((r.size, r.size))
        for color in range(3):
            for component in range(2):
                shifted = path.copy()
                shifted[1 + color:nodes:3, component] += 1e-7
                change = ((residual(shifted) - r) / 1e-7).reshape(nodes - 1, 2)
                for m in range(1 + color, nodes, 3):
                    for j in (m - 1, m, m + 1):
                        if 1 <= j <= nodes - 1:
                            jacobian[2 * (j - 1):2 * j, 2 * (m - 1) + component] = change[j - 1]
        path[1:nodes] -= numpy.linalg.solve(jacobian, r).reshape(nodes - 1, 2)
    length = 0.0
    for m in range(nodes):
        g, _ = metric_and_christoffel(*((path[m] + path[m + 1]) / 2))
        step = path[m + 1] - path[m]
        length += math.sqrt(step @ g @ step)
    return length


def gamma_family(k, theta):
    """The gamma metric (Arwini and Dodson) and its Christoffel symbols, by hand."""
    psi1, psi2 = mpmath.fp.polygamma(1, k), mpmath.fp.polygamma(2, k)
    g = numpy.array([[psi1, 1 / theta], [1 / theta, k / theta**2]])
    dg = numpy.array([  # dg[l] = d g / d x^l
        [[psi2, 0], [0, 1 / theta**2]],
        [[0, -1 / theta**2], [-1 / theta**2, -2 * k / theta**3]],
    ])
    lowered = 0.5 * (numpy.einsum("ijl->lij", dg) + numpy.einsum("jil->lij", dg)
                     - dg)  # [l, i, j] = (d_i g_jl + d_j g_il - d_l g_ij) / 2
    return g, numpy.einsum("kl,lij->kij", numpy.linalg.inv(g), lowered)


def beta_family(a, b):
    psi = mpmath.fp.polygamma
    g = numpy.array([[psi(1, a) - psi(1, a + b), -psi(1, a + b)],
                     [-psi(1, a + b), psi(1, b) - psi(1, a + b)]])
    dg = numpy.array([
        [[psi(2, a) - psi(2, a + b), -psi(2, a + b)], [-psi(2, a + b), -psi(2, a + b)]],
        [[-psi(2, a + b), -psi(2, a + b)], [-psi(2, a + b), psi(2, b) - psi(2, a + b)]],
    ])
    lowered = 0.5 * (numpy.einsum("ijl->lij", dg) + numpy.einsum("jil->lij", dg) - dg)
    return g, numpy.einsum("kl,lij->kij", numpy.linalg.inv(g), lowered)


@pytest.mark.parametrize("name, family, p, q", [
    ("gamma", gamma_family, (2.0, 1.0), (3.0, 0.5)),
    ("beta", beta_family, (0.8, 1.5), (2.0, 1.2)),
])
def test_numeric_only_distance_matches_an_independent_discretization(catalog, name, family, p, q):
    """Richardson extrapolation of a finite-difference geodesic (24, 48, 96 intervals; the
    error expands in even powers of the step) against raosym's shooting solver."""
    lengths = [finite_difference_geodesic_length(family, p, q, nodes) for nodes in (24, 48, 96)]
    once = [(4 * fine - coarse) / 3 for coarse, fine in itertools.pairwise(lengths)]
    extrapolated = (16 * once[1] - once[0]) / 15
    model = metric_model(catalog[name].verified.derivation)
    solved = geodesic_distance(model, p, q, digits=20).distance
    assert abs(solved - extrapolated) <= 1e-10 * solved, (lengths, extrapolated, solved)


def test_gamma_distance_is_symmetric_and_satisfies_the_triangle_inequality(catalog):
    model = metric_model(catalog["gamma"].verified.derivation)
    p, q, r = (1.5, 2.0), (3.0, 0.7), (0.8, 1.1)

    def d(a, b):
        return geodesic_distance(model, a, b, digits=20).distance

    forward, backward = d(p, q), d(q, p)
    assert abs(forward - backward) < 1e-11 * forward  # each solve is good to ~12 digits
    assert forward <= d(p, r) + d(r, q)


# --- failures are errors -----------------------------------------------------------------------

def test_a_solve_that_does_not_converge_is_an_error(catalog):
    model = metric_model(catalog["gaussian"].verified.derivation)
    with pytest.raises(VerificationError, match="did not converge in 1 Newton steps"):
        geodesic_distance(model, (-10, 0.5), (10, 25), max_iterations=1)


def test_a_geodesic_equation_that_blows_up_is_an_error():
    """x'' = 5 x'², y'' = 0 (Γ^x_xx = -5): x(t) = -log(1 - 5 v t)/5 reaches x = 30 only for
    1 - 5v below e^-150, which no double-precision Newton step finds."""
    blowing_up = MetricModel(
        coordinates=sympy.symbols("x y"), bounds=((None, None), (None, None)),
        metric=lambda x, y: [1, 0, 0, 1],
        christoffel=lambda x, y: [-5, 0, 0, 0, 0, 0],
        float_christoffel=lambda x, y: [-5.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    )
    with pytest.raises(VerificationError, match="geodesic"):
        geodesic_distance(blowing_up, (0, 0), (30, 1))


def test_end_points_outside_the_domain_are_an_error(catalog):
    model = metric_model(catalog["gaussian"].verified.derivation)
    with pytest.raises(VerificationError, match="outside the domain"):
        geodesic_distance(model, (0, 1), (0, -1))


# --- structures the catalog does not exercise: a shear, a product, a flat plane ----------------

def _with_metric(catalog, metric):
    """The Gaussian derivation (coordinates mu real, sigma positive) with another metric, its
    geometry and distance derived afresh."""
    import dataclasses

    from raosym.derive.distance import derive_distance
    from raosym.derive.geometry import derive_geometry

    derivation = catalog["gaussian"].verified.derivation
    mu, sigma = derivation.spec.coordinate_symbols
    metric = sympy.ImmutableMatrix(metric(mu, sigma))
    geometry = derive_geometry((mu, sigma), metric)
    distance = derive_distance(derivation.spec, metric, geometry, budget=20)
    return dataclasses.replace(derivation, fisher=metric, geometry=geometry, distance=distance)


def _numeric_against_closed(derivation, pairs, digits=25):
    model = metric_model(derivation)
    first, second = derivation.distance.points
    for p, q in pairs:
        p, q = [sympy.Rational(v) for v in p], [sympy.Rational(v) for v in q]
        values = dict(zip(first, p)) | dict(zip(second, q))
        with mpmath.workdps(50):
            solved = geodesic_distance(model, [mpmath.mpf(v.p) / v.q for v in p],
                                       [mpmath.mpf(v.p) / v.q for v in q]).distance
            for form in (derivation.distance.textbook, derivation.distance.stable):
                closed = mpmath.mpf(str(sympy.N(form.xreplace(values), 50)))
                assert abs(solved - closed) <= closed * mpmath.mpf(10) ** -digits


def test_sheared_half_plane(catalog):
    """(1/σ²)[[1, 1/2], [1/2, 2]]: the shear μ' = μ + σ/2 leaves c' = 7/4, K = -4/7."""
    derivation = _with_metric(catalog, lambda mu, s: sympy.Matrix(
        [[1, R(1, 2)], [R(1, 2), 2]]) / s**2)
    distance = derivation.distance
    assert distance.structure == "location-scale half-plane"
    assert "shear" in [step.strategy for step in distance.steps]
    assert derivation.geometry.gaussian_curvature == R(-4, 7)
    _numeric_against_closed(derivation, [(("1/3", "2"), ("-1", "1/2")), (("0", "1"), ("4", "7"))])


def test_product_of_one_dimensional_metrics(catalog):
    """diag(1, 2/σ²): the real line times a log scale, d² = Δμ² + 2 log²(σ₂/σ₁)."""
    derivation = _with_metric(catalog, lambda mu, s: sympy.diag(1, 2 / s**2))
    distance = derivation.distance
    assert distance.structure == "product"
    mu1, mu2 = sympy.symbols("mu_1 mu_2", real=True)
    s1, s2 = sympy.symbols("sigma_1 sigma_2", positive=True)
    expected = sympy.sqrt((mu1 - mu2) ** 2 + 2 * log(s2 / s1) ** 2)
    assert_equal_at_exact_points(distance.textbook, expected.xreplace(
        {s: names(distance.textbook)[s.name] for s in expected.free_symbols}))
    assert_equal_at_exact_points(distance.stable, distance.textbook)
    _numeric_against_closed(derivation, [(("1/3", "2"), ("-1", "1/2"))])


def test_constant_metric_in_two_coordinates(catalog):
    derivation = _with_metric(catalog, lambda mu, s: sympy.Matrix([[2, 1], [1, 3]]))
    distance = derivation.distance
    assert distance.structure == "constant metric"
    mu1, mu2 = sympy.symbols("mu_1 mu_2", real=True)
    s1, s2 = sympy.symbols("sigma_1 sigma_2", positive=True)
    dm, ds = mu1 - mu2, s1 - s2
    expected = sympy.sqrt(2 * dm**2 + 2 * dm * ds + 3 * ds**2)
    assert sympy.simplify(distance.textbook - expected.xreplace(
        {s: names(distance.textbook)[s.name] for s in expected.free_symbols})) == 0


NORMAL_EXPONENTIAL = """name = "normal_exponential"
variables = ["x1", "x2"]
density = "exp(-(x1 - mu)**2/(2*sigma**2))/(sqrt(2*pi)*sigma) * lam*exp(-lam*x2)"

[support]
x1 = "real"
x2 = "positive"

[coordinates]
mu = "real"
sigma = "positive"
lam = "positive"
"""


def test_a_metric_of_blocks_is_the_product_of_their_manifolds(tmp_path):
    """Independent normal and exponential samples: diag(1/σ², 2/σ², 1/λ²) is no product of
    lines (g_μμ depends on σ) but of the half-plane (μ, σ) and the line λ, whose distances
    add in squares (Amari 1985 for the half-plane, |log(λ₂/λ₁)| for the line); the numeric
    geodesic in three coordinates agrees to 25 digits."""
    from raosym import run

    path = tmp_path / "normal_exponential.toml"
    path.write_text(NORMAL_EXPONENTIAL)
    family = run(str(path))
    distance = family.derivation.distance
    assert distance.structure == "product of manifolds"
    symbol = names(distance.textbook)
    mu1, mu2, s1, s2, l1, l2 = (symbol[n] for n in ("mu_1", "mu_2", "sigma_1", "sigma_2",
                                                      "lam_1", "lam_2"))
    expected = sympy.sqrt(2 * acosh(1 + ((mu1 - mu2) ** 2 / 2 + (s1 - s2) ** 2) / (2 * s1 * s2))
                          ** 2 + log(l2 / l1) ** 2)
    assert_equal_at_exact_points(distance.textbook, expected)
    assert_equal_at_exact_points(distance.stable, expected)
    _numeric_against_closed(family.derivation, [(("1/3", "2", "1/2"), ("-1", "1/2", "5")),
                                                (("0", "1", "1"), ("4", "7", "1/9"))])
    assert all(check.passed for check in family.checks if check.quantity.startswith("rao"))
