"""Figures drawn from the generated modules: ``raosym plot FIGURE ...``.

Where it sits: after the pipeline, beside the accounting layer (:mod:`raosym.account`). It
draws what ``raosym generate`` emitted; nothing is derived here. Figures:

- ``geodesics``: geodesic rays and Rao balls of a two-coordinate family
  (:mod:`raosym.geodesic_plot`);
- ``rdp``: RDP budget curves ε(α) of mechanisms for α in (1, α_max], one panel per mechanism,
  in the style of Mironov 2017, Figure 1 (randomized response, Laplace, Gaussian);
  the KL divergence, the α → 1 limit, is marked at α = 1.

Matplotlib is used through its object-oriented API on an Agg canvas (no pyplot, no global
backend switch), and the output format follows the file's suffix (.png or .pdf).
:func:`add_commands` registers ``plot`` with one sub-command per figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from raosym import account

#: Legend symbols for parameter names.
_SYMBOLS = {"sigma": "σ", "lambda_": "λ", "nu": "ν", "mu": "μ"}

#: Output formats by file suffix.
FORMATS = {".png": "png", ".pdf": "pdf"}


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
        raise account.AccountingError(f"--alpha-max must be greater than 1; got {alpha_max!r}")
    # Orders from just above 1 (the curves are continuous there) to alpha_max.
    alphas = 1.0 + (alpha_max - 1.0) * np.linspace(0.0, 1.0, points + 1)[1:] ** 2
    alphas = np.concatenate([[1.0 + 1e-6], alphas])
    figure = Figure(figsize=(4.0 * len(panels), 3.6), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for panel, ax in zip(panels, axes):
        mechanism = account.load_mechanism(panel.mechanism, generated)
        for value in panel.values:
            values = account.with_default_sensitivity(
                mechanism, {**panel.fixed, panel.parameter: value})
            curve = mechanism.curve(**values)
            label = f"{_SYMBOLS.get(panel.parameter, panel.parameter)} = {value:g}"
            (line,) = ax.plot(alphas, curve(alphas), label=label)
            if mechanism.kl_divergence is not None:
                ax.plot([1.0], [mechanism.kl(**values)], "o", color=line.get_color(),
                        markersize=3)
        ax.set_title(panel.title or panel.mechanism)
        ax.set_xlabel("order α")
        ax.set_xlim(1.0, alpha_max)
        ax.set_ylim(0.0, ymax)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    axes[0].set_ylabel("RDP budget ε(α)")
    return figure


def save(figure, output: str | Path) -> Path:
    """Write the figure in the format named by the output's suffix."""
    output = Path(output)
    fmt = FORMATS.get(output.suffix.lower())
    if fmt is None:
        raise account.AccountingError(
            f"{output}: the output must end in {' or '.join(FORMATS)} (the format)")
    if not output.parent.is_dir():
        raise account.AccountingError(f"{output}: the folder {output.parent} does not exist")
    # Fixed metadata, so the same figure gives the same bytes.
    metadata = {"Software": "raosym"} if fmt == "png" else {"Creator": "raosym",
                                                            "CreationDate": None}
    figure.savefig(output, format=fmt, metadata=metadata)
    return output


def parse_panel(text: str) -> Panel:
    """``MECHANISM:PARAM=V1,V2,...[:NAME=VALUE...]``, e.g. ``laplace_location:b=1,2:sensitivity=1``.

    The first assignment is the parameter that varies; numbers are read with float(),
    nothing is evaluated.
    """
    mechanism, *assignments = text.split(":")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", mechanism) or not assignments:
        raise account.AccountingError(
            f"--panel expects MECHANISM:PARAM=V1,V2[:NAME=VALUE...]; got {text!r}")
    parsed = []
    for assignment in assignments:
        name, equals, numbers = assignment.partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise account.AccountingError(f"--panel {text!r}: expected NAME=VALUE, got "
                                          f"{assignment!r}")
        parsed.append((name, tuple(_number(n, f"--panel {name}") for n in numbers.split(","))))
    (parameter, values), rest = parsed[0], parsed[1:]
    for name, numbers in rest:
        if len(numbers) != 1:
            raise account.AccountingError(f"--panel {text!r}: only the first parameter "
                                          f"({parameter}) takes several values")
    return Panel(mechanism, parameter, values, {n: v[0] for n, v in rest})


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise account.AccountingError(f"{where}: expected a number; got {text!r}") from None
    if not math.isfinite(value):
        raise account.AccountingError(f"{where}: expected a finite number; got {text!r}")
    return value


def add_commands(subparsers) -> None:
    """Register ``plot`` and its figures on the ``raosym`` command's subparsers."""
    plot = subparsers.add_parser("plot", help="draw figures from the generated modules")
    figures = plot.add_subparsers(dest="figure", required=True, metavar="FIGURE")
    _add_rdp(figures)
    _add_geodesics(figures)


def appendix_figures(generated: str | Path, folder: Path) -> list[Path]:
    """The figures the appendix includes, drawn into ``folder`` from the modules in
    ``generated`` (``rdp_curves.pdf`` when the three mechanisms of Mironov's Figure 1 were
    generated; nothing otherwise). Returns the files written."""
    needed = [Path(generated) / "python" / f"{panel.mechanism}.py" for panel in MIRONOV_FIGURE_1]
    if not all(path.is_file() for path in needed):
        return []
    return [save(rdp_figure(generated=generated), folder / "rdp_curves.pdf")]


def _add_geodesics(figures) -> None:
    from raosym import geodesic_plot

    geodesics = figures.add_parser(
        "geodesics", help="geodesics and Rao balls of a two-coordinate family",
        description="Draw geodesic rays from a centre (the exponential map of the derived "
                    "metric) and Rao balls as geodesic circles, with the level sets of the "
                    "generated rao_distance over them.")
    geodesic_plot.add_arguments(geodesics)


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
                          f"(the sensitivity defaults to {account.DEFAULT_SENSITIVITY:g}, as "
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

