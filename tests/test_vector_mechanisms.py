"""Vector additive mechanisms (issue 12): ``location = ["m1", ...]`` with an l2 or l1
sensitivity.

Expected values come from outside raosym: the closed forms of the literature evaluated here
with mpmath (Rao-DP ``Delta/sigma``, RDP ``alpha Delta**2/(2 sigma**2)`` of the l2 Gaussian
mechanism, Mironov 2017 Table II's Laplace curve and its values in MATH.md), direct mpmath
quadratures over R^d of the Rényi divergence between the product densities at a shift on
the sensitivity ball (written in this file, not the engine's), and MATH.md's 52-week example.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mpmath
import pytest
import sympy
from conftest import REPOSITORY, catalog_outcomes

from raosym.accounting import load_mechanism
from raosym.derive import derive
from raosym.derive.divergence import ALPHA
from raosym.errors import SpecError
from raosym.spec.schema import load_spec
from raosym.verify.checks import _check
from raosym.verify.vector_mechanism import vector_checks

pytestmark = pytest.mark.xdist_group("test_vector_mechanisms")

GAUSSIAN = "gaussian_mechanism3"
LAPLACE = "laplace_mechanism2"
LAPLACE_FILE = REPOSITORY / "derivations" / f"{LAPLACE}.toml"

VECTOR_GAUSSIAN = textwrap.dedent('''\
    name = "vector_gaussian2"
    variables = ["x1", "x2"]
    density = "exp(-((x1 - m1)**2 + (x2 - m2)**2)/(2*sigma**2)) / (2*pi*sigma**2)"

    [support]
    x1 = "real"
    x2 = "real"

    [coordinates]
    m1 = "real"
    m2 = "real"

    [constants]
    sigma = "positive"

    [mechanism]
    ''')


def write(tmp_path: Path, text: str, name: str = "family.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def spec_error(tmp_path: Path, mechanism: str, base: str = VECTOR_GAUSSIAN) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load_spec(write(tmp_path, base + textwrap.dedent(mechanism)))
    return caught.value


@pytest.fixture(scope="module")
def gaussian():
    """The catalog's vector Gaussian mechanism, derived and verified (session cache)."""
    outcome, = catalog_outcomes([GAUSSIAN])
    assert outcome.error is None, outcome.error
    return outcome.verified


@pytest.fixture(scope="module")
def laplace_verified():
    """The catalog's l1 vector Laplace mechanism (d = 2), derived and verified (session
    cache)."""
    outcome, = catalog_outcomes([LAPLACE])
    assert outcome.error is None, outcome.error
    return outcome.verified


@pytest.fixture(scope="module")
def laplace(laplace_verified):
    """Its derivation."""
    return laplace_verified.derivation


# -- the format ---------------------------------------------------------------------------------


def test_vector_location_is_parsed_with_its_norm(tmp_path):
    spec = load_spec(write(tmp_path, VECTOR_GAUSSIAN + 'location = ["m1", "m2"]\n'
                           'scale = "sigma"\nsensitivity = "l1"\n'))
    mechanism = spec.mechanism
    assert [p.name for p in mechanism.locations] == ["m1", "m2"]
    assert mechanism.norm == "l1" and mechanism.vector
    assert mechanism.scale.name == "sigma" and mechanism.location.name == "m1"
    assert [s.name for s in mechanism.moved] == ["m1", "m2"]


def test_scalar_location_keeps_working():
    spec = load_spec(REPOSITORY / "derivations" / "gaussian_location.toml")
    assert spec.mechanism.norm is None and not spec.mechanism.vector
    assert spec.mechanism.location.name == "mu" and spec.mechanism.locations == ()


def test_unknown_norm_is_refused_with_file_and_key(tmp_path):
    error = spec_error(tmp_path, '''\
        location = ["m1", "m2"]
        scale = "sigma"
        sensitivity = "l3"
        ''')
    assert error.key == "mechanism.sensitivity"
    assert error.path.endswith("family.toml") and error.line is not None
    assert "expected the sensitivity norm 'l2' or 'l1', found a string ('l3')" in error.message


def test_location_naming_a_non_coordinate_is_refused(tmp_path):
    for name in ("sigma", "x1", "m9"):
        error = spec_error(tmp_path, f'''\
            location = ["m1", "{name}"]
            scale = "sigma"
            sensitivity = "l2"
            ''')
        assert error.key == "mechanism.location"
        assert (f"'{name}' is not a coordinate over the whole real line; expected some of: "
                "m1, m2") in error.message


@pytest.mark.parametrize(("mechanism", "key", "message"), [
    ('location = ["m1", "m2"]\nscale = "sigma"\n', "mechanism",
     "a vector location needs 'sensitivity'"),
    ('location = ["m1"]\nscale = "sigma"\nsensitivity = "l2"\n', "mechanism.location",
     "two or more coordinates"),
    ('location = ["m1", "m1"]\nscale = "sigma"\nsensitivity = "l2"\n', "mechanism.location",
     "listed twice"),
    ('location = ["m1", 2]\nscale = "sigma"\nsensitivity = "l2"\n', "mechanism.location",
     "found an integer (2)"),
    ('location = ["m1", "m2"]\nscale = "sigma"\nsensitivity = 2\n', "mechanism.sensitivity",
     "found an integer (2)"),
    ('location = "m1"\nscale = "sigma"\nsensitivity = "l2"\n', "mechanism.sensitivity",
     "a scalar location has no norm"),
    ('location = ["m1", "m2"]\nscale = "m1"\nsensitivity = "l2"\n', "mechanism.scale",
     "'m1' is not a positive parameter"),
])
def test_bad_vector_mechanisms_are_refused(tmp_path, mechanism, key, message):
    error = spec_error(tmp_path, mechanism)
    assert error.key == key
    assert message in error.message


# -- the l2 vector Gaussian: derived, verified, emitted -------------------------------------


def gaussian_rdp_by_direct_quadrature(alpha, shift, sigma) -> mpmath.mpf:
    """``log(∫_{R^3} f_0^alpha f_h^(1-alpha)) / (alpha - 1)`` of the isotropic normal density
    written out here, by a tensor Gauss-Legendre rule over [-10 sigma, 10 sigma]^3 (the
    integrand is a Gaussian of width about sigma: the rest is below 1e-20)."""
    nodes = mpmath.calculus.quadrature.GaussLegendre(mpmath.mp).calc_nodes(3, mpmath.mp.prec)
    rule = []
    width = 5 * sigma
    for k in range(4):
        centre = -10 * sigma + width * (k + mpmath.mpf(1) / 2)
        rule += [(centre + width / 2 * x, width / 2 * w) for x, w in nodes]

    def log_density(x, m):
        return (-sum((xi - mi) ** 2 for xi, mi in zip(x, m)) / (2 * sigma**2)
                - mpmath.mpf(3) / 2 * mpmath.log(2 * mpmath.pi * sigma**2))

    total = mpmath.fsum(
        w1 * w2 * w3 * mpmath.exp(alpha * log_density((x1, x2, x3), (0, 0, 0))
                                  + (1 - alpha) * log_density((x1, x2, x3), shift))
        for (x1, w1), (x2, w2), (x3, w3) in itertools.product(rule, rule, rule))
    return mpmath.log(total) / (alpha - 1)


def test_gaussian_budget_and_curve_are_the_closed_forms(gaussian):
    mechanism = gaussian.derivation.mechanism
    delta, sigma = mechanism.arguments[:2]
    with mpmath.workdps(30):
        for alpha, d, s in ((mpmath.mpf(3) / 2, 1, 1), (5, mpmath.mpf("0.3"), mpmath.mpf("2.7"))):
            point = {ALPHA: mpmath.mpf(alpha), delta: mpmath.mpf(d), sigma: mpmath.mpf(s)}
            theta = sympy.N(mechanism.theta.subs(point), 30)
            curve = sympy.N(mechanism.renyi.textbook.subs(point), 30)
            assert abs(theta - mpmath.mpf(d) / s) < mpmath.mpf(10) ** -25
            assert abs(curve - alpha * mpmath.mpf(d) ** 2 / (2 * mpmath.mpf(s) ** 2)) < \
                mpmath.mpf(10) ** -25
    assert mechanism.vector.norm == "l2" and mechanism.vector.dimension == 3


def test_gaussian_curve_is_the_renyi_divergence_at_a_shift_on_the_sphere(gaussian):
    """The emitted rdp_epsilon against a direct three-dimensional quadrature at
    h = Delta (2/3, -2/3, 1/3), a point of the sphere |h|_2 = Delta off every axis."""
    module = load_mechanism(GAUSSIAN, generated=REPOSITORY / "generated")
    with mpmath.workdps(15):
        alpha, delta, sigma = mpmath.mpf(3) / 2, mpmath.mpf(1), mpmath.mpf(1)
        shift = (delta * 2 / 3, -delta * 2 / 3, delta / 3)
        direct = gaussian_rdp_by_direct_quadrature(alpha, shift, sigma)
    assert abs(direct - mpmath.mpf(3) / 4) < 1e-9  # alpha Delta^2 / (2 sigma^2)
    value = module.curve(sensitivity=1.0, sigma=1.0)(1.5)
    assert abs(value - float(direct)) < 1e-9


def test_gaussian_verification_record_has_the_lift(gaussian):
    quantities = {check.quantity for check in gaussian.checks}
    assert {"product_density", "renyi_vector_shift", "kl_vector_shift", "renyi_ball_supremum",
            "kl_ball_supremum", "rao_dp_ball_supremum"} <= quantities
    lift = [c for c in gaussian.checks if c.quantity in quantities and c.quantity.startswith(
        ("product", "renyi_vector", "renyi_ball", "kl_ball", "rao_dp_ball"))]
    assert lift and all(check.passed for check in lift)


def test_emitted_functions_take_the_sensitivity():
    module = load_mechanism(GAUSSIAN, generated=REPOSITORY / "generated")
    assert module.parameters == ("sensitivity", "sigma")
    assert module.sensitivity_norm == "l2"
    assert module.theta(sensitivity=2.0, sigma=0.5) == pytest.approx(4.0, rel=1e-15)
    assert module.rao_dp_scale(3.0, 0.25) == pytest.approx(12.0, rel=1e-15)
    assert module.kl(sensitivity=1.0, sigma=4.0) == pytest.approx(1 / 32, rel=1e-15)
    for alpha in (1.01, 2.0, 7.5):
        expected = alpha * 0.3**2 / (2 * 2.7**2)
        assert module.curve(sensitivity=0.3, sigma=2.7)(alpha) == pytest.approx(expected,
                                                                                  rel=1e-14)


def test_account_composes_the_vector_gaussian():
    """MATH.md §3: 52 releases, sigma = 4, sensitivity 1, delta = 1e-6: epsilon 11.1013293857
    (Mironov, Prop. 3) and 10.3264800056 (Balle et al., Thm 21); the l2 vector Gaussian has
    the scalar one's curve at Delta = the l2 sensitivity."""
    result = _raosym("account", "--mechanism", GAUSSIAN, "--sigma", "4", "--repeat", "52",
                     "--delta", "1e-6", "--json")
    report = json.loads(result.stdout)
    assert report["releases"][0]["sensitivity_norm"] == "l2"
    assert report["dp"]["mironov"]["epsilon"] == pytest.approx(11.1013293857, abs=1e-9)
    assert report["dp"]["balle"]["epsilon"] == pytest.approx(10.3264800056, abs=1e-9)
    assert report["rao_dp"]["theta"] == pytest.approx(0.25 * 52**0.5, rel=1e-14)


def test_json_keys_are_those_of_scalar_mechanisms(gaussian):
    result = _raosym("derive", GAUSSIAN, "--json", "--quiet")
    mechanism = json.loads(result.stdout.splitlines()[0])["mechanism"]
    delta, sigma, alpha = sympy.symbols("Delta sigma alpha", positive=True)
    names = {"Delta": delta, "sigma": sigma, "alpha": alpha}
    assert sympy.simplify(sympy.sympify(mechanism["rao_dp_theta"], locals=names)
                          - delta / sigma) == 0
    assert sympy.simplify(sympy.sympify(mechanism["rdp_curve"], locals=names)
                          - alpha * delta**2 / (2 * sigma**2)) == 0
    assert mechanism["sensitivity_norm"] == "l2" and mechanism["dimension"] == 3


def _raosym(*arguments) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    result = subprocess.run([sys.executable, "-m", "raosym", *arguments], cwd=REPOSITORY,
                            capture_output=True, text=True, env=environment, timeout=240,
                            check=False)
    assert result.returncode == 0, result.stderr
    return result


def test_latex_section_states_the_norm_and_the_supremum():
    text = (REPOSITORY / "generated" / "latex" / f"{GAUSSIAN}.tex").read_text()
    assert r"bounds" in text and r"the $\ell_2$ norm of its shift" in text
    assert r"supremum over the ball $\|h\|_{2} \le \Delta$" in text
    assert "with equality everywhere on the sphere" in text


# -- the l1 vector Laplace: the supremum at a vertex ----------------------------------------


def mironov_laplace(alpha, scale_over_sensitivity) -> mpmath.mpf:
    """Mironov (2017), Table II, at sensitivity 1 and scale lambda."""
    lam = mpmath.mpf(scale_over_sensitivity)
    return mpmath.log(alpha / (2 * alpha - 1) * mpmath.exp((alpha - 1) / lam)
                      + (alpha - 1) / (2 * alpha - 1) * mpmath.exp(-alpha / lam)) / (alpha - 1)


def laplace_rdp_by_direct_quadrature(alpha, shift, b) -> mpmath.mpf:
    """``log(∫_{R^2} f_0^alpha f_h^(1-alpha)) / (alpha - 1)`` of the product Laplace density
    written out here, split at the kinks 0 and h_i of each coordinate."""
    def integrand(x1, x2):
        first = -(abs(x1) + abs(x2)) / b
        second = -(abs(x1 - shift[0]) + abs(x2 - shift[1])) / b
        return mpmath.exp(alpha * first + (1 - alpha) * second) / (4 * b**2)

    cuts = [sorted({mpmath.mpf(0), mpmath.mpf(h)}) for h in shift]
    total = mpmath.quad(integrand, [-mpmath.inf, *cuts[0], mpmath.inf],
                        [-mpmath.inf, *cuts[1], mpmath.inf])
    return mpmath.log(total) / (alpha - 1)


def test_laplace_curve_is_mironovs_for_l1_sensitivity(laplace):
    mechanism = laplace.mechanism
    assert mechanism is not None, laplace.unavailable
    delta, b = mechanism.arguments[:2]
    assert mechanism.vector.norm == "l1"
    assert "vertices" in mechanism.vector.attained
    with mpmath.workdps(30):
        # MATH.md: (alpha = 2, lambda = 1) 0.6191236300; (alpha = 5, lambda = 2) 0.3552653184.
        for alpha, lam, printed in ((2, 1, "0.6191236300"), (5, 2, "0.3552653184")):
            value = sympy.N(mechanism.renyi.textbook.subs({ALPHA: alpha, delta: 1, b: lam}), 30)
            assert abs(value - mironov_laplace(mpmath.mpf(alpha), lam)) < mpmath.mpf(10) ** -25
            assert abs(value - mpmath.mpf(printed)) < 1e-10
        assert sympy.simplify(mechanism.theta - delta / b) == 0


def test_laplace_supremum_over_the_l1_ball_sits_at_a_vertex(laplace):
    """Direct two-dimensional quadratures: at the vertex h = (Delta, 0) the divergence is the
    curve; inside the ball (|h|_1 = Delta, off the vertices) it is strictly smaller."""
    mechanism = laplace.mechanism
    delta, b = mechanism.arguments[:2]
    with mpmath.workdps(15):
        alpha = mpmath.mpf(2)
        curve = mironov_laplace(alpha, 1)  # Delta = b = 1
        at_vertex = laplace_rdp_by_direct_quadrature(alpha, (1, 0), mpmath.mpf(1))
        inside = laplace_rdp_by_direct_quadrature(alpha, (mpmath.mpf(1) / 2, -mpmath.mpf(1) / 2),
                                                  mpmath.mpf(1))
    assert abs(at_vertex - curve) < 1e-10
    assert inside < curve - 0.05
    derived = sympy.N(mechanism.renyi.textbook.subs({ALPHA: 2, delta: 1, b: 1}), 20)
    assert abs(derived - curve) < 1e-12


def test_laplace_lift_passes_its_numeric_checks(laplace):
    """The verify stage's lift checks on the l1 Laplace (per-coordinate quadratures at the
    vertices and inside the ball), run directly."""
    with mpmath.workdps(40):
        checks = vector_checks(laplace, _check)
    assert {c.quantity for c in checks} >= {"renyi_vector_shift", "renyi_ball_supremum"}
    assert all(check.passed for check in checks), [c for c in checks if not c.passed]


def test_laplace_fisher_matrix_is_the_literatures(laplace):
    """MATH.md section 2: Laplace location with scale b has g = 1/b**2 per coordinate, so the
    product of two has diag(1/b**2, 1/b**2); the derived matrix and the emitted
    fisher_information against it, evaluated here."""
    module = load_mechanism(LAPLACE, generated=REPOSITORY / "generated")
    b = laplace.mechanism.arguments[1]
    literature = sympy.diag(1 / b**2, 1 / b**2)
    assert sympy.simplify(sympy.Matrix(laplace.fisher) - literature) == sympy.zeros(2, 2)
    raw = _generated_module(LAPLACE)
    for value in (mpmath.mpf("0.3"), mpmath.mpf(1), mpmath.mpf("7.5")):
        expected = mpmath.diag([1 / value**2, 1 / value**2])
        emitted = raw.fisher_information([[0.4, -3.0], [1e4, 2.0]], b=float(value))
        assert emitted.shape == (2, 2, 2)
        for matrix in emitted:
            for i, j in itertools.product(range(2), range(2)):
                assert matrix[i][j] == pytest.approx(float(expected[i, j]), rel=1e-15,
                                                     abs=0.0)
    assert module.sensitivity_norm == "l1"


def test_laplace_emitted_curve_is_mironovs_at_sensitivity_delta():
    """Mironov (2017), Table II, gives the Laplace curve at sensitivity 1 and scale lambda;
    at sensitivity Delta and scale b it is the same curve at lambda = b/Delta (the divergence
    depends on the shift over the scale only). The emitted curve and KL against it."""
    module = load_mechanism(LAPLACE, generated=REPOSITORY / "generated")
    with mpmath.workdps(30):
        for alpha, delta, b in ((1.5, 1.0, 1.0), (2.0, 0.5, 0.5), (5.0, 3.0, 6.0),
                                (32.0, 0.25, 10.0), (1.01, 2.0, 0.7)):
            lam = mpmath.mpf(b) / mpmath.mpf(delta)
            expected = mironov_laplace(mpmath.mpf(alpha), lam)
            value = module.curve(sensitivity=delta, b=b)(alpha)
            assert abs(value - expected) <= 1e-13 * expected, (alpha, delta, b)
            kl = 1 / lam + mpmath.exp(-1 / lam) - 1  # Table II, alpha = 1
            assert abs(module.kl(sensitivity=delta, b=b) - kl) <= 1e-13 * kl
            assert module.theta(sensitivity=delta, b=b) == pytest.approx(delta / b, rel=1e-15)


def test_laplace_emitted_value_at_a_vertex_bounds_the_interior_of_the_l1_ball():
    """The emitted rdp_epsilon (the claimed supremum over |h|_1 <= Delta) against direct
    two-dimensional quadratures, written in this file: equal to the divergence at the
    vertex h = (0, -Delta), and at least the divergence at shifts inside the ball or on its
    faces off the vertices."""
    module = load_mechanism(LAPLACE, generated=REPOSITORY / "generated")
    cases = ((2, 1, 1, [(mpmath.mpf(1) / 2, -mpmath.mpf(1) / 2),
                        (mpmath.mpf("0.9"), mpmath.mpf("0.1"))]),
             (5, mpmath.mpf("1.5"), 2, [(mpmath.mpf("0.5"), mpmath.mpf("0.375"))]))
    with mpmath.workdps(15):
        for alpha, delta, b, inner in cases:
            alpha, delta, b = mpmath.mpf(alpha), mpmath.mpf(delta), mpmath.mpf(b)
            emitted = module.curve(sensitivity=float(delta), b=float(b))(float(alpha))
            vertex = laplace_rdp_by_direct_quadrature(alpha, (0, -delta), b)
            assert abs(emitted - vertex) <= 1e-12 * vertex
            for shift in inner:
                assert abs(shift[0]) + abs(shift[1]) <= delta
                inside = laplace_rdp_by_direct_quadrature(alpha, shift, b)
                assert emitted >= inside + 1e-3 * vertex, (alpha, shift, inside, emitted)


def test_nested_quadrature_cuts_at_the_kinks_of_both_outputs():
    """The verify stage's iterated quadrature over (x1, x2) jointly (no grouping), of the
    Rényi integrand between the outputs at m and m + h, whose kinks are x_i = m_i and
    x_i = m_i + h_i, and of |x1 - m1| |x2 - m2| f: against the product of Mironov's
    one-coordinate integrals (Table II, before the logarithm) and E|X - m| = b for a
    Laplace law, evaluated here."""
    from raosym.verify.multivariate import expectations

    spec = load_spec(LAPLACE_FILE)
    names = {p.symbol.name: p.symbol for p in spec.parameters}
    (x1, x2), (m1, m2, b) = spec.variables, (names["m1"], names["m2"], names["b"])
    h1, h2 = sympy.symbols("h1 h2", real=True)
    alpha = sympy.Rational(3, 2)
    shifted = spec.density.subs({m1: m1 + h1, m2: m2 + h2}, simultaneous=True)
    integrands = [spec.density, sympy.Abs(x1 - m1) * sympy.Abs(x2 - m2) * spec.density,
                  spec.density**alpha * shifted ** (1 - alpha)]
    with mpmath.workdps(20):
        scale, shift = mpmath.mpf("1.5"), (mpmath.mpf("0.6"), mpmath.mpf("-0.9"))
        point = {m1: mpmath.mpf("0.7"), m2: mpmath.mpf("-1.3"), b: scale,
                 h1: shift[0], h2: shift[1]}
        mass, moment, renyi = expectations(spec, integrands, point, digits=15)
        a = mpmath.mpf(alpha)

        def table_ii(t):
            return (a / (2 * a - 1) * mpmath.exp((a - 1) * abs(t) / scale)
                    + (a - 1) / (2 * a - 1) * mpmath.exp(-a * abs(t) / scale))

        assert abs(mass - 1) < mpmath.mpf(10) ** -15
        assert abs(moment - scale**2) < mpmath.mpf(10) ** -15 * scale**2
        expected = table_ii(shift[0]) * table_ii(shift[1])
        assert abs(renyi - expected) < mpmath.mpf(10) ** -15 * expected
        # A wide factor (b = 200): the half-lines beside the kinks are scaled by b, not cut
        # at 2200 units from them.
        wide = {**point, b: mpmath.mpf(200)}
        mass, moment = expectations(spec, integrands[:2], wide, digits=15)
        assert abs(mass - 1) < mpmath.mpf(10) ** -15
        assert abs(moment - 200**2) < mpmath.mpf(10) ** -15 * 200**2


def test_laplace_verification_reaches_25_digits(laplace_verified):
    """The Fisher entries by the nested quadrature split at the kinks x_i = m_i, and the
    lift's checks, all passed at 25 digits or more; the cost is recorded."""
    checks = laplace_verified.checks
    fisher = [c for c in checks if c.quantity.startswith("g_")]
    assert len({tuple(sorted(c.point.items())) for c in fisher}) >= 5
    assert all(c.passed and c.digits >= 25 for c in fisher), [c for c in fisher if not c.passed]
    lift = [c for c in checks if c.quantity in {"product_density", "renyi_vector_shift",
                                                 "kl_vector_shift", "renyi_ball_supremum"}]
    assert lift and all(c.passed for c in lift)
    assert laplace_verified.derivation.timings["quadrature_nodes"] > 0


def test_latex_section_of_the_laplace_states_the_vertex():
    text = (REPOSITORY / "generated" / "latex" / f"{LAPLACE}.tex").read_text()
    assert r"supremum over the ball $\|h\|_{1} \le \Delta$" in text
    assert r"$\sum_i \varepsilon(|h_i|) \le \varepsilon(\|h\|_1) \le \varepsilon(\Delta)$" in text
    assert "sits at a vertex" in text


def _generated_module(name):
    """The generated module itself (the accounting wrapper keeps only its mechanism)."""
    import importlib.util

    path = REPOSITORY / "generated" / "python" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"vector_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- refusals -----------------------------------------------------------------------------------


def test_laplace_under_l2_is_refused_with_the_reason(tmp_path):
    text = LAPLACE_FILE.read_text().replace('sensitivity = "l1"', 'sensitivity = "l2"')
    derivation = derive(load_spec(write(tmp_path, text)))
    assert derivation.mechanism is None
    reasons = [u.reason for u in derivation.unavailable if u.quantity == "privacy accounting"]
    assert reasons and "is not quadratic in Delta" in reasons[0]
    assert "supremum over the l2 ball is not derived" in reasons[0]


def test_coordinates_of_different_laws_are_refused(tmp_path):
    text = VECTOR_GAUSSIAN.replace(
        "(2*pi*sigma**2)", "(2*pi*sigma**2*sqrt(k))").replace("(x2 - m2)**2)", "(x2 - m2)**2/k)") \
        .replace('sigma = "positive"', 'sigma = "positive"\nk = "positive"')
    text += 'location = ["m1", "m2"]\nscale = "sigma"\nsensitivity = "l2"\n'
    derivation = derive(load_spec(write(tmp_path, text)))
    assert derivation.mechanism is None
    reasons = [u.reason for u in derivation.unavailable if u.quantity == "privacy accounting"]
    assert reasons and "not the product of one factor" in reasons[0]
