"""Mechanisms: the [mechanism] table, and what is derived from it against the literature.

Expected values come from outside raosym: Mironov (2017) Table II and the values MATH.md
recomputed with mpmath, the Rao-DP paper's calibration theorems (Soto 2025), and SymPy
identities.
"""

from __future__ import annotations

import textwrap

import mpmath
import pytest
import sympy
from conftest import DERIVATIONS, catalog_outcomes

from raosym.derive.divergence import ALPHA
from raosym.derive.mechanism import THETA
from raosym.errors import SpecError
from raosym.spec.schema import load_spec

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_mechanism")

MECHANISMS = ("laplace_location", "gaussian_location", "bernoulli")

LAPLACE = textwrap.dedent('''\
    name = "laplace_location"
    variable = "x"
    support = "real"
    density = "exp(-Abs(x - mu)/b) / (2*b)"

    [coordinates]
    mu = "real"

    [constants]
    b = "positive"
    ''')

BERNOULLI = textwrap.dedent('''\
    name = "bernoulli"
    variable = "x"
    support = "{0, 1}"
    density = "p**x * (1 - p)**(1 - x)"

    [coordinates]
    p = "(0, 1)"
    ''')


@pytest.fixture(scope="module")
def mechanisms():
    """name -> Verified for the three seed mechanisms (from the session cache when the
    catalog fixture already derived them)."""
    outcomes = catalog_outcomes(MECHANISMS)
    for outcome in outcomes:
        assert outcome.error is None, outcome.error
    return {name: outcome.verified for name, outcome in zip(MECHANISMS, outcomes)}


def write(tmp_path, text, name="family.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- the table


def test_additive_and_neighbour_tables_load(tmp_path):
    spec = load_spec(write(tmp_path, LAPLACE + '\n[mechanism]\nlocation = "mu"\nscale = "b"\n'))
    assert spec.mechanism.kind == "additive"
    assert (spec.mechanism.location.name, spec.mechanism.scale.name) == ("mu", "b")
    spec = load_spec(write(tmp_path, BERNOULLI + '\n[mechanism]\nneighbour = { p = "1 - p" }\n'))
    (symbol, image), = spec.mechanism.neighbour
    assert spec.mechanism.kind == "neighbour" and image == 1 - symbol
    assert load_spec(write(tmp_path, LAPLACE)).mechanism is None


def test_neighbour_sub_table_form(tmp_path):
    spec = load_spec(write(tmp_path, BERNOULLI + '\n[mechanism.neighbour]\np = "1 - p"\n'))
    (symbol, image), = spec.mechanism.neighbour
    assert image == 1 - symbol


@pytest.mark.parametrize(("table", "key", "line", "column", "message"), [
    ('neighbour = { p = "1 - q" }', "mechanism.neighbour.p", 10, 24, "unknown name 'q'"),
    ('neighbour = { p = "1 -* p" }', "mechanism.neighbour.p", 10, None, "syntax"),
    ('neighbour = { q = "1 - p" }', "mechanism.neighbour.q", 10, None, "'q' is not a coordinate"),
    ('neighbour = { p = "p" }', "mechanism.neighbour.p", 10, None, "unchanged"),
    ('neighbour = { p = 1 }', "mechanism.neighbour.p", 10, None, "expected an expression"),
    ('neighbour = "1 - p"', "mechanism.neighbour", 10, None, "expected a table"),
    ('kind = "additive"', "mechanism.kind", 10, None, "unknown key 'kind'"),
    ('location = "p"\nscale = "p"', "mechanism.location", 10, None,
     "not a coordinate over the whole real line"),
])
def test_bad_neighbour_tables_are_located(tmp_path, table, key, line, column, message):
    path = write(tmp_path, BERNOULLI + f"\n[mechanism]\n{table}\n")
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    error = raised.value
    assert (error.key, error.line) == (key, line), str(error)
    assert error.path == str(path)
    if column is not None:
        assert error.column == column, str(error)
    assert message in error.message


@pytest.mark.parametrize(("table", "key", "message"), [
    ('location = "b"\nscale = "b"', "mechanism.location", "not a coordinate over the whole"),
    ('location = "mu"\nscale = "mu"', "mechanism.scale", "is not a positive parameter"),
    ('location = "mu"\nscale = "c"', "mechanism.scale", "expected one of: b"),
    ('location = "mu"', "mechanism", "needs 'scale'"),
    ('location = "mu"\nscale = 3', "mechanism.scale", "expected the name of a parameter"),
    ('location = "mu"\nscale = "b"\nneighbour = { mu = "mu + 1" }', "mechanism.neighbour",
     "not both"),
    ('', "mechanism", None),
])
def test_bad_additive_tables(tmp_path, table, key, message):
    text = LAPLACE + f"\n[mechanism]\n{table}\n"
    if not table:  # an empty table is no mechanism at all
        assert load_spec(write(tmp_path, text)).mechanism is None
        return
    with pytest.raises(SpecError) as raised:
        load_spec(write(tmp_path, text))
    assert raised.value.key == key, str(raised.value)
    assert raised.value.line is not None
    assert message in raised.value.message


def test_a_parameter_named_like_the_sensitivity_is_refused(tmp_path):
    text = LAPLACE.replace("/b) / (2*b)", "/Delta) / (2*Delta)").replace(
        'b = "positive"', 'Delta = "positive"') + (
        '\n[mechanism]\nlocation = "mu"\nscale = "Delta"\n')
    with pytest.raises(SpecError, match="names the sensitivity"):
        load_spec(write(tmp_path, text))


def test_catalog_mechanisms():
    kinds = {path.stem: load_spec(path).mechanism for path in DERIVATIONS.glob("*.toml")}
    additive = {"gaussian", "gaussian_location", "laplace", "laplace_location",
                "generalized_gaussian", "cauchy", "logistic", "student_t",
                # vector locations (tests/test_vector_mechanisms.py)
                "gaussian_mechanism3", "laplace_mechanism2"}
    assert {name for name, m in kinds.items() if m and m.kind == "additive"} == additive
    assert kinds["bernoulli"].kind == "neighbour"


# ----------------------------------------------------------------------------- Table II


def _table_ii(name, alpha, parameter):
    """Mironov (2017), Table II, at sensitivity 1, typed from the paper (MATH.md §3)."""
    if name == "laplace_location":
        lam = parameter
        return sympy.log(alpha / (2 * alpha - 1) * sympy.exp((alpha - 1) / lam)
                         + (alpha - 1) / (2 * alpha - 1) * sympy.exp(-alpha / lam)) / (alpha - 1)
    if name == "gaussian_location":
        return alpha / (2 * parameter**2)
    p = parameter
    return sympy.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / (
        alpha - 1)


def _kl_table_ii(name, parameter):
    if name == "laplace_location":
        return 1 / parameter + sympy.exp(-1 / parameter) - 1
    if name == "gaussian_location":
        return 1 / (2 * parameter**2)
    return (2 * parameter - 1) * sympy.log(parameter / (1 - parameter))


def _at_sensitivity_one(verified, expr):
    derivation = verified.derivation
    mechanism = derivation.mechanism
    if mechanism.kind == "additive":
        expr = expr.subs(derivation.spec.mechanism.sensitivity, 1)
        return expr, mechanism.arguments[1]
    return expr, mechanism.arguments[0]


@pytest.mark.parametrize("name", MECHANISMS)
def test_rdp_curve_is_table_ii_exactly(mechanisms, name):
    verified = mechanisms[name]
    curve, parameter = _at_sensitivity_one(verified, verified.derivation.mechanism.renyi.textbook)
    expected = _table_ii(name, ALPHA, parameter)
    difference = sympy.simplify(sympy.expand(sympy.exp((ALPHA - 1) * curve))
                                - sympy.expand(sympy.exp((ALPHA - 1) * expected)))
    assert difference == 0


@pytest.mark.parametrize("name", MECHANISMS)
def test_kl_is_table_ii_exactly(mechanisms, name):
    verified = mechanisms[name]
    kl, parameter = _at_sensitivity_one(verified, verified.derivation.mechanism.renyi.kl)
    assert sympy.simplify(sympy.expand_log(kl - _kl_table_ii(name, parameter), force=True)) == 0


@pytest.mark.parametrize(("name", "alpha", "parameter", "value"), [
    ("laplace_location", 2, 1, "0.6191236300"),
    ("laplace_location", 5, 2, "0.3552653184"),
    ("bernoulli", 2, sympy.Rational(3, 4), "0.8472978604"),
])
def test_math_md_values(mechanisms, name, alpha, parameter, value):
    verified = mechanisms[name]
    curve, symbol = _at_sensitivity_one(verified, verified.derivation.mechanism.renyi.textbook)
    got = sympy.N(curve.subs({ALPHA: alpha, symbol: parameter}), 30)
    assert abs(got - sympy.Float(value, 30)) < 5e-11  # the ten digits MATH.md prints


def test_kl_of_randomized_response_at_three_quarters(mechanisms):
    """MATH.md: randomized response at alpha = 1 (KL), p = 0.75: 0.5493061443."""
    kl = mechanisms["bernoulli"].derivation.mechanism.renyi.kl
    (p,) = mechanisms["bernoulli"].derivation.spec.coordinate_symbols
    got = sympy.N(kl.subs(p, sympy.Rational(3, 4)), 30)
    assert abs(got - sympy.Float("0.5493061443", 30)) < 5e-11


def test_gaussian_is_zcdp_and_laplace_is_not(mechanisms):
    gaussian = mechanisms["gaussian_location"].derivation.mechanism
    delta, sigma = gaussian.arguments[:2]
    assert sympy.simplify(gaussian.renyi.rho - delta**2 / (2 * sigma**2)) == 0
    assert mechanisms["laplace_location"].derivation.mechanism.renyi.rho is None


def test_stable_forms_equal_the_textbook_at_50_digits(mechanisms):
    """The stable forms (as SymPy expressions, helpers written out) at random points."""
    from raosym.derive.divergence import unrewritten

    rng = mpmath.rand
    for verified in mechanisms.values():
        mechanism = verified.derivation.mechanism
        curve = mechanism.renyi
        for _ in range(5):
            point = {ALPHA: 1 + 10 * rng()}
            for symbol in mechanism.arguments:
                point[symbol] = mpmath.mpf(0.05) + 0.9 * rng() if symbol.name == "p" else 0.1 + 3 * rng()
            with mpmath.workdps(50):
                textbook = sympy.N(curve.textbook.subs(point), 45)
                stable = sympy.N(unrewritten(curve.stable).subs(point), 45)
            assert abs(textbook - stable) <= 1e-40 * abs(textbook)


# ----------------------------------------------------------------------------- Rao-DP


def test_rao_dp_constants_and_calibration(mechanisms):
    for name in ("laplace_location", "gaussian_location"):
        mechanism = mechanisms[name].derivation.mechanism
        delta, scale = mechanism.arguments[:2]
        assert mechanism.constant == 1  # Soto (2025): k = 1 for Laplace and Gaussian noise
        assert sympy.simplify(mechanism.theta - delta / scale) == 0
        assert sympy.simplify(mechanism.calibration - delta / THETA) == 0
        assert "held fixed" in mechanism.manifold


def test_randomized_response_budget(mechanisms):
    mechanism = mechanisms["bernoulli"].derivation.mechanism
    (p,) = mechanism.arguments
    for value in ("0.5000001", "0.51", "0.75", "0.99", "0.3"):
        with mpmath.workdps(40):
            q = mpmath.mpf(value)
            expected = 2 * abs(mpmath.asin(mpmath.sqrt(q)) - mpmath.asin(mpmath.sqrt(1 - q)))
            for form in (mechanism.theta, mechanism.theta_stable):
                got = sympy.N(form.subs(p, sympy.Float(value, 40)), 35)
                assert abs(got - sympy.Float(str(expected), 40)) <= 1e-30 * expected
    # The calibration inverts the budget on p > 1/2.
    p_at = mechanism.calibration.subs(THETA, sympy.Rational(1, 3))
    assert sympy.N(mechanism.theta_stable.subs(p, p_at) - sympy.Rational(1, 3), 30) == 0


def test_conversions_of_the_paper(mechanisms):
    epsilon, delta_dp, mu = sympy.symbols("epsilon delta mu_GDP", positive=True)
    laplace = {c.name: c for c in mechanisms["laplace_location"].derivation.mechanism.conversions}
    assert sympy.simplify(laplace["epsilon-DP Laplace"].theta - epsilon) == 0
    gaussian = {c.name: c for c in mechanisms["gaussian_location"].derivation.mechanism.conversions}
    expected = epsilon / sympy.sqrt(2 * sympy.log(sympy.Rational(125, 100) / delta_dp))
    assert sympy.simplify(gaussian["(epsilon, delta)-DP Gaussian"].theta - expected) == 0
    assert sympy.simplify(gaussian["mu-GDP Gaussian"].theta - mu) == 0
    assert "epsilon-DP Laplace" not in gaussian


def test_composition_rule(mechanisms):
    mechanism = mechanisms["laplace_location"].derivation.mechanism
    b1, b2 = sympy.symbols("b_1 b_2", positive=True)
    d1, d2 = sympy.symbols("Delta_1 Delta_2", positive=True)
    assert sympy.simplify(mechanism.composition - sympy.sqrt((d1 / b1) ** 2 + (d2 / b2) ** 2)) == 0


def test_every_mechanism_quantity_is_verified(mechanisms):
    for verified in mechanisms.values():
        by_quantity = {}
        for check in verified.checks:
            by_quantity.setdefault(check.quantity, []).append(check)
        for quantity in ("rao_dp_theta", "renyi", "renyi_stable", "kl", "kl_stable"):
            checks = by_quantity[quantity]
            assert len({tuple(sorted(c.point.items())) for c in checks}) >= 5
            assert all(c.digits >= 25 for c in checks)


def test_every_stable_rewrite_is_a_checked_proof_step(mechanisms):
    """Each rewrite's two sides agree at a point (30 digits), and its justification states
    the rule it applied, never the program that checked it."""
    from raosym.derive.divergence import RULES, unrewritten

    steps = mechanisms["laplace_location"].derivation.mechanism.steps
    rewrites = [s for s in steps if s.strategy == "stable form"]
    assert len(rewrites) >= 3
    for step in rewrites:
        point = {symbol: sympy.Rational(7 + index, 5 + 2 * index) for index, symbol in
                 enumerate(sorted(step.lhs.free_symbols | step.rhs.free_symbols, key=str))}
        lhs, rhs = (sympy.N(unrewritten(side).subs(point), 40) for side in (step.lhs, step.rhs))
        assert abs(lhs - rhs) <= 1e-30 * abs(lhs), (step.claim, lhs, rhs)
        assert any(rule in step.justification for rule in RULES.values()), step.justification
        assert "SymPy" not in step.justification


# ----------------------------------------------------------------------------- the catalog


def test_generalized_gaussian_constant_of_the_paper(catalog):
    """Soto (2025), Example 3: k = sqrt(N Gamma(2 - 1/N) / Gamma(1 + 1/N))."""
    from conftest import verified

    mechanism = verified(catalog, "generalized_gaussian").derivation.mechanism
    n = sympy.Symbol("N", positive=True)
    (constant_n,) = [s for s in mechanism.constant.free_symbols]
    expected = sympy.sqrt(n * sympy.gamma(2 - 1 / n) / sympy.gamma(1 + 1 / n))
    for value in (sympy.Rational(3, 4), 1, 2, sympy.Rational(7, 2)):
        got = sympy.N(mechanism.constant.subs(constant_n, value), 30)
        assert abs(got - sympy.N(expected.subs(n, value), 30)) < 1e-25


def test_cauchy_numeric_curve_against_the_chi_square_identity(catalog, tmp_path):
    """No closed form from SymPy; the generated quadrature against the known Cauchy values
    D_2 = log(1 + Delta^2/(2 s^2)) (chi-square) and KL = log(1 + Delta^2/(4 s^2))."""
    from conftest import verified

    from raosym.emit.python import render

    family = verified(catalog, "cauchy")
    assert not family.derivation.mechanism.renyi.closed
    assert family.derivation.mechanism.renyi.reason
    (text,) = render(family).values()
    path = tmp_path / "cauchy.py"
    path.write_text(text)
    import importlib.util

    spec = importlib.util.spec_from_file_location("cauchy_accounting", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for delta, s in ((1.0, 1.0), (0.5, 2.0), (3.0, 0.7)):
        assert module.rdp_epsilon(2.0, delta, s) == pytest.approx(
            float(mpmath.log(1 + mpmath.mpf(delta) ** 2 / (2 * mpmath.mpf(s) ** 2))), rel=1e-9)
        assert module.kl_divergence(delta, s) == pytest.approx(
            float(mpmath.log(1 + mpmath.mpf(delta) ** 2 / (4 * mpmath.mpf(s) ** 2))), rel=1e-9)
        assert module.rao_dp_theta(delta, s) == pytest.approx(delta / (s * 2**0.5), rel=1e-15)
