"""Tests of the PLD accountant (raosym/pld.py) and ``raosym account --accountant pld``.

Expected figures come from outside the code under test: the analytic Gaussian mechanism
(Balle and Wang 2018; k Gaussians of noise σ compose to one with μ = √k·Δ/σ) solved for ε by
mpmath here, the literature bracket of 52 Laplace releases (MATH.md §6, dp_accounting's own
optimistic and pessimistic bounds), and an exact enumeration of composed randomized response
written in this file.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import mpmath as mp
import pytest

from raosym import accounting, cli, pld

pytest.importorskip("dp_accounting")  # CI installs it (.ci/run: pip install ".[test,dp]")

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    """The generated modules and derivation files of the repository."""
    monkeypatch.chdir(REPOSITORY)


def decreasing_root(function, target, low, high):
    """The ε in [low, high] with function(ε) = target, for a decreasing function, by
    bisection at the working precision (200 halvings)."""
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if function(middle) > target else (low, middle)
    return high


def gaussian_epsilon(mu, delta):
    """The exact ε at δ of the μ-GDP Gaussian mechanism: the root of Balle and Wang's
    δ(ε) = Φ(μ/2 - ε/μ) - e^ε Φ(-μ/2 - ε/μ), at 30 digits."""
    with mp.workdps(30):
        mu = mp.mpf(mu)

        def hockey_stick(epsilon):
            return mp.ncdf(mu / 2 - epsilon / mu) - mp.exp(epsilon) * mp.ncdf(-mu / 2 - epsilon / mu)

        return float(decreasing_root(hockey_stick, mp.mpf(delta), mp.mpf(0), 40 * mu))


def randomized_response_epsilon(p, k, delta):
    """The exact ε at δ of k randomized responses (truth with probability p): the loss is
    (2K - k)·log(p/(1-p)) with K ~ Binomial(k, p) under D, and δ(ε) = E[(1 - e^{ε-L})₊]."""
    with mp.workdps(30):
        p = mp.mpf(p)
        r = mp.log(p / (1 - p))

        def hockey_stick(epsilon):
            return mp.fsum(mp.binomial(k, j) * p**j * (1 - p)**(k - j)
                           * max(0, 1 - mp.exp(epsilon - (2 * j - k) * r)) for j in range(k + 1))

        return float(decreasing_root(hockey_stick, mp.mpf(delta), mp.mpf(0), k * r))


def release(name, repeat, **values):
    return accounting.Release(accounting.load_mechanism(name), values, repeat)


def test_52_gaussians_give_the_analytic_gaussian_epsilon():
    exact = gaussian_epsilon(math.sqrt(52) / 4, 1e-6)
    assert exact == pytest.approx(9.70691744, abs=5e-9)  # MATH.md §6
    guarantee = pld.pld_epsilon([release("gaussian_location", 52, sensitivity=1, sigma=4)], 1e-6)
    assert guarantee.epsilon_optimistic <= exact <= guarantee.epsilon
    assert guarantee.epsilon - exact <= guarantee.error_bound == pytest.approx(52e-4)
    assert guarantee.epsilon == pytest.approx(exact, abs=1e-6)  # the pessimistic PLD is tight


def test_52_laplace_releases_fall_in_the_literature_bracket():
    guarantee = pld.pld_epsilon([release("laplace_location", 52, sensitivity=1, b=4)], 1e-6)
    # The issue's 8.7692-8.7694, at four decimals (MATH.md: 8.769212 to 8.769446).
    assert 8.76915 <= guarantee.epsilon_optimistic <= guarantee.epsilon < 8.76945


@pytest.mark.parametrize("p, k", [(0.75, 10), (0.55, 40)])
def test_randomized_response_against_exact_enumeration(p, k):
    exact = randomized_response_epsilon(p, k, 1e-6)
    guarantee = pld.pld_epsilon([release("bernoulli", k, p=p)], 1e-6)
    assert guarantee.epsilon_optimistic <= exact + 1e-12
    assert exact <= guarantee.epsilon <= exact + guarantee.error_bound
    # dp_accounting's own randomized-response model (noise 2(1 - p) over two buckets) agrees.
    from dp_accounting.pld import privacy_loss_distribution

    own = privacy_loss_distribution.from_randomized_response(2 * (1 - p), 2)
    assert guarantee.epsilon == pytest.approx(
        own.self_compose(k).get_epsilon_for_delta(1e-6), abs=1e-9)


def test_a_different_noise_scale_changes_the_gaussian_model_accordingly():
    """σ = 2 at sensitivity 0.5 is the same mechanism as σ = 4 at sensitivity 1."""
    scaled = pld.pld_epsilon([release("gaussian_location", 52, sensitivity=0.5, sigma=2)], 1e-6)
    assert scaled.epsilon == pytest.approx(gaussian_epsilon(math.sqrt(52) / 4, 1e-6), abs=1e-6)


def test_noise_is_recognised_by_its_density_not_its_name():
    from raosym.spec import load_spec

    spec = load_spec(REPOSITORY / "derivations" / "generalized_gaussian.toml")
    # shape 2: exp(-(t/σ)²) is Gaussian of standard deviation σ/√2; shape 1 is Laplace.
    assert pld.recognise_noise(spec, {"N": 2.0}) == pld.KnownNoise("gaussian", 2**-0.5)
    assert pld.recognise_noise(spec, {"N": 1.0}) == pld.KnownNoise("laplace", 1.0)
    assert pld.recognise_noise(spec, {"N": 1.5}) is None
    cauchy = load_spec(REPOSITORY / "derivations" / "cauchy.toml")
    assert pld.recognise_noise(cauchy, {}) is None


def test_composition_of_different_mechanisms_is_the_product_of_gaussian_models():
    """52 Gaussians of σ = 4 with 48 of σ = 4: one Gaussian of μ = √(100)/4."""
    guarantee = pld.pld_epsilon([release("gaussian_location", 52, sensitivity=1, sigma=4),
                                 release("gaussian", 48, sensitivity=1, sigma=4)], 1e-6)
    exact = gaussian_epsilon(10 / 4, 1e-6)
    assert guarantee.epsilon_optimistic <= exact <= guarantee.epsilon <= exact + 1e-2
    assert guarantee.releases == 100


def run(capsys, *argv):
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_issue_command_line(capsys):
    status, out, _ = run(capsys, "account", "--mechanism", "gaussian_location", "--sigma", "4",
                         "--repeat", "52", "--delta", "1e-6", "--accountant", "pld", "--json")
    assert status == 0
    result = json.loads(out)["dp"]["pld"]
    exact = gaussian_epsilon(math.sqrt(52) / 4, 1e-6)
    discretization = result["discretization"]
    assert discretization["interval"] == 1e-4 and discretization["estimate"] == "pessimistic"
    low, high = discretization["epsilon_bracket"]
    assert low <= exact <= high == result["epsilon"]
    assert result["epsilon"] - exact <= discretization["error_bound"]
    assert result["epsilon"] == pytest.approx(9.70691744, abs=1e-6)
    assert result["delta"] == 1e-6


def test_cli_text_names_the_accountant_and_the_bracket(capsys):
    status, out, _ = run(capsys, "account", "--mechanism", "laplace_location", "--b", "4",
                         "--repeat", "52", "--accountant", "pld", "--pld-interval", "1e-4")
    assert status == 0
    (line,) = [line for line in out.splitlines() if "PLD" in line]
    assert "dp_accounting" in line and "pessimistic" in line and "exact ε lies in" in line
    assert "ε = 8.7694" in line


@pytest.mark.parametrize("argv, message", [
    (["--accountant", "pld", "--pld-interval", "0"], "interval must lie in (0, 1]"),
    (["--accountant", "pld", "--pld-interval", "nan"], "interval must lie in (0, 1]"),
    (["--pld-interval", "1e-3"], "--pld-interval goes with --accountant pld"),
])
def test_cli_bad_pld_input(capsys, argv, message):
    status, _, err = run(capsys, "account", "--mechanism", "gaussian_location", "--sigma", "4",
                         *argv)
    assert status == 2
    assert message in err


def test_cli_unknown_accountant(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["account", "--mechanism", "gaussian_location", "--sigma", "4",
                  "--accountant", "tight"])
    assert exit_.value.code == 2
    assert "invalid choice: 'tight'" in capsys.readouterr().err


def test_without_dp_accounting_the_error_says_how_to_install_it(capsys, monkeypatch):
    for name in [m for m in sys.modules if m == "dp_accounting" or m.startswith("dp_accounting.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import dp_accounting fails
    status, _, err = run(capsys, "account", "--mechanism", "gaussian_location", "--sigma", "4",
                         "--accountant", "pld")
    assert status == 2
    assert "pip install 'raosym[dp]'" in err and "dp_accounting" in err
