"""Tests of ``raosym plot rdp`` (raosym/plot.py).

The curves come from independent fake mechanism modules (tests/test_account.py writes them
from Mironov's Table II); the plotted data are checked against mpmath, the files by their
format signatures.
"""

from __future__ import annotations

from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from test_account import mp_gaussian, mp_laplace, mp_rr, write_fake_generated

from raosym import cli, plot

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(REPOSITORY / "derivations"))
    return write_fake_generated(tmp_path / "generated")


REFERENCES = {
    "bernoulli": lambda a, p: mp_rr(a, mp.mpf(p)),
    "laplace_location": lambda a, b: mp_laplace(a, mp.mpf(b)),
    "gaussian_location": lambda a, sigma: mp_gaussian(a, mp.mpf(sigma)),
}
KL = {
    "bernoulli": lambda p: (2 * p - 1) * mp.log(p / (1 - p)),
    "laplace_location": lambda b: 1 / b + mp.exp(-1 / b) - 1,
    "gaussian_location": lambda sigma: 1 / (2 * sigma ** 2),
}


def test_default_figure_plots_mironovs_curves(fakes):
    figure = plot.rdp_figure(generated=fakes, alpha_max=8.0)
    axes = figure.get_axes()
    assert len(axes) == 3
    for panel, ax in zip(plot.MIRONOV_FIGURE_1, axes):
        curves = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
        markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
        assert len(curves) == len(panel.values) == len(markers)
        for value, line, marker in zip(panel.values, curves, markers):
            alphas, epsilons = line.get_xdata(), line.get_ydata()
            assert alphas.min() > 1.0 and alphas.max() == pytest.approx(8.0)
            with mp.workdps(30):
                picks = np.linspace(1, len(alphas) - 1, 6).astype(int)
                expected = [float(REFERENCES[panel.mechanism](mp.mpf(alphas[i]), value))
                            for i in picks]
                kl = float(KL[panel.mechanism](mp.mpf(value)))
            np.testing.assert_allclose(epsilons[picks], expected, rtol=1e-9)
            assert marker.get_xdata()[0] == 1.0
            assert marker.get_ydata()[0] == pytest.approx(kl, rel=1e-12)
    # Table II at α = 2 on the Laplace panel (b = 1): 0.6191236300.
    laplace = next(line for line in axes[1].get_lines() if line.get_linestyle() == "-")
    assert np.interp(2.0, laplace.get_xdata(), laplace.get_ydata()) == pytest.approx(
        0.6191236300, abs=1e-4)


@pytest.mark.parametrize("suffix, signature", [(".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF-")])
def test_cli_writes_the_format_of_the_suffix(fakes, tmp_path, capsys, suffix, signature):
    output = tmp_path / f"rdp{suffix}"
    status = cli.main(["plot", "rdp", str(output), "--generated", str(fakes),
                        "--panel", "laplace_location:b=0.5,1:sensitivity=1", "--alpha-max", "4"])
    assert status == 0
    assert output.read_bytes().startswith(signature)
    assert f"wrote {output}" in capsys.readouterr().out


def test_panel_option_sets_the_curves(fakes):
    panel = plot.parse_panel("gaussian_location:sigma=0.5,2:sensitivity=3")
    assert panel == plot.Panel("gaussian_location", "sigma", (0.5, 2.0), {"sensitivity": 3.0})
    figure = plot.rdp_figure((panel,), generated=fakes, alpha_max=3.0, ymax=None)
    line = figure.get_axes()[0].get_lines()[0]
    # α·Δ²/(2σ²) with Δ = 3, σ = 0.5
    np.testing.assert_allclose(line.get_ydata(), line.get_xdata() * 9 / 0.5, rtol=1e-15)


@pytest.mark.parametrize("argv, message", [
    (["out.svg"], "must end in .png or .pdf"),
    (["missing/out.png"], "does not exist"),
    (["out.png", "--panel", "nope:x=1"], "unknown mechanism 'nope'"),
    (["out.png", "--panel", "laplace_location"], "expects MECHANISM:PARAM=V1,V2"),
    (["out.png", "--panel", "laplace_location:b=one"], "expected a number; got 'one'"),
    (["out.png", "--panel", "laplace_location:b=1:sensitivity=1,2"], "only the first"),
    (["out.png", "--panel", "laplace_location:b=1:sigma=2"], "no parameter 'sigma'"),
    (["out.png", "--alpha-max", "1"], "greater than 1"),
])
def test_cli_bad_input_exits_2(fakes, tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    status = cli.main(["plot", "rdp", *argv, "--generated", str(fakes)])
    assert status == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".png", ".pdf"])
def test_the_same_figure_gives_the_same_bytes(fakes, tmp_path, suffix):
    """No timestamp in the files, so a committed figure does not drift between runs."""
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    for output in (first, second):
        assert cli.main(["plot", "rdp", str(output), "--generated", str(fakes)]) == 0
    assert first.read_bytes() == second.read_bytes()


def test_appendix_figures(tmp_path):
    """`raosym generate --pdf` draws the RDP figure the appendix includes, from the committed
    generated modules; without those modules it draws nothing (the appendix skips it)."""
    written = plot.appendix_figures(REPOSITORY / "generated", tmp_path)
    assert written == [tmp_path / name for name in
                       ("rdp_curves.pdf", "composition_bounds.pdf", "composition_weeks.tex")]
    assert all(path.read_bytes().startswith(b"%PDF") for path in written[:2])
    assert "\\begin{tabular}" in written[2].read_text()
    assert plot.appendix_figures(tmp_path / "nothing", tmp_path / "nowhere") == []
    appendix = (REPOSITORY / "generated" / "latex" / "appendix.tex").read_text()
    assert "\\includegraphics[width=\\textwidth]{rdp_curves.pdf}" in appendix


# --- publication defaults (issue 17) ---------------------------------------------------------


def test_png_resolution_and_vector_pdf(fakes, tmp_path):
    from PIL import Image

    png, pdf = tmp_path / "rdp.png", tmp_path / "rdp.pdf"
    for output in (png, pdf):
        assert cli.main(["plot", "rdp", str(output), "--generated", str(fakes)]) == 0
    with Image.open(png) as image:
        assert min(image.info["dpi"]) >= 200
        assert image.size[0] >= 2000  # three panels, 10.8 inches wide
    assert b"/Subtype /Image" not in pdf.read_bytes()  # vector: no raster image inside


@pytest.mark.parametrize("name, label", [
    ("mu", r"$\mu$"), ("sigma", r"$\sigma$"), ("sigma_2", r"$\sigma_{2}$"), ("b", "$b$"),
    ("N", "$N$"), ("nu", r"$\nu$"), ("lam", r"$\lambda$"), ("epsilon", r"$\varepsilon$"),
    ("sensitivity", r"$\Delta$"), ("rate", r"$\mathrm{rate}$"),
])
def test_parameter_names_are_typeset(name, label):
    assert plot.math_label(name) == label


def test_family_names_are_titles():
    folder = REPOSITORY / "derivations"
    assert plot.family_title("generalized_gaussian", folder) == \
        "Generalized Gaussian location-scale family"
    assert plot.family_title("no_such_family", folder) == "No such family"


def test_labels_legends_outside_and_the_clipped_curve_marked(fakes):
    """Greek labels; each legend lies below its axes, off the data; the Gaussian σ = 1 curve
    α/2 leaves the axis top 2.5 at α = 5 and is marked there (▲), its label says so."""
    figure = plot.rdp_figure(generated=fakes, alpha_max=8.0, ymax=2.5)
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    for ax in figure.get_axes():
        assert ax.get_xlabel() == r"order $\alpha$"
        legend = ax.get_legend()
        assert legend.get_window_extent(renderer).y1 < ax.get_window_extent(renderer).y0
    gaussian = figure.get_axes()[2]
    assert gaussian.get_title() == "Gaussian\n$\\Delta = 1$"
    labels = [text.get_text() for text in gaussian.get_legend().get_texts()]
    assert labels[0].startswith(r"$\sigma = 1$ (▲ above 2.5 at $\alpha$ = 5")
    (mark,) = [line for line in gaussian.get_lines() if line.get_marker() == "^"]
    assert mark.get_xdata()[0] == pytest.approx(5.0, rel=1e-3)
    assert mark.get_ydata()[0] == 2.5
    custom = plot.rdp_figure((plot.parse_panel("gaussian_location:sigma=2"),),
                             generated=fakes, alpha_max=3.0)
    assert custom.get_axes()[0].get_title().startswith("Gaussian location family")
