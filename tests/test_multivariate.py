"""Families of several sample variables (issue 12): the format, the Fisher matrices against
the literature's closed forms, the distances against independent mpmath computations.

References are evaluated here with mpmath and nothing from raosym: the Dirichlet's
``ψ₁(a_i) δ_ij − ψ₁(Σa)``, the categorical's ``δ_ij/p_i + 1/p_3`` in the free coordinates
``p1, p2``, the normal family with fixed covariance ``Σ⁻¹`` (and ``I/σ²`` for the vector
Gaussian), the round-sphere distance ``2 arccos Σ √(p_i q_i)`` and the Mahalanobis distance
``√(Δᵀ Σ⁻¹ Δ)``. The normal with fixed covariance and the vector Gaussian are in the catalog
(``derivations/``; their generated modules are checked here against the same references at
float inputs where the textbook formula loses digits); the Dirichlet and the categorical are
in the catalog too, and two more are written here into the test's temporary folder.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

from raosym.derive import derive
from raosym.derive.distance import point_symbols
from raosym.errors import SpecError
from raosym.pipeline import load
from raosym.spec import load_spec
from raosym.spec.points import sample_points
from raosym.verify import multivariate
from raosym.verify.checks import Check, _check, _not_reached, verify

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_multivariate")

FAMILIES = Path(__file__).resolve().parent / "families"
REPOSITORY = Path(__file__).resolve().parents[1]
CATALOG = REPOSITORY / "derivations"


def family(name: str) -> Path:
    """The derivation file: the catalog's, or the one of tests/families."""
    catalog = CATALOG / f"{name}.toml"
    return catalog if catalog.exists() else FAMILIES / f"{name}.toml"


def at(expr: sympy.Expr, values: dict) -> mpmath.mpf:
    """``expr`` at ``values`` (names -> numbers), through SymPy's own evaluation at 40 digits:
    only the derived expression is raosym's, the number it takes is SymPy's."""
    substitution = {s: sympy.Float(str(values[s.name]), 50) for s in expr.free_symbols}
    return mpmath.mpf(str(sympy.N(expr.subs(substitution), 45)))


def close(a, b, digits=30) -> bool:
    return abs(a - b) <= mpmath.mpf(10) ** (-digits) * max(1, abs(a), abs(b))


def random_points(count, draw, seed=12):
    """Seeded draws, each number cut to 8 decimals so that mpmath and SymPy read the same
    value from its text."""
    rng = random.Random(seed)
    return [[mpmath.mpf(f"{value:.8f}") for value in draw(rng)] for _ in range(count)]


@pytest.fixture(autouse=True)
def precision():
    with mpmath.workdps(40):
        yield


# ----------------------------------------------------------------------------- the format


def write(tmp_path, text: str, name: str = "x.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


DIRICHLET = family("dirichlet3").read_text()


def spec_error(tmp_path, text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load_spec(write(tmp_path, text))
    return caught.value


def test_several_variables_parse_in_order_with_dependent_bounds():
    spec = load_spec(family("dirichlet3"))
    x1, x2 = spec.variables
    assert [v.name for v in spec.variables] == ["x1", "x2"]
    assert spec.multivariate
    assert spec.supports[1].upper == 1 - x1
    assert spec.supports[0].kind == spec.supports[1].kind == "interval"
    assert x1.is_positive and x2.is_positive


def test_coordinate_domain_may_use_earlier_coordinates():
    spec = load_spec(family("categorical3"))
    p1, p2 = spec.coordinate_symbols
    assert spec.coordinates[1].domain.upper == 1 - p1
    # The sampled points respect it: p2 < 1 - p1 at every verification point.
    for point in sample_points(spec):
        assert 0 < point[p2] < 1 - point[p1]


def test_a_one_variable_file_has_no_variables_tuple(tmp_path):
    spec = load_spec(write(tmp_path, 'name = "x"\nvariable = "x"\nsupport = "real"\n'
                           'density = "exp(-(x - mu)**2/2)/sqrt(2*pi)"\n'
                           '[coordinates]\nmu = "real"\n'))
    assert spec.variables == () and not spec.multivariate


def test_variable_and_variables_together(tmp_path):
    error = spec_error(tmp_path, 'variable = "y"\n' + DIRICHLET)
    assert error.message == ("give either 'variable' (one sample variable) or 'variables' "
                             "(several), not both")
    assert error.key == "variables"


def test_variables_must_be_an_array_of_names(tmp_path):
    error = spec_error(tmp_path, DIRICHLET.replace('variables = ["x1", "x2"]',
                                                   'variables = "x1"'))
    assert error.message.startswith("expected a non-empty array of variable names")
    line = DIRICHLET.splitlines().index('variables = ["x1", "x2"]') + 1
    assert (error.key, error.line) == ("variables", line)
    error = spec_error(tmp_path, DIRICHLET.replace('["x1", "x2"]', '["x1", 2]'))
    assert error.message == "expected a variable name as a string, found an integer (2) " \
                            "(entry 2 of variables)"


def test_a_variable_listed_twice(tmp_path):
    error = spec_error(tmp_path, DIRICHLET.replace('["x1", "x2"]', '["x1", "x1"]'))
    assert error.message == "the variable 'x1' is listed twice"


def test_support_table_needs_every_variable(tmp_path):
    error = spec_error(tmp_path, DIRICHLET.replace('x2 = "(0, 1 - x1)"\n', ""))
    assert error.message == ("missing the support of the variable 'x2': [support] needs one "
                             "entry per variable (x1, x2)")
    assert error.key == "support"


def test_support_of_something_else(tmp_path):
    error = spec_error(tmp_path, DIRICHLET.replace('x2 = "(0, 1 - x1)"',
                                                   'x2 = "(0, 1 - x1)"\nx3 = "(0, 1)"'))
    assert error.message == "'x3' is not a variable; [support] has one entry per variable: x1, x2"
    assert error.key == "support.x3"


def test_a_bound_may_not_use_a_later_variable(tmp_path):
    text = DIRICHLET.replace('x1 = "(0, 1)"', 'x1 = "(0, 1 - x2)"')
    error = spec_error(tmp_path, text)
    assert error.message == ("the support of 'x1' uses the variable 'x2'; a bound may use only "
                             "the variables listed before it")
    assert error.key == "support.x1"
    assert error.line == text.splitlines().index('x1 = "(0, 1 - x2)"') + 1


def test_a_support_in_a_coordinate_is_refused(tmp_path):
    error = spec_error(tmp_path, DIRICHLET.replace('x2 = "(0, 1 - x1)"', 'x2 = "(0, a1)"'))
    assert "the support depends on the coordinate 'a1'" in error.message
    assert error.key == "support.x2"


def test_a_domain_may_not_use_a_later_coordinate(tmp_path):
    text = family("categorical3").read_text().replace('p1 = "(0, 1)"',
                                                                'p1 = "(0, 1 - p2)"')
    error = spec_error(tmp_path, text)
    assert error.message == ("a domain may not depend on other parameters (found 'p2'); its "
                             "bounds must be numbers, pi, E or oo")
    assert error.key == "coordinates.p1"
    assert error.column is not None


def test_a_density_that_couples_a_count_and_a_continuous_variable_is_refused(tmp_path):
    """Variables of both kinds are handled in independent factors only (see
    test_reach_products); a term of log f that holds both is refused by name, not summed
    and integrated at once."""
    path = write(tmp_path, """\
name = "x"
variables = ["k", "y"]
density = "exp(-lam)*lam**k/factorial(k)*exp(-(y - k*mu)**2/2)/sqrt(2*pi)"
[support]
k = "integers >= 0"
y = "real"
[coordinates]
lam = "positive"
mu = "real"
""")
    with pytest.raises(SpecError) as caught:
        load(path)
    assert str(caught.value) == (
        f"{path}: key 'density': the density couples the discrete variable(s) k with the "
        "continuous variable(s) y (a term of log f, or a bound of a support, holds both); raosym "
        "handles variables of both kinds only in a product of independent factors, each all "
        "discrete or all continuous")


def test_an_unused_variable(tmp_path):
    text = DIRICHLET.replace('["x1", "x2"]', '["x1", "x2", "x3"]').replace(
        'x2 = "(0, 1 - x1)"', 'x2 = "(0, 1 - x1)"\nx3 = "(0, 1)"')
    error = spec_error(tmp_path, text)
    assert error.message == "the density does not depend on the variable 'x3'"


def test_a_density_that_does_not_integrate_to_one(tmp_path):
    path = write(tmp_path, DIRICHLET.replace("gamma(a1 + a2 + a3)/", "2*gamma(a1 + a2 + a3)/"),
                 "dirichlet3.toml")
    with pytest.raises(SpecError) as caught:
        load(path)
    assert "the density does not integrate to 1: its integral over the support (x1 in " \
           "(0, 1), x2 in (0, 1 - x1)) is 2.0" in caught.value.message


def test_a_negative_density_is_refused(tmp_path):
    path = write(tmp_path, family("categorical3").read_text().replace(
        'density = "p1**x1', 'density = "(1 - 2*x2)*p1**x1'), "categorical3.toml")
    with pytest.raises(SpecError) as caught:
        load(path)
    assert caught.value.message.startswith("the density is negative (")
    assert " at x1 = 0.0, x2 = 1.0, {'p1': " in caught.value.message
    assert caught.value.key == "density"


# ----------------------------------------------------------------------------- Fisher matrices


@pytest.fixture(scope="module")
def dirichlet():
    return derive(load(family("dirichlet3")))


@pytest.fixture(scope="module")
def categorical():
    return derive(load(family("categorical3")))


@pytest.fixture(scope="module")
def normal():
    return derive(load(family("normal2_fixed")))


@pytest.fixture(scope="module")
def vector():
    return derive(load(family("gaussian_vector3")))


def test_dirichlet_fisher_is_the_trigamma_matrix(dirichlet):
    assert {e.strategy for e in dirichlet.entries} == {"exponential family"}
    for a in random_points(4, lambda rng: [rng.uniform(0.2, 6) for _ in range(3)]):
        total = mpmath.mpf(sum(a))
        values = dict(zip(("a1", "a2", "a3"), a))
        for i in range(3):
            for j in range(3):
                expected = (mpmath.psi(1, a[i]) if i == j else 0) - mpmath.psi(1, total)
                assert close(at(dirichlet.fisher[i, j], values), expected)


def test_categorical_fisher_in_free_coordinates(categorical):
    for p1, p2 in random_points(4, lambda rng: (lambda u: (u, rng.uniform(0.01, 0.99) * (1 - u)))(
            rng.uniform(0.01, 0.99))):
        p3 = 1 - mpmath.mpf(p1) - mpmath.mpf(p2)
        p = [mpmath.mpf(p1), mpmath.mpf(p2)]
        for i in range(2):
            for j in range(2):
                expected = (1 / p[i] if i == j else 0) + 1 / p3
                assert close(at(categorical.fisher[i, j], {"p1": p1, "p2": p2}), expected)


def test_normal_with_fixed_covariance_has_the_inverse_covariance(normal):
    for s1, s2, rho in random_points(4, lambda rng: (rng.uniform(0.2, 4), rng.uniform(0.2, 4),
                                                     rng.uniform(-0.95, 0.95))):
        covariance = mpmath.matrix([[s1**2, rho * s1 * s2], [rho * s1 * s2, s2**2]])
        precision = covariance ** -1
        values = {"s1": s1, "s2": s2, "rho": rho, "m1": 0.3, "m2": -1.1}
        for i in range(2):
            for j in range(2):
                assert close(at(normal.fisher[i, j], values), precision[i, j], 25)


def test_vector_gaussian_is_identity_over_sigma_squared(vector):
    sigma = mpmath.mpf("1.7")
    for i in range(3):
        for j in range(3):
            expected = 1 / sigma**2 if i == j else 0
            assert close(at(vector.fisher[i, j], {"sigma": "1.7"}), expected)


# ----------------------------------------------------------------------------- verification


def checks_pass(checks: list[Check]) -> None:
    assert checks, "no checks ran"
    reached = [c for c in checks if c.reached]
    assert reached, "no check reached its precision"
    assert all(c.passed for c in reached), [c for c in reached if not c.passed]


def test_categorical_verifies_by_nested_sums(categorical):
    verified = verify(categorical, count=1)
    fisher = [c for c in verified.checks if c.quantity.startswith("g_")]
    checks_pass(fisher)
    assert all(c.reached and c.required == 30 for c in fisher)  # exact sums, 40 digits
    assert {c.quantity for c in verified.checks} >= {"rao_distance", "rao_distance_textbook",
                                                     "K"}
    assert verified.unavailable == ()


def test_normal_verifies_by_iterated_quadrature(normal):
    verified = verify(normal, count=1)
    fisher = [c for c in verified.checks if c.quantity.startswith("g_")]
    checks_pass(fisher)
    assert all(c.required == 25 for c in fisher)
    assert verified.derivation.distance is not None
    assert normal.timings["quadrature_nodes"] > 0  # the cost, reported


def test_vector_gaussian_verifies_group_by_group(vector):
    verified = verify(vector, count=2)
    checks_pass([c for c in verified.checks if c.quantity.startswith("g_")])


def test_dirichlet_quadrature_at_an_edge_point(dirichlet):
    """One point with a1 = 1/8 (a power x1^(-7/8) at the edge of the simplex), all six entries
    against the iterated quadrature: the five-point verification takes a minute."""
    a1, a2, a3 = dirichlet.spec.coordinate_symbols
    point = {a1: mpmath.mpf(1) / 8, a2: mpmath.mpf("2.3"), a3: mpmath.mpf("0.7")}
    checks = multivariate.fisher_checks(dirichlet, [point], _check, _not_reached)
    assert len(checks) == 6
    checks_pass(checks)
    assert all(c.reached for c in checks)


def test_a_wrong_fisher_entry_fails_its_check(normal):
    """The quadrature is a real check: an entry off by 1e-20 relative is caught."""
    import dataclasses
    entries = list(normal.entries)
    wrong = dataclasses.replace(entries[0], value=entries[0].value * (1 + sympy.Rational(1, 10**20)))
    broken = dataclasses.replace(normal, entries=(wrong, *entries[1:]))
    m1, m2, s1, s2, rho = (p.symbol for p in normal.spec.parameters)
    point = {m1: mpmath.mpf(1), m2: mpmath.mpf(-2), s1: mpmath.mpf(2), s2: mpmath.mpf("0.5"),
             rho: mpmath.mpf("0.3")}
    (first, *_) = multivariate.fisher_checks(broken, [point], _check, _not_reached)
    assert first.reached and not first.passed and 18 < first.digits < 22


# ----------------------------------------------------------------------------- distances


def sphere_reference(p, q):
    p = [*p, 1 - sum(p)]
    q = [*q, 1 - sum(q)]
    return 2 * mpmath.acos(mpmath.fsum(mpmath.sqrt(a * b) for a, b in zip(p, q)))


def test_categorical_distance_is_the_round_sphere(categorical):
    distance = categorical.distance
    assert distance.structure == multivariate_structure()
    first, second = distance.points
    pairs = [((0.2, 0.3), (0.5, 0.1)), ((0.01, 0.98), (0.98, 0.01)), ((0.3, 0.3), (0.2, 0.6))]
    with mpmath.workdps(50):
        for p, q in pairs:
            p, q = [mpmath.mpf(v) for v in p], [mpmath.mpf(v) for v in q]
            values = {s.name: v for s, v in zip((*first, *second), (*p, *q))}
            reference = sphere_reference(p, q)
            assert close(at(distance.textbook, values), reference, 35)
            assert close(at(distance.stable, values), reference, 35)


def multivariate_structure():
    from raosym.derive.multivariate import SPHERE
    return SPHERE


def test_categorical_stable_distance_for_nearby_points(categorical):
    """At p and q 1e-12 apart the stable form keeps its digits in double precision, where
    ``2 arccos(Σ√(pq))`` has none; the reference is the same formula at 60 digits."""
    first, second = categorical.distance.points
    symbols = [*first, *second]
    stable = sympy.lambdify(symbols, categorical.distance.stable, "math")
    textbook = sympy.lambdify(symbols, categorical.distance.textbook, "math")
    p, q = (0.2, 0.3), (0.2 + 1e-12, 0.3 - 2e-12)
    with mpmath.workdps(60):
        reference = sphere_reference([mpmath.mpf(v) for v in p], [mpmath.mpf(v) for v in q])
    assert abs(stable(*p, *q) - reference) <= 1e-14 * reference
    assert abs(textbook(*p, *q) - reference) > 1e-3 * reference  # what the stable form avoids


def test_normal_distance_is_mahalanobis(normal):
    distance = normal.distance
    assert distance.structure == "constant metric"
    first, second = distance.points
    s1, s2, rho = mpmath.mpf("1.3"), mpmath.mpf("0.4"), mpmath.mpf("-0.7")
    covariance = mpmath.matrix([[s1**2, rho * s1 * s2], [rho * s1 * s2, s2**2]])
    for p, q in [(("0", "0"), ("1", "1")), (("-3", "2"), ("4", "-5")),
                 (("1", "1"), ("1.000000001", "1"))]:
        delta = mpmath.matrix([mpmath.mpf(a) - mpmath.mpf(b) for a, b in zip(p, q)])
        reference = mpmath.sqrt((delta.T * covariance ** -1 * delta)[0, 0])
        values = {"s1": s1, "s2": s2, "rho": rho,
                  **{s.name: mpmath.mpf(v) for s, v in zip((*first, *second), (*p, *q))}}
        assert close(at(distance.stable, values), reference, 30)


def test_vector_gaussian_distance(vector):
    first, second = vector.distance.points
    p, q = (0.5, -1, 2), (1.5, 1, -0.5)
    values = {"sigma": 2, **{s.name: v for s, v in zip((*first, *second), (*p, *q))}}
    reference = mpmath.sqrt(mpmath.fsum((mpmath.mpf(a) - b) ** 2 for a, b in zip(p, q))) / 2
    assert close(at(vector.distance.stable, values), reference, 30)


# ----------------------------------------------------------------------------- new families


COIN_BINOMIAL = """name = "coin_binomial"
variables = ["x1", "x2"]
density = "binomial(1 + x1, x2) * t**x2 * (1 - t)**(1 + x1 - x2) / 2"

[support]
x1 = "{0, 1}"
x2 = "range(0, x1 + 2)"

[coordinates]
t = "(0, 1)"
"""

TRIANGLE = """name = "triangle_gamma"
variables = ["x1", "x2"]
density = "lam**2 * exp(-lam*x1)"

[support]
x1 = "positive"
x2 = "(0, x1)"

[coordinates]
lam = "positive"
"""


def test_a_family_that_is_not_an_exponential_family_closes_by_nested_sums(tmp_path):
    """A fair coin x1, then x2 ~ Binomial(1 + x1, t): the statistics x1 and x2 are two for
    one coordinate, so the exponential-family rung declines and the finite sum closes it.
    A binomial with n trials has Fisher information n/(t(1 - t)); here n is 1 or 2 evenly."""
    derivation = derive(load(write(tmp_path, COIN_BINOMIAL, "coin_binomial.toml")))
    assert derivation.entries[0].strategy == "finite sum"
    for t in ("0.1", "0.5", "0.83"):
        t = mpmath.mpf(t)
        assert close(at(derivation.fisher[0, 0], {"t": t}), mpmath.mpf(3) / 2 / (t * (1 - t)))
    verified = verify(derivation, count=2)
    checks_pass([c for c in verified.checks if c.quantity.startswith("g_")])


def test_a_density_free_of_a_variable_bounded_by_another(tmp_path):
    """x1 ~ Gamma(2, lam) and x2 uniform on (0, x1): the information is that of the shape-2
    gamma in its rate, 2/lam^2; x2 carries none."""
    derivation = derive(load(write(tmp_path, TRIANGLE, "triangle_gamma.toml")))
    lam = mpmath.mpf("0.7")
    assert close(at(derivation.fisher[0, 0], {"lam": lam}), 2 / lam**2)
    (symbol,) = derivation.spec.coordinate_symbols
    checks = multivariate.fisher_checks(derivation, [{symbol: lam}], _check, _not_reached)
    checks_pass(checks)


def generated_module(name: str):
    """The committed generated module of a catalog family (``generated/python``)."""
    path = REPOSITORY / "generated" / "python" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"multivariate_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inverse_covariance(s1, s2, rho) -> mpmath.matrix:
    """Σ⁻¹ of the bivariate normal, in mpmath at the float inputs."""
    s1, s2, rho = (mpmath.mpf(v) for v in (s1, s2, rho))
    covariance = mpmath.matrix([[s1**2, rho * s1 * s2], [rho * s1 * s2, s2**2]])
    return covariance**-1


@pytest.mark.parametrize("rho", [0.3, -0.7, 1 - 2.0**-40, -1 + 1e-12, 5e-324])
def test_generated_normal_fixed_covariance_fisher_is_the_inverse_covariance(rho):
    """Near rho = ±1 the textbook 1/(1 - rho**2) loses its digits in floats; the module keeps
    them (the emitted form (1 - rho)(1 + rho))."""
    module = generated_module("normal2_fixed")
    s1, s2 = 1.7, 0.004
    got = module.fisher_information([0.3, -2.0], s1=s1, s2=s2, rho=rho)
    reference = inverse_covariance(s1, s2, rho)
    for i in range(2):
        for j in range(2):
            if reference[i, j] == 0:
                assert got[i, j] == 0
            else:
                # A subnormal entry (rho = 5e-324) carries its absolute spacing, 5e-324.
                tolerance = max(4e-16 * abs(reference[i, j]), 2 * 5e-324)
                assert abs(got[i, j] - reference[i, j]) <= tolerance, (i, j)


@pytest.mark.parametrize("delta", [(1.0, -2.0), (1e-9, 3e-10), (1e150, -1e150)])
def test_generated_normal_fixed_covariance_distance_is_mahalanobis(delta):
    module = generated_module("normal2_fixed")
    s1, s2, rho = 0.8, 2.5, 0.6
    first = [0.25, -1.5]
    second = [first[0] + delta[0], first[1] + delta[1]]
    got = float(module.rao_distance(first, second, s1=s1, s2=s2, rho=rho))
    difference = mpmath.matrix([mpmath.mpf(a) - mpmath.mpf(b) for a, b in zip(first, second)])
    reference = mpmath.sqrt((difference.T * inverse_covariance(s1, s2, rho) * difference)[0])
    assert abs(got - reference) <= 1e-15 * reference


def test_generated_vector_gaussian_is_identity_over_sigma_squared_on_arrays():
    module = generated_module("gaussian_vector3")
    rng = random.Random(3)
    theta = [[rng.uniform(-5, 5) for _ in range(3)] for _ in range(4)]
    sigma = 1e-150
    got = module.fisher_information(theta, sigma=sigma)
    assert got.shape == (4, 3, 3)
    for point in got:
        for i in range(3):
            for j in range(3):
                expected = mpmath.mpf(1) / mpmath.mpf(sigma) ** 2 if i == j else 0
                assert abs(point[i, j] - expected) <= 2.3e-16 * abs(expected)
    one, two = theta[0], [v + 1e-12 * (k + 1) for k, v in enumerate(theta[0])]
    distance = float(module.rao_distance(one, two, sigma=2.0))
    reference = mpmath.sqrt(mpmath.fsum((mpmath.mpf(a) - mpmath.mpf(b)) ** 2
                                        for a, b in zip(one, two))) / 2
    assert abs(distance - reference) <= 1e-15 * reference


def test_a_domain_that_uses_an_earlier_coordinate_is_checked_pointwise():
    """The categorical's p2 in (0, 1 - p1): the module refuses a point outside the simplex,
    naming the coordinate, its domain and the bound there, on both paths."""
    module = generated_module("categorical3")
    assert module.fisher_information([[0.2, 0.3], [0.5, 0.25]]).shape == (2, 2, 2)
    with pytest.raises(ValueError, match=r"coordinate 'p2' must lie in \(0, 1 - p1\); got "
                                         r"0\.5 where the bounds are 0\.5"):
        module.fisher_information([[0.2, 0.3], [0.5, 0.5]])
    with pytest.raises(ValueError, match="coordinate 'p2' of theta2"):
        module.rao_distance([0.6, 0.3], [0.7, 0.35])


def categorical_fisher(p1, p2) -> list[list[mpmath.mpf]]:
    """δ_ij/p_i + 1/p3 in the free coordinates, p3 = 1 - p1 - p2, in mpmath at the floats."""
    p = [mpmath.mpf(p1), mpmath.mpf(p2)]
    last = 1 - p[0] - p[1]
    return [[(1 / p[i] if i == j else 0) + 1 / last for j in range(2)] for i in range(2)]


@pytest.mark.parametrize("point", [(0.25, 0.5), (1e-3, (1 - 1e-3) * (1 - 1e-12)),
                                   (0.999, 0.0005929676220007574), (0.5 - 1e-9, 0.5 - 1e-9),
                                   (1e-300, 0.75)])
def test_generated_categorical_fisher_keeps_its_digits_at_the_simplex_edge(point):
    """Near p1 + p2 = 1 the textbook 1/(1 - p1 - p2) from floats loses every digit (1e-3 +
    0.999(1 - 1e-12)); the module sums p1 + p2 exactly first."""
    module = generated_module("categorical3")
    got = module.fisher_information(list(point))
    reference = categorical_fisher(*point)
    for i in range(2):
        for j in range(2):
            assert abs(got[i, j] - reference[i][j]) <= 1e-15 * abs(reference[i][j]), (i, j)


def test_generated_categorical_distance_is_the_round_sphere():
    module = generated_module("categorical3")
    rng = random.Random(5)
    for _ in range(20):
        first = sorted(rng.random() for _ in range(2))
        second = sorted(rng.random() for _ in range(2))
        one = [first[0], first[1] - first[0]]
        two = [second[0], second[1] - second[0]]
        got = float(module.rao_distance(one, two))
        probabilities = [[mpmath.mpf(v) for v in (*p, 0)] for p in (one, two)]
        for p in probabilities:
            p[2] = 1 - p[0] - p[1]
        reference = 2 * mpmath.acos(mpmath.fsum(mpmath.sqrt(a * b)
                                                for a, b in zip(*probabilities)))
        assert abs(got - reference) <= 1e-14 * reference


def test_point_names_follow_the_coordinates(categorical):
    first, second = point_symbols(categorical.spec)
    assert [s.name for s in (*first, *second)] == ["p1_1", "p2_1", "p1_2", "p2_2"]


TILTED = """name = "tilted"
variables = ["x1", "x2"]
density = "(1 - t + 2*t*x1) * 2*x2"

[support]
x1 = "(0, 1)"
x2 = "(0, 1)"

[coordinates]
t = "(0, 1)"
"""


def test_a_continuous_family_closes_by_iterated_integrals(tmp_path):
    """A linear tilt of x1 times an independent x2 with density 2 x2: log f has the term
    log(1 - t + 2 t x1), no exponential family, so SymPy integrates x2, then x1. The
    reference is mpmath's quadrature of (2x - 1)²/(1 - t + 2 t x) over (0, 1)."""
    derivation = derive(load(write(tmp_path, TILTED, "tilted.toml")))
    assert derivation.entries[0].strategy == "iterated integrals"
    for t in ("0.2", "0.75"):
        t = mpmath.mpf(t)
        reference = mpmath.quad(lambda x: (2 * x - 1) ** 2 / (1 - t + 2 * t * x), [0, 1])
        assert close(at(derivation.fisher[0, 0], {"t": t}), reference)


POISSON_PAIR = """\
name = "poisson_pair"
variables = ["k1", "k2"]
density = "l1**k1*exp(-l1)/factorial(k1) * l2**k2*exp(-l2)/factorial(k2)"

[support]
k1 = "integers >= 0"
k2 = "integers >= 0"

[coordinates]
l1 = "positive"
l2 = "positive"
"""


def test_a_product_of_infinite_discrete_supports_verifies_factor_by_factor(tmp_path):
    """Two independent Poisson counts: each factor's support is infinite, so the Fisher
    checks sum each factor's series (an enumeration of the outcomes would never end). The
    reference is the Poisson's Fisher information 1/λ per coordinate, and its distance
    2|√λ − √λ'| per coordinate (Atkinson and Mitchell 1981), combined as a product."""
    derivation = derive(load(write(tmp_path, POISSON_PAIR, "poisson_pair.toml")))
    verified = verify(derivation, count=2)
    fisher = [c for c in verified.checks if c.quantity.startswith("g_")]
    assert fisher and all(c.reached and c.passed and c.digits >= 30 for c in fisher), fisher
    values = {"l1": mpmath.mpf("2.5"), "l2": mpmath.mpf("0.125")}
    assert close(at(derivation.fisher[0, 0], values), 1 / values["l1"])
    assert close(at(derivation.fisher[1, 1], values), 1 / values["l2"])
    assert derivation.fisher[0, 1] == 0
    one, two = point_symbols(derivation.spec)
    pair = {**{s.name: v for s, v in zip(one, ("2.5", "0.125"))},
            **{s.name: v for s, v in zip(two, ("0.3", "7.0"))}}
    reference = 2 * mpmath.sqrt((mpmath.sqrt(mpmath.mpf("2.5")) - mpmath.sqrt(mpmath.mpf("0.3"))) ** 2
                                + (mpmath.sqrt(mpmath.mpf("0.125")) - mpmath.sqrt(7)) ** 2)
    assert close(at(derivation.distance.textbook, pair), reference)


GEOMETRIC_PAIR = """\
name = "geometric_pair"
variables = ["k1", "k2"]
density = "(1 - p)*p**k1*(1 - q)*q**k2"

[support]
k1 = "integers >= 0"
k2 = "integers >= 0"

[coordinates]
p = "(0, 1)"
q = "(0, 1)"
"""


@pytest.mark.parametrize("p", ["0.999", "0.5", "1e-6"])
def test_a_slowly_falling_factor_series_keeps_its_digits(tmp_path, p):
    """Two geometric counts at p = 0.999: the factor p**k falls by 0.999 a term, so its
    series ends in an Euler-Maclaurin tail, whose numerical derivatives (at raised precision)
    were once mixed with terms kept from the head's precision: the mass came out 1007.67
    instead of 1/(1 - p) = 1000 and a true Fisher entry was refused (2.1 digits). The
    reference is the geometric family's Fisher information 1/(p (1 - p)^2) (failures with
    probability p), evaluated here."""
    spec = load_spec(write(tmp_path, GEOMETRIC_PAIR, "geometric_pair.toml"))
    symbol_p, symbol_q = spec.coordinate_symbols
    with mpmath.workdps(40):
        point = {symbol_p: mpmath.mpf(p), symbol_q: mpmath.mpf("0.568043821806375")}
        mass, moments = multivariate.score_moments(spec, point, digits=30)
        assert abs(mass - 1) < mpmath.mpf(10) ** -30
        for index, value in enumerate(point.values()):
            expected = 1 / (value * (1 - value) ** 2)
            assert abs(moments[index, index] - expected) < mpmath.mpf(10) ** -30 * expected
        assert abs(moments[0, 1]) < mpmath.mpf(10) ** -30


# ----------------------------------------------------------------------------- the multinomial


@pytest.fixture(scope="module")
def multinomial():
    return derive(load(family("multinomial3")))


def multinomial_reference(n, p, q) -> mpmath.mpf:
    """Kass and Vos (1997): the multinomial of n trials is the sphere of radius 2√n through
    p ↦ 2√(n p), so d = 2√n arccos Σ √(p_i q_i) (the last probabilities 1 - p1 - p2)."""
    p, q = [*p, 1 - sum(p)], [*q, 1 - sum(q)]
    return 2 * mpmath.sqrt(n) * mpmath.acos(mpmath.fsum(mpmath.sqrt(a * b) for a, b in zip(p, q)))


def test_multinomial_fisher_is_n_times_the_categorical(multinomial):
    """g_ij = n (δ_ij/p_i + 1/p3), the multinomial's Fisher matrix in the free coordinates."""
    def draw(rng):
        u = rng.uniform(0.01, 0.99)
        return u, rng.uniform(0.01, 0.99) * (1 - u), rng.randint(1, 40)

    for p1, p2, n in random_points(4, draw):
        p3 = 1 - mpmath.mpf(p1) - mpmath.mpf(p2)
        p = [mpmath.mpf(p1), mpmath.mpf(p2)]
        for i in range(2):
            for j in range(2):
                expected = n * ((1 / p[i] if i == j else 0) + 1 / p3)
                assert close(at(multinomial.fisher[i, j], {"p1": p1, "p2": p2, "n": n}), expected)


def test_multinomial_distance_is_the_sphere_of_radius_two_root_n(multinomial):
    """The support has no fixed number of outcomes (n is a constant), so the finite-outcome
    sphere does not apply: the metric is recognized as n times the categorical one."""
    from raosym.derive.multivariate import SIMPLEX_SPHERE

    distance = multinomial.distance
    assert distance.structure == SIMPLEX_SPHERE
    first, second = distance.points
    pairs = [((0.2, 0.3), (0.5, 0.1), 7), ((0.01, 0.98), (0.98, 0.01), 1),
             ((0.3, 0.3), (0.3 + 1e-20, 0.3), 1000)]
    with mpmath.workdps(60):
        for p, q, n in pairs:
            p, q = [mpmath.mpf(v) for v in p], [mpmath.mpf(v) for v in q]
            values = {s.name: v for s, v in zip((*first, *second), (*p, *q))} | {"n": n}
            reference = multinomial_reference(n, p, q)
            assert close(at(distance.stable, values), reference, 35)
            if reference > 1e-10:  # the textbook arccos loses half its digits for nearby points
                assert close(at(distance.textbook, values), reference, 35)


def test_only_a_constant_multiple_of_the_categorical_metric_is_a_sphere(categorical):
    """On the simplex of the categorical's coordinates: 3 times its metric is the sphere of
    radius 2√3 (the distance scales by √3); p1 times it, or its diagonal alone, is not."""
    from raosym.derive.multivariate import simplex_sphere_distance

    spec, metric = categorical.spec, sympy.Matrix(categorical.fisher)
    p1 = spec.coordinate_symbols[0]
    tripled = simplex_sphere_distance(spec, 3 * metric)
    first, second = tripled.points
    p, q = [mpmath.mpf("0.2"), mpmath.mpf("0.3")], [mpmath.mpf("0.5"), mpmath.mpf("0.1")]
    values = {s.name: v for s, v in zip((*first, *second), (*p, *q))}
    assert close(at(tripled.stable, values), mpmath.sqrt(3) * sphere_reference(p, q), 35)
    assert simplex_sphere_distance(spec, p1 * metric) is None
    assert simplex_sphere_distance(spec, sympy.diag(metric[0, 0], metric[1, 1])) is None


def test_generated_multinomial_distance_matches_the_sphere():
    """The module at random pairs, nearby pairs 1e-12 apart and pairs near the simplex's
    edge, against 2√n arccos Σ√(p q) at 60 digits, within a few ulp."""
    module = generated_module("multinomial3")
    rng = random.Random(12)
    pairs = []
    for _ in range(15):
        first = sorted(rng.random() for _ in range(2))
        second = sorted(rng.random() for _ in range(2))
        pairs.append(([first[0], first[1] - first[0]], [second[0], second[1] - second[0]]))
    pairs += [([0.2, 0.3], [0.2 + 1e-12, 0.3 - 2e-12]), ([1e-300, 0.5], [0.5, 1e-300]),
              ([0.999, 0.0005], [0.999 - 1e-9, 0.0005])]
    for one, two in pairs:
        n = rng.randint(1, 100)
        got = float(module.rao_distance(one, two, n=n))
        with mpmath.workdps(60):
            reference = multinomial_reference(n, [mpmath.mpf(v) for v in one],
                                              [mpmath.mpf(v) for v in two])
        assert abs(got - reference) <= 4e-16 * reference * 8, (one, two, n, got, reference)


# ----------------------------------------------------------------------------- the Dirichlet


def dirichlet_metric(a) -> list[list]:
    """ψ₁(a_i) δ_ij − ψ₁(Σa) (Arwini and Dodson 2008), in mpmath at the given inputs."""
    a = [mpmath.mpf(v) for v in a]
    total = mpmath.psi(1, sum(a))
    return [[(mpmath.psi(1, a[i]) if i == j else 0) - total for j in range(3)]
            for i in range(3)]


@pytest.mark.parametrize("a", [(0.3, 2.0, 7.5), (1e-6, 1e-6, 1e-6), (1e6, 2e6, 3e6),
                               (1e-4, 1.0, 1e5), (40.0, 0.5, 3.0)])
def test_generated_dirichlet_fisher_is_the_trigamma_matrix(a):
    """The module against ψ₁(a_i) δ_ij − ψ₁(Σa) at 50 digits: the difference ψ₁(a_i) − ψ₁(Σa)
    cancels at large concentrations (1e6: both near 1e-6), the small ones are near 1/a²."""
    module = generated_module("dirichlet3")
    got = module.fisher_information(list(a))
    with mpmath.workdps(50):
        expected = dirichlet_metric(a)
    for i in range(3):
        for j in range(3):
            assert abs(got[i, j] - expected[i][j]) <= 4e-16 * abs(expected[i][j]), (i, j)


def test_generated_dirichlet_distance_along_the_diagonal():
    """a1 = a2 = a3 is the set of points fixed by the permutations of the coordinates,
    isometries of the Dirichlet metric, so it is totally geodesic; the manifold has negative
    curvature (Le Brigant, Preston and Puechmorel 2021), so that geodesic is the shortest
    path. Along (u, u, u) the speed is √(3ψ₁(u) − 9ψ₁(3u)): the distance is its integral,
    computed here by mpmath's quadrature."""
    module = generated_module("dirichlet3")
    for s, t in [(0.5, 4.0), (1.0, 1.5), (0.2, 15.0)]:
        got = float(module.rao_distance([s] * 3, [t] * 3))
        with mpmath.workdps(30):
            expected = mpmath.quad(
                lambda u: mpmath.sqrt(3 * mpmath.psi(1, u) - 9 * mpmath.psi(1, 3 * u)), [s, t])
        assert abs(got - expected) <= 1e-10 * expected, (s, t, got, expected)


def dirichlet_geodesic_length(first, second) -> float:
    """The geodesic from ``first`` to ``second`` by :func:`geodesic_length_by_collocation`,
    with the closed-form metric and ∂_m g_ij = ψ₂(a_m) δ_ij δ_im − ψ₂(Σa) written here."""
    from scipy.special import polygamma

    def metric_and_derivative(a):  # a of shape (3, n)
        metric = (np.einsum("in,ij->nij", polygamma(1, a), np.eye(3))
                  - polygamma(1, a.sum(axis=0))[:, None, None])
        derivative = np.repeat(-polygamma(2, a.sum(axis=0))[:, None, None, None],
                               3, axis=1) * np.ones((1, 3, 3, 3))  # [n, m, i, j] = ∂_m g_ij
        for m in range(3):
            derivative[:, m, m, m] += polygamma(2, a[m])
        return metric, derivative

    return geodesic_length_by_collocation(metric_and_derivative, first, second, tol=1e-10)


def geodesic_length_by_collocation(metric_and_derivative, first, second, *, tol) -> float:
    """The geodesic from ``first`` to ``second`` by SciPy's collocation solver (from the
    straight line), its length by SciPy's quadrature of the speed along the solver's
    interpolant: the Christoffel symbols Γ^k_ij = ½ g^kl (∂_i g_jl + ∂_j g_il − ∂_l g_ij) from
    ``metric_and_derivative``, which maps points of shape (k, n) to the metrics (n, k, k) and
    their derivatives [n, m, i, j] = ∂_m g_ij, written by each test from the literature."""
    from scipy.integrate import quad, solve_bvp

    first, second = np.asarray(first, float), np.asarray(second, float)
    k = first.size

    def right_hand_side(t, state):
        position, velocity = state[:k], state[k:]
        metric, derivative = metric_and_derivative(position)
        lowered = 0.5 * (np.einsum("nijl->nlij", derivative)
                         + np.einsum("njil->nlij", derivative) - derivative)  # [n, l, i, j]
        christoffel = np.einsum("nkl,nlij->nkij", np.linalg.inv(metric), lowered)
        return np.vstack((velocity, -np.einsum("nkij,in,jn->kn", christoffel, velocity,
                                               velocity)))

    mesh = np.linspace(0, 1, 21)
    guess = np.vstack((first[:, None] + np.outer(second - first, mesh),
                       np.repeat((second - first)[:, None], mesh.size, axis=1)))
    solution = solve_bvp(right_hand_side, lambda a, b: np.concatenate((a[:k] - first,
                                                                       b[:k] - second)),
                         mesh, guess, tol=tol, max_nodes=100_000)
    assert solution.success, solution.message

    def speed(t):
        state = solution.sol(t)
        return np.sqrt(state[k:] @ metric_and_derivative(state[:k, None])[0][0] @ state[k:])

    return quad(speed, 0, 1, epsabs=0, epsrel=1e-12, limit=200)[0]


@pytest.mark.parametrize("pair", [((1.0, 2.0, 3.0), (2.0, 1.0, 0.5)),
                                  ((0.4, 5.0, 1.2), (3.0, 0.7, 2.5)),
                                  ((8.0, 8.0, 0.3), (0.9, 12.0, 4.0))])
def test_generated_dirichlet_distance_is_the_geodesic_length(pair):
    """The module's certified numeric geodesic against an independent one (SciPy's
    collocation on Christoffel symbols written here), within ten times its tolerance."""
    module = generated_module("dirichlet3")
    got = float(module.rao_distance(*pair))
    assert got == pytest.approx(dirichlet_geodesic_length(*pair), rel=1e-9)


# ----------------------------------------------------------------------------- the half-space


def isotropic_normal_distance(first, second) -> mpmath.mpf:
    """Costa, Santos and Strapasson (2015): the round Gaussians N(μ, s² I) of R^n have the
    metric (|dμ|² + 2n ds²)/s², a hyperbolic half-space scaled by 2n, so
    d = √(2n) acosh(1 + (|Δμ|² + 2n Δs²)/(4n s₁ s₂)); here n = 2, written in mpmath from
    the float inputs."""
    (a1, a2, s), (b1, b2, t) = ([mpmath.mpf(v) for v in point] for point in (first, second))
    n = 2
    squared = (a1 - b1) ** 2 + (a2 - b2) ** 2 + 2 * n * (s - t) ** 2
    return mpmath.sqrt(2 * n) * mpmath.acosh(1 + squared / (4 * n * s * t))


@pytest.fixture(scope="module")
def isotropic():
    return derive(load(family("normal2_isotropic")))


def test_isotropic_normal_is_a_half_space(isotropic):
    """Two locations sharing one scale: the recognizer of the location-scale half-space,
    whose predicted scalar curvature -n(n - 1)/c' = -6/4 matches the derived one."""
    distance = isotropic.distance
    assert distance.structure == "location-scale half-space"
    assert sympy.simplify(isotropic.geometry.scalar_curvature + sympy.Rational(3, 2)) == 0
    one, two = distance.points
    for first, second in (((0.5, -1.0, 2.0), (3.0, 0.25, 0.125)),
                          ((1.0, 1.0, 1.0), (1.0 + 1e-6, 1.0, 1.0))):
        values = {**{s.name: mpmath.mpf(v) for s, v in zip(one, first)},
                  **{s.name: mpmath.mpf(v) for s, v in zip(two, second)}}
        reference = isotropic_normal_distance(first, second)
        assert close(at(distance.textbook, values), reference)
        assert close(at(distance.stable, values), reference)


@pytest.mark.parametrize("first, second", [
    ((0.3, -1.2, 0.7), (2.5, 4.0, 3.1)),
    ((0.3, -1.2, 0.7), (0.3 + 1e-9, -1.2 - 2e-9, 0.7 + 1e-9)),  # nearly identical
    ((1e150, -1e150, 1e150), (-1e150, 1e150, 2e150)),             # huge, far apart
    ((1e-150, 2e-150, 1e-150), (3e-150, -1e-150, 4e-150)),        # tiny
    ((0.0, 0.0, 1e-300), (0.0, 0.0, 1e300)),                      # extreme scales
])
def test_generated_isotropic_normal_distance(first, second):
    """The generated module at adversarial pairs, against the literature's formula in mpmath:
    a few units in the last place, where the textbook acosh(1 + z) loses the digits of a
    tiny z."""
    module = generated_module("normal2_isotropic")
    got = float(module.rao_distance(list(first), list(second)))
    reference = isotropic_normal_distance(first, second)
    assert abs(got - reference) <= 4e-16 * reference, (got, reference)


GUMBEL_AND_NORMAL = """\
name = "gumbel_normal"
variables = ["x1", "x2"]
density = "exp(-(x1 - m1)/s - exp(-(x1 - m1)/s))/s * exp(-(x2 - m2)**2/(2*s**2))/(sqrt(2*pi)*s)"

[support]
x1 = "real"
x2 = "real"

[coordinates]
m1 = "real"
m2 = "real"
s = "positive"
"""


def test_the_quadrature_finds_a_gumbel_factor_far_from_the_origin(tmp_path):
    """A Gumbel factor centred at m1/s = -4.8: Newton's method from the origin overshot by
    dozens of spreads and the rule, placed there, found a mass of exactly 0, which its three
    steps agreed on (so the density check called a normalized density wrong). The mass is 1
    (both factors are normalized), to the digits asked: by the factors (the Gumbel's by the
    one-variable quadrature), and by the iterated rule over both variables at once, whose
    nodes the mode search places (with the unsafeguarded Newton it reached 13 digits)."""
    spec = load_spec(write(tmp_path, GUMBEL_AND_NORMAL, "gumbel_normal.toml"))
    values = dict(zip(spec.coordinate_symbols,
                      (mpmath.mpf("-2.19814777232545"), mpmath.mpf("1.85608411804807"),
                       mpmath.mpf("0.455776991082572"))))
    mass, _ = multivariate.score_moments(spec, values, digits=20, mass_only=True)
    assert abs(mass - 1) < mpmath.mpf(10) ** -20
    with mpmath.workdps(34):
        joint, = multivariate._quadrature(spec, [spec.density], values, 20, False)
    assert abs(joint - 1) < mpmath.mpf(10) ** -20


# ----------------------------------------------------------------------------- emitted edges


CATEGORICAL4 = """\
name = "categorical4"
variables = ["x1", "x2", "x3"]
density = "p1**x1*p2**x2*p3**x3*(1 - p1 - p2 - p3)**(1 - x1 - x2 - x3)"

[support]
x1 = "range(0, 2)"
x2 = "range(0, 2 - x1)"
x3 = "range(0, 2 - x1 - x2)"

[coordinates]
p1 = "(0, 1)"
p2 = "(0, 1 - p1)"
p3 = "(0, 1 - p1 - p2)"
"""


def emitted_module(tmp_path, text: str, name: str):
    """The module raosym writes for the family ``text`` (derived, verified, rendered)."""
    from raosym.emit import render_files

    verified = verify(derive(load(write(tmp_path, text, f"{name}.toml"))), count=1)
    path = tmp_path / f"{name}.py"
    path.write_text(render_files(verified)[f"python/{name}.py"])
    spec = importlib.util.spec_from_file_location(f"emitted_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_bound_in_two_earlier_coordinates_is_computed_without_rounding(tmp_path):
    """p3 in (0, 1 - p1 - p2) at p1 = 1 - 2**-53, p2 = 2**-54, p3 = 2**-55: as written the
    bound rounds to 0 and the module refused a valid point (the emitted-code gate's own edge
    point); the reference is the categorical's δ_ij/p_i + 1/p4 in mpmath, p4 = 1 - p1 - p2 - p3
    exactly."""
    module = emitted_module(tmp_path, CATEGORICAL4, "categorical4")
    point = [1 - 2.0**-53, 2.0**-54, 2.0**-55]
    got = module.fisher_information(point)
    p = [mpmath.mpf(v) for v in point]
    last = 1 - p[0] - p[1] - p[2]
    for i in range(3):
        for j in range(3):
            reference = (1 / p[i] if i == j else 0) + 1 / last
            assert abs(got[i, j] - reference) <= 4e-16 * abs(reference), (i, j)


# ----------------------------------------------------------------------------- shared parameters


SYMMETRIC_DIRICHLET = """\
name = "dirichlet_symmetric"
variables = ["x1", "x2"]
density = "gamma(3*a)/gamma(a)**3*x1**(a - 1)*x2**(a - 1)*(1 - x1 - x2)**(a - 1)"

[support]
x1 = "(0, 1)"
x2 = "(0, 1 - x1)"

[coordinates]
a = "positive"
"""

GAMMA_PAIR = """\
name = "gamma_pair"
variables = ["x1", "x2"]
density = "x1**(k - 1)*exp(-x1/t1)/(gamma(k)*t1**k) * x2**(k - 1)*exp(-x2/t2)/(gamma(k)*t2**k)"

[support]
x1 = "(0, oo)"
x2 = "(0, oo)"

[coordinates]
k = "positive"
t1 = "positive"
t2 = "positive"
"""


def test_statistics_sharing_a_natural_parameter_are_one_statistic(tmp_path):
    """The symmetric Dirichlet: (a - 1) multiplies log x1, log x2 and log(1 - x1 - x2), one
    statistic for one coordinate, so the exponential-family rung closes it (before, three
    statistics for one coordinate declined and the iterated integrals ran out of time). The
    reference is K ψ₁(a) − K² ψ₁(K a) with K = 3, the Dirichlet's trigamma matrix summed
    over a1 = a2 = a3 = a."""
    derivation = derive(load(write(tmp_path, SYMMETRIC_DIRICHLET, "dirichlet_symmetric.toml")))
    assert derivation.entries[0].strategy == "exponential family"
    for a in ("0.3", "2.5"):
        a = mpmath.mpf(a)
        reference = 3 * mpmath.psi(1, a) - 9 * mpmath.psi(1, 3 * a)
        assert close(at(derivation.fisher[0, 0], {"a": a}), reference)


def test_gamma_samples_sharing_a_shape_verify_factor_by_factor(tmp_path):
    """Two gamma samples with one shape k and their own scales: the Fisher matrix is the sum
    of the two gammas' ([[ψ₁(k), 1/θ], [1/θ, k/θ²]] each), and each factor's checks are the
    one-variable quadrature's (the iterated rule claimed 27 digits of k/t1² and held 25:
    10 checks failed where the truth was precision not reached)."""
    derivation = derive(load(write(tmp_path, GAMMA_PAIR, "gamma_pair.toml")))
    values = {"k": mpmath.mpf("3.5"), "t1": mpmath.mpf("0.3"), "t2": mpmath.mpf("4.25")}
    k, t1, t2 = values["k"], values["t1"], values["t2"]
    reference = [[2 * mpmath.psi(1, k), 1 / t1, 1 / t2], [1 / t1, k / t1**2, 0],
                 [1 / t2, 0, k / t2**2]]
    for i in range(3):
        for j in range(3):
            got = at(derivation.fisher[i, j], values)
            assert close(got, reference[i][j]) if reference[i][j] else got == 0
    verified = verify(derivation, count=2)
    fisher = [c for c in verified.checks if c.quantity.startswith("g_")]
    assert fisher and all(c.reached and c.passed for c in fisher), \
        [c for c in fisher if not (c.reached and c.passed)]
# ----------------------------------------------------------------------------- the bivariate normal


def bivariate_covariance(s1, s2, rho):
    """Σ = [[s1², ρ s1 s2], [ρ s1 s2, s2²]], its first derivatives ∂_kΣ and second ∂_k∂_lΣ in
    the coordinates (m1, m2, s1, s2, rho), written out by hand (mpmath matrices)."""
    zero = mpmath.zeros(2, 2)
    covariance = mpmath.matrix([[s1**2, rho * s1 * s2], [rho * s1 * s2, s2**2]])
    first = [zero, zero, mpmath.matrix([[2 * s1, rho * s2], [rho * s2, 0]]),
             mpmath.matrix([[0, rho * s1], [rho * s1, 2 * s2]]),
             mpmath.matrix([[0, s1 * s2], [s1 * s2, 0]])]
    second = [[zero] * 5 for _ in range(5)]
    second[2][2] = mpmath.matrix([[2, 0], [0, 0]])
    second[3][3] = mpmath.matrix([[0, 0], [0, 2]])
    second[2][3] = second[3][2] = mpmath.matrix([[0, rho], [rho, 0]])
    second[2][4] = second[4][2] = mpmath.matrix([[0, s2], [s2, 0]])
    second[3][4] = second[4][3] = mpmath.matrix([[0, s1], [s1, 0]])
    return covariance, first, second


#: ∂_kμ of the mean μ = (m1, m2).
BIVARIATE_MEAN = [mpmath.matrix([1, 0]), mpmath.matrix([0, 1])] + [mpmath.matrix([0, 0])] * 3


def inverse_2x2(matrix) -> mpmath.matrix:
    """The adjugate over the determinant (mpmath's LU calls Σ at s1 = 1e-150, s2 = 2e140
    numerically singular; mpf exponents do not overflow)."""
    determinant = matrix[0, 0] * matrix[1, 1] - matrix[0, 1] * matrix[1, 0]
    adjugate = mpmath.matrix([[matrix[1, 1], -matrix[0, 1]], [-matrix[1, 0], matrix[0, 0]]])
    return adjugate / determinant


def trace_2x2(matrix):
    return matrix[0, 0] + matrix[1, 1]


def bivariate_normal_metric(theta) -> mpmath.matrix:
    """g_ij = ∂_iμᵀ Σ⁻¹ ∂_jμ + ½ tr(Σ⁻¹ ∂_iΣ Σ⁻¹ ∂_jΣ) (Skovgaard 1984; Porat and Friedlander
    1986), in mpmath at the given inputs."""
    _, _, s1, s2, rho = (mpmath.mpf(v) for v in theta)
    covariance, first, _ = bivariate_covariance(s1, s2, rho)
    precision = inverse_2x2(covariance)
    return mpmath.matrix([[(BIVARIATE_MEAN[i].T * precision * BIVARIATE_MEAN[j])[0]
                           + trace_2x2(precision * first[i] * precision * first[j]) / 2
                           for j in range(5)] for i in range(5)])


def bivariate_normal_metric_derivatives(theta) -> list:
    """[k][i][j] = ∂_k g_ij of the same formula, with ∂_k Σ⁻¹ = −Σ⁻¹ ∂_kΣ Σ⁻¹."""
    _, _, s1, s2, rho = (mpmath.mpf(v) for v in theta)
    covariance, first, second = bivariate_covariance(s1, s2, rho)
    p = inverse_2x2(covariance)
    derivatives = []
    for k in range(5):
        dp = -p * first[k] * p
        derivatives.append([[(BIVARIATE_MEAN[i].T * dp * BIVARIATE_MEAN[j])[0]
                             + trace_2x2(dp * first[i] * p * first[j]
                                         + p * second[k][i] * p * first[j]
                                         + p * first[i] * dp * first[j]
                                         + p * first[i] * p * second[k][j]) / 2
                             for j in range(5)] for i in range(5)])
    return derivatives


def bivariate_normal_christoffel(theta) -> list:
    """[k][i][j] = Γ^k_ij = ½ g^km (∂_i g_jm + ∂_j g_im − ∂_m g_ij) of the same formula."""
    inverse = bivariate_normal_metric(theta) ** -1
    derivative = bivariate_normal_metric_derivatives(theta)
    return [[[mpmath.fsum(inverse[k, m] * (derivative[i][j][m] + derivative[j][i][m]
                                           - derivative[m][i][j]) for m in range(5)) / 2
              for j in range(5)] for i in range(5)] for k in range(5)]


@pytest.mark.parametrize("theta", [(0.3, -1.2, 1.7, 0.6, 0.35), (1e8, -3e-5, 1e-150, 2e140, 0.999),
                                   (-2.0, 5.0, 3e-4, 7e3, -0.999),
                                   (0.0, 0.0, 1.0, 1.0, 1 - 2.0**-40),
                                   (4.0, -1.0, 2.5, 1e-3, -1 + 1e-12),
                                   (1.0, 1.0, 1e150, 1e-150, 5e-324),
                                   (-7.0, 3.0, 0.01, 100.0, 0.0)])
def test_generated_bivariate_normal_fisher_is_the_literature_metric(theta):
    """The module against ∂μᵀΣ⁻¹∂μ + ½ tr(Σ⁻¹∂Σ Σ⁻¹∂Σ) at 50 digits, near rho = ±1 (where
    1 - rho**2 and the expanded (1 - rho**2)**2 of g_rho_rho lose digits in floats) and at scales
    300 decades apart. The matrix is ill-conditioned there, so each entry is measured against
    sqrt(g_ii g_jj), which bounds it; the zeros (means against scales) are exact."""
    module = generated_module("normal2")
    got = module.fisher_information(list(theta))
    with mpmath.workdps(50):
        expected = bivariate_normal_metric(theta)
        for i in range(5):
            for j in range(5):
                if expected[i, j] == 0:
                    assert got[i, j] == 0, (i, j)
                    continue
                scale = mpmath.sqrt(expected[i, i] * expected[j, j])
                assert abs(got[i, j] - expected[i, j]) <= 2e-15 * scale, (i, j, got[i, j],
                                                                          expected[i, j])


@pytest.fixture(scope="module")
def normal2():
    return derive(load(family("normal2")))


def test_bivariate_normal_fisher_is_the_literature_metric_symbolically(normal2):
    """The derived matrix is the same formula, as SymPy simplifies their difference to 0."""
    assert {e.strategy for e in normal2.entries} == {"exponential family"}
    m1, m2, s1, s2, rho = normal2.spec.coordinate_symbols
    coordinates = (m1, m2, s1, s2, rho)
    mean = sympy.Matrix([m1, m2])
    covariance = sympy.Matrix([[s1**2, rho * s1 * s2], [rho * s1 * s2, s2**2]])
    precision = covariance.inv()
    for i, a in enumerate(coordinates):
        for j, b in enumerate(coordinates):
            expected = ((mean.diff(a).T * precision * mean.diff(b))[0]
                        + (precision * covariance.diff(a) * precision * covariance.diff(b)).trace()
                        / 2)
            assert sympy.simplify(normal2.fisher[i, j] - expected) == 0, (a, b)


def test_bivariate_normal_scalar_curvature_is_minus_nine_halves(normal2):
    """R = g^ij R_ij, R_ij = ∂_k Γ^k_ij − ∂_j Γ^k_ik + Γ^k_km Γ^m_ij − Γ^k_jm Γ^m_ik, from the
    literature metric at two points: Γ from the hand-written derivatives above, its
    derivatives by central differences (step 1e-12 at 50 digits: an error near 1e-24)."""
    assert normal2.geometry.scalar_curvature == sympy.Rational(-9, 2)
    step = mpmath.mpf("1e-12")
    with mpmath.workdps(50):
        for theta in [(0.3, -1.2, 1.7, 0.6, 0.35), (1.0, 2.0, 0.2, 5.0, -0.9)]:
            theta = [mpmath.mpf(v) for v in theta]
            christoffel = bivariate_normal_christoffel(theta)
            derivative = []  # [m][k][i][j] = ∂_m Γ^k_ij
            for m in range(5):
                up, down = list(theta), list(theta)
                up[m] += step
                down[m] -= step
                above, below = bivariate_normal_christoffel(up), bivariate_normal_christoffel(down)
                derivative.append([[[(above[k][i][j] - below[k][i][j]) / (2 * step)
                                     for j in range(5)] for i in range(5)] for k in range(5)])
            ricci = [[mpmath.fsum(derivative[k][k][i][j] - derivative[j][k][i][k]
                                  for k in range(5))
                      + mpmath.fsum(christoffel[k][k][m] * christoffel[m][i][j]
                                    - christoffel[k][j][m] * christoffel[m][i][k]
                                    for k in range(5) for m in range(5))
                      for j in range(5)] for i in range(5)]
            inverse = bivariate_normal_metric(theta) ** -1
            scalar = mpmath.fsum(inverse[i, j] * ricci[i][j] for i in range(5) for j in range(5))
            assert abs(scalar + mpmath.mpf(9) / 2) < 1e-20, scalar


def equal_means_distance(first, second) -> mpmath.mpf:
    """√(½ Σ log² λ_i), λ_i the eigenvalues of Σ1⁻¹Σ2: the roots of det(Σ2 − λΣ1) = 0, a
    quadratic written out (Atkinson and Mitchell 1981; Skovgaard 1984)."""
    one, two = (bivariate_covariance(*(mpmath.mpf(v) for v in t[2:]))[0] for t in (first, second))
    a = one[0, 0] * one[1, 1] - one[0, 1] ** 2
    b = -(one[0, 0] * two[1, 1] + one[1, 1] * two[0, 0] - 2 * one[0, 1] * two[0, 1])
    c = two[0, 0] * two[1, 1] - two[0, 1] ** 2
    root = mpmath.sqrt(b * b - 4 * a * c)
    # The smaller root as c/(a λ₁): no cancellation between -b and the root.
    larger = (-b + root) / (2 * a)
    return mpmath.sqrt((mpmath.log(larger) ** 2 + mpmath.log(c / (a * larger)) ** 2) / 2)


@pytest.mark.parametrize("pair", [((0.3, -1.2, 1.0, 1.0, 0.0), (0.3, -1.2, 2.0, 0.5, 0.3)),
                                  ((0.0, 0.0, 1.0, 2.0, 0.5), (0.0, 0.0, 3.0, 6.0, 0.5)),
                                  ((-4.0, 2.5, 0.7, 1.3, -0.4),
                                   (-4.0, 2.5, 0.7 * (1 + 1e-6), 1.3, -0.4 + 1e-6)),
                                  ((5.0, 5.0, 1.5, 0.8, 0.2), (5.0, 5.0, 1.5 + 1e-9, 0.8, 0.2)),
                                  ((1.0, 1.0, 0.1, 10.0, 0.9), (1.0, 1.0, 5.0, 0.2, -0.95)),
                                  ((0.0, 0.0, 1.0, 1.0, 0.0), (0.0, 0.0, 1e-3, 1e3, 0.999))])
def test_generated_bivariate_normal_distance_with_equal_means(pair):
    """With equal means the distance is that of the covariances alone, √(½ Σ log² λ_i): the
    reflection μ ↦ 2μ₀ − μ is an isometry fixing the means μ₀, so they are totally geodesic
    (Skovgaard 1984), and the projection to μ₀ does not lengthen a curve (ds² ≥ ½ tr((Σ⁻¹dΣ)²)),
    so no shorter path leaves them. Pairs 1e-9 and 1e-6 apart (the midpoint metric and the
    solver), and far apart (distances 9.8 and 17.2), within ten times the module's tolerance."""
    module = generated_module("normal2")
    got = float(module.rao_distance(*pair))
    with mpmath.workdps(50):
        expected = equal_means_distance(*pair)
    assert abs(got - expected) <= 1e-9 * expected, (pair, got, expected)


def _bivariate_covariances(theta):
    """Σ (n, 2, 2), ∂_kΣ (5, n, 2, 2) and ∂_k∂_lΣ (5, 5, n, 2, 2) at points theta of shape
    (5, n), in NumPy: the same hand-written derivatives as bivariate_covariance."""
    _, _, s1, s2, rho = theta
    zero, one = np.zeros(theta.shape[1]), np.ones(theta.shape[1])

    def symmetric(a, b, c):
        return np.stack((np.stack((a, b), -1), np.stack((b, c), -1)), -2)

    covariance = symmetric(s1**2, rho * s1 * s2, s2**2)
    first = np.stack([symmetric(zero, zero, zero), symmetric(zero, zero, zero),
                      symmetric(2 * s1, rho * s2, zero), symmetric(zero, rho * s1, 2 * s2),
                      symmetric(zero, s1 * s2, zero)])
    second = np.zeros((5, 5, *covariance.shape))
    second[2, 2] = symmetric(2 * one, zero, zero)
    second[3, 3] = symmetric(zero, zero, 2 * one)
    second[2, 3] = second[3, 2] = symmetric(zero, rho, zero)
    second[2, 4] = second[4, 2] = symmetric(zero, s2, zero)
    second[3, 4] = second[4, 3] = symmetric(zero, s1, zero)
    return covariance, first, second


_MEAN_DIRECTIONS = np.eye(5, 2)  # ∂_kμ, k over the coordinates


def _bivariate_metric_arrays(theta):
    """The metrics (n, 5, 5) and [n, k, i, j] = ∂_k g_ij at points theta of shape (5, n)."""
    covariance, first, second = _bivariate_covariances(theta)
    p = np.linalg.inv(covariance)
    dp = -np.einsum("nab,knbc,ncd->knad", p, first, p)
    metric = (np.einsum("ia,nab,jb->nij", _MEAN_DIRECTIONS, p, _MEAN_DIRECTIONS)
              + 0.5 * np.einsum("nab,inbc,ncd,jnda->nij", p, first, p, first))
    derivative = (np.einsum("ia,knab,jb->nkij", _MEAN_DIRECTIONS, dp, _MEAN_DIRECTIONS)
                  + 0.5 * (np.einsum("knab,inbc,ncd,jnda->nkij", dp, first, p, first)
                           + np.einsum("nab,kinbc,ncd,jnda->nkij", p, second, p, first)
                           + np.einsum("nab,inbc,kncd,jnda->nkij", p, first, dp, first)
                           + np.einsum("nab,inbc,ncd,kjnda->nkij", p, first, p, second)))
    return metric, derivative


def bivariate_normal_geodesic_length(first, second) -> float:
    """The geodesic by :func:`geodesic_length_by_collocation` (tolerance 1e-8: the length is
    stationary on a geodesic, so its error is of the order of the square of the path's), with
    the literature metric's derivatives above."""
    return geodesic_length_by_collocation(_bivariate_metric_arrays, first, second, tol=1e-8)


@pytest.mark.parametrize("pair", [((0.3, -1.2, 1.7, 0.6, 0.35), (-0.5, 0.4, 0.9, 1.1, -0.2)),
                                  ((0.0, 0.0, 1.0, 1.0, 0.0), (2.0, -1.0, 3.0, 0.5, 0.6)),
                                  ((1.0, 2.0, 0.5, 2.0, 0.8), (1.5, 1.0, 1.0, 1.0, -0.5))])
def test_generated_bivariate_normal_distance_is_the_geodesic_length(pair):
    """Different means and correlations: the module's certified numeric geodesic against an
    independent one (SciPy's collocation on Christoffel symbols written here, about 2 s a
    pair), within ten times its tolerance."""
    module = generated_module("normal2")
    got = float(module.rao_distance(*pair))
    assert got == pytest.approx(bivariate_normal_geodesic_length(*pair), rel=1e-9)
