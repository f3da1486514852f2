"""Tests of Mironov 2017, Figure 2 (raosym/composition_plot.py, ``raosym plot composition``).

The references are written here: Mironov's Table II curve of randomized response and the
bounds minimized by mpmath over δ′ and α; the paper's findings (the RDP bound is below every
generic bound; the generic Proposition 4 bound is above advanced composition) are checked
wherever the bounds lie below the trivial bound 1/δ₀.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.image
import mpmath as mp
import numpy as np
import pytest

from raosym import accounting, cli, composition_plot
from raosym.cli.accounting import parse_release

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_composition_plot")

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    monkeypatch.chdir(REPOSITORY)


@pytest.fixture(scope="module")
def mechanisms():
    return [composition_plot.pure_mechanism(parse_release(text, REPOSITORY / "generated"))
            for text in composition_plot.DEFAULT_ROWS]


def test_the_pure_dp_epsilon_is_the_mechanisms():
    rr = composition_plot.pure_mechanism(parse_release("bernoulli:p=0.525", None))
    assert rr.epsilon == pytest.approx(math.log(0.525 / 0.475), rel=1e-14)
    laplace = composition_plot.pure_mechanism(parse_release("laplace_location:b=10", None))
    assert laplace.epsilon == pytest.approx(0.1, rel=1e-12)  # Δ/b


@pytest.mark.parametrize("baseline", [1e-3, 1e-6, 1e-9])
def test_the_papers_findings(mechanisms, baseline):
    k = np.arange(1, 1001)
    trivial = -math.log(baseline)
    for mechanism in mechanisms:
        found = {name: np.minimum(value, trivial)  # no bound need exceed 1/δ₀
                 for name, value in composition_plot.bounds(k, mechanism, baseline).items()}
        generic = np.minimum.reduce([found["naive"], found["advanced"], found["generic"]])
        assert np.all(found["rdp"] <= generic + 1e-12), "RDP below every generic bound"
        below = found["advanced"] < trivial
        assert below.sum() > 300
        assert np.all(found["generic"][below] > found["advanced"][below]), \
            "Proposition 4 above advanced composition"


def mironov_randomized_response(alpha, p):
    """Mironov 2017, Table II."""
    return mp.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / (
        alpha - 1)


def test_rdp_bound_against_mpmath(mechanisms):
    rr = mechanisms[0]
    with mp.workdps(30):
        p, k, baseline = mp.mpf("0.525"), 100, mp.mpf("1e-6")

        def bound(alpha):
            return (alpha - 1) / alpha * k * mironov_randomized_response(alpha, p) \
                - mp.log(baseline) / alpha

        alphas = [1 + mp.mpf(10) ** (u / mp.mpf(50)) for u in range(-200, 301)]
        best = min(alphas, key=bound)
        exact = mp.findroot(lambda a: mp.diff(bound, a), best)
        reference = float(bound(exact))
    value = float(composition_plot.rdp_bound([k], rr, 1e-6)[0])
    assert reference <= value <= reference + 1e-5  # a grid's least value: never below


def test_advanced_and_generic_bounds_against_mpmath():
    epsilon, k, baseline = 0.1, 100, 1e-6
    with mp.workdps(30):
        def advanced(t):  # t = log δ′
            composed = epsilon * mp.sqrt(2 * k * -t) + k * epsilon * mp.expm1(epsilon)
            return mp.log(mp.exp(composed) * baseline + mp.exp(t)) - mp.log(baseline)

        ts = [-mp.mpf(700) * mp.mpf(10) ** (-u / mp.mpf(20)) for u in range(200)]
        t = mp.findroot(lambda s: mp.diff(advanced, s), min(ts, key=advanced))
        reference = float(advanced(t))

        def generic(alpha):
            return 2 * k * epsilon**2 * (alpha - 1) - mp.log(baseline) / alpha

        alpha = mp.findroot(lambda a: mp.diff(generic, a), 3)
        generic_reference = float(generic(alpha))
    value = float(composition_plot.advanced_bound([k], epsilon, baseline)[0])
    assert value == pytest.approx(reference, rel=1e-12)
    assert float(composition_plot.generic_bound([k], epsilon, baseline)[0]) == pytest.approx(
        generic_reference, rel=1e-13)


def test_panels_are_titled_by_the_family_and_typeset_parameters():
    laplace = composition_plot.pure_mechanism(parse_release("laplace_location:b=10", None))
    assert laplace.label == r"Laplace location family, $\Delta = 1$, $b = 10$"
    assert "_" not in laplace.label  # never the file name laplace_location


def test_gaussian_noise_is_not_pure_dp():
    with pytest.raises(accounting.AccountingError, match="is not pure DP"):
        composition_plot.pure_mechanism(parse_release("gaussian_location:sigma=1", None))


def test_cli_draws_the_figure_at_print_resolution(tmp_path, capsys):
    from PIL import Image

    output = tmp_path / "figure2.png"
    assert cli.main(["plot", "composition", str(output)]) == 0
    assert f"wrote {output}" in capsys.readouterr().out
    with Image.open(output) as image:
        assert round(image.info["dpi"][0]) == 300
        width, height = image.size
    # 3 baselines × 4.2 in by 2 mechanisms × 3.4 in at 300 dpi, give or take the tight bbox
    assert abs(width - 3780) < 40 and abs(height - 2040) < 40
    assert cli.main(["plot", "composition", str(output), "--dpi", "200"]) == 0
    with Image.open(output) as image:
        assert round(image.info["dpi"][0]) == 200


@pytest.mark.parametrize("argv, message", [
    (["--baselines", "0.5,2"], "a probability in (0, 1)"),
    (["--releases", "0"], "--releases must be a positive integer"),
    (["--row", "gaussian_location:sigma=1"], "is not pure DP"),
])
def test_cli_bad_input(tmp_path, capsys, argv, message):
    assert cli.main(["plot", "composition", str(tmp_path / "f.png"), *argv]) == 2
    assert message in capsys.readouterr().err
