"""Tests of the accounting layer (raosym/accounting/) and its CLI.

The mechanism curves used here are written in this file from the literature (Mironov 2017,
Table II; Soto 2025), not taken from generated/: the accounting is tested on its own, through
the same adapter that loads generated modules (fake modules are written to a temporary
generated/ folder). Expected figures are literature values, closed forms, or independent
mpmath computations at 30 digits written below.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import textwrap
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raosym import accounting, cli

REPOSITORY = Path(__file__).resolve().parents[1]
#: The generated folder the last tests read (another one, e.g. a fresh `raosym generate
#: --output DIR`, can be given in $RAOSYM_GENERATED).
GENERATED = Path(os.environ.get("RAOSYM_GENERATED", REPOSITORY / "generated"))

# Independent per-release curves (numpy, textbook formulas) in the generated-module contract.
FAKE_MODULES = {
    "gaussian_location": '''
        import numpy as np

        def rdp_epsilon(alpha, sensitivity, sigma):
            _positive(sigma)
            return np.asarray(alpha, dtype=float) * sensitivity**2 / (2 * sigma**2)

        def kl_divergence(sensitivity, sigma):
            _positive(sigma)
            return sensitivity**2 / (2 * sigma**2)

        def rao_dp_theta(sensitivity, sigma):
            _positive(sigma)
            return abs(sensitivity) / sigma

        def rao_dp_scale(sensitivity, theta):
            return abs(sensitivity) / theta

        def _positive(sigma):
            if not sigma > 0:
                raise ValueError(f"sigma must lie in (0, oo); got {sigma!r}")
    ''',
    "laplace_location": '''
        import numpy as np

        def rdp_epsilon(alpha, sensitivity, b):
            a = np.asarray(alpha, dtype=float)
            e = sensitivity / b
            return np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * e,
                                np.log((a - 1) / (2 * a - 1)) - a * e) / (a - 1)

        def kl_divergence(sensitivity, b):
            e = sensitivity / b
            return e + np.exp(-e) - 1

        def rao_dp_theta(sensitivity, b):
            return abs(sensitivity) / b

        def rao_dp_scale(sensitivity, theta):
            return abs(sensitivity) / theta
    ''',
    "bernoulli": '''
        import numpy as np

        def rdp_epsilon(alpha, p):
            if not 0 < p < 1:
                raise ValueError(f"p must lie in (0, 1); got {p!r}")
            a = np.asarray(alpha, dtype=float)
            return np.logaddexp(a * np.log(p) + (1 - a) * np.log1p(-p),
                                a * np.log1p(-p) + (1 - a) * np.log(p)) / (a - 1)

        def kl_divergence(p):
            if not 0 < p < 1:
                raise ValueError(f"p must lie in (0, 1); got {p!r}")
            return (2 * p - 1) * np.log(p / (1 - p))

        def rao_dp_theta(p):
            if not 0 < p < 1:
                raise ValueError(f"p must lie in (0, 1); got {p!r}")
            return 2 * abs(np.arcsin(np.sqrt(p)) - np.arcsin(np.sqrt(1 - p)))
    ''',
    # A family without a [mechanism] table: no accounting functions.
    "poisson": '''
        def fisher_information(theta):
            return 1 / theta
    ''',
}


def write_fake_generated(folder: Path) -> Path:
    """A generated/ folder whose python/ modules are the FAKE_MODULES above."""
    python = folder / "python"
    python.mkdir(parents=True, exist_ok=True)
    for name, text in FAKE_MODULES.items():
        (python / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(REPOSITORY / "derivations"))
    return write_fake_generated(tmp_path / "generated")


def mechanism(fakes, name):
    return accounting.load_mechanism(name, fakes, REPOSITORY / "derivations")


# --- mpmath references (30 digits) -----------------------------------------------------------

def mp_gaussian(alpha, sigma, sensitivity=1):
    return alpha * mp.mpf(sensitivity) ** 2 / (2 * mp.mpf(sigma) ** 2)


def mp_laplace(alpha, lam):
    lam = mp.mpf(lam)
    return mp.log(alpha / (2 * alpha - 1) * mp.exp((alpha - 1) / lam)
                  + (alpha - 1) / (2 * alpha - 1) * mp.exp(-alpha / lam)) / (alpha - 1)


def mp_rr(alpha, p):
    p = mp.mpf(p)
    return mp.log(p ** alpha * (1 - p) ** (1 - alpha)
                  + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def mp_bound(conversion, rdp, alpha, delta):
    delta = mp.mpf(delta)
    if conversion == "mironov":
        return rdp + mp.log(1 / delta) / (alpha - 1)
    return rdp + mp.log((alpha - 1) / alpha) - (mp.log(delta) + mp.log(alpha)) / (alpha - 1)


def mp_optimum(conversion, mp_curve, delta, bracket):
    """The minimizing α (a root of the derivative in ``bracket``, mpmath.findroot with a
    bracketing solver at 40 digits) and the minimal ε."""
    with mp.workdps(40):
        objective = lambda a: mp_bound(conversion, mp_curve(a), a, delta)
        alpha = mp.findroot(lambda a: mp.diff(objective, a),
                            (mp.mpf(bracket[0]), mp.mpf(bracket[1])), solver="anderson",
                            tol=mp.mpf(10) ** -24)
        return float(alpha), float(objective(alpha))


# --- conversion to (ε, δ) --------------------------------------------------------------------

def test_worked_example_reproduces_the_literature(fakes):
    """52 weekly Gaussian releases, σ = 4, Δ = 1, δ = 1e-6 (Mironov 2017; Balle et al. 2020)."""
    curve = mechanism(fakes, "gaussian_location").curve(sensitivity=1, sigma=4).repeated(52)
    mironov = accounting.dp_epsilon(curve, 1e-6, "mironov")
    balle = accounting.dp_epsilon(curve, 1e-6, "balle")
    assert mironov.epsilon == pytest.approx(11.1013293857, abs=5e-11)
    assert mironov.alpha == pytest.approx(3.916, abs=5e-4)
    assert balle.epsilon == pytest.approx(10.3264800056, abs=5e-11)
    assert not mironov.at_boundary and not balle.at_boundary
    # The exact (ε, δ) of 52 Gaussians is 9.70691744: both bounds lie above it.
    assert 9.70691744 < balle.epsilon < mironov.epsilon


CASES = {
    "52 gaussians": (lambda a: 52 * mp_gaussian(a, 4), 1e-6, (2, 6)),
    "laplace and rr": (lambda a: 50 * mp_laplace(a, 10) + 20 * mp_rr(a, mp.mpf("0.55")), 1e-5,
                       (4, 8)),
    "100 rr p=0.6": (lambda a: 100 * mp_rr(a, mp.mpf("0.6")), 1e-8, (1.5, 6)),
    "3 gaussians, sigma 0.7": (lambda a: 3 * mp_gaussian(a, mp.mpf("0.7")), 1e-9, (2, 6)),
}


def numpy_curve(name, fakes):
    gaussian = mechanism(fakes, "gaussian_location")
    laplace = mechanism(fakes, "laplace_location")
    rr = mechanism(fakes, "bernoulli")
    return {
        "52 gaussians": gaussian.curve(sensitivity=1, sigma=4).repeated(52),
        "laplace and rr": accounting.compose(laplace.curve(sensitivity=1, b=10).repeated(50),
                                          rr.curve(p=0.55).repeated(20)),
        "100 rr p=0.6": rr.curve(p=0.6).repeated(100),
        "3 gaussians, sigma 0.7": gaussian.curve(sensitivity=1, sigma=0.7).repeated(3),
    }[name]


@pytest.mark.parametrize("conversion", ["mironov", "balle"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_optimum_matches_mpmath(fakes, case, conversion):
    mp_curve, delta, bracket = CASES[case]
    alpha, epsilon = mp_optimum(conversion, mp_curve, delta, bracket)
    found = accounting.dp_epsilon(numpy_curve(case, fakes), delta, conversion)
    assert found.epsilon == pytest.approx(epsilon, rel=1e-12)
    assert found.alpha == pytest.approx(alpha, rel=1e-5)
    with mp.workdps(30):
        assert found.rdp_epsilon == pytest.approx(float(mp_curve(mp.mpf(found.alpha))), rel=1e-12)


@pytest.mark.parametrize("rho", [1e-6, 1e-3, 0.5, 20.0, 1e3])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-12])
def test_linear_curves_follow_the_zcdp_closed_form(rho, delta):
    """ρ-zCDP (ε(α) = ρα) under Proposition 3: ε = ρ + 2·sqrt(ρ·log(1/δ)) at
    α = 1 + sqrt(log(1/δ)/ρ) (Bun and Steinke 2016, Proposition 1.3; Mironov 2017)."""
    found = accounting.dp_epsilon(accounting.RdpCurve(lambda a: rho * a), delta, "mironov")
    log_inverse = math.log(1 / delta)
    assert found.epsilon == pytest.approx(rho + 2 * math.sqrt(rho * log_inverse), rel=1e-12)
    assert found.alpha == pytest.approx(1 + math.sqrt(log_inverse / rho), rel=1e-5)


def test_improved_conversion_is_never_worse_and_is_the_published_formula():
    curve = accounting.RdpCurve(lambda a: 52 * a / 32)
    for delta in (1e-3, 1e-6, 1e-10):
        assert (accounting.dp_epsilon(curve, delta, "balle").epsilon
                < accounting.dp_epsilon(curve, delta, "mironov").epsilon)
    # Theorem 21 of Balle et al. (2020) at one point, evaluated in mpmath.
    with mp.workdps(30):
        a, r, d = mp.mpf(3), mp.mpf("0.8"), mp.mpf("1e-5")
        expected = r + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)
    assert accounting.conversion_epsilon(0.8, 3.0, 1e-5, "balle") == pytest.approx(
        float(expected), rel=1e-14)


def test_n_gaussians_have_the_curve_of_one_gaussian_of_std_sigma_over_root_n(fakes):
    """Mironov 2017: composition of n Gaussians of std σ is one Gaussian of std σ/√n."""
    gaussian = mechanism(fakes, "gaussian_location")
    composed = accounting.compose(*[gaussian.curve(sensitivity=1, sigma=3)] * 9)
    single = gaussian.curve(sensitivity=1, sigma=1)
    for conversion in accounting.CONVERSIONS:
        assert accounting.dp_epsilon(composed, 1e-7, conversion).epsilon == pytest.approx(
            accounting.dp_epsilon(single, 1e-7, conversion).epsilon, rel=1e-13)


def test_composed_curve_is_the_sum_of_mpmath_curves(fakes):
    laplace = mechanism(fakes, "laplace_location").curve(sensitivity=1, b=1)
    rr = mechanism(fakes, "bernoulli").curve(p=0.75)
    composed = laplace + rr.repeated(3)
    alphas = np.array([1.5, 2.0, 5.0, 32.0])
    with mp.workdps(30):
        expected = [float(mp_laplace(mp.mpf(a), 1) + 3 * mp_rr(mp.mpf(a), mp.mpf("0.75")))
                    for a in alphas]
    np.testing.assert_allclose(composed(alphas), expected, rtol=1e-13)
    # Table II values (MATH.md) through the adapter: Laplace α=2, λ=1 and RR α=2, p=0.75.
    assert laplace(np.array([2.0]))[0] == pytest.approx(0.6191236300, abs=1e-10)
    assert rr(np.array([2.0]))[0] == pytest.approx(0.8472978604, abs=1e-10)


def test_pure_dp_curves_have_their_infimum_at_large_alpha(fakes):
    """Laplace of scale 1 is 1-DP: its bound tends to 1 as α → ∞ (Mironov's curve's limit)."""
    found = accounting.dp_epsilon(mechanism(fakes, "laplace_location").curve(sensitivity=1, b=1),
                               1e-6, "mironov")
    assert found.at_boundary
    assert found.epsilon == pytest.approx(1.0, abs=1e-5)
    assert found.epsilon >= 1.0


def test_curves_known_at_orders_take_the_least_bound(fakes):
    orders = np.concatenate([1 + np.arange(1, 100) / 10, np.arange(11, 64)])
    rdp = 52 * orders / 32
    found = accounting.dp_epsilon_at_orders(orders, rdp, 1e-6, "mironov")
    with mp.workdps(30):
        bounds = [mp_bound("mironov", 52 * mp.mpf(a) / 32, mp.mpf(a), "1e-6") for a in orders]
    best = int(np.argmin([float(b) for b in bounds]))
    assert found.alpha == orders[best]
    assert found.epsilon == pytest.approx(float(bounds[best]), rel=1e-14)
    assert found.epsilon >= 11.1013293857  # never below the continuous minimum
    np.testing.assert_allclose(accounting.compose_orders(rdp, rdp), 2 * rdp, rtol=0)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-6, 2.0])
def test_delta_outside_zero_one_is_refused(delta):
    with pytest.raises(accounting.AccountingError, match="delta must lie in"):
        accounting.dp_epsilon(accounting.RdpCurve(lambda a: a), delta)


# --- Rao-DP ----------------------------------------------------------------------------------

def test_rao_budgets_compose_in_quadrature():
    thetas = [0.1, 0.25, 1.5, 3.0]
    with mp.workdps(30):
        expected = mp.sqrt(sum(mp.mpf(t) ** 2 for t in thetas))
    assert accounting.compose_rao(*thetas) == pytest.approx(float(expected), rel=1e-15)
    assert accounting.compose_rao(3e200, 4e200) == pytest.approx(5e200, rel=1e-15)  # no overflow
    assert accounting.compose_rao(3e-200, 4e-200) == pytest.approx(5e-200, rel=1e-15)
    assert accounting.repeated_rao(0.25, 52) == pytest.approx(0.25 * math.sqrt(52), rel=1e-15)
    with pytest.raises(accounting.AccountingError):
        accounting.compose_rao(-1.0)


def test_rao_calibration_reproduces_the_gaussian_conversion(fakes):
    """Soto 2025: the (ε, δ) Gaussian σ = Δ·sqrt(2 log(1.25/δ))/ε is ε/sqrt(2 log(1.25/δ))-Rao-DP,
    so calibrating to that θ gives back that σ; over n releases θ is shared as θ/√n."""
    gaussian = mechanism(fakes, "gaussian_location")
    epsilon, delta, sensitivity = 0.5, 1e-5, 3.0
    theta = epsilon / math.sqrt(2 * math.log(1.25 / delta))
    found = accounting.calibrate_rao(gaussian, theta, {"sensitivity": sensitivity})
    assert found.parameter == "sigma"
    assert found.value == pytest.approx(sensitivity * math.sqrt(2 * math.log(1.25 / delta))
                                        / epsilon, rel=1e-14)
    assert "closed form" in found.method
    repeated = accounting.calibrate_rao(gaussian, theta, {"sensitivity": sensitivity}, repeat=16)
    assert repeated.value == pytest.approx(4 * found.value, rel=1e-14)


@pytest.mark.parametrize("theta", [1e-6, 0.1, 1.0, 2.5, 3.1])
def test_rao_calibration_of_randomized_response_by_root_finding(fakes, theta):
    """θ = 2|asin√p − asin√(1−p)| (Soto 2025) inverts to p = sin²(π/4 + θ/4) for p > 1/2."""
    rr = mechanism(fakes, "bernoulli")
    found = accounting.calibrate_rao(rr, theta, {})
    with mp.workdps(30):
        expected = mp.sin(mp.pi / 4 + mp.mpf(theta) / 4) ** 2
    assert found.parameter == "p"
    assert found.value == pytest.approx(float(expected), rel=1e-13)
    assert "root" in found.method
    # With a generated closed form (p = (1 + sin(θ/2))/2, equal to the above) it is used.

    def rao_dp_parameter(theta):
        return (1 + np.sin(theta / 2)) / 2

    closed = accounting.calibrate_rao(dataclasses.replace(rr, rao_dp_parameter=rao_dp_parameter),
                                   theta, {})
    assert closed.method == "closed form rao_dp_parameter (derived)"
    assert closed.value == pytest.approx(float(expected), rel=1e-15)


def test_rao_calibration_refuses_a_budget_no_p_meets(fakes):
    with pytest.raises(accounting.AccountingError, match="no value of p meets"):
        accounting.calibrate_rao(mechanism(fakes, "bernoulli"), 4.0, {})  # θ < π for every p


# --- (ε, δ) and KL calibration ---------------------------------------------------------------

@pytest.mark.parametrize("epsilon, delta, repeat", [(1.0, 1e-5, 1), (11.1, 1e-6, 52),
                                                    (0.1, 1e-9, 1000)])
def test_dp_calibration_of_the_gaussian_matches_the_closed_form(fakes, epsilon, delta, repeat):
    """Under Proposition 3, n Gaussians meet (ε, δ) when
    σ = Δ·sqrt(n) / (sqrt(2)·(sqrt(log(1/δ) + ε) − sqrt(log(1/δ)))) (solve ρ + 2 sqrt(ρ L) = ε)."""
    gaussian = mechanism(fakes, "gaussian_location")
    found = accounting.calibrate_dp(gaussian, epsilon, delta, {"sensitivity": 1.0}, repeat=repeat,
                                 conversion="mironov")
    log_inverse = math.log(1 / delta)
    expected = math.sqrt(repeat) / (math.sqrt(2) * (math.sqrt(log_inverse + epsilon)
                                                    - math.sqrt(log_inverse)))
    assert found.value == pytest.approx(expected, rel=1e-9)


def test_dp_calibration_inverts_the_improved_worked_example(fakes):
    found = accounting.calibrate_dp(mechanism(fakes, "gaussian_location"), 10.3264800056, 1e-6,
                                 {"sensitivity": 1.0}, repeat=52, conversion="balle")
    assert found.value == pytest.approx(4.0, rel=1e-9)


def test_dp_calibration_of_laplace_against_mpmath(fakes):
    """Find b with ε_Prop3(100 Laplace releases) = 5 at δ = 1e-6, then check that b in mpmath
    (an interior optimum: the pure-DP bound 100/b is above 5 there)."""
    laplace = mechanism(fakes, "laplace_location")
    found = accounting.calibrate_dp(laplace, 5.0, 1e-6, {"sensitivity": 1.0}, repeat=100,
                                 conversion="mironov")
    assert 100 / found.value > 5.0
    alpha = accounting.dp_epsilon(laplace.curve(sensitivity=1, b=found.value).repeated(100), 1e-6,
                               "mironov").alpha  # only to bracket mpmath's search
    _, epsilon = mp_optimum("mironov", lambda a: 100 * mp_laplace(a, mp.mpf(found.value)),
                            1e-6, (1 + (alpha - 1) / 2, 2 * alpha))
    assert epsilon == pytest.approx(5.0, rel=1e-9)


def test_kl_calibration(fakes):
    gaussian = mechanism(fakes, "gaussian_location")
    found = accounting.calibrate_kl(gaussian, 0.5, {"sensitivity": 2.0}, repeat=8)
    assert found.value == pytest.approx(math.sqrt(8 * 4 / (2 * 0.5)), rel=1e-12)
    laplace = mechanism(fakes, "laplace_location")
    found = accounting.calibrate_kl(laplace, 0.1, {"sensitivity": 1.0})
    with mp.workdps(30):
        b = mp.findroot(lambda b: 1 / b + mp.exp(-1 / b) - 1 - mp.mpf("0.1"), 2)
    assert found.value == pytest.approx(float(b), rel=1e-10)


# --- the adapter ------------------------------------------------------------------------------

def test_adapter_reads_parameters_and_domains(fakes):
    gaussian = mechanism(fakes, "gaussian_location")
    assert gaussian.parameters == ("sensitivity", "sigma")
    assert gaussian.domains["sigma"] == (0.0, math.inf)  # derivations/gaussian_location.toml
    rr = mechanism(fakes, "bernoulli")
    assert rr.parameters == ("p",)
    assert rr.domains["p"] == (0.0, 1.0)  # derivations/bernoulli.toml
    assert accounting.available_mechanisms(fakes) == ["bernoulli", "gaussian_location",
                                                   "laplace_location"]


def test_adapter_errors_name_the_problem(fakes):
    with pytest.raises(accounting.AccountingError, match="unknown mechanism 'nope'.*bernoulli"):
        accounting.load_mechanism("nope", fakes)
    with pytest.raises(accounting.AccountingError, match="identifiers"):
        accounting.load_mechanism("../etc/passwd", fakes)
    with pytest.raises(accounting.AccountingError, match="poisson.py has no rdp_epsilon"):
        accounting.load_mechanism("poisson", fakes)
    gaussian = mechanism(fakes, "gaussian_location")
    with pytest.raises(accounting.AccountingError, match="needs a value for sigma"):
        gaussian.curve(sensitivity=1)
    with pytest.raises(accounting.AccountingError, match="no parameter 'b'"):
        gaussian.curve(sensitivity=1, sigma=1, b=2)
    with pytest.raises(accounting.AccountingError, match="sigma must lie in"):
        gaussian.theta(sensitivity=1, sigma=-1)


# --- CLI ---------------------------------------------------------------------------------------

def run(capsys, *argv):
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_account_prints_the_worked_example(fakes, capsys):
    status, out, _ = run(capsys, "account", "--mechanism", "gaussian_location", "--sigma", "4",
                         "--repeat", "52", "--delta", "1e-6", "--generated", str(fakes))
    assert status == 0
    assert "11.1013293857" in out and "10.3264800056" in out
    assert "Proposition 3" in out and "Theorem 21" in out
    assert f"{0.25 * math.sqrt(52):.10g}" in out  # Rao-DP: Δ/σ per release, composed over 52


def test_cli_account_json(fakes, capsys):
    status, out, _ = run(capsys, "account", "--mechanism", "gaussian_location",
                         "--param", "sigma=4", "--repeat", "52", "--json",
                         "--generated", str(fakes))
    assert status == 0
    summary = json.loads(out)
    (release,) = summary["releases"]
    assert release["parameters"] == {"sensitivity": 1.0, "sigma": 4.0}
    assert release["repeat"] == 52
    assert release["theta_per_release"] == pytest.approx(0.25, rel=1e-15)
    assert summary["dp"]["mironov"]["epsilon"] == pytest.approx(11.1013293857, abs=5e-11)
    assert summary["dp"]["mironov"]["alpha"] == pytest.approx(3.916, abs=5e-4)
    assert summary["dp"]["balle"]["epsilon"] == pytest.approx(10.3264800056, abs=5e-11)
    assert summary["rao_dp"]["theta"] == pytest.approx(0.25 * math.sqrt(52), rel=1e-15)
    assert summary["kl"]["total"] == pytest.approx(52 / 32, rel=1e-15)


def test_cli_account_composes_a_sequence_of_mechanisms(fakes, capsys):
    """52 Gaussians (σ = 4), 50 Laplace (b = 10) and 20 randomized responses (p = 0.55):
    curves add, Rao-DP budgets add in quadrature, KL adds."""
    status, out, _ = run(capsys, "account", "--mechanism", "gaussian_location", "--sigma", "4",
                         "--repeat", "52", "--with", "laplace_location:b=10:repeat=50",
                         "--with", "bernoulli:p=0.55:repeat=20", "--delta", "1e-6", "--json",
                         "--generated", str(fakes))
    assert status == 0
    summary = json.loads(out)
    assert [r["mechanism"] for r in summary["releases"]] == [
        "gaussian_location", "laplace_location", "bernoulli"]
    with mp.workdps(30):
        p = mp.mpf("0.55")
        theta_rr = 2 * abs(mp.asin(mp.sqrt(p)) - mp.asin(mp.sqrt(1 - p)))
        theta = mp.sqrt(52 * mp.mpf(0.25) ** 2 + 50 * mp.mpf(0.1) ** 2 + 20 * theta_rr ** 2)
        kl = 52 / mp.mpf(32) + 50 * (mp.mpf(0.1) + mp.exp(-mp.mpf(0.1)) - 1) + 20 * (
            (2 * p - 1) * mp.log(p / (1 - p)))
    assert summary["rao_dp"]["theta"] == pytest.approx(float(theta), rel=1e-13)
    assert summary["kl"]["total"] == pytest.approx(float(kl), rel=1e-13)
    def curve(a):
        return 52 * mp_gaussian(a, 4) + 50 * mp_laplace(a, 10) + 20 * mp_rr(a, mp.mpf("0.55"))

    for conversion in ("mironov", "balle"):
        found = summary["dp"][conversion]
        _, epsilon = mp_optimum(conversion, curve, 1e-6,
                                (1 + (found["alpha"] - 1) / 2, 2 * found["alpha"]))
        assert found["epsilon"] == pytest.approx(epsilon, rel=1e-12)


def test_cli_calibrate(fakes, capsys):
    status, out, _ = run(capsys, "calibrate", "--mechanism", "gaussian_location",
                         "--epsilon", "10.3264800056", "--delta", "1e-6", "--repeat", "52",
                         "--json", "--generated", str(fakes))
    assert status == 0
    result = json.loads(out)
    assert result["parameter"] == "sigma" and result["value"] == pytest.approx(4.0, rel=1e-9)
    status, out, _ = run(capsys, "calibrate", "--mechanism", "bernoulli", "--theta", "1",
                         "--generated", str(fakes))
    assert status == 0
    assert f"p = {math.sin(math.pi / 4 + 0.25) ** 2:.12g}" in out


@pytest.mark.parametrize("argv, message", [
    (["account", "--mechanism", "nope"], "unknown mechanism 'nope'"),
    (["account", "--mechanism", "gaussian_location"], "needs a value for sigma"),
    (["account", "--mechanism", "gaussian_location", "--sigma", "1", "--param", "b=2"],
     "no parameter 'b'"),
    (["account", "--mechanism", "gaussian_location", "--param", "sigma=abc"],
     "--param sigma: expected a number; got 'abc'"),
    (["account", "--mechanism", "gaussian_location", "--param", "sigma"], "NAME=VALUE"),
    (["account", "--mechanism", "gaussian_location", "--param", "sigma=nan"], "finite"),
    (["account", "--mechanism", "gaussian_location", "--sigma", "1", "--delta", "2"],
     "delta must lie in"),
    (["account", "--mechanism", "gaussian_location", "--sigma", "-1"], "sigma must lie in"),
    (["account", "--mechanism", "poisson", "--param", "x=1"], "no rdp_epsilon"),
    (["calibrate", "--mechanism", "gaussian_location", "--theta", "1", "--kl", "1"],
     "exactly one target"),
    (["calibrate", "--mechanism", "gaussian_location", "--epsilon", "1"], "go together"),
    (["calibrate", "--mechanism", "gaussian_location", "--sigma", "1", "--theta", "1"],
     "every parameter of gaussian_location has a value"),
    (["calibrate", "--mechanism", "gaussian_location", "--theta", "1", "--solve", "mu"],
     "no parameter 'mu'"),
    (["calibrate", "--mechanism", "bernoulli", "--theta", "4"], "no value of p meets"),
    (["account", "--mechanism", "bernoulli", "--p", "0.7", "--with", "nope:x=1"],
     "unknown mechanism 'nope'"),
    (["account", "--mechanism", "bernoulli", "--p", "0.7", "--with", "bernoulli:p=0.6:repeat=0"],
     "repeat must be a positive integer"),
    (["account", "--mechanism", "bernoulli", "--p", "0.7", "--with", "bernoulli:p"],
     "expected NAME=VALUE"),
])
def test_cli_bad_input_exits_2_with_a_clear_message(fakes, capsys, argv, message):
    status, _, err = run(capsys, *argv, "--generated", str(fakes))
    assert status == 2
    assert message in err


# --- the real generated modules, once part B's functions are generated ----------------------

def _generated(name):
    return name in accounting.available_mechanisms(GENERATED)


@pytest.mark.skipif(not _generated("gaussian_location"),
                    reason=f"{GENERATED}/python/gaussian_location.py has no rdp_epsilon yet")
def test_generated_gaussian_reproduces_the_worked_example(capsys, monkeypatch):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(REPOSITORY / "derivations"))
    status, out, _ = run(capsys, "account", "--mechanism", "gaussian_location", "--sigma", "4",
                         "--repeat", "52", "--delta", "1e-6", "--json",
                         "--generated", str(GENERATED))
    assert status == 0
    summary = json.loads(out)
    assert summary["dp"]["mironov"]["epsilon"] == pytest.approx(11.1013293857, abs=5e-11)
    assert summary["dp"]["balle"]["epsilon"] == pytest.approx(10.3264800056, abs=5e-11)
    assert summary["rao_dp"]["theta"] == pytest.approx(0.25 * math.sqrt(52), rel=1e-14)
    assert summary["kl"]["total"] == pytest.approx(52 / 32, rel=1e-14)


@pytest.mark.parametrize("name, values, mp_curve", [
    ("laplace_location", {"sensitivity": 1.0, "b": 2.0}, lambda a: mp_laplace(a, 2)),
    ("bernoulli", {"p": 0.75}, lambda a: mp_rr(a, mp.mpf("0.75"))),
])
def test_generated_curves_convert_like_mpmath(name, values, mp_curve):
    if not _generated(name):
        pytest.skip(f"{GENERATED}/python/{name}.py has no rdp_epsilon yet")
    generated = accounting.load_mechanism(name, GENERATED, REPOSITORY / "derivations")
    found = accounting.dp_epsilon(generated.curve(**values).repeated(20), 1e-6, "balle")
    _, epsilon = mp_optimum("balle", lambda a: 20 * mp_curve(a), 1e-6,
                                (1 + (found.alpha - 1) / 2, 2 * found.alpha))
    assert found.epsilon == pytest.approx(epsilon, rel=1e-12)


# --- property: the continuous minimum is below the bound at every order ----------------------

def _laplace_curve(b):
    return lambda a: np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) / b,
                                  np.log((a - 1) / (2 * a - 1)) - a / b) / (a - 1)


@settings(max_examples=60, deadline=None)
@given(gaussians=st.integers(0, 200), sigma=st.floats(0.5, 20),
       laplaces=st.integers(0, 200), b=st.floats(0.5, 20),
       log_delta=st.floats(-30, -2), conversion=st.sampled_from(sorted(accounting.CONVERSIONS)))
def test_minimum_is_below_the_bound_at_every_order(gaussians, sigma, laplaces, b, log_delta,
                                                   conversion):
    if gaussians + laplaces == 0:
        gaussians = 1
    curve = accounting.compose(accounting.RdpCurve(lambda a: gaussians * a / (2 * sigma**2)),
                            accounting.RdpCurve(lambda a: laplaces * _laplace_curve(b)(a)))
    delta = math.exp(log_delta)
    found = accounting.dp_epsilon(curve, delta, conversion)
    orders = 1 + np.geomspace(1e-3, 1e4, 400)
    bounds = accounting.conversion_epsilon(curve(orders), orders, delta, conversion)
    assert found.epsilon <= max(bounds.min(), 0.0) * (1 + 1e-12) + 1e-12
    # and it is the bound at the order it reports
    assert found.epsilon == pytest.approx(
        max(float(accounting.conversion_epsilon(curve(np.array([found.alpha])),
                                              np.array([found.alpha]), delta, conversion)[0]),
            0.0), rel=1e-12, abs=1e-12)


def test_a_curve_failing_at_some_orders_narrows_the_search():
    """A numeric curve that raises beyond α = 50 still converts (the optimum is near 3.9);
    one that raises everywhere reports its own error."""
    def gaussian_until_50(alpha):
        alpha = np.asarray(alpha, dtype=float)
        if np.any(alpha > 50):
            raise ValueError("quadrature did not converge")
        return 52 * alpha / 32

    found = accounting.dp_epsilon(accounting.RdpCurve(gaussian_until_50), 1e-6, "mironov")
    assert found.epsilon == pytest.approx(11.1013293857, abs=5e-11)

    def broken(alpha):
        raise ValueError("sigma must lie in (0, oo); got -1.0")

    with pytest.raises(ValueError, match="sigma must lie in"):
        accounting.dp_epsilon(accounting.RdpCurve(broken), 1e-6)


def test_dp_calibration_of_randomized_response_against_mpmath(fakes):
    """The p > 1/2 at which 100 randomized responses are (3, 1e-6)-DP (Theorem 21), checked
    by the mpmath optimum at that p."""
    found = accounting.calibrate_dp(mechanism(fakes, "bernoulli"), 3.0, 1e-6, {}, repeat=100)
    assert 0.5 < found.value < 1.0
    alpha = accounting.dp_epsilon(mechanism(fakes, "bernoulli").curve(p=found.value).repeated(100),
                               1e-6).alpha  # only to bracket mpmath's search
    _, epsilon = mp_optimum("balle", lambda a: 100 * mp_rr(a, mp.mpf(found.value)), 1e-6,
                            (1 + (alpha - 1) / 2, 2 * alpha))
    assert epsilon == pytest.approx(3.0, rel=1e-9)
