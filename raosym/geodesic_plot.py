"""Pictures of a family's geometry: geodesics and Rao balls drawn in its coordinates.

After the pipeline. Input: a :class:`~raosym.verify.checks.Verified` family with two
coordinates (its derived metric and Christoffel symbols) and, when it has one, its generated
module. Output: a matplotlib figure, saved as PNG or PDF (``raosym plot geodesics NAME``).

- **Geodesics** are rays of the exponential map at a centre: ``γ'' = -Γ(γ)[γ', γ']`` started
  with unit speed in evenly spaced directions of an orthonormal frame of ``g`` at the centre,
  integrated in double precision by scipy's DOP853 from the derived Christoffel symbols.
- **Rao balls** of radius r are drawn twice, by independent routes: as the ends of the rays of
  length r (the geodesic circle), and as the level set ``rao_distance(centre, θ) = r`` of the
  generated module's closed form, when it has one. That the two coincide is a visual check of
  the emitted distance (and ``tests/test_geodesic_plot.py`` checks it numerically).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from raosym.cli.arguments import name_and_value, number
from raosym.errors import RaosymError

# SymPy, SciPy and the verify stage are imported by the functions that use them: `raosym
# plot` registers this module's command line, which must not import them (`raosym --help`).
if TYPE_CHECKING:
    from raosym.spec.model import Domain
    from raosym.verify.checks import Verified
    from raosym.verify.geodesic import MetricModel

#: Relative and absolute tolerances of the ray integration (a picture, and a check to ~1e-8).
RAY_TOLERANCE = 1e-11


@dataclass(frozen=True)
class Ray:
    """One geodesic from the centre: its sampled path and its points at the ball radii."""

    direction: float  # angle in the orthonormal frame at the centre
    path: np.ndarray  # shape (samples, k)
    arc: np.ndarray  # shape (samples,): the arc length, i.e. the Rao distance from the centre
    at_radius: dict[float, np.ndarray]  # radius -> point (missing if the ray left the domain)


def typical_value(domain: Domain) -> float:
    """A value well inside a domain: 0 on the line, lower + 1 on a half-line, the midpoint of a
    bounded interval."""
    import sympy

    lower, upper = domain.lower, domain.upper
    if lower.is_finite and upper.is_finite:
        value = (lower + upper) / 2
    elif lower.is_finite:
        value = lower + 1
    elif upper.is_finite:
        value = upper - 1
    else:
        value = sympy.S.Zero
    return int(sympy.floor(value)) if domain.integer else float(value)


def orthonormal_directions(model: MetricModel, centre, count: int) -> list[tuple[float, np.ndarray]]:
    """``count`` unit vectors of the metric at the centre, evenly spaced in angle in the frame
    of the Cholesky factor ``g = L Lᵀ``: ``v = L⁻ᵀ (cos φ, sin φ)`` has ``vᵀ g v = 1``. One
    coordinate has the two directions ``±1/sqrt(g)``."""
    g = np.array([[float(entry) for entry in row] for row in model.metric_matrix(centre)])
    factor = np.linalg.cholesky(g)
    if model.size == 1:
        return [(0.0, 1 / factor[0]), (math.pi, -1 / factor[0])]
    angles = np.linspace(0, 2 * math.pi, count, endpoint=False)
    return [(angle, np.linalg.solve(factor.T, [math.cos(angle), math.sin(angle)]))
            for angle in angles]


def exponential_ray(model: MetricModel, centre, velocity, radii, length: float,
                    direction: float = 0.0) -> Ray:
    """The geodesic ``t ↦ exp_centre(t·velocity)`` for ``t ∈ [0, length]`` (unit speed, so t is
    arc length), stopped where it leaves the domain."""
    from scipy.integrate import solve_ivp

    from raosym.verify.geodesic import geodesic_rhs

    rhs = geodesic_rhs(model.float_christoffel, model.size)

    def flow(_t, state):
        return np.asarray(rhs(list(state)), dtype=float)

    def leaves(_t, state):
        return 1.0 if model.inside([float(x) for x in state[:model.size]]) else -1.0

    leaves.terminal = True
    state = np.concatenate([np.asarray(centre, dtype=float), velocity])
    solution = solve_ivp(flow, (0.0, length), state, method="DOP853", dense_output=True,
                         rtol=RAY_TOLERANCE, atol=RAY_TOLERANCE, events=leaves)
    end = solution.t[-1]
    samples = np.linspace(0.0, end, 200)
    path = solution.sol(samples)[:model.size].T
    at_radius = {r: solution.sol(r)[:model.size] for r in radii if r <= end}
    return Ray(direction, path, samples, at_radius)


def rays(verified: Verified, centre, radii, *, count: int = 16,
         constants: dict | None = None) -> list[Ray]:
    """Geodesic rays from the centre, long enough to reach the largest radius."""
    model = _model(verified, constants)
    return [exponential_ray(model, centre, velocity, radii, max(radii), angle)
            for angle, velocity in orthonormal_directions(model, centre, count)]


def load_generated_module(folder: str | Path, name: str) -> ModuleType | None:
    """``folder/python/NAME.py`` imported by path, or None when it was not generated."""
    path = Path(folder) / "python" / f"{name}.py"
    if not path.is_file():
        return None
    from raosym.accounting import import_by_path

    return import_by_path(name, path)


def geodesic_figure(verified: Verified, centre, radii, *, constants: dict | None = None,
                    module: ModuleType | None = None, count: int = 16):
    """A matplotlib figure of geodesic rays and Rao balls around ``centre``."""
    from matplotlib.figure import Figure

    spec = verified.derivation.spec
    if len(spec.coordinates) > 2:
        raise RaosymError(f"{spec.name}: geodesic pictures need one or two coordinates, the "
                          f"family has {len(spec.coordinates)}")
    from raosym.plot import math_label

    constants = constants or {}
    figure = Figure(figsize=(5.2, 5.0), layout="constrained")
    axes = figure.add_subplot()
    if len(spec.coordinates) == 1:
        _distance_profile(axes, verified, centre, radii, constants, module)
        return figure
    for ray in rays(verified, centre, radii, count=count, constants=constants):
        axes.plot(ray.path[:, 0], ray.path[:, 1], color="0.55", linewidth=0.8)
    circles = rays(verified, centre, radii, count=180, constants=constants)
    rings = [segment for radius in radii for segment in _ring(circles, radius)]
    for index, segment in enumerate(rings):
        axes.plot(*segment.T, color="tab:blue", linewidth=1.6,
                  label="geodesic circles" if index == 0 else None)
    box = _view(axes, spec, np.vstack([*rings, np.asarray(centre, dtype=float)[None, :]]))
    if hasattr(module, "rao_distance") and _closed_form(verified):
        _level_sets(axes, module, spec, centre, radii, constants, box)
    axes.plot(*centre, "o", color="black", label="centre")
    names = [p.name for p in spec.coordinates]
    axes.set_xlabel(math_label(names[0]))
    axes.set_ylabel(math_label(names[1]))
    axes.set_title(_title(spec, radii, constants), fontsize="medium")
    axes.plot([], [], color="0.55", linewidth=0.8, label="geodesics from the centre")
    _legend_below(axes)
    return figure


def _view(axes, spec, points, ratio: float = 20.0, margin: float = 0.06):
    """The axes' limits: the balls and the centre with a margin (rays that run far, or out of
    the domain, are cut at the frame), on a logarithmic axis for a positive coordinate whose
    balls span more than ``ratio`` (a scale's balls grow geometrically: on a linear axis the
    small ones are a smudge). Returns the limits ``[(low, high), (low, high)]``."""
    box = []
    for index, (parameter, set_scale, set_limits) in enumerate(zip(
            spec.coordinates, (axes.set_xscale, axes.set_yscale),
            (axes.set_xlim, axes.set_ylim))):
        low, high = float(points[:, index].min()), float(points[:, index].max())
        logarithmic = (parameter.domain.lower == 0 and not parameter.domain.upper.is_finite
                       and low > 0 and high / low > ratio)
        if logarithmic:
            set_scale("log")
            widen = (high / low) ** margin
            low, high = low / widen, high * widen
        else:
            widen = margin * (high - low) or margin * max(1.0, abs(high))
            low, high = low - widen, high + widen
        low, high = _clip(low, parameter.domain, +1), _clip(high, parameter.domain, -1)
        set_limits(low, high)
        box.append((low, high))
    return box


def _title(spec, radii, constants) -> str:
    """The family's title, the radii and the constants held fixed (in mathtext)."""
    from raosym.plot import assignment_label

    fixed = ", ".join(assignment_label(k, v) for k, v in constants.items())
    return (f"{spec.title.split(' (')[0]}\nRao balls of radius "
            f"{', '.join(f'{r:g}' for r in radii)}" + (f" ({fixed})" if fixed else ""))


def _legend_below(axes) -> None:
    """The legend under the axes, outside the rays and balls it explains."""
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, fontsize="small",
                frameon=False)


def _ring(circles: list[Ray], radius: float) -> list[np.ndarray]:
    """The geodesic circle through the ray ends at ``radius``: when every ray reaches it,
    one closed periodic cubic spline in the ray angle through them (smooth, and through every
    computed point); when some rays leave the domain first (a manifold that ends at a finite
    distance, as the inverse Gaussian's at mu -> oo), the arcs between them, each through
    consecutive ends, never a chord across the gap."""
    from scipy.interpolate import CubicSpline

    ends = [(ray.direction, ray.at_radius[radius]) for ray in circles if radius in ray.at_radius]
    if len(ends) == len(circles) and len(ends) >= 4:
        points = np.array([point for _, point in ends])
        angles = np.array([angle for angle, _ in ends] + [ends[0][0] + 2 * math.pi])
        spline = CubicSpline(angles, np.vstack([points, points[:1]]), bc_type="periodic")
        return [spline(np.linspace(angles[0], angles[-1], 8 * len(ends) + 1))]
    reached = [radius in ray.at_radius for ray in circles]
    if not any(reached):
        return []
    start = reached.index(False)  # arcs run between rays that did not reach the radius
    order = [(start + k) % len(circles) for k in range(len(circles))]
    arcs, current = [], []
    for index in order:
        if reached[index]:
            current.append(circles[index].at_radius[radius])
        elif current:
            arcs.append(np.array(current))
            current = []
    if current:
        arcs.append(np.array(current))
    return arcs


def _distance_profile(axes, verified, centre, radii, constants, module):
    """One coordinate: the Rao distance from the centre along the two geodesic rays (arc
    length against the coordinate), the balls as intervals, and the generated rao_distance."""
    spec = verified.derivation.spec
    both = rays(verified, centre, radii, constants=constants)
    for ray in both:
        axes.plot(ray.path[:, 0], ray.arc, color="tab:blue", linewidth=1.6,
                  label="arc length of the geodesic" if ray is both[0] else None)
    if hasattr(module, "rao_distance") and _closed_form(verified):
        theta = np.sort(np.concatenate([ray.path[:, 0] for ray in both]))
        axes.plot(theta, module.rao_distance(centre, theta[:, None], **constants),
                  color="tab:orange", linestyle="dashed", label="generated rao_distance")
    for radius in radii:
        ends = [ray.at_radius[radius][0] for ray in both if radius in ray.at_radius]
        axes.plot(ends, [radius] * len(ends), color="0.55", linewidth=0.8, marker="|")
    from raosym.plot import math_label

    axes.plot(centre[0], 0, "o", color="black", label="centre")
    axes.set_xlabel(math_label(spec.coordinates[0].name))
    axes.set_ylabel("Rao distance from the centre")
    axes.set_title(_title(spec, radii, constants), fontsize="medium")
    axes.plot([], [], color="0.55", linewidth=0.8, marker="|", label="Rao balls (intervals)")
    _legend_below(axes)


def _level_sets(axes, module, spec, centre, radii, constants, box):
    """The generated rao_distance's level sets on a grid over the view ``box`` (evenly
    spaced in the axis's own scale, linear or logarithmic)."""
    domains = [p.domain for p in spec.coordinates]
    scales = (axes.get_xscale(), axes.get_yscale())
    axis = [np.geomspace(_clip(a, d, +1), _clip(b, d, -1), 240) if scale == "log"
            else np.linspace(_clip(a, d, +1), _clip(b, d, -1), 240)
            for (a, b), d, scale in zip(box, domains, scales)]
    grid = np.stack(np.meshgrid(*axis), axis=-1)
    distance = module.rao_distance(np.asarray(centre, dtype=float), grid, **constants)
    axes.contour(grid[..., 0], grid[..., 1], distance, levels=sorted(radii),
                 colors="tab:orange", linestyles="dashed", linewidths=1.0)
    axes.plot([], [], color="tab:orange", linestyle="dashed", label="rao_distance level sets")


def _clip(value: float, domain: Domain, side: int) -> float:
    """Keep a grid edge strictly inside the domain (a contour grid must not touch a boundary)."""
    bound = domain.lower if side > 0 else domain.upper
    if bound.is_finite and (value - float(bound)) * side <= 0:
        return float(bound) + side * 1e-6 * max(1.0, abs(float(bound)))
    return float(value)


def _closed_form(verified: Verified) -> bool:
    distance = verified.derivation.distance
    return distance is not None and distance.closed


def _model(verified: Verified, constants: dict | None) -> MetricModel:
    from raosym.verify.geodesic import metric_model

    spec = verified.derivation.spec
    values = {}
    for parameter in spec.constants:
        if parameter.name not in (constants or {}):
            raise RaosymError(f"{spec.name}: give a value for the constant {parameter.name} "
                              f"(in {parameter.domain.describe()})")
        values[parameter.symbol] = float(constants[parameter.name])
    return metric_model(verified.derivation, values)


# ----------------------------------------------------------------------------- command line


def add_arguments(parser) -> None:
    """The arguments of ``raosym plot geodesics`` (registered by :mod:`raosym.plot`)."""
    parser.add_argument("family", metavar="NAME_OR_PATH", help="a two-coordinate family")
    parser.add_argument("--centre", "--center", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="a coordinate of the centre (default: a typical value of each)")
    parser.add_argument("--constant", action="append", default=[], metavar="NAME=VALUE",
                        help="a value for each constant of the family")
    parser.add_argument("--radii", default="0.5,1,2",
                        help="comma-separated radii of the Rao balls (default: 0.5,1,2)")
    parser.add_argument("--rays", type=int, default=16, help="geodesic rays drawn (default 16)")
    parser.add_argument("--generated", default="generated",
                        help="folder of the generated modules, for the level sets of "
                             "rao_distance (default: generated)")
    parser.add_argument("--output", "-o", default=None,
                        help="the figure file, .png or .pdf (default: NAME-geodesics.png)")
    parser.add_argument("--no-cache", action="store_true",
                        help="derive again instead of reading the derivation cache")
    parser.set_defaults(run=command)


def command(arguments) -> int:
    from raosym import pipeline
    from raosym.cache import DerivationCache
    from raosym.plot import FORMATS, save

    # Arguments are checked before the (slow) derivation.
    radii = _radii(arguments.radii)
    output = arguments.output or f"{Path(arguments.family).stem}-geodesics.png"
    if Path(output).suffix.lower() not in FORMATS:
        raise RaosymError(f"--output {output}: expected a .png or .pdf file")
    cache = None if arguments.no_cache else DerivationCache()
    family = pipeline.run_family(arguments.family, cache=cache)
    spec = family.derivation.spec
    dependent = [p for p in spec.coordinates if p.domain.dependent]
    if dependent:
        # The figure's box and its level-set grid are products of intervals.
        raise RaosymError(f"{spec.name}: the geodesic figure is drawn on a box of coordinate "
                          f"intervals; {dependent[0].name} ranges over "
                          f"{dependent[0].domain.describe()}, which depends on another "
                          "coordinate (not drawn yet)")
    centre_values = _assignments(arguments.centre, "--centre", [p.name for p in spec.coordinates])
    constants = _assignments(arguments.constant, "--constant", [p.name for p in spec.constants])
    from raosym.spec.points import domain_at

    # In order: a domain may use the coordinates before it (p2 in (0, 1 - p1)).
    point = {}
    for p in spec.coordinates:
        point[p.symbol] = centre_values.get(p.name, typical_value(domain_at(p.domain, point)))
    centre = list(point.values())
    given = [("--centre", p, value) for p, value in zip(spec.coordinates, centre)]
    given += [("--constant", p, constants[p.name]) for p in spec.constants if p.name in constants]
    for option, parameter, value in given:
        if not domain_at(parameter.domain, point).contains(value):
            raise RaosymError(f"{option} {parameter.name}={value:g} lies outside "
                              f"{parameter.domain.describe()}")
    module = load_generated_module(arguments.generated, spec.name)
    figure = geodesic_figure(family, centre, radii, constants=constants, module=module,
                             count=arguments.rays)
    print(f"wrote {save(figure, output)}")
    return 0


def _assignments(items: list[str], option: str, names: list[str]) -> dict[str, float]:
    """``["mu=0", "sigma=2"]`` -> ``{"mu": 0.0, "sigma": 2.0}``, names checked."""
    values = {}
    for item in items:
        name, text = name_and_value(item, f"{option} {item}", names=names, error=RaosymError)
        values[name] = number(text, f"{option} {item}", error=RaosymError)
    return values


def _radii(text: str) -> list[float]:
    try:
        radii = sorted(float(piece) for piece in text.split(","))
    except ValueError:
        raise RaosymError(f"--radii {text}: expected comma-separated positive numbers") from None
    if not radii or radii[0] <= 0 or not all(map(math.isfinite, radii)):
        raise RaosymError(f"--radii {text}: expected comma-separated positive numbers")
    return radii
