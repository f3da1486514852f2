"""Tests of the privacy loss of one release (raosym/privacy_loss.py) and of the PLDs built from
it for mechanisms dp_accounting has no model for (raosym/pld.py).

Independent references written here: the hockey-stick curves in closed form (the analytic
Gaussian mechanism of Balle and Wang 2018; Laplace; randomized response; Cauchy, whose
crossings f_D = e^ε f_D' solve a quadratic and whose masses are arctangents), evaluated with
mpmath; and a composition of Cauchy and logistic losses by NumPy convolution, from the
textbook densities and quantile functions (not the generated code).
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import mpmath as mp
import numpy as np
import pytest

from raosym import accounting, cli, pld, privacy_loss

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    monkeypatch.chdir(REPOSITORY)


def mechanism(name):
    return accounting.load_mechanism(name)


# ---------------------------------------------------------------------------------------------
# Single-release hockey-stick curves against closed forms


def gaussian_delta(epsilon, mu):
    """Balle and Wang (2018): δ(ε) = Φ(μ/2 - ε/μ) - e^ε Φ(-μ/2 - ε/μ), μ = Δ/σ."""
    with mp.workdps(40):
        mu, epsilon = mp.mpf(mu), mp.mpf(epsilon)
        return float(mp.ncdf(mu / 2 - epsilon / mu) - mp.exp(epsilon) * mp.ncdf(-mu / 2 - epsilon / mu))


def laplace_delta(epsilon, ratio):
    """Laplace noise of scale b at sensitivity Δ, ratio = Δ/b: δ(ε) = 1 - e^{(ε - Δ/b)/2} for
    0 ≤ ε < Δ/b (the outputs below 0 carry loss Δ/b, those between 0 and Δ a linear loss),
    0 beyond."""
    return max(0.0, -math.expm1((epsilon - ratio) / 2))


def cauchy_delta(epsilon, s, sensitivity):
    """Cauchy noise: f_D > e^ε f_D' between the roots of (1 - e^ε)x² - 2Δx + Δ² + s²(1 - e^ε),
    and the masses are arctangents: δ = F(x₂) - F(x₁) - e^ε (G(x₂) - G(x₁))."""
    with mp.workdps(40):
        s, d, e = mp.mpf(s), mp.mpf(sensitivity), mp.exp(mp.mpf(epsilon))
        a, b, c = 1 - e, -2 * d, d**2 + s**2 * (1 - e)
        if a == 0:  # ε = 0: f_D > f_D' left of the midpoint
            x1, x2 = -mp.inf, d / 2
        elif b**2 - 4 * a * c <= 0:  # ε is at least the greatest loss
            return 0.0
        else:
            root = mp.sqrt(b**2 - 4 * a * c)
            x1, x2 = sorted([(-b - root) / (2 * a), (-b + root) / (2 * a)])
        mass = lambda x, centre: mp.atan((x - centre) / s) / mp.pi
        return float(mass(x2, 0) - mass(x1, 0) - e * (mass(x2, d) - mass(x1, d)))


EPSILONS = (0.0, 0.05, 0.2, 0.5, 1.0)


def test_gaussian_hockey_stick_is_balle_and_wangs():
    curve = privacy_loss.hockey_stick(mechanism("gaussian_location"), sensitivity=1.0, sigma=0.7)
    for epsilon, delta in zip(EPSILONS + (3.0, 6.0), curve.delta(EPSILONS + (3.0, 6.0))):
        assert delta == pytest.approx(gaussian_delta(epsilon, 1 / 0.7), rel=1e-10)


def test_laplace_hockey_stick_against_its_closed_form():
    curve = privacy_loss.hockey_stick(mechanism("laplace_location"), sensitivity=1.0, b=2.0)
    for epsilon in EPSILONS:
        assert curve.delta(epsilon) == pytest.approx(laplace_delta(epsilon, 0.5), rel=1e-10,
                                                     abs=1e-15)


@pytest.mark.parametrize("p", [0.55, 0.75, 0.999])
def test_randomized_response_hockey_stick_is_exact(p):
    curve = privacy_loss.hockey_stick(mechanism("bernoulli"), p=p)
    for epsilon in EPSILONS:
        # The truth output carries loss log(p/(1-p)) > ε, the other a negative one.
        assert curve.delta(epsilon) == pytest.approx(max(0.0, p - math.exp(epsilon) * (1 - p)),
                                                     rel=1e-13, abs=1e-16)


@pytest.mark.parametrize("s", [0.5, 4.0])
def test_cauchy_hockey_stick_against_its_closed_form(s):
    curve = privacy_loss.hockey_stick(mechanism("cauchy"), sensitivity=1.0, s=s)
    for epsilon in EPSILONS:
        assert curve.delta(epsilon) == pytest.approx(cauchy_delta(epsilon, s, 1.0), rel=1e-10)


def test_inverse_of_the_hockey_stick_curve():
    for delta in (1e-2, 1e-6, 1e-12):
        epsilon = privacy_loss.dp_epsilon(mechanism("gaussian_location"), delta,
                                          sensitivity=1.0, sigma=0.7)
        assert gaussian_delta(epsilon, 1 / 0.7) == pytest.approx(delta, rel=1e-9)
    # Laplace: solving 1 - e^{(ε - Δ/b)/2} = δ gives ε = Δ/b + 2 log(1 - δ).
    epsilon = privacy_loss.dp_epsilon(mechanism("laplace_location"), 1e-3, sensitivity=1.0, b=2.0)
    assert epsilon == pytest.approx(0.5 + 2 * math.log1p(-1e-3), rel=1e-10)
    # A δ the mechanism meets at ε = 0 gives 0.
    assert privacy_loss.dp_epsilon(mechanism("bernoulli"), 0.6, p=0.75) == 0.0


def test_pure_dp_is_the_greatest_loss():
    loss = privacy_loss.load_loss(mechanism("laplace_location"), {"sensitivity": 1.0, "b": 4.0},
                                  pld._spec("laplace_location", None))
    assert loss.loss_range() == pytest.approx((-0.25, 0.25), rel=1e-14)


# ---------------------------------------------------------------------------------------------
# PLDs built from the generated loss


def single_release_pld(name, values, interval, pessimistic):
    loss = privacy_loss.load_loss(mechanism(name), values, pld._spec(name, None))
    return pld._from_loss(loss, interval, pessimistic)


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.3])
def test_cauchy_single_release_pld_brackets_the_exact_delta(epsilon):
    pytest.importorskip("dp_accounting")
    exact = cauchy_delta(epsilon, 2.0, 1.0)
    values = {"sensitivity": 1.0, "s": 2.0}
    upper = single_release_pld("cauchy", values, 1e-4, True).get_delta_for_epsilon(epsilon)
    lower = single_release_pld("cauchy", values, 1e-4, False).get_delta_for_epsilon(epsilon)
    assert lower <= exact <= upper
    assert upper - lower <= 2e-4  # one grid step of loss moves δ by at most about that


def cauchy_loss(x, s, d):
    return np.log1p(((x - d) ** 2 - x**2) / (s**2 + x**2))


def logistic_loss(x, s, d):
    # log f(x)/f(x - d) for f(t) = e^{-t/s}/(s(1 + e^{-t/s})²), written with logaddexp.
    return -d / s - 2 * np.logaddexp(0, -x / s) + 2 * np.logaddexp(0, -(x - d) / s)


QUANTILES = {
    "cauchy": (lambda u, s: s * np.tan(np.pi * (u - 0.5)), cauchy_loss),
    "logistic": (lambda u, s: s * np.log(u / (1 - u)), logistic_loss),
}


def convolved_epsilon(name, s, d, repeat, delta, interval=2e-5, cells=2_000_000):
    """ε at δ of ``repeat`` releases, by NumPy: the output axis cut into ``cells`` cells of
    equal probability (the quantile function), each cell's loss at its middle rounded to the
    nearest multiple of ``interval``, the loss distribution convolved ``repeat`` times (FFT),
    δ(ε) = Σ p_k (1 - e^{ε - l_k})₊ solved by bisection. Rounding to the nearest is neither
    pessimistic nor optimistic: its error is a small fraction of ``interval`` per release."""
    quantile, loss = QUANTILES[name]
    u = (np.arange(cells) + 0.5) / cells
    losses = loss(quantile(u, s), s, d)
    index = np.rint(losses / interval).astype(np.int64)
    low = index.min()
    pmf = np.bincount(index - low) / cells
    size = repeat * (len(pmf) - 1) + 1
    spectrum = np.fft.rfft(pmf, 2 ** math.ceil(math.log2(size)))
    composed = np.fft.irfft(spectrum**repeat)[:size]
    grid = (np.arange(size) + repeat * low) * interval
    keep = composed > 1e-18
    grid, composed = grid[keep], composed[keep]

    def hockey_stick(epsilon):
        return np.sum(composed * np.clip(-np.expm1(epsilon - grid), 0, None))

    low_e, high_e = 0.0, float(grid.max())
    for _ in range(100):
        middle = (low_e + high_e) / 2
        low_e, high_e = (middle, high_e) if hockey_stick(middle) > delta else (low_e, middle)
    return high_e


@pytest.mark.parametrize("name, s, repeat", [("cauchy", 1.0, 10), ("logistic", 2.0, 20)])
def test_tight_epsilon_of_unmodelled_noise_matches_a_numpy_convolution(name, s, repeat):
    pytest.importorskip("dp_accounting")
    release = accounting.Release(mechanism(name), {"sensitivity": 1.0, "s": s}, repeat)
    guarantee = pld.pld_epsilon([release], 1e-6)
    (model,) = guarantee.models
    assert "generated privacy_loss" in model
    reference = convolved_epsilon(name, s, 1.0, repeat, 1e-6)
    slack = 2e-5 * repeat  # the reference's own rounding, at most half a step per release
    assert guarantee.epsilon_optimistic - slack <= reference <= guarantee.epsilon + slack
    # One grid step per release (and the pessimistic tails, 1e-15 of δ, a little more).
    assert guarantee.epsilon - guarantee.epsilon_optimistic <= guarantee.error_bound * 1.00001


def test_generic_discretization_of_the_gaussian_brackets_the_analytic_epsilon():
    """The generic path on Gaussian noise (which otherwise gets dp_accounting's own model)."""
    pytest.importorskip("dp_accounting")
    values = {"sensitivity": 1.0, "sigma": 4.0}
    epsilons = [single_release_pld("gaussian_location", values, 1e-4, pessimistic)
                .self_compose(52).get_epsilon_for_delta(1e-6) for pessimistic in (True, False)]
    assert epsilons[1] <= 9.70691744 <= epsilons[0] <= epsilons[1] + 52e-4 * 1.00001


def test_cli_account_pld_of_cauchy_noise(capsys):
    pytest.importorskip("dp_accounting")
    status = cli.main(["account", "--mechanism", "cauchy", "--param", "s=4", "--repeat", "4",
                       "--accountant", "pld", "--json"])
    import json

    result = json.loads(capsys.readouterr().out)["dp"]["pld"]
    assert status == 0
    assert "generated privacy_loss" in result["models"][0]
    low, high = result["discretization"]["epsilon_bracket"]
    assert low <= result["epsilon"] == high


# ---------------------------------------------------------------------------------------------
# What cannot be discretized


def test_a_density_that_does_not_integrate_to_one_is_refused():
    def log_density(x):  # twice a Cauchy density
        return math.log(2) - np.log(np.pi * (1 + x**2))

    loss = privacy_loss.ContinuousLoss(log_density, lambda x: cauchy_loss(x, 1.0, 1.0), 1.0,
                                       (0.0, 1.0))
    with pytest.raises(accounting.AccountingFailure, match="integrates to 2.*cannot be discretized"):
        loss.rounded(1e-4)


def test_an_infinite_discrete_support_is_refused():
    spec = SimpleNamespace(name="poissonish", support=SimpleNamespace(
        kind="integers", points=(), text="integers >= 0", discrete=True))
    with pytest.raises(accounting.AccountingError, match="not a finite set of numbers"):
        privacy_loss.discrete_log_masses(mechanism("bernoulli"), {"p": 0.6}, spec)


def test_bad_epsilon_and_delta_are_refused():
    curve = privacy_loss.hockey_stick(mechanism("bernoulli"), p=0.75)
    with pytest.raises(accounting.AccountingError, match="finite and ≥ 0"):
        curve.delta(-1.0)
    with pytest.raises(accounting.AccountingError, match=r"delta must lie in \(0, 1\)"):
        curve.epsilon(1.5)
