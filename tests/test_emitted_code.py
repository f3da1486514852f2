"""The emitted-code gate, and the float defects it was built against (issues 14 item 7, 17).

Every reference value here is computed in the test by mpmath from the literature's formulas
(Mironov 2017, Table II; the Rao-DP paper; Arwini and Dodson 2008 for the Gamma manifold's
curvature), at the *float* inputs the generated code receives. The generated modules are the
committed ones in generated/python (the drift test keeps them equal to a fresh render).
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from conftest import REPOSITORY, SESSION_CACHE, verified
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GENERATED = REPOSITORY / "generated" / "python"


def generated(name):
    spec = importlib.util.spec_from_file_location(f"generated_{name}", GENERATED / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative(got, truth):
    return abs(mpmath.mpf(got) - truth) / abs(truth)


# ----------------------------------------------------------------------------- the gate


def test_gate_refuses_a_module_printed_with_a_wrong_sign(catalog, monkeypatch):
    """A printer that negates every expression (a wrong sign in the emitted Fisher matrix) is
    caught, naming the function, the input, the value returned and the value expected."""
    from raosym import gate
    from raosym.emit import python
    from raosym.emit.python.printer import stable_forms
    from raosym.gate.emitted import EmittedCodeError

    monkeypatch.setattr(python, "stable_forms", lambda expr: -stable_forms(expr))
    with pytest.raises(EmittedCodeError) as caught:
        gate.render_family(verified(catalog, "exponential"))
    message = str(caught.value)
    assert "exponential.fisher_information([" in message
    assert "returned -" in message and "expected " in message


def test_a_reference_the_gate_cannot_compute_drops_the_quantity_not_the_run(catalog,
                                                                            monkeypatch):
    """A probe point outside a coordinate's dependent domain gave the multinomial's distance a
    complex reference, and the TypeError ended `raosym generate` with a traceback (nothing
    written for any family). Such a failure of the gate's own now drops that quantity, with
    the reason, and the family keeps the rest; in the metric's probes it fails the family
    (an EmitError, which generate reports per family)."""
    import mpmath

    from raosym import gate
    from raosym.gate import emitted

    def complex_reference(_verified):
        return [mpmath.mpf(mpmath.sqrt(-1))]  # mpmath: cannot create mpf from mpc

    monkeypatch.setattr(emitted, "_distance_probes", complex_reference)
    files, dropped = gate.render_family(verified(catalog, "gaussian"))
    assert [item.quantity for item in dropped] == ["Rao distance"]
    assert "could not compute its reference values (TypeError" in dropped[0].reason
    assert "def rao_distance(" not in files["python/gaussian.py"]
    assert "def fisher_information(" in files["python/gaussian.py"]
    monkeypatch.setattr(emitted, "_metric_probes", complex_reference)
    with pytest.raises(emitted.EmittedCodeError, match="could not compute its reference"):
        gate.render_family(verified(catalog, "gaussian"))


def test_generate_leaves_out_accounting_whose_code_fails_and_keeps_the_rest(
        catalog, monkeypatch, tmp_path, capsys):
    """A wrong sign in the accounting template's KL (the symbolic record is right, the code
    not): the gate refuses the accounting functions, and the family is written without them
    (its metric, curvature and distance passed), the docstring saying what was left out and
    the gate's finding (issue 10: one failing quantity must not lose the whole family)."""
    from raosym import cli
    from raosym.emit.python import accounting

    # The derivation from the session cache, but no render from it: a render cached by an
    # earlier test would skip rendering, and the gate; a copy of the derivation entries
    # alone, so that the wrong-sign render stored here never reaches the session cache.
    cache = tmp_path / "cache"
    cache.mkdir()
    for entry in Path(SESSION_CACHE).glob("*.pickle"):
        shutil.copy(entry, cache)
    monkeypatch.setenv("RAOSYM_CACHE", str(cache))
    original = accounting.accounting_context

    def wrong_sign(verified_family):
        context = original(verified_family)
        if context is not None and context["kl"] is not None:
            context["kl"]["code"] = f"-({context['kl']['code']})"
        return context

    monkeypatch.setattr("raosym.emit.python.accounting_context", wrong_sign)
    output = tmp_path / "generated"
    status = cli.main(["generate", "laplace_location", "--output", str(output), "--jobs", "1",
                       "--quiet"])
    assert status == 0, capsys.readouterr().err
    module = (output / "python" / "laplace_location.py").read_text()
    assert "def fisher_information(" in module
    assert "def kl_divergence(" not in module and "def rdp_epsilon(" not in module
    assert "privacy accounting: derived and verified, but its emitted code failed" in module
    assert "laplace_location.kl_divergence(" in module and "returned -" in module
    # The run reports what the gate left out as it reports any unavailable quantity: in the
    # --json summary (status partial), and --strict makes it an error.
    capsys.readouterr()
    status = cli.main(["generate", "laplace_location", "--output", str(output), "--jobs", "1",
                       "--quiet", "--json"])
    summary = json.loads(capsys.readouterr().out)
    (family,) = summary["families"]
    assert status == 0 and family["status"] == "partial"
    assert family["unavailable"] == ["privacy accounting"]
    assert cli.main(["generate", "laplace_location", "--output", str(output), "--jobs", "1",
                     "--quiet", "--strict"]) == 1


def test_gate_judges_nan_and_infinities_against_the_truth():
    from raosym.gate.emitted import _error

    assert _error(math.nan, mpmath.mpf(1), mpmath.mpf(1)) is None
    assert _error(math.inf, mpmath.mpf(744.44), mpmath.mpf(744.44)) is None
    # A true value beyond the largest float may come back as inf; one that underflows as 0.
    assert _error(math.inf, mpmath.mpf("1e400"), mpmath.mpf("1e400")) == 0.0
    assert _error(0.0, mpmath.mpf("1e-320"), mpmath.mpf("1e-320")) == 0.0
    assert _error(1.0 + 2**-52, mpmath.mpf(1), mpmath.mpf(1)) == pytest.approx(2**-52)


def test_docstrings_carry_the_tolerance_the_gate_held_them_to():
    """The tolerance, never the measured worst error, whose last digit depends on the
    machine's libm and NumPy's SIMD loops (the generated bytes must not)."""
    text = (GENERATED / "logistic.py").read_text()
    body = text[text.index("def rdp_epsilon("):]
    docstring = body[:body.index('"""\n', body.index('"""') + 3)]
    assert "Float accuracy (raosym's emitted-code gate" in docstring
    assert "relative error within 1e-12 at " in " ".join(docstring.split())


# ----------------------------------------------------------------------------- the defects


def logistic_log_density(x, location):
    t = x - location
    return -t - 2 * mpmath.log1p(mpmath.exp(-t))


def test_logistic_rdp_and_kl_are_finite_and_right():
    """Issue 17: logistic.rdp_epsilon(2.0, 1.0, 1.0) and kl_divergence(1.0, 1.0) were nan."""
    logistic = generated("logistic")
    with mpmath.workdps(30):
        def renyi(x):
            return mpmath.exp(2 * logistic_log_density(x, 0) - logistic_log_density(x, 1))

        def kl(x):
            first = logistic_log_density(x, 0)
            return mpmath.exp(first) * (first - logistic_log_density(x, 1))

        d2 = mpmath.log(mpmath.quad(renyi, [-mpmath.inf, 0, 1, mpmath.inf]))
        divergence = mpmath.quad(kl, [-mpmath.inf, 0, 1, mpmath.inf])
    assert relative(float(logistic.rdp_epsilon(2.0, 1.0, 1.0)), d2) <= 1e-12
    assert relative(float(logistic.kl_divergence(1.0, 1.0)), divergence) <= 1e-12


def gamma_curvature(k):
    """Arwini and Dodson (2008): K = (psi1(k) + k psi2(k)) / (4 (k psi1(k) - 1)^2)."""
    k = mpmath.mpf(k)
    with mpmath.workdps(800):
        return (mpmath.psi(1, k) + k * mpmath.psi(2, k)) / (4 * (k * mpmath.psi(1, k) - 1) ** 2)


@pytest.mark.parametrize("k", [1e14, 1e15, 1e-160, 1e-6, 1.0, 40.0, 1e6])
def test_gamma_curvature_at_extreme_shapes(k):
    """Issue 14 item 7: 6 % wrong at k = 1e14, -0.75 at 1e15, nan at 1e-160."""
    got = float(generated("gamma").gaussian_curvature([k, 0.7]))
    assert relative(got, gamma_curvature(k)) <= 1e-14


def test_gaussian_distance_far_apart():
    """Issue 14 item 7: gaussian.rao_distance([1e160, 1], [0, 1]) was inf (true 1041.05)."""
    with mpmath.workdps(50):
        mu, sigma = mpmath.mpf(1e160), mpmath.mpf(1)
        truth = mpmath.sqrt(2) * mpmath.acosh(1 + (mu**2 / 2) / (2 * sigma * sigma))
    got = float(generated("gaussian").rao_distance([1e160, 1.0], [0.0, 1.0]))
    assert relative(got, truth) <= 1e-14
    assert mpmath.nstr(truth, 6) == "1041.05"


def test_gaussian_rdp_scalar_path_at_huge_scale():
    """Issue 14 item 7: the float fast path raised OverflowError where the true value
    Delta^2 alpha / (2 sigma^2) = 1e-320 underflows."""
    gaussian = generated("gaussian")
    scalar = float(gaussian.rdp_epsilon(2.0, 1.0, 1e160))
    array = float(gaussian.rdp_epsilon(np.array(2.0), 1.0, 1e160))
    assert abs(scalar - 1e-320) <= sys.float_info.min and scalar == array


def rr_renyi(alpha, p):
    """Mironov 2017, Table II: randomized response."""
    alpha, p = mpmath.mpf(alpha), mpmath.mpf(p)
    return mpmath.log(p**alpha * (1 - p) ** (1 - alpha)
                      + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def test_bernoulli_at_the_smallest_subnormal():
    """Issue 14 item 7: bernoulli.rdp_epsilon(2.0, 5e-324) was nan (true 744.44)."""
    bernoulli = generated("bernoulli")
    with mpmath.workdps(50):
        truth = rr_renyi(2, 5e-324)
        p = mpmath.mpf(5e-324)
        kl = (1 - 2 * p) * mpmath.log((1 - p) / p)
    assert mpmath.nstr(truth, 5) == "744.44"
    assert relative(bernoulli.rdp_epsilon(2.0, 5e-324), truth) <= 1e-14
    assert relative(float(bernoulli.rdp_epsilon(np.array([2.0]), 5e-324)[0]), truth) <= 1e-14
    assert relative(float(bernoulli.kl_divergence(5e-324)), kl) <= 1e-14


@pytest.mark.parametrize("p", [1e-12, 1e-6, 0.3, 0.5 + 1e-9, 1 - 1e-12])
def test_bernoulli_rao_dp_theta(p):
    """Issue 14 item 7: 5 digits lost at p = 1e-12 (the asin of 2p - 1 next to -1)."""
    with mpmath.workdps(50):
        q = mpmath.mpf(p)
        truth = 2 * abs(mpmath.asin(mpmath.sqrt(q)) - mpmath.asin(mpmath.sqrt(1 - q)))
    assert relative(float(generated("bernoulli").rao_dp_theta(p)), truth) <= 1e-14


@pytest.mark.parametrize("n", [0.5 + 1e-12, 0.5 + 1e-7, 0.5 + 1e-3, 0.75, 2.0, 1e3])
def test_generalized_gaussian_rao_dp_theta_near_one_half(n):
    """Issue 14 item 7: gamma(2 - 1/N) cancelled as N -> 1/2 (5 digits lost)."""
    with mpmath.workdps(60):
        shape = mpmath.mpf(n)
        constant = mpmath.sqrt(shape * mpmath.gamma(2 - 1 / shape) / mpmath.gamma(1 + 1 / shape))
    got = float(generated("generalized_gaussian").rao_dp_theta(1.0, 2.0, N=n))
    assert relative(got, constant / 2) <= 1e-14


def test_calibrate_cauchy_for_epsilon_delta_brackets_and_solves():
    """Issue 17: this took 4.5 minutes of SciPy warnings and exited 1."""
    finished = subprocess.run(
        [sys.executable, "-m", "raosym", "calibrate", "--mechanism", "cauchy", "--epsilon", "1",
         "--delta", "1e-6"], capture_output=True, text=True, cwd=REPOSITORY, timeout=300,
        check=False)
    assert finished.returncode == 0, finished.stderr
    assert "mechanism cauchy (sensitivity=1): s = " in finished.stdout


# ----------------------------------------------------------------------------- fuzz


def laplace_renyi(alpha, scale):
    """Mironov 2017, Table II, sensitivity 1, in log-sum-exp form (mpmath has no overflow,
    but the form keeps 30 digits enough at alpha = 1 + 1e-12)."""
    alpha, b = mpmath.mpf(alpha), mpmath.mpf(scale)
    return mpmath.log(alpha / (2 * alpha - 1) * mpmath.exp((alpha - 1) / b)
                      + (alpha - 1) / (2 * alpha - 1) * mpmath.exp(-alpha / b)) / (alpha - 1)


def _finite_where_true(got, truth):
    """The property: a finite, representable true value comes back finite (no nan or inf)."""
    if mpmath.isfinite(truth) and abs(truth) < 1e307:
        assert math.isfinite(got), (got, truth)


orders = st.floats(min_value=1 + 1e-12, max_value=1e6)
scales = st.floats(min_value=1e-150, max_value=1e150)
locations = st.floats(min_value=-1e150, max_value=1e150)
probabilities = st.floats(min_value=5e-324, max_value=1 - 2**-53)
BATCH = 25


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(orders, probabilities), min_size=BATCH, max_size=BATCH))
def test_fuzz_bernoulli(inputs):
    bernoulli = generated_cache("bernoulli")
    with mpmath.workdps(30):
        for alpha, p in inputs:
            _finite_where_true(bernoulli.rdp_epsilon(alpha, p), rr_renyi(alpha, p))
            q = mpmath.mpf(p)
            _finite_where_true(float(bernoulli.kl_divergence(p)),
                               (1 - 2 * q) * mpmath.log((1 - q) / q))
            _finite_where_true(float(bernoulli.rao_dp_theta(p)), mpmath.pi)
    alphas, ps = (np.array(column) for column in zip(*inputs))
    assert np.isfinite(bernoulli.rdp_epsilon(alphas, ps)).all()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(orders, st.floats(min_value=1e-50, max_value=1e50)),
                min_size=BATCH, max_size=BATCH))
def test_fuzz_laplace(inputs):
    laplace = generated_cache("laplace_location")
    with mpmath.workdps(30):
        for alpha, b in inputs:
            truth = laplace_renyi(alpha, b)
            _finite_where_true(laplace.rdp_epsilon(alpha, 1.0, b), truth)
            _finite_where_true(float(laplace.rdp_epsilon(np.array(alpha), 1.0, b)), truth)
            _finite_where_true(float(laplace.kl_divergence(1.0, b)),
                               1 / mpmath.mpf(b) + mpmath.exp(-1 / mpmath.mpf(b)) - 1)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(locations, scales, locations, scales), min_size=BATCH,
                max_size=BATCH))
def test_fuzz_gaussian_distance_and_accounting(inputs):
    gaussian = generated_cache("gaussian")
    with mpmath.workdps(30):
        for mu1, s1, mu2, s2 in inputs:
            a, b, c, d = (mpmath.mpf(v) for v in (mu1, s1, mu2, s2))
            truth = 2 * mpmath.sqrt(2) * mpmath.asinh(
                mpmath.sqrt((a - c) ** 2 / 2 + (b - d) ** 2) / (2 * mpmath.sqrt(b * d)))
            _finite_where_true(float(gaussian.rao_distance([mu1, s1], [mu2, s2])), truth)
            _finite_where_true(gaussian.rdp_epsilon(2.0, s1, s2), s1**2 / mpmath.mpf(s2) ** 2)
            _finite_where_true(float(gaussian.rao_dp_theta(s1, s2)), b / d)


_MODULES: dict = {}


def generated_cache(name):
    if name not in _MODULES:
        _MODULES[name] = generated(name)
    return _MODULES[name]


# ----------------------------------------------------------------------------- issue 15: fast paths


def _beta_fisher_truth(a, b):
    """Beta Fisher matrix (Le Brigant, Preston and Puechmorel 2021), in mpmath."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    both = mpmath.psi(1, a + b)
    return [[mpmath.psi(1, a) - both, -both], [-both, mpmath.psi(1, b) - both]]


def test_beta_fisher_one_point_agrees_with_blocks_and_with_mpmath():
    """The polygamma helpers sum the recurrence and the series along trailing axes, and take
    large arrays block by block: a point's value is the same alone, in a small batch and in a
    blocked one (more than 4096 points), and within 1e-14 of mpmath at every point."""
    beta = generated_cache("beta")
    rng = np.random.default_rng(15)
    points = 10.0 ** rng.uniform(-8, 8, (5000, 2))
    points[:4] = [[1e-300, 0.5], [0.5, 1e-300], [1e8, 1e-8], [9.5, 10.5]]
    batch = beta.fisher_information(points)
    small = beta.fisher_information(points[:50])
    np.testing.assert_array_equal(small, batch[:50])
    with mpmath.workdps(40):
        for index in range(0, 5000, 25):
            alone = beta.fisher_information(points[index])
            np.testing.assert_array_equal(alone, batch[index])
            truth = _beta_fisher_truth(*points[index])
            for row in range(2):
                for column in range(2):
                    if 1e-300 < abs(truth[row][column]) < 1e300:
                        assert relative(alone[row, column], truth[row][column]) <= 1e-14, (
                            points[index], row, column)


@pytest.mark.parametrize("first, second", [
    ([0.0, 1.0], [1e200, 1.0]), ([0.0, 1e-200], [1e-200, 1e-200]), ([0.0, 1e-170], [0.0, 1e170]),
    ([3e-160, 2e-160], [0.0, 1e-160]), ([0.3, 1.7], [0.1, 1.1]), ([1.0, 1.0], [1.0 + 1e-12, 1.0]),
])
def test_gaussian_distance_sum_of_squares_in_and_out_of_range(first, second):
    """_hypot takes the square root of the sum of squares where it is in range and np.hypot
    where a square over- or underflows: both against the half-plane formula in mpmath, and
    the single pair equal to the same pair in a batch."""
    gaussian = generated_cache("gaussian")
    with mpmath.workdps(60):
        a, b, c, d = (mpmath.mpf(v) for v in (*first, *second))
        truth = 2 * mpmath.sqrt(2) * mpmath.asinh(
            mpmath.sqrt((a - c) ** 2 / 2 + (b - d) ** 2) / (2 * mpmath.sqrt(b * d)))
        got = float(gaussian.rao_distance(first, second))
        assert relative(got, truth) <= 1e-14
    batch = gaussian.rao_distance(np.array([first, [0.3, 1.7]]), np.array([second, [0.1, 1.1]]))
    assert batch[0] == got


LOG_SERIES = ('name = "log_series"\nvariable = "k"\nsupport = "integers >= 1"\n'
              'density = "-p**k/(k*log(1 - p))"\n\n[coordinates]\np = "(0, 1)"\n')


def test_a_logarithm_minus_its_argument_keeps_its_digits(tmp_path):
    """The log-series family's g_pp = -(p + log(1 - p))/(p (1 - p)^2 log(1 - p)^2): written
    out, p + log(1 - p) ~ -p^2/2 and log(1 - p) from the rounded 1 - p lose three digits at
    p = 0.001 (the gate refused the module, 1.7e-12); printed as log1pmx(-p) and log1p(-p),
    the module is within a few ulp of mpmath from p = 1e-300 to 1 - 1e-15 (at 1e-300 the
    float formula underflows and the module recomputes in mpmath: its sum p + log1p(-p) is
    watched for cancellation though SymPy cannot tell the sign of the logarithm)."""
    from raosym import emit, run

    path = tmp_path / "log_series.toml"
    path.write_text(LOG_SERIES)
    files = emit.render_files(run(str(path)))
    module_path = tmp_path / "log_series.py"
    module_path.write_text(next(text for name, text in files.items() if name.endswith(".py")))
    spec = importlib.util.spec_from_file_location("log_series_module", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    points = [1e-300, 1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-9, 1 - 1e-15]
    got = module.fisher_information(np.array(points)[:, None])[:, 0, 0]
    with mpmath.workdps(60):
        for p, value in zip(points, got, strict=True):
            q = mpmath.mpf(p)
            # q + log(1 - q) = -(q^2/2 + q^3/3 + ...), summed where it cancels
            excess = (-mpmath.nsum(lambda k: q**k / k, [2, mpmath.inf]) if q < 0.1
                      else q + mpmath.log1p(-q))
            truth = -excess / (q * (1 - q) ** 2 * mpmath.log1p(-q) ** 2)
            assert relative(value, truth) <= 1e-15, (p, value, truth)  # a few ulp


def _docstring_domains(module, heading: str) -> dict[str, str]:
    """``{name: domain}`` of the parameters listed under ``heading`` in the module docstring."""
    domains = {}
    for line in module.__doc__.split(heading)[1].splitlines()[1:]:
        if not line.strip() or line.strip() == "none":
            break
        name, _, domain = line.strip().partition(" in ")
        domains[name] = domain.split(" (declared")[0]
    return domains


def _constants(module) -> dict[str, float]:
    """A value inside each constant's domain as the docstring states it: 3.0 on (0, oo) and
    the whole line, else a point a third of the way into a bounded interval ((-1, 1))."""
    values = {}
    for name, domain in _docstring_domains(module, "Constants (keyword-only").items():
        interval = domain.removeprefix("integers in ")
        lower, upper = (float(Fraction(end)) if end.lstrip("-") != "oo"
                        else math.copysign(math.inf, -1 if end.startswith("-") else 1)
                        for end in interval[1:-1].split(", "))
        values[name] = 3.0 if upper == math.inf else lower + (upper - lower) / 3
    return values


def _coordinate_samples(module, rng, count):
    """Values in each coordinate's domain, as the module docstring states it ((0, 1), (0, oo)
    or (-oo, oo), or a simplex's (0, 1 - p1 - ...)): ordinary ones, extremes (1e-300 ...
    1e300) and near-equal pairs."""
    domains = _docstring_domains(module, "Coordinates, in the order of theta")
    columns = []
    for name in module.COORDINATES:
        domain = domains[name]
        left = _left_of_simplex(domain, lambda other: columns[module.COORDINATES.index(other)])
        if left is not None:
            # The rest of the simplex: a share of what the earlier coordinates leave.
            shares = np.concatenate(([1e-12, 0.5, 1 - 1e-12], rng.uniform(0, 1, left.size)))
            values = left * shares[:left.size]
        elif domain == "(0, 1)":
            values = np.concatenate((rng.uniform(0, 1, count), [1e-300, 1e-12, 0.5, 1 - 1e-12]))
        else:
            values = np.concatenate((10.0 ** rng.uniform(-8, 8, count),
                                     [1e-300, 1e-150, 1.0, 1e150, 1e300]))
            if domain == "(-oo, oo)":
                values *= rng.choice([-1.0, 1.0], values.size)
        columns.append(values)
    size = min(c.size for c in columns)
    return np.column_stack([c[:size] for c in columns])


def _left_of_simplex(domain: str, column):
    """1 less the earlier coordinates for a simplex's domain ``(0, 1 - p1 - ...)`` as the
    docstring states it (``column(name)``: an earlier coordinate's values), else None."""
    earlier = re.fullmatch(r"\(0, 1 - (.*)\)", domain)
    if earlier is None:
        return None
    return 1 - sum(column(other) for other in earlier.group(1).split(" - "))


def _inside_simplex(module, points):
    """The points with each coordinate on (0, 1 - earlier ones) moved inside it (a nudged
    copy of a point at the simplex's edge can leave it)."""
    domains = _docstring_domains(module, "Coordinates, in the order of theta")
    points = points.copy()
    for index, name in enumerate(module.COORDINATES):
        left = _left_of_simplex(domains[name],
                                lambda other: points[:, module.COORDINATES.index(other)])
        if left is not None:
            points[:, index] = np.minimum(points[:, index], left * (1 - 1e-9))
    return points


@pytest.mark.parametrize("name", sorted(path.stem for path in GENERATED.glob("*.py")
                                        if "def _rao_distance_one" in path.read_text()))
def test_one_pair_float_path_is_the_array_path(name):
    """A single pair takes the float path (_rao_distance_one: Python floats, the array code's
    operations in its order) or, out of its range, the array path: either way the distance
    is the same, to the last bit, as the same pair's in a batch, at ordinary, extreme and
    nearly equal pairs."""
    module = generated_cache(name)
    constants = _constants(module)
    rng = np.random.default_rng(15)
    first = _coordinate_samples(module, rng, 60)
    second = np.concatenate((_coordinate_samples(module, rng, 60)[: first.shape[0] // 2],
                             first[first.shape[0] // 2:] * (1 + 1e-9)))
    second = np.where(second >= 1, np.minimum(second, 1 - 1e-16), second) if any(
        "(0, 1)" in line for line in module.__doc__.splitlines()) else second
    second = _inside_simplex(module, second)
    batch = module.rao_distance(first, second, **constants)
    taken = 0
    for index in range(first.shape[0]):
        alone = module.rao_distance(first[index], second[index], **constants)
        assert alone.shape == () and (alone == batch[index] or alone == batch[index] == 0), (
            first[index], second[index], alone, batch[index])
        taken += module._rao_distance_one(first[index].tolist(), second[index].tolist(),
                                          *constants.values()) is not None
    assert taken >= first.shape[0] // 2  # the float path serves the ordinary pairs


@pytest.mark.parametrize("first, second", [([0.3], [0.1]), ([1e-12], [1 - 1e-12]),
                                           ([0.5], [0.5 + 1e-13])])
def test_one_bernoulli_pair_against_mpmath(first, second):
    """The float path of one pair against the closed form 2 acos(sqrt(p q) + sqrt((1 - p)(1 -
    q))) in mpmath, at 60 digits."""
    bernoulli = generated_cache("bernoulli")
    with mpmath.workdps(60):
        p, q = mpmath.mpf(first[0]), mpmath.mpf(second[0])
        truth = 2 * mpmath.acos(mpmath.sqrt(p * q) + mpmath.sqrt((1 - p) * (1 - q)))
        assert relative(float(bernoulli.rao_distance(first, second)), truth) <= 1e-14


@pytest.mark.parametrize("name", sorted(path.stem for path in GENERATED.glob("*.py")
                                        if "def _rao_distance_block" in path.read_text()))
def test_closed_distance_of_no_pairs(name):
    """No pairs give no distances, broadcast shapes kept: the helpers' least and greatest of
    no values are the empty set's (inf and -inf), so no bound fails and no argmin of an
    empty array raises (cauchy, gaussian and a dozen others raised ValueError)."""
    module = generated_cache(name)
    k = len(module.COORDINATES)
    constants = _constants(module)
    assert module.rao_distance(np.empty((0, k)), np.empty((0, k)), **constants).shape == (0,)
    # 1/(k + 1) in every coordinate lies inside each domain (the simplex's too).
    assert module.rao_distance(np.empty((0, 1, k)), np.full((3, k), 1 / (k + 1)),
                               **constants).shape == (0, 3)
