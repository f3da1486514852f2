"""Geodesic pictures: the exponential map against independent distance formulas, the generated
rao_distance against the exponential map, and the figure files."""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from conftest import family_names, verified

from raosym.errors import RaosymError
from raosym.geodesic_plot import geodesic_figure, load_generated_module, rays, typical_value

RADII = [0.3, 1.0, 2.5]


def _gaussian_distance(p, q):
    """Soto (2025) / MATH.md: sqrt(2)·acosh(1 + ((μ1-μ2)²/2 + (σ1-σ2)²)/(2σ1σ2)), at 50 digits."""
    with mpmath.workdps(50):
        (m1, s1), (m2, s2) = [[mpmath.mpf(float(x)) for x in point] for point in (p, q)]
        return mpmath.sqrt(2) * mpmath.acosh(1 + ((m1 - m2) ** 2 / 2 + (s1 - s2) ** 2)
                                             / (2 * s1 * s2))


def _poincare_distance(p, q):
    """The Poincaré half-plane, the metric (dμ² + db²)/b² of Laplace (μ, b)."""
    with mpmath.workdps(50):
        (m1, s1), (m2, s2) = [[mpmath.mpf(float(x)) for x in point] for point in (p, q)]
        return mpmath.acosh(1 + ((m1 - m2) ** 2 + (s1 - s2) ** 2) / (2 * s1 * s2))


@pytest.mark.parametrize("name, distance", [("gaussian", _gaussian_distance),
                                            ("laplace", _poincare_distance)])
def test_rays_have_unit_speed_arc_length(catalog, name, distance):
    """A ray's point at arc length r lies at Rao distance r from the centre (independent
    closed forms from the literature), so the rays are geodesics started with unit speed."""
    centre = [0.7, 1.3]
    points = [(r, point) for ray in rays(verified(catalog, name), centre, RADII, count=12)
              for r, point in ray.at_radius.items()]
    assert len(points) == 12 * len(RADII)
    worst = max(abs(distance(centre, point) - r) / r for r, point in points)
    assert worst < 1e-8


def _two_coordinate_closed_forms():
    return [name for name in family_names() if name in {
        "gaussian", "laplace", "cauchy", "logistic", "student_t", "generalized_gaussian"}]


@pytest.mark.parametrize("name", _two_coordinate_closed_forms())
def test_generated_rao_distance_matches_exponential_map(catalog, generated_tree, name):
    """The emitted closed form and the numeric exponential map are independent routes."""
    family = verified(catalog, name)
    module = load_generated_module(generated_tree, name)
    if not hasattr(module, "rao_distance"):
        pytest.fail(f"generated/python/{name}.py has no rao_distance")
    spec = family.derivation.spec
    constants = {p.name: typical_value(p.domain) + 1.5 for p in spec.constants}
    centre = [typical_value(p.domain) for p in spec.coordinates]
    for ray in rays(family, centre, RADII, count=8, constants=constants):
        for radius, point in ray.at_radius.items():
            assert module.rao_distance(centre, point, **constants) == pytest.approx(
                radius, rel=1e-8)


def test_figure_files(catalog, tmp_path):
    family = verified(catalog, "gaussian")
    figure = geodesic_figure(family, [0.0, 1.0], RADII, count=8)
    for suffix, magic in ((".png", b"\x89PNG"), (".pdf", b"%PDF")):
        path = tmp_path / f"gaussian{suffix}"
        figure.savefig(path)
        assert path.read_bytes().startswith(magic)


def test_figure_labels_and_legend_outside(catalog):
    """Coordinates typeset from their names (mu, sigma: μ, σ), the legend below the axes."""
    figure = geodesic_figure(verified(catalog, "gaussian"), [0.0, 1.0], RADII, count=8)
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    (axes,) = figure.get_axes()
    assert (axes.get_xlabel(), axes.get_ylabel()) == (r"$\mu$", r"$\sigma$")
    assert axes.get_legend().get_window_extent(renderer).y1 < \
        axes.get_window_extent(renderer).y0


def test_wide_scales_are_drawn_on_a_logarithmic_axis(catalog):
    figure = geodesic_figure(verified(catalog, "gamma"), [1.0, 1.0], RADII, count=8)
    (axes,) = figure.get_axes()
    assert axes.get_yscale() == "log"


def test_a_missing_constant_is_named(catalog):
    with pytest.raises(RaosymError, match="constant nu"):
        rays(verified(catalog, "student_t"), [0.0, 1.0], RADII)


def test_one_coordinate_rays_against_the_poisson_distance(catalog, tmp_path):
    """Poisson: d(λ0, λ) = 2|√λ − √λ0| (Rao 1945; MATH.md), so the ray of arc length r ends
    at (√λ0 ± r/2)²; the figure of the distance profile is written."""
    family = verified(catalog, "poisson")
    centre = [2.0]
    ends = sorted(float(ray.at_radius[r][0]) for ray in rays(family, centre, [1.0])
                  for r in ray.at_radius)
    expected = sorted((mpmath.sqrt(2) + sign / 2) ** 2 for sign in (-1, 1))
    assert ends == pytest.approx([float(e) for e in expected], rel=1e-8)
    figure = geodesic_figure(family, centre, RADII)
    figure.savefig(tmp_path / "poisson.png")
    assert (tmp_path / "poisson.png").read_bytes().startswith(b"\x89PNG")


def test_typical_values_lie_inside(catalog):
    """Each parameter's typical value lies in its domain, a domain in earlier coordinates
    (the categorical's p2 in (0, 1 - p1)) evaluated at their typical values."""
    from raosym.spec.points import domain_at

    for name in family_names():
        outcome = catalog[name]
        if outcome.error is None:
            values = {}
            for parameter in outcome.verified.derivation.spec.parameters:
                domain = domain_at(parameter.domain, values)
                values[parameter.symbol] = typical_value(domain)
                assert domain.contains(values[parameter.symbol])


def test_a_simplex_family_is_refused_with_its_reason(tmp_path, capsys):
    from raosym.cli import main

    assert main(["plot", "geodesics", "categorical3", "--output", str(tmp_path / "c.png")]) == 2
    assert ("p2 ranges over (0, 1 - p1), which depends on another coordinate"
            in capsys.readouterr().err)
    assert not (tmp_path / "c.png").exists()


def test_load_generated_module_absent(tmp_path):
    assert load_generated_module(tmp_path, "gaussian") is None


def test_command_line_writes_the_figure(tmp_path, capsys):
    from raosym.cli import main

    output = tmp_path / "laplace.pdf"
    assert main(["plot", "geodesics", "laplace", "--radii", "0.5,1", "--rays", "6",
                 "--output", str(output)]) == 0
    assert output.read_bytes().startswith(b"%PDF")
    assert f"wrote {output}" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, message", [
    (["--centre", "sigma=-1"], "sigma=-1 lies outside (0, oo)"),
    (["--centre", "tau=1"], "NAME one of mu, sigma"),
    (["--radii", "1,-2"], "positive numbers"),
    (["--output", "figure.svg"], ".png or .pdf"),
])
def test_command_line_errors(tmp_path, capsys, monkeypatch, arguments, message):
    from raosym.cli import main

    monkeypatch.chdir(tmp_path)
    derivations = Path(__file__).resolve().parents[1] / "derivations"
    status = main(["plot", "geodesics", str(derivations / "gaussian.toml"), *arguments])
    assert status == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_balls_that_reach_the_edge_of_the_manifold_are_drawn_as_arcs():
    """The inverse Gaussian ends at a finite distance (mu -> oo is the geodesic x = 0 of its
    half-plane, MATH.md §6): from (1, 1) the ball of radius 2 reaches it, so some rays leave
    the domain first; that circle is drawn as arcs through consecutive ray ends (no chord
    across the gap), each end at distance 2 by the independent formula, while the balls of
    radius 0.5 and 1 stay closed curves; the view holds the balls, not the rays that ran off
    towards mu = 1e26."""
    from raosym import pipeline

    path = Path(__file__).resolve().parent / "families" / "inverse_gaussian.toml"
    figure = geodesic_figure(pipeline.run_family(str(path)), [1.0, 1.0], [0.5, 1.0, 2.0],
                             count=8)
    (axes,) = figure.get_axes()
    rings = [line for line in axes.get_lines() if line.get_color() == "tab:blue"]
    closed = [line for line in rings if line.get_xdata().size == 8 * 180 + 1]
    arcs = [line for line in rings if line not in closed]
    assert len(closed) == 2 and arcs
    for line in arcs:
        for mu, lam in zip(line.get_xdata(), line.get_ydata()):
            v1, v2, w1, w2 = 2.0, 2 / mpmath.sqrt(mu), 1.0, 1 / mpmath.sqrt(lam)
            distance = mpmath.sqrt(2) * mpmath.acosh(
                1 + ((v1 - v2) ** 2 / 2 + (w1 - w2) ** 2) / (2 * w1 * w2))
            assert abs(distance - 2) < 1e-7, (mu, lam, distance)
    assert axes.get_xlim()[1] < 1e8
