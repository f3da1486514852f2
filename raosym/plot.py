"""Figures drawn from the generated modules: ``raosym plot FIGURE ...``.

Where it sits: after the pipeline, beside the accounting layer (:mod:`raosym.accounting`). It
draws what ``raosym generate`` emitted; nothing is derived here. Figures:

- ``geodesics``: geodesic rays and Rao balls of a two-coordinate family
  (:mod:`raosym.geodesic_plot`);
- ``composition``: Mironov 2017, Figure 2, bounds on self-composed pure-DP mechanisms
  (:mod:`raosym.composition_plot`);
- ``rdp``: RDP budget curves ε(α) of mechanisms for α in (1, α_max], one panel per mechanism,
  in the style of Mironov 2017, Figure 1 (randomized response, Laplace, Gaussian);
  the KL divergence, the α → 1 limit, is marked at α = 1.

Matplotlib is used through its object-oriented API on an Agg canvas (no pyplot, no global
backend switch), and the output format follows the file's suffix: vector PDF for .pdf, a
300 dpi PNG for .png. Figures are labelled for print: a parameter named like a Greek letter
is typeset as one (``mu`` as μ, ``sigma_2`` as σ₂: :func:`math_label`), a
family by its title, not its file name (:func:`family_title`); legends sit outside the data;
a curve that leaves the top of the axis is marked where it does (▲) and its legend entry
says so. :func:`add_commands` registers ``plot`` with one sub-command per figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from raosym import accounting
from raosym.cli.accounting import parse_release
from raosym.cli.arguments import IDENTIFIER, named_assignments, number

#: Output formats by file suffix.
FORMATS = {".png": "png", ".pdf": "pdf"}
#: Resolution of PNG output (PDF is vector).
PNG_DPI = 300

#: Names typeset as Greek letters (mathtext commands of the same name); ``lam``/``lambda_``
#: are the spellings a derivation file uses for λ, ``epsilon`` is printed as ε (varepsilon).
_GREEK = {name: name for name in (
    "alpha", "beta", "gamma", "delta", "zeta", "eta", "theta", "iota", "kappa", "lambda",
    "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
    "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi",
    "Omega")} | {"epsilon": "varepsilon", "lam": "lambda", "lambda_": "lambda"}


def math_label(name: str) -> str:
    """A parameter name as matplotlib mathtext: ``mu`` -> ``$\\mu$``, ``sigma_2`` ->
    ``$\\sigma_{2}$``, ``b`` -> ``$b$``, ``sensitivity`` -> ``$\\Delta$`` (the sensitivity
    is Δ in the literature), ``rate`` -> ``$\\mathrm{rate}$``."""
    if name == "sensitivity":
        return r"$\Delta$"
    if name in _GREEK:
        return f"$\\{_GREEK[name]}$"
    match = re.fullmatch(r"([A-Za-z]+?)_?([0-9]+|[a-z])?", name)
    if match and match.group(2) and (match.group(1) in _GREEK or len(match.group(1)) == 1):
        base, subscript = match.groups()
        symbol = f"\\{_GREEK[base]}" if base in _GREEK else base
        return f"${symbol}_{{{subscript}}}$"
    if re.fullmatch(r"[A-Za-z]", name):
        return f"${name}$"
    return f"$\\mathrm{{{name.replace('_', ' ')}}}$"


def family_title(name: str, derivations=None) -> str:
    """A family's title for a figure: its derivation file's ``title`` up to the first
    parenthesis ("Generalized Gaussian location-scale family"), or, without a file, its name
    with spaces and a capital ("Generalized gaussian"), never the file name itself."""
    from raosym.errors import RaosymError

    folder = Path(derivations) if derivations else None
    if folder is None:
        from raosym.pipeline import derivations_folder

        folder = derivations_folder()
    path = folder / f"{name}.toml"
    if path.is_file():
        from raosym.spec import load_spec

        try:
            title = load_spec(path).title
        except RaosymError:
            title = ""
        if title:
            return title.split(" (")[0].strip()
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def assignment_label(name: str, value: float) -> str:
    """``sigma``, 2 -> ``$\\sigma = 2$`` (one mathtext string)."""
    return f"{math_label(name)[:-1]} = {value:g}$"


def legend_below(ax, handles=None, columns: int = 2):
    """A legend under the axes (outside the data), in ``columns`` columns."""
    handles = handles if handles is not None else ax.get_legend_handles_labels()[0]
    return ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2),
                     ncols=columns, fontsize="small", frameon=False)


def mark_clipped(ax, alphas, values, ymax, color) -> float | None:
    """Mark (▲ on the top edge) where a curve leaves the axis at ``ymax``; the order there,
    or None when the curve stays inside."""
    if ymax is None:
        return None
    above = ~(np.asarray(values) <= ymax)  # inf and nan count as above
    if not above.any():
        return None
    index = int(np.argmax(above))
    if index == 0:
        where = float(alphas[0])
    else:  # linear interpolation between the last point inside and the first outside
        a0, a1, v0, v1 = alphas[index - 1], alphas[index], values[index - 1], values[index]
        where = float(a0 + (ymax - v0) * (a1 - a0) / (v1 - v0)) if np.isfinite(v1) else float(a1)
    ax.plot([where], [ymax], marker="^", linestyle="None", color=color, markersize=6,
            clip_on=False, zorder=5)
    return where


@dataclass(frozen=True)
class Panel:
    """One panel of the RDP figure: a mechanism, the parameter that varies, its values and
    the other parameters held fixed."""

    mechanism: str
    parameter: str
    values: tuple[float, ...]
    fixed: dict = field(default_factory=dict)
    title: str = ""


#: Mironov 2017, Figure 1: comparable settings of the three basic mechanisms (sensitivity 1).
#: RR p = 0.9 levels off near log 9 ≈ 2.2, Laplace b = 1 near 1, the Gaussian σ = 1 is α/2.
MIRONOV_FIGURE_1 = (
    Panel("bernoulli", "p", (0.55, 0.6, 0.75, 0.9), {}, "Randomized response"),
    Panel("laplace_location", "b", (1.0, 2.0, 3.0, 5.0), {"sensitivity": 1.0}, "Laplace"),
    Panel("gaussian_location", "sigma", (1.0, 2.0, 3.0, 5.0), {"sensitivity": 1.0}, "Gaussian"),
)


def rdp_figure(panels=MIRONOV_FIGURE_1, *, generated=None, alpha_max: float = 8.0,
               ymax: float | None = 2.5, points: int = 400):
    """A matplotlib Figure with one panel of RDP curves per :class:`Panel`."""
    from matplotlib.figure import Figure

    if not alpha_max > 1.0:
        raise accounting.AccountingError(f"--alpha-max must be greater than 1; got {alpha_max!r}")
    # Orders from just above 1 (the curves are continuous there) to alpha_max.
    alphas = 1.0 + (alpha_max - 1.0) * np.linspace(0.0, 1.0, points + 1)[1:] ** 2
    alphas = np.concatenate([[1.0 + 1e-6], alphas])
    figure = Figure(figsize=(3.6 * len(panels), 3.5), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for panel, ax in zip(panels, axes):
        mechanism = accounting.load_mechanism(panel.mechanism, generated)
        fixed = {}
        for value in panel.values:
            values = accounting.with_default_sensitivity(
                mechanism, {**panel.fixed, panel.parameter: value})
            fixed = {k: v for k, v in values.items() if k != panel.parameter}
            curve = mechanism.curve(**values)
            epsilons = curve(alphas)
            (line,) = ax.plot(alphas, epsilons)
            leaves = mark_clipped(ax, alphas, epsilons, ymax, line.get_color())
            line.set_label(assignment_label(panel.parameter, value)
                           + ("" if leaves is None else f" (▲ above {ymax:g} at "
                                                        f"$\\alpha$ = {leaves:.3g})"))
            if mechanism.kl_divergence is not None:
                ax.plot([1.0], [mechanism.kl(**values)], "o", color=line.get_color(),
                        markersize=3, clip_on=False, zorder=4)
        title = panel.title or family_title(panel.mechanism)
        if fixed:
            title += "\n" + ", ".join(assignment_label(k, v) for k, v in fixed.items())
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel(r"order $\alpha$")
        ax.set_xlim(1.0, alpha_max)
        ax.set_ylim(0.0, ymax)
        ax.grid(True, alpha=0.3)
        legend_below(ax)
    axes[0].set_ylabel(r"RDP budget $\varepsilon(\alpha)$ (dot: KL at $\alpha = 1$)")
    return figure


def save(figure, output: str | Path, dpi: int = PNG_DPI) -> Path:
    """Write the figure in the format named by the output's suffix (a PNG at ``dpi``)."""
    output = Path(output)
    fmt = FORMATS.get(output.suffix.lower())
    if fmt is None:
        raise accounting.AccountingError(
            f"{output}: the output must end in {' or '.join(FORMATS)} (the format)")
    if not output.parent.is_dir():
        raise accounting.AccountingError(f"{output}: the folder {output.parent} does not exist")
    # Fixed metadata, so the same figure gives the same bytes.
    metadata = {"Software": "raosym"} if fmt == "png" else {"Creator": "raosym",
                                                            "CreationDate": None}
    figure.savefig(output, format=fmt, metadata=metadata, dpi=dpi, bbox_inches="tight",
                   pad_inches=0.05)
    return output


def parse_panel(text: str) -> Panel:
    """``MECHANISM:PARAM=V1,V2,...[:NAME=VALUE...]``, e.g. ``laplace_location:b=1,2:sensitivity=1``.

    The first assignment is the parameter that varies; numbers are read with float(),
    nothing is evaluated.
    """
    mechanism, assignments = named_assignments(text, f"--panel {text!r}")
    if not IDENTIFIER.match(mechanism) or not assignments:
        raise accounting.AccountingError(
            f"--panel expects MECHANISM:PARAM=V1,V2[:NAME=VALUE...]; got {text!r}")
    parsed = [(name, tuple(number(n, f"--panel {name}") for n in numbers.split(",")))
              for name, numbers in assignments]
    (parameter, values), rest = parsed[0], parsed[1:]
    for name, numbers in rest:
        if len(numbers) != 1:
            raise accounting.AccountingError(f"--panel {text!r}: only the first parameter "
                                          f"({parameter}) takes several values")
    return Panel(mechanism, parameter, values, {n: v[0] for n, v in rest})


def add_commands(subparsers) -> None:
    """Register ``plot`` and its figures on the ``raosym`` command's subparsers."""
    plot = subparsers.add_parser("plot", help="draw figures from the generated modules")
    figures = plot.add_subparsers(dest="figure", required=True, metavar="FIGURE")
    _add_rdp(figures)
    _add_geodesics(figures)
    _add_composition(figures)


def appendix_figures(generated: str | Path, folder: Path) -> list[Path]:
    """The figures and tables the appendix includes, drawn into ``folder`` from the modules in
    ``generated``: ``rdp_curves.pdf`` (Mironov 2017, Figure 1) when its three mechanisms were
    generated, ``composition_bounds.pdf`` (Figure 2) when randomized response and Laplace noise
    were, and ``composition_weeks.tex`` (52 weekly releases) when Gaussian and Laplace noise
    were; nothing for what is missing. Returns the files written."""
    written = []
    python = Path(generated) / "python"
    if all((python / f"{panel.mechanism}.py").is_file() for panel in MIRONOV_FIGURE_1):
        written.append(save(rdp_figure(generated=generated), folder / "rdp_curves.pdf"))
    from raosym import composition_plot

    rows = composition_plot.DEFAULT_ROWS
    if all((python / f"{row.split(':')[0]}.py").is_file() for row in rows):
        mechanisms = [composition_plot.pure_mechanism(parse_release(row, generated))
                      for row in rows]
        written.append(save(composition_plot.composition_figure(mechanisms),
                            folder / "composition_bounds.pdf"))
    if all((python / f"{row.split(':')[0]}.py").is_file() for row in WEEKLY_ROWS):
        path = folder / "composition_weeks.tex"
        path.write_text(weekly_table(generated))
        written.append(path)
    return written


#: The 52 weekly releases of the appendix's composition table (Gaussian and Laplace noise of
#: scale 4 at sensitivity 1), and its δ.
WEEKLY_ROWS = ("gaussian_location:sigma=4:sensitivity=1", "laplace_location:b=4:sensitivity=1")
WEEKS = 52
WEEKLY_DELTA = 1e-6


def weekly_table(generated: str | Path) -> str:
    """The LaTeX table of 52 releases of each :data:`WEEKLY_ROWS` mechanism: the Rao-DP
    budget, ε at δ = 1e-6 from the composed RDP curve under both conversions, and the tight
    ε of the composed privacy-loss distributions (dp_accounting's PLD accountant, pessimistic
    and optimistic discretizations; a dash without dp_accounting)."""
    lines = [
        "% Written by raosym generate --pdf (raosym.plot.weekly_table) from the generated modules.",
        r"\begin{tabular}{lrrrr}",
        r"mechanism & Rao-DP $\theta$ & RDP $\to \varepsilon$ (Prop.~3) & "
        r"RDP $\to \varepsilon$ (Thm.~21) & tight $\varepsilon$ (PLD) \\",
        r"\hline",
    ]
    for text in WEEKLY_ROWS:
        release = parse_release(f"{text}:repeat={WEEKS}", generated)
        summary = accounting.account([release], delta=WEEKLY_DELTA)
        from raosym import pld

        try:
            pld.privacy_loss_distribution_module()
        except accounting.AccountingError:  # dp_accounting is an optional dependency
            tight_text = "--"
        else:
            tight = pld.pld_epsilon([release], WEEKLY_DELTA)
            tight_text = f"${tight.epsilon_optimistic:.6f}$--${tight.epsilon:.6f}$"
        parameter, value = text.split(":")[1].split("=")
        name = {"sigma": r"\sigma", "b": "b"}.get(parameter, parameter)
        label = release.mechanism.name.replace("_", r"\_")
        lines.append(
            rf"\texttt{{{label}}}, ${name} = {float(value):g}$ & "
            rf"${summary['rao_dp']['theta']:.6f}$ & ${summary['dp']['mironov']['epsilon']:.6f}$ & "
            rf"${summary['dp']['balle']['epsilon']:.6f}$ & {tight_text} \\")
    lines += [r"\end{tabular}", ""]
    return "\n".join(lines)


def _add_geodesics(figures) -> None:
    from raosym import geodesic_plot

    geodesics = figures.add_parser(
        "geodesics", help="geodesics and Rao balls of a two-coordinate family",
        description="Draw geodesic rays from a centre (the exponential map of the derived "
                    "metric) and Rao balls as geodesic circles, with the level sets of the "
                    "generated rao_distance over them.")
    geodesic_plot.add_arguments(geodesics)


def _add_composition(figures) -> None:
    from raosym import composition_plot

    composition = figures.add_parser(
        "composition", help="bounds on self-composed pure-DP mechanisms (Mironov 2017, Figure 2)",
        description="Naive composition, advanced composition with optimal δ', the generic "
                    "Proposition 4 bound and the RDP bound on Pr[f(D) ∈ S]/δ₀ for k releases "
                    "of randomized response and Laplace noise, on a log scale.")
    composition_plot.add_arguments(composition)


def _add_rdp(figures) -> None:
    rdp = figures.add_parser(
        "rdp", help="RDP budget curves of mechanisms (Mironov 2017, Figure 1)",
        description="Plot ε(α) for α in (1, ALPHA_MAX], one panel per mechanism. Default "
                    "panels: randomized response, Laplace and Gaussian at comparable settings.")
    rdp.add_argument("output", help="the figure file (.png or .pdf)")
    rdp.add_argument("--panel", action="append", default=[],
                     metavar="MECHANISM:PARAM=V1,V2[:NAME=VALUE...]",
                     help="a panel (repeatable; replaces the default panels), e.g. "
                          "laplace_location:b=0.5,1,2 or logistic:s=1,2:sensitivity=2 "
                          f"(the sensitivity defaults to {accounting.DEFAULT_SENSITIVITY:g}, as "
                          "in raosym account)")
    rdp.add_argument("--alpha-max", type=float, default=8.0, help="largest order (default 8)")
    rdp.add_argument("--ymax", type=float, default=2.5, help="top of the ε axis (default 2.5)")
    rdp.add_argument("--generated", default=None, metavar="DIR",
                     help="the generated folder holding python/NAME.py (default: generated)")
    rdp.set_defaults(run=_rdp_command)


def _rdp_command(arguments) -> int:
    panels = tuple(parse_panel(text) for text in arguments.panel) or MIRONOV_FIGURE_1
    figure = rdp_figure(panels, generated=arguments.generated, alpha_max=arguments.alpha_max,
                        ymax=arguments.ymax)
    print(f"wrote {save(figure, arguments.output)}")
    return 0

