"""Reach, fifth round: product densities whose factors are not exponential families.

A Gumbel and a normal, independent, written as one density of two variables: no term of
``log f`` couples x and y, so the density is the product of its factors, and the Fisher
information of independent parts adds up. The Gumbel factor is no exponential family and
its entries are out of reach of SymPy's integral over x at once (the whole family once failed
on its budget); each factor now goes down the one-variable ladder on its own (location-scale
reduction, Euler integrals), normalized by its mass.

The same for a Poisson count beside a normal measurement (variables of both kinds, once
refused at spec time: each factor is all discrete or all continuous) and a geometric count
beside a Weibull time (the count's mass, (1 - p) p**k, is a geometric series SymPy closes only
with the factor free of k outside the sum), and two logistic variables sharing their scale s
(a coordinate of both factors: the two factors' entries in s add up; rebuilt from the
expanded ``log f`` the factors were no longer functions of ``(x - m)/s``, and the whole
family ran out of its budget).

References come from the literature, evaluated here with mpmath: the Gumbel family's Fisher
matrix in (location m, scale b), ``[[1, γ − 1], [γ − 1, (1 − γ)² + π²/6]]/b²`` (Johnson, Kotz
and Balakrishnan 1995, ch. 22), the normal's ``diag(1, 2)/s²``, and the distances of the two
hyperbolic planes they are (a location-scale family, ``u = m + (γ − 1) b``, and the normal
after ``n = √2 u``), combined as a product of manifolds; the Poisson's ``1/λ`` and its
distance ``2|√λ₁ − √λ₂|``, the geometric's ``1/(p (1 − p)²)`` (failures with probability p),
the Weibull's in (shape c, scale l) ``[[((1 − γ)² + π²/6)/c², (γ − 1)/l], [(γ − 1)/l,
c²/l²]]``, the logistic's ``diag(1/3, (π² + 3)/9)/s²`` (each factor's information in s,
summed).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from conftest import generate_through_cli

pytestmark = pytest.mark.xdist_group("test_reach_products")

GUMBEL_NORMAL = """\
name = "gumbel_normal"
title = "A Gumbel and a normal, independent"
variables = ["x", "y"]
density = "exp(-(x - m)/b - exp(-(x - m)/b))/b * exp(-(y - n)**2/(2*s**2))/sqrt(2*pi*s**2)"

[support]
x = "real"
y = "real"

[coordinates]
m = "real"
b = "positive"
n = "real"
s = "positive"
"""


def literature_fisher(m, b, n, s):
    """The block-diagonal Fisher matrix of the Gumbel (m, b) and the normal (n, s)."""
    gamma = mpmath.euler
    gumbel = [[1, gamma - 1], [gamma - 1, (1 - gamma) ** 2 + mpmath.pi**2 / 6]]
    matrix = mpmath.zeros(4, 4)
    for i in range(2):
        for j in range(2):
            matrix[i, j] = gumbel[i][j] / b**2
    matrix[2, 2], matrix[3, 3] = 1 / s**2, 2 / s**2
    return matrix


def literature_distance(one, two):
    """sqrt(d_Gumbel^2 + d_normal^2): each factor a hyperbolic plane of its own scale."""
    (m1, b1, n1, s1), (m2, b2, n2, s2) = one, two
    scale = mpmath.pi / mpmath.sqrt(6)
    u1, u2 = ((m + (mpmath.euler - 1) * b) / scale for m, b in ((m1, b1), (m2, b2)))
    gumbel = scale * mpmath.acosh(1 + ((u1 - u2) ** 2 + (b1 - b2) ** 2) / (2 * b1 * b2))
    normal = mpmath.sqrt(2) * mpmath.acosh(
        1 + ((n1 - n2) ** 2 / 2 + (s1 - s2) ** 2) / (2 * s1 * s2))
    return mpmath.sqrt(gumbel**2 + normal**2)


POISSON_NORMAL = """\
name = "poisson_normal"
variables = ["k", "y"]
density = "exp(-lam)*lam**k/factorial(k) * exp(-(y - mu)**2/(2*sigma**2))/sqrt(2*pi*sigma**2)"

[support]
k = "integers >= 0"
y = "real"

[coordinates]
lam = "positive"
mu = "real"
sigma = "positive"
"""

GEOMETRIC_WEIBULL = """\
name = "geometric_weibull"
variables = ["k", "t"]
density = "(1 - p)*p**k * (c/l)*(t/l)**(c - 1)*exp(-(t/l)**c)"

[support]
k = "integers >= 0"
t = "positive"

[coordinates]
p = "(0, 1)"
c = "positive"
l = "positive"
"""


LOGISTIC_PAIR = """\
name = "logistic_pair"
variables = ["x", "y"]
density = '''(exp(-(x - m1)/s)/(s*(1 + exp(-(x - m1)/s))**2)
            * exp(-(y - m2)/s)/(s*(1 + exp(-(y - m2)/s))**2))'''

[support]
x = "real"
y = "real"

[coordinates]
m1 = "real"
m2 = "real"
s = "positive"
"""


def assert_entries_close(got, expected):
    """Each entry of the module's matrix within 4e-16 relative (two roundings) of the
    reference's, rounded to a float; a zero reference must be met exactly."""
    for i, row in enumerate(expected):
        for j, value in enumerate(row):
            truth = float(value)
            assert abs(got[i, j] - truth) <= 4e-16 * abs(truth), (i, j, got[i, j], truth)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("products")
    summary, modules = generate_through_cli(
        folder, {"gumbel_normal": GUMBEL_NORMAL, "poisson_normal": POISSON_NORMAL,
                 "geometric_weibull": GEOMETRIC_WEIBULL, "logistic_pair": LOGISTIC_PAIR},
        "products")
    return summary, modules, folder / "generated"


@pytest.fixture(scope="module")
def generated(run):
    summary, modules, output = run
    return summary["gumbel_normal"], modules["gumbel_normal"], output


def test_the_product_derives_and_verifies(generated):
    entry, _, _ = generated
    assert entry["status"] == "ok", entry


@pytest.mark.parametrize("point", [(0.3, 2.0, -1.0, 0.5), (-1e6, 1e-8, 3e5, 1e7),
                                   (25.0, 1e12, 0.0, 1e-12)])
def test_fisher_is_the_literature_block_diagonal(generated, point):
    _, module, _ = generated
    got = module.fisher_information(list(point))
    with mpmath.workdps(40):
        expected = literature_fisher(*(mpmath.mpf(v) for v in point))
        assert_entries_close(got, expected.tolist())


@pytest.mark.parametrize("one, two", [
    ((0.3, 2.0, -1.0, 0.5), (1.3, 0.7, 2.0, 3.0)),      # moderate
    ((0.0, 1.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0 + 2.0**-40)),  # nearly identical
    ((0.0, 1.0, 0.0, 1.0), (1e5, 1e-5, -1e5, 1e5)),     # far apart
])
def test_distance_is_the_product_of_the_two_planes(generated, one, two):
    _, module, _ = generated
    got = module.rao_distance(list(one), list(two))
    with mpmath.workdps(60):
        expected = float(literature_distance([mpmath.mpf(v) for v in one],
                                             [mpmath.mpf(v) for v in two]))
    assert abs(got - expected) <= 1e-14 * expected, (got, expected)


def test_the_proof_states_the_factors(generated):
    """Each factor is displayed once as a density of its own, with its mass, before the
    first entry that uses it; each entry's definition then opens the chain that reduces it
    to its factor's expectation (no numbered "Definition" step)."""
    _, _, output = generated
    proof = (output / "latex" / "gumbel_normal.tex").read_text()
    assert proof.count("the factor of $x$, is a density of its own (its mass is 1)") == 1
    assert proof.count(r"the factor of $y$, divided by its mass $\sqrt{2} \sqrt{\pi}$") == 1
    assert proof.count("Only the factor $f_{1}$ depends on both coordinates") == 3
    assert proof.count("Only the factor $f_{2}$ depends on both coordinates") == 3
    assert proof.count("No factor of the density depends on both coordinates") == 4
    assert r"\item Definition: the Fisher information" not in proof


@pytest.mark.parametrize("point", [(2.5, 0.3, 1.5), (1e-6, -1e8, 1e-9), (1e9, 0.0, 1e9)])
def test_a_count_beside_a_measurement(run, point):
    summary, modules, _ = run
    assert summary["poisson_normal"]["status"] == "ok"
    module = modules["poisson_normal"]
    lam, _, sigma = point
    expected = np.diag([1 / lam, 1 / sigma**2, 2 / sigma**2])
    got = module.fisher_information(list(point))
    assert np.all(np.abs(got - expected) <= 4e-16 * np.abs(expected))
    one, two = (2.5, 0.3, 1.5), (0.04, -2.0, 0.2)
    with mpmath.workdps(40):
        poisson = 2 * abs(mpmath.sqrt(mpmath.mpf(one[0])) - mpmath.sqrt(mpmath.mpf(two[0])))
        normal = mpmath.sqrt(2) * mpmath.acosh(1 + ((mpmath.mpf(one[1]) - two[1]) ** 2 / 2 + (
            mpmath.mpf(one[2]) - two[2]) ** 2) / (2 * mpmath.mpf(one[2]) * two[2]))
        expected_distance = float(mpmath.sqrt(poisson**2 + normal**2))
    assert abs(module.rao_distance(list(one), list(two)) - expected_distance) \
        <= 1e-14 * expected_distance


@pytest.mark.parametrize("point", [(0.999, 1.5, 2.0), (1e-6, 0.2, 1e-5), (0.5, 40.0, 1e6)])
def test_a_count_beside_a_weibull_time(run, point):
    summary, modules, _ = run
    assert summary["geometric_weibull"]["status"] == "ok"
    with mpmath.workdps(40):
        p, c, scale = (mpmath.mpf(v) for v in point)
        gamma = mpmath.euler
        expected = [[1 / (p * (1 - p) ** 2), 0, 0],
                    [0, ((1 - gamma) ** 2 + mpmath.pi**2 / 6) / c**2, (gamma - 1) / scale],
                    [0, (gamma - 1) / scale, c**2 / scale**2]]
    got = modules["geometric_weibull"].fisher_information(list(point))
    assert_entries_close(got, expected)


@pytest.mark.parametrize("point", [(0.3, -2.0, 1.5), (1e8, -1e8, 1e-9), (0.0, 0.0, 1e9)])
def test_a_scale_shared_by_two_factors(run, point):
    summary, modules, output = run
    assert summary["logistic_pair"]["status"] == "ok"
    with mpmath.workdps(40):
        s = mpmath.mpf(point[2])
        expected = [1 / (3 * s**2), 1 / (3 * s**2), 2 * (mpmath.pi**2 + 3) / (9 * s**2)]
    got = modules["logistic_pair"].fisher_information(list(point))
    assert_entries_close(got, [[value if i == j else 0 for j in range(3)]
                               for i, value in enumerate(expected)])
    proof = (output / "latex" / "logistic_pair.tex").read_text()
    assert "The Fisher information of independent factors adds up." in proof
