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
LAPLACE_FILE = REPOSITORY / "tests" / "families" / "laplace_mechanism2.toml"

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
def laplace():
    """The l1 vector Laplace mechanism (d = 2), derived (the verify stage's nested
    quadrature of several variables does not take the kinks of Abs yet: see the report)."""
    return derive(load_spec(LAPLACE_FILE))


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
