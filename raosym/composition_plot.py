"""Mironov 2017, Figure 2: bounds on the privacy loss of self-composed pure-DP mechanisms.

Where it sits: the applications layer, after emit, beside :mod:`raosym.plot` (which registers
``raosym plot composition OUT.png``). Nothing is derived here: the mechanisms' ε of pure DP and
their RDP curves are the generated ``privacy_loss`` and ``rdp_epsilon``.

For k releases of an ε₀-DP mechanism and an event S of baseline probability δ₀ = Pr[f(D') ∈ S],
four upper bounds on the multiplicative increase Pr[f(D) ∈ S]/δ₀ (each a function of k):

- naive composition: kε₀-DP, so e^{kε₀};
- advanced composition (Dwork, Rothblum and Vadhan 2010; Dwork and Roth 2014, Theorem 3.20):
  (ε′, δ′)-DP with ε′ = ε₀√(2k log(1/δ′)) + kε₀(e^{ε₀} - 1) for every δ′ in (0, 1), so
  (e^{ε′}δ₀ + δ′)/δ₀, minimized over δ′;
- the generic bound: an ε₀-DP mechanism is (α, 2αε₀²)-RDP (Mironov 2017, Proposition 4, as
  recalled here: the seed's text lost the formula), k of them (α, 2kαε₀²)-RDP, and
  Proposition 10 (probability preservation, Pr[f(D) ∈ S] ≤ (e^{ε(α)} δ₀)^{(α-1)/α}) at the best
  α, in closed form;
- the RDP bound: Proposition 10 with the mechanism's own composed curve k·ε(α), minimized over a
  grid of orders α in (1, 1e6] and α = ∞ (where the curve is ε₀: the naive bound). Every order
  gives a valid bound, so the grid's least value is one.

The curves are drawn on a log scale with the trivial bound 1/δ₀ (a probability is at most 1):
only below it do the bounds say anything, and only there is their order meaningful (at
δ₀ = 1e-2 the generic bound meets 1/δ₀, as α* reaches 1, a little before advanced composition
does, so they cross just under it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from raosym import accounting, privacy_loss
from raosym.cli.accounting import parse_release
from raosym.cli.arguments import number

#: The default rows: randomized response and Laplace noise at comparable ε₀ (≈ 0.1).
DEFAULT_ROWS = ("bernoulli:p=0.525", "laplace_location:b=10")
#: The default baseline probabilities, one column each.
DEFAULT_BASELINES = (1e-3, 1e-6, 1e-9)
#: Orders over which the RDP bound is minimized: 1 + 10^u for u from -4 to 6.
_ORDERS = 1.0 + np.logspace(-4, 6, 2001)
#: log δ′ over which advanced composition is minimized (δ′ from 1e-300 to 1 - 1e-12).
_LOG_DELTA_PRIME = -np.logspace(math.log10(700), -12, 4000)


@dataclass(frozen=True)
class PureMechanism:
    """A mechanism with its parameter values, its ε₀ of pure DP and its RDP curve."""

    label: str
    epsilon: float
    curve: accounting.RdpCurve


def pure_mechanism(release: accounting.Release) -> PureMechanism:
    """ε₀ = the greatest privacy loss (the generated ``privacy_loss`` over the outputs that
    carry mass, both pairs), checked against the generated RDP curve: a pure ε₀-DP mechanism
    has D_α ≤ ε₀ at every order, so a curve above ε₀ at α = 1e6 (Gaussian noise) is refused."""
    mechanism, values = release.mechanism, release.mechanism.check(release.values)
    curve = privacy_loss.hockey_stick(mechanism, **values)
    epsilon = max(part.greatest_loss() for part in curve.parts)
    rdp = mechanism.curve(**values)
    far = float(rdp(np.array([1e6]))[0])
    if not (math.isfinite(epsilon) and far <= epsilon * (1 + 1e-9)):
        raise accounting.AccountingError(
            f"mechanism {mechanism.name}({accounting.describe_values(values)}) is not pure DP: its RDP "
            f"curve reaches {far:.6g} at order 1e6, above the greatest loss {epsilon:.6g} found "
            "where the output has mass; Figure 2 compares bounds for ε-DP mechanisms")
    return PureMechanism(_panel_label(mechanism.name, values), epsilon, rdp)


def _panel_label(name: str, values: dict) -> str:
    """"Laplace location family, $b = 10$, $\\Delta = 1$": the family's title and its parameters
    typeset as in every raosym figure (never the file name and the raw parameter names)."""
    from raosym.plot import assignment_label, family_title

    return ", ".join([family_title(name), *(assignment_label(key, value)
                                            for key, value in values.items())])


# ---------------------------------------------------------------------------------------------
# The four bounds, as log(Pr[f(D) ∈ S]/δ₀), for arrays of k


def naive_bound(k, epsilon: float) -> np.ndarray:
    """log e^{kε₀}."""
    return np.asarray(k, dtype=float) * epsilon


def advanced_bound(k, epsilon: float, baseline: float) -> np.ndarray:
    """min over δ′ of log((e^{ε′(δ′)} δ₀ + δ′)/δ₀), ε′ of advanced composition: the least
    value on a grid of log δ′, refined by golden-section search between its neighbours (the
    objective is smooth; every δ′ gives a valid bound)."""
    k = np.atleast_1d(np.asarray(k, dtype=float))
    log_baseline = math.log(baseline)

    def objective(t):  # t = log δ′, arrays of shape (len(k), ...)
        composed = epsilon * np.sqrt(2 * k[:, None] * -t) + k[:, None] * epsilon * math.expm1(
            epsilon)
        return np.logaddexp(composed + log_baseline, t) - log_baseline

    grid = objective(np.broadcast_to(_LOG_DELTA_PRIME, (len(k), len(_LOG_DELTA_PRIME))))
    best = np.argmin(grid, axis=1)
    low = _LOG_DELTA_PRIME[np.maximum(best - 1, 0)][:, None]
    high = _LOG_DELTA_PRIME[np.minimum(best + 1, len(_LOG_DELTA_PRIME) - 1)][:, None]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        keep_left = objective(left) < objective(right)
        low, high = np.where(keep_left, low, left), np.where(keep_left, right, high)
    refined = objective((low + high) / 2)[:, 0]
    return np.minimum(refined, grid[np.arange(len(k)), best])


def generic_bound(k, epsilon: float, baseline: float) -> np.ndarray:
    """Proposition 10 with (α, 2kαε₀²)-RDP at the best α: the log-bound
    2kε₀²(α - 1) - log(δ₀)/α is least at α* = sqrt(log(1/δ₀)/(2kε₀²)), giving
    2 sqrt(2kε₀² log(1/δ₀)) - 2kε₀²; when α* ≤ 1 the infimum is at α → 1, the trivial 1/δ₀."""
    rho = 2 * np.asarray(k, dtype=float) * epsilon**2
    log_inverse = -math.log(baseline)
    best = np.sqrt(log_inverse / rho)
    return np.where(best > 1, 2 * np.sqrt(rho * log_inverse) - rho, log_inverse)


def rdp_bound(k, mechanism: PureMechanism, baseline: float) -> np.ndarray:
    """Proposition 10 with the composed curve k·ε(α): min over the orders (and α = ∞) of
    ((α - 1)/α)·k·ε(α) - log(δ₀)/α."""
    k = np.asarray(k, dtype=float)[..., None]
    curve = mechanism.curve(_ORDERS)[None, :]
    values = (_ORDERS - 1) / _ORDERS * k * curve - math.log(baseline) / _ORDERS
    values = np.where(np.isfinite(values), values, np.inf)
    return np.minimum(np.min(values, axis=-1), k[..., 0] * mechanism.epsilon)


BOUNDS = (
    ("naive", "naive composition, $e^{k\\varepsilon_0}$"),
    ("advanced", "advanced composition, optimal $\\delta'$"),
    ("generic", "Proposition 4: $(\\alpha, 2\\alpha\\varepsilon_0^2)$-RDP, optimal $\\alpha$"),
    ("rdp", "RDP of the mechanism (Proposition 10), optimal $\\alpha$"),
)


def bounds(k, mechanism: PureMechanism, baseline: float) -> dict[str, np.ndarray]:
    """The four log-bounds at the numbers of releases ``k``."""
    return {"naive": naive_bound(k, mechanism.epsilon),
            "advanced": advanced_bound(k, mechanism.epsilon, baseline),
            "generic": generic_bound(k, mechanism.epsilon, baseline),
            "rdp": rdp_bound(k, mechanism, baseline)}


# ---------------------------------------------------------------------------------------------
# The figure


def composition_figure(mechanisms, baselines=DEFAULT_BASELINES, *, releases: int = 250,
                       dpi: int = 300):
    """One row per mechanism, one column per baseline probability δ₀."""
    from matplotlib.figure import Figure

    k = np.arange(1, releases + 1)
    figure = Figure(figsize=(4.2 * len(baselines), 3.4 * len(mechanisms)), dpi=dpi,
                    layout="constrained")
    axes = figure.subplots(len(mechanisms), len(baselines), squeeze=False)
    styles = {"naive": ("tab:gray", ":"), "advanced": ("tab:blue", "--"),
              "generic": ("tab:orange", "-."), "rdp": ("tab:green", "-")}
    for row, mechanism in zip(axes, mechanisms, strict=True):
        for ax, baseline in zip(row, baselines, strict=True):
            found = bounds(k, mechanism, baseline)
            for name, label in BOUNDS:
                colour, style = styles[name]
                ax.semilogy(k, np.exp(found[name]), style, color=colour, label=label, lw=1.4)
            ax.axhline(1 / baseline, color="black", lw=0.8, alpha=0.5,
                       label="trivial: $1/\\delta_0$")
            ax.set_ylim(1.0, 10 / baseline)
            ax.set_xlim(1, releases)
            ax.set_title(f"{mechanism.label}, $\\varepsilon_0$ = {mechanism.epsilon:.3g}, "
                         f"$\\delta_0$ = {_power(baseline)}", fontsize="small")
            ax.set_xlabel("number of releases $k$")
            ax.grid(True, which="major", alpha=0.3)
        row[0].set_ylabel("bound on $\\Pr[f(D) \\in S]\\,/\\,\\delta_0$")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels),
                  fontsize="small", frameon=False)
    return figure


def _power(value: float) -> str:
    exponent = math.log10(value)
    if exponent == round(exponent):
        return f"$10^{{{int(exponent)}}}$"
    return f"{value:g}"


def add_arguments(parser) -> None:
    """The arguments of ``raosym plot composition`` (registered by :mod:`raosym.plot`)."""
    parser.add_argument("output", help="the figure file (.png or .pdf)")
    parser.add_argument("--row", action="append", default=[],
                        metavar="MECHANISM:NAME=VALUE[:...]",
                        help="a pure-DP mechanism for a row (repeatable; replaces the default "
                             "rows bernoulli:p=0.525 and laplace_location:b=10)")
    parser.add_argument("--baselines", default=",".join(f"{b:g}" for b in DEFAULT_BASELINES),
                        help="baseline probabilities δ₀, one column each (default 0.001,"
                             "1e-06,1e-09)")
    parser.add_argument("--releases", type=int, default=250,
                        help="the largest number of releases k (default 250)")
    parser.add_argument("--dpi", type=int, default=None,
                        help="resolution of a .png (default: that of every raosym figure, 300)")
    parser.add_argument("--generated", default=None, metavar="DIR",
                        help="the generated folder holding python/NAME.py (default: generated)")
    parser.set_defaults(run=command)


def command(arguments) -> int:
    from raosym.plot import PNG_DPI, save

    baselines = []
    for text in arguments.baselines.split(","):
        value = number(text, "--baselines")
        if not 0.0 < value < 1.0:
            raise accounting.AccountingError(f"--baselines: a probability in (0, 1); got {text!r}")
        baselines.append(value)
    if arguments.releases < 1:
        raise accounting.AccountingError(f"--releases must be a positive integer; got "
                                      f"{arguments.releases}")
    rows = [parse_release(text, arguments.generated)
            for text in (arguments.row or DEFAULT_ROWS)]
    figure = composition_figure([pure_mechanism(row) for row in rows], baselines,
                                releases=arguments.releases, dpi=arguments.dpi or PNG_DPI)
    print(f"wrote {save(figure, arguments.output, dpi=arguments.dpi or PNG_DPI)}")
    return 0
