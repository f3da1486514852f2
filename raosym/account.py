"""Privacy accounting at run time: composition, conversion to (ε, δ)-DP and calibration.

Where it sits: after the pipeline. ``raosym generate`` emits, for every noise mechanism, the
per-release accounting functions derived and verified from its density
(``generated/python/NAME.py``: ``rdp_epsilon(alpha, ...)``, ``kl_divergence(...)``,
``rao_dp_theta(...)``, ``rao_dp_scale(sensitivity, theta, ...)``). This module is the numeric
layer on top of them; nothing here is derived or generated:

- RDP curves (:class:`RdpCurve`, callables α ↦ ε vectorized over α, or plain arrays over a set of
  orders) compose by addition (Mironov 2017, Proposition 1);
- conversion to (ε, δ)-DP minimizes over *continuous* α, with Mironov's Proposition 3
  ``ε + log(1/δ)/(α-1)`` or the improved bound of Balle et al. 2020, Theorem 21
  ``ε + log((α-1)/α) - (log δ + log α)/(α-1)``;
- Rao-DP budgets compose as ``sqrt(θ1² + θ2² + ...)`` (Soto 2025);
- calibration finds the noise parameter that meets a target budget under each definition
  (Rao-DP, (ε, δ) through RDP, KL);
- :func:`account` reports all of these for a sequence of :class:`Release` (a mechanism, its
  parameter values and a number of repeats).

The generated modules are imported by file path (:func:`load_mechanism`), so the accounting
works on whatever ``raosym generate`` wrote, and tests can hand it independent curves.
The CLI commands ``raosym account`` and ``raosym calibrate`` are registered by
:func:`add_commands`.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from raosym.errors import RaosymError

#: The conversions from RDP to (ε, δ)-DP, by CLI name, with their references.
CONVERSIONS = {
    "mironov": "Mironov 2017, Proposition 3",
    "balle": "Balle et al. 2020, Theorem 21",
}

#: Where the α search runs, as u = log(α - 1): α - 1 from 8.3e-7 to 8.9e6 in steps of e.
#: The grid finds the basin of the minimum; Brent's method then refines inside it. The
#: conversion bound is quasi-convex in α (see :func:`dp_epsilon`), so one basin is all there
#: is and a coarse grid cannot miss it; each order of a numeric curve is a quadrature, so the
#: grid is as coarse as that allows (31 orders; it was 121).
_LOG_ALPHA_GRID = np.arange(-14.0, 16.0 + 1e-9, 1.0)


class AccountingError(RaosymError):
    """Bad input to the accounting layer: an unknown mechanism or parameter, a value out of its
    domain, a target no parameter value meets (exit status 2)."""

    exit_status = 2


class AccountingFailure(RaosymError):
    """A numeric step of the accounting did not converge (exit status 1)."""

    exit_status = 1


# ---------------------------------------------------------------------------------------------
# RDP curves and their composition


@dataclass(frozen=True)
class RdpCurve:
    """An RDP curve α ↦ ε(α) for α > 1, evaluated on arrays of orders in one call.

    ``function`` must accept a numpy array of orders and return an array of the same shape
    (the generated ``rdp_epsilon`` with its parameters bound does). Curves add under
    composition: ``a + b`` is the curve of releasing both, ``a.repeated(n)`` of n releases.
    """

    function: Callable[[np.ndarray], np.ndarray]
    label: str = "curve"

    def __call__(self, alpha) -> np.ndarray:
        return np.asarray(self.function(np.asarray(alpha, dtype=float)), dtype=float)

    def __add__(self, other: RdpCurve) -> RdpCurve:
        return compose(self, other)

    def repeated(self, count: int) -> RdpCurve:
        """The curve of ``count`` independent releases (curves add, so it is count·ε(α))."""
        count = _positive_count(count)
        return RdpCurve(lambda alpha: count * self(alpha), f"{count} × {self.label}")


def compose(*curves: RdpCurve) -> RdpCurve:
    """The RDP curve of the joint release of independent mechanisms: the sum of their curves."""
    if not curves:
        raise AccountingError("compose needs at least one curve")
    parts = tuple(curves)

    def composed(alpha):
        return sum(curve(alpha) for curve in parts)

    return RdpCurve(composed, " + ".join(curve.label for curve in parts))


def compose_orders(*values) -> np.ndarray:
    """Composition for curves given as arrays over one common set of orders: their sum."""
    arrays = [np.asarray(v, dtype=float) for v in values]
    if not arrays or any(a.shape != arrays[0].shape for a in arrays):
        raise AccountingError("compose_orders needs arrays of one shape (one set of orders)")
    return np.sum(arrays, axis=0)


# ---------------------------------------------------------------------------------------------
# Conversion to (ε, δ)-DP


def conversion_epsilon(rdp, alpha, delta: float, conversion: str = "balle") -> np.ndarray:
    """The ε of (ε, δ)-DP implied by (α, rdp)-RDP, elementwise, for α > 1 and 0 < δ < 1.

    ``mironov``: ε = rdp + log(1/δ)/(α-1) (Mironov 2017, Proposition 3).
    ``balle``: ε = rdp + log((α-1)/α) - (log δ + log α)/(α-1) (Balle, Barthe, Gaboardi, Hsu
    and Sato, "Hypothesis testing interpretations and Rényi differential privacy", AISTATS
    2020, Theorem 21; also Canonne, Kamath and Steinke 2020, Proposition 12).
    """
    alpha = np.asarray(alpha, dtype=float)
    if np.any(~(alpha > 1.0)):
        raise AccountingError("RDP orders must be greater than 1")
    return _bound(np.asarray(rdp, dtype=float), alpha - 1.0, _check_delta(delta), conversion)


def _bound(rdp, alpha_minus_one, delta: float, conversion: str):
    """The conversion written with α - 1 as the variable, so no digit of α - 1 is lost near 1."""
    log_delta = math.log(delta)
    if conversion == "mironov":
        return rdp - log_delta / alpha_minus_one
    if conversion == "balle":
        log_alpha = np.log1p(alpha_minus_one)
        # log((α-1)/α) = log(α-1) - log1p(α-1): no cancellation when α is near 1 or large.
        return (rdp + np.log(alpha_minus_one) - log_alpha
                - (log_delta + log_alpha) / alpha_minus_one)
    raise AccountingError(
        f"unknown conversion {conversion!r}; expected one of {', '.join(CONVERSIONS)}")


@dataclass(frozen=True)
class DpGuarantee:
    """(ε, δ)-DP obtained from an RDP curve at the order α that minimizes the bound.

    ``rdp_epsilon`` is the curve at that α. ``at_boundary`` is true when the minimum lies at
    an end of the searched orders (a curve that flattens, as pure-DP mechanisms' do, has its
    infimum at α → ∞; ε is then the bound at the largest order searched, a valid guarantee).
    """

    epsilon: float
    delta: float
    alpha: float
    rdp_epsilon: float
    conversion: str
    at_boundary: bool = False

    @property
    def reference(self) -> str:
        return CONVERSIONS[self.conversion]


def dp_epsilon(curve: RdpCurve | Callable, delta: float, conversion: str = "balle") -> DpGuarantee:
    """Convert an RDP curve to (ε, δ)-DP, minimizing the conversion over continuous α > 1.

    The minimizer is Brent's bounded method (``scipy.optimize.minimize_scalar``, method
    ``bounded``) in u = log(α - 1), on the bracket around the least value of a log-spaced grid.
    Why: a curve is a black box (generated numpy code, or a sum of such) with no derivative,
    so a root-finder on dε/dα would need finite differences that lose half the digits; Brent's
    method needs values only, converges superlinearly on the smooth objective and never leaves
    the bracket (never evaluates α ≤ 1). The objective is flat at its minimum, so ε comes out
    to full precision even though α is only determined to about sqrt(machine ε). The grid scan
    first makes sure Brent starts in the basin of the global minimum on the grid.

    There is one basin: (α - 1)·ε(α) is convex in α (van Erven and Harremoës 2014,
    Theorem 11), and both bounds are (that plus a convex function of α, minus log δ) over
    α - 1 (Balle's added term (α - 1)·log(α - 1) - α·log α has second derivative
    1/(α - 1) - 1/α > 0), a convex function over a positive linear one: quasi-convex, so every
    local minimum is the global one and a coarse grid brackets it.
    """
    from scipy import optimize  # here, so registering the CLI commands stays cheap

    delta = _check_delta(delta)
    if conversion not in CONVERSIONS:
        raise AccountingError(
            f"unknown conversion {conversion!r}; expected one of {', '.join(CONVERSIONS)}")
    if not isinstance(curve, RdpCurve):
        curve = RdpCurve(curve)

    def objective(u):
        alpha_minus_one = np.exp(u)
        with np.errstate(over="ignore", invalid="ignore"):
            values = _bound(_evaluate(curve, 1.0 + alpha_minus_one), alpha_minus_one, delta,
                            conversion)
        return np.where(np.isfinite(values), values, np.inf)

    grid = objective(_LOG_ALPHA_GRID)
    if not np.isfinite(grid).any():
        raise AccountingFailure(f"the RDP curve {curve.label} is not finite at any order searched")
    best = int(np.argmin(grid))
    u_best, value = float(_LOG_ALPHA_GRID[best]), float(grid[best])
    at_boundary = best in (0, len(_LOG_ALPHA_GRID) - 1)
    if not at_boundary:
        result = optimize.minimize_scalar(
            lambda u: float(objective(np.array([u]))[0]),
            bounds=(float(_LOG_ALPHA_GRID[best - 1]), float(_LOG_ALPHA_GRID[best + 1])),
            method="bounded", options={"xatol": 1e-12, "maxiter": 500})
        if not result.success:
            raise AccountingFailure(f"minimizing over α did not converge: {result.message}")
        if result.fun <= value:
            u_best, value = float(result.x), float(result.fun)
    alpha = 1.0 + math.exp(u_best)
    return DpGuarantee(epsilon=max(value, 0.0), delta=delta, alpha=alpha,
                       rdp_epsilon=float(curve(np.array([alpha]))[0]),
                       conversion=conversion, at_boundary=at_boundary)


def _evaluate(curve: RdpCurve, alpha: np.ndarray) -> np.ndarray:
    """The curve on an array of orders; orders where it raises are nan (so a numeric curve
    that fails at extreme orders only narrows the search), unless it fails at every order."""
    try:
        return curve(alpha)
    except (AccountingError, ValueError, ArithmeticError):
        values = np.full(alpha.shape, np.nan)
        if alpha.size > 1:
            for index, order in enumerate(alpha):
                try:
                    values[index] = curve(np.array([order]))[0]
                except (AccountingError, ValueError, ArithmeticError):
                    pass
        if alpha.size > 1 and np.isnan(values).all():
            raise
        return values


def dp_epsilon_at_orders(orders, rdp, delta: float, conversion: str = "balle") -> DpGuarantee:
    """Conversion for a curve known only at given orders: the least bound over those orders.

    Each order gives a valid guarantee, so the least is one too; it is never below the
    continuous minimum of :func:`dp_epsilon` for the same curve.
    """
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    if orders.shape != rdp.shape or orders.ndim != 1 or orders.size == 0:
        raise AccountingError("orders and rdp must be 1-D arrays of one length")
    values = conversion_epsilon(rdp, orders, delta, conversion)
    values = np.where(np.isfinite(values), values, np.inf)
    best = int(np.argmin(values))
    return DpGuarantee(epsilon=max(float(values[best]), 0.0), delta=float(delta),
                       alpha=float(orders[best]), rdp_epsilon=float(rdp[best]),
                       conversion=conversion, at_boundary=best in (0, orders.size - 1))


def _check_delta(delta) -> float:
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise AccountingError(f"delta must lie in (0, 1); got {delta!r}")
    return delta


def _positive_count(count) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise AccountingError(f"a number of releases must be a positive integer; got {count!r}")
    return int(count)


# ---------------------------------------------------------------------------------------------
# Rao-DP composition


def compose_rao(*thetas: float) -> float:
    """The Rao-DP budget of independent releases: sqrt(θ1² + θ2² + ...) (Soto 2025).

    The product family's Fisher metric is the sum of the factors' metrics, and adjacent
    datasets move each factor independently, so the distances add in quadrature.
    ``math.hypot`` neither overflows nor underflows on the squares.
    """
    values = [float(theta) for theta in thetas]
    if any(not (theta >= 0.0) for theta in values):
        raise AccountingError(f"Rao-DP budgets must be non-negative numbers; got {thetas!r}")
    return math.hypot(*values)


def repeated_rao(theta: float, count: int) -> float:
    """The Rao-DP budget of ``count`` releases of one θ-Rao-DP mechanism: θ·sqrt(count)."""
    return compose_rao(theta) * math.sqrt(_positive_count(count))


# ---------------------------------------------------------------------------------------------
# Mechanisms: the generated accounting functions behind one adapter

#: The accounting functions a generated mechanism module may define. The Rao-DP calibration
#: is ``rao_dp_scale(sensitivity, theta, ...)`` for additive mechanisms (scale = Δ·k/θ) and
#: ``rao_dp_parameter(theta, ...)`` for others (randomized response's p).
ACCOUNTING_FUNCTIONS = ("rdp_epsilon", "kl_divergence", "rao_dp_theta", "rao_dp_scale",
                        "rao_dp_parameter")


@dataclass(frozen=True)
class Mechanism:
    """A noise mechanism's per-release accounting functions, called by parameter name.

    ``parameters`` are the arguments of ``rdp_epsilon`` after α (e.g. ``sensitivity, sigma``),
    the mechanism's own names; ``domains`` maps a parameter to its open interval (lower,
    upper), used to search for a calibration. Missing functions are None.
    """

    name: str
    parameters: tuple[str, ...]
    rdp_epsilon: Callable
    kl_divergence: Callable | None = None
    rao_dp_theta: Callable | None = None
    rao_dp_scale: Callable | None = None
    rao_dp_parameter: Callable | None = None
    domains: dict = field(default_factory=dict)
    source: str = ""

    def check(self, values: dict) -> dict:
        """The parameter values as floats, every parameter present and no unknown one."""
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            raise AccountingError(
                f"mechanism {self.name} has no parameter {', '.join(map(repr, unknown))}; "
                f"its parameters are {', '.join(self.parameters)}")
        missing = [name for name in self.parameters if name not in values]
        if missing:
            raise AccountingError(
                f"mechanism {self.name} needs a value for {', '.join(missing)} "
                f"(parameters: {', '.join(self.parameters)})")
        return {name: float(values[name]) for name in self.parameters}

    def curve(self, **values) -> RdpCurve:
        """The RDP curve of one release with these parameter values."""
        values = self.check(values)
        label = f"{self.name}({_describe(values)})"
        # The signature is read once here, not at every evaluation of the curve (the (ε, δ)
        # conversion evaluates it many times).
        return RdpCurve(_bound_call(self, self.rdp_epsilon, values), label)

    def theta(self, **values) -> float:
        """The Rao-DP budget θ of one release (distance between adjacent outputs)."""
        return float(_call(self, self._need("rao_dp_theta"), **self.check(values)))

    def kl(self, **values) -> float:
        """The KL divergence between adjacent outputs of one release."""
        return float(_call(self, self._need("kl_divergence"), **self.check(values)))

    def _need(self, function: str) -> Callable:
        found = getattr(self, function)
        if found is None:
            raise AccountingError(f"mechanism {self.name} ({self.source}) has no {function}")
        return found


def _call(mechanism: Mechanism, function: Callable, *args, **values):
    """Call a generated function with the parameters its signature names (by keyword)."""
    return _bound_call(mechanism, function, values)(*args)


def _bound_call(mechanism: Mechanism, function: Callable, values: dict) -> Callable:
    """``function`` with the parameters its signature names bound by keyword (the signature
    read once); a ValueError of the generated domain checks becomes an AccountingError."""
    wanted = inspect.signature(function).parameters
    keywords = {k: v for k, v in values.items() if k in wanted}

    def bound(*args):
        try:
            return function(*args, **keywords)
        except ValueError as error:  # the generated modules check their domains
            raise AccountingError(f"mechanism {mechanism.name}: {error}") from None

    return bound


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def generated_folder() -> Path:
    """Where generated modules are looked up: $RAOSYM_GENERATED, else ./generated."""
    return Path(os.environ.get("RAOSYM_GENERATED", "generated"))


def available_mechanisms(generated: str | os.PathLike | None = None) -> list[str]:
    """Names of the generated modules that define ``rdp_epsilon`` (found by reading the text)."""
    folder = Path(generated or generated_folder()) / "python"
    if not folder.is_dir():
        return []
    defines = re.compile(r"^def rdp_epsilon\(", re.MULTILINE)
    return sorted(path.stem for path in folder.glob("*.py")
                  if defines.search(path.read_text(encoding="utf-8")))


def load_mechanism(name: str, generated: str | os.PathLike | None = None,
                   derivations: str | os.PathLike | None = None) -> Mechanism:
    """The mechanism ``name`` from ``GENERATED/python/NAME.py`` (imported by file path).

    Parameter domains come from the module's ``MECHANISM_DOMAINS`` (so that accounting needs
    no SymPy); for a module generated before it, from the derivation file ``NAME.toml``
    (through the spec stage) when it exists; a parameter not declared there
    (``sensitivity``) is positive.
    """
    if not _NAME.match(name):
        raise AccountingError(f"mechanism names are identifiers such as gaussian_location; "
                              f"got {name!r}")
    folder = Path(generated or generated_folder())
    path = folder / "python" / f"{name}.py"
    if not path.is_file():
        raise AccountingError(_unknown_mechanism(name, path, folder))
    module = import_by_path(name, path)
    if not callable(getattr(module, "rdp_epsilon", None)):
        raise AccountingError(
            f"{path} has no rdp_epsilon: {name} is not a mechanism (no [mechanism] table in its "
            f"derivation file, or generated/ predates it: run `raosym generate`). "
            + _known(folder))
    rdp = module.rdp_epsilon
    parameters = tuple(list(inspect.signature(rdp).parameters)[1:])
    functions = {f: getattr(module, f, None) for f in ACCOUNTING_FUNCTIONS[1:]}
    domains = getattr(module, "MECHANISM_DOMAINS", None)
    if not (isinstance(domains, dict) and set(parameters) <= set(domains)):
        domains = _domains(name, parameters, derivations)  # a module generated before them
    return Mechanism(name=name, parameters=parameters, rdp_epsilon=rdp, **functions,
                     domains={p: tuple(map(float, domains[p])) for p in parameters},
                     source=str(path))


def _unknown_mechanism(name: str, path: Path, folder: Path) -> str:
    return f"unknown mechanism {name!r}: no generated module {path}. " + _known(folder)


def _known(folder: Path) -> str:
    known = available_mechanisms(folder)
    return (f"Mechanisms in {folder}: {', '.join(known)}" if known
            else f"No generated module in {folder} defines rdp_epsilon yet.")


def import_by_path(name: str, path: Path):
    """A generated module imported from its file (generated/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"raosym_generated_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _domains(name: str, parameters, derivations) -> dict:
    """Open intervals of the parameters, from the derivation file where it declares them."""
    domains = {p: (0.0, math.inf) for p in parameters}
    folder = Path(derivations) if derivations else None
    if folder is None:
        from raosym.pipeline import derivations_folder

        folder = derivations_folder()
    path = folder / f"{name}.toml"
    if path.is_file():
        from raosym.spec import load_spec

        for parameter in load_spec(path).parameters:
            if parameter.name in domains:
                domains[parameter.name] = (float(parameter.domain.lower),
                                           float(parameter.domain.upper))
    return domains


def _describe(values: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in values.items())


# ---------------------------------------------------------------------------------------------
# Calibration


@dataclass(frozen=True)
class Calibration:
    """The value of ``parameter`` that meets a target budget, and how it was found."""

    definition: str  # "rao-dp", "dp", "kl"
    parameter: str
    value: float
    target: dict
    method: str


def solve_parameter(budget: Callable[[float], float], target: float,
                    domain: tuple[float, float], name: str = "the parameter") -> float:
    """A value x in the open ``domain`` with budget(x) = target.

    The budget need only be continuous. The root is bracketed before it is solved, in a
    coordinate u that maps the real line onto the domain (log for (0, ∞), logistic for a
    bounded interval): from the middle of the domain, u = 0, the scan walks towards the target
    in steps that double, u = ±0.5, ±1, ±2, ..., ±16, ±30, and stops at the first sign change;
    Brent's root-finder (``scipy.optimize.brentq``) refines it. The direction is the one in
    which the budget approaches the target between u = 0 and u = 0.5 (upwards first when that
    says nothing); if the walk ends without a sign change, the other direction is walked too.
    Why from the middle: each evaluation of an (ε, δ) budget of a numeric curve is a
    minimization over α of quadratures, cheap at moderate values and slow at extreme ones
    (a noise scale of 1e13 times the sensitivity took 27 s where 1 took 0.3 s), so the walk
    reaches the extremes only when the root lies there. For a noise scale the budget is
    monotone and there is one crossing; randomized response's budget is symmetric about
    p = 1/2 (u = 0) and rises towards the target above it, so the crossing found is the one
    with p > 1/2 (truth more likely than not). Values where the budget cannot be evaluated
    are skipped; when no sign change is found the error says the range the budget took.
    """
    from scipy import optimize

    to_x = _domain_map(*domain)
    gaps: dict[float, float] = {}

    def gap(u: float) -> float:
        if u not in gaps:
            gaps[u] = _safe(budget, to_x(u)) - target
        return gaps[u]

    def walk(sign: int) -> float | None:
        previous = 0.0
        for step in _BRACKET_STEPS:
            u = sign * step
            value = gap(u)
            if value == 0.0:
                return u
            if not np.isfinite(value):
                continue
            if np.isfinite(gap(previous)) and value * gap(previous) < 0.0:
                low, high = sorted((previous, u))
                return optimize.brentq(gap, low, high, xtol=1e-15,
                                       rtol=4 * np.finfo(float).eps, maxiter=200)
            previous = u
        return None

    if gap(0.0) == 0.0:
        return to_x(0.0)
    first, second = gap(0.0), gap(_BRACKET_STEPS[0])
    downwards = (np.isfinite(first) and np.isfinite(second) and first * second > 0.0
                 and abs(second) > abs(first))
    for sign in ((-1, 1) if downwards else (1, -1)):
        u = walk(sign)
        if u is not None:
            return to_x(u)
    values = np.array(list(gaps.values()))
    finite = values[np.isfinite(values)] + target
    reach = (f"over {name} in ({domain[0]:g}, {domain[1]:g}) it ranges in "
             f"[{finite.min():.6g}, {finite.max():.6g}]" if finite.size else "it is never finite")
    raise AccountingError(f"no value of {name} meets the target {target:g}: {reach}")


#: The steps of solve_parameter's walk from the middle of the domain (in the coordinate u of
#: _domain_map), doubling: fine near the middle, coarse far out where a budget changes
#: slowly in u.
_BRACKET_STEPS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def _safe(budget, x) -> float:
    try:
        value = float(budget(x))
    except (AccountingError, ValueError, ArithmeticError):
        return math.nan
    return value if not math.isnan(value) else math.nan


def _domain_map(lower: float, upper: float) -> Callable[[float], float]:
    """A map from the real line onto the open interval (lower, upper)."""
    if math.isinf(lower) and math.isinf(upper):
        return lambda u: math.sinh(u)
    if math.isinf(upper):
        return lambda u: lower + math.exp(u)
    if math.isinf(lower):
        return lambda u: upper - math.exp(-u)
    width = upper - lower
    # Measured from the nearer end, so values next to either bound keep their digits.
    return lambda u: (lower + width / (1.0 + math.exp(-u)) if u <= 0
                      else upper - width / (1.0 + math.exp(u)))


def _solved_parameter(mechanism: Mechanism, values: dict, solve: str | None) -> str:
    free = [p for p in mechanism.parameters if p not in values]
    if solve is not None:
        if solve not in mechanism.parameters:
            raise AccountingError(f"mechanism {mechanism.name} has no parameter {solve!r}; "
                                  f"its parameters are {', '.join(mechanism.parameters)}")
        if solve in values:
            raise AccountingError(f"{solve} is both given a value and asked for (--solve)")
        free.remove(solve)
        if free:
            raise AccountingError(f"mechanism {mechanism.name} needs a value for "
                                  f"{', '.join(free)}")
        return solve
    if not free:
        raise AccountingError(
            f"every parameter of {mechanism.name} has a value ({_describe(values)}): leave "
            "out the one to calibrate")
    if len(free) != 1:
        raise AccountingError(
            f"give a value to every parameter of {mechanism.name} but the one to calibrate "
            f"(missing: {', '.join(free) or 'none'}; parameters: "
            f"{', '.join(mechanism.parameters)}); or name it with --solve")
    return free[0]


def calibrate_rao(mechanism: Mechanism, theta: float, values: dict, *, repeat: int = 1,
                  solve: str | None = None) -> Calibration:
    """The parameter value at which ``repeat`` releases are θ-Rao-DP in total.

    Composition gives the per-release budget θ/sqrt(repeat). For an additive mechanism the
    calibration is the derived closed form ``rao_dp_scale(sensitivity, θ) = Δ·k/θ``; otherwise
    ``rao_dp_theta`` is solved for the parameter.
    """
    theta = float(theta)
    if not theta > 0.0:
        raise AccountingError(f"the Rao-DP target must be positive; got {theta!r}")
    name = _solved_parameter(mechanism, values, solve)
    per_release = theta / math.sqrt(_positive_count(repeat))
    target = {"theta": theta, "repeat": repeat, "theta_per_release": per_release}
    closed_form = _closed_form_calibration(mechanism, name)
    if closed_form is not None:
        given = {k: float(v) for k, v in values.items()}
        value = float(_call(mechanism, closed_form, theta=per_release, **given))
        return Calibration("rao-dp", name, value, target,
                           f"closed form {closed_form.__name__} (derived)")
    value = solve_parameter(lambda x: mechanism.theta(**values, **{name: x}), per_release,
                            mechanism.domains.get(name, (0.0, math.inf)), name)
    return Calibration("rao-dp", name, value, target, "root of rao_dp_theta (Brent)")


def _closed_form_calibration(mechanism: Mechanism, name: str) -> Callable | None:
    """The generated calibration function that returns parameter ``name``, if there is one:
    it returns the one mechanism parameter that is not among its own arguments."""
    for function in (mechanism.rao_dp_scale, mechanism.rao_dp_parameter):
        if function is None:
            continue
        own = set(inspect.signature(function).parameters)
        returned = [p for p in mechanism.parameters if p not in own]
        if returned == [name]:
            return function
    return None


def calibrate_dp(mechanism: Mechanism, epsilon: float, delta: float, values: dict, *,
                 repeat: int = 1, conversion: str = "balle",
                 solve: str | None = None) -> Calibration:
    """The parameter value at which ``repeat`` releases are (ε, δ)-DP through RDP.

    The (ε, δ) of a candidate is :func:`dp_epsilon` of the composed curve; Brent's
    root-finder solves it for the target ε.
    """
    epsilon = float(epsilon)
    if not epsilon > 0.0:
        raise AccountingError(f"the ε target must be positive; got {epsilon!r}")
    delta = _check_delta(delta)
    name = _solved_parameter(mechanism, values, solve)
    count = _positive_count(repeat)

    def budget(x):
        return dp_epsilon(mechanism.curve(**values, **{name: x}).repeated(count), delta,
                          conversion).epsilon

    value = solve_parameter(budget, epsilon, mechanism.domains.get(name, (0.0, math.inf)), name)
    return Calibration("dp", name, value,
                       {"epsilon": epsilon, "delta": delta, "repeat": count,
                        "conversion": conversion},
                       f"root (Brent) of ε over the RDP curve ({CONVERSIONS[conversion]})")


def calibrate_kl(mechanism: Mechanism, kl: float, values: dict, *, repeat: int = 1,
                 solve: str | None = None) -> Calibration:
    """The parameter value at which ``repeat`` releases have KL divergence ``kl`` in total
    (KL adds over independent releases)."""
    kl = float(kl)
    if not kl > 0.0:
        raise AccountingError(f"the KL target must be positive; got {kl!r}")
    name = _solved_parameter(mechanism, values, solve)
    count = _positive_count(repeat)
    value = solve_parameter(lambda x: mechanism.kl(**values, **{name: x}), kl / count,
                            mechanism.domains.get(name, (0.0, math.inf)), name)
    return Calibration("kl", name, value, {"kl": kl, "repeat": count},
                       "root of kl_divergence (Brent)")


# ---------------------------------------------------------------------------------------------
# Accounting of repeated releases (what `raosym account` prints)


@dataclass(frozen=True)
class Release:
    """``repeat`` independent releases of one mechanism with these parameter values."""

    mechanism: Mechanism
    values: dict
    repeat: int = 1


def account(releases, *, delta: float = 1e-6) -> dict:
    """Rao-DP, KL and (ε, δ)-DP under both conversions of a sequence of :class:`Release`.

    Independent releases compose: RDP curves and KL divergences add, Rao-DP budgets add in
    quadrature; the composed curve is converted to (ε, δ) by :func:`dp_epsilon`.
    """
    releases = list(releases)
    if not releases:
        raise AccountingError("nothing to account: no release")
    rows, curves, thetas, kls = [], [], [], []
    for release in releases:
        count = _positive_count(release.repeat)
        mechanism = release.mechanism
        values = mechanism.check(release.values)
        curves.append(mechanism.curve(**values).repeated(count))
        row = {"mechanism": mechanism.name, "module": mechanism.source, "parameters": values,
               "repeat": count}
        if mechanism.rao_dp_theta is not None:
            row["theta_per_release"] = mechanism.theta(**values)
            thetas.append(repeated_rao(row["theta_per_release"], count))
        if mechanism.kl_divergence is not None:
            row["kl_per_release"] = mechanism.kl(**values)
            kls.append(count * row["kl_per_release"])
        rows.append(row)
    summary: dict = {"releases": rows}
    # A total only when every mechanism has the quantity (otherwise it would understate).
    if len(thetas) == len(rows):
        summary["rao_dp"] = {"theta": compose_rao(*thetas)}
    if len(kls) == len(rows):
        summary["kl"] = {"total": math.fsum(kls)}
    curve = compose(*curves)
    summary["dp"] = {}
    for conversion in CONVERSIONS:
        guarantee = dp_epsilon(curve, delta, conversion)
        summary["dp"][conversion] = {
            "epsilon": guarantee.epsilon, "delta": guarantee.delta, "alpha": guarantee.alpha,
            "rdp_epsilon": guarantee.rdp_epsilon, "at_boundary": guarantee.at_boundary,
            "reference": guarantee.reference}
    return summary


# ---------------------------------------------------------------------------------------------
# CLI


def add_commands(subparsers) -> None:
    """Register ``account`` and ``calibrate`` on the ``raosym`` command's subparsers."""
    account_parser = subparsers.add_parser(
        "account", allow_abbrev=False,
        help="Rao-DP, KL and (ε, δ)-DP of repeated releases of a mechanism",
        description="Compose repeated releases of a mechanism and report its Rao-DP budget "
                    "and its (ε, δ)-DP through Rényi DP, minimized over continuous α under "
                    "Mironov's Proposition 3 and Balle et al.'s Theorem 21.")
    _add_mechanism_arguments(account_parser)
    account_parser.add_argument("--delta", type=float, default=1e-6,
                                help="δ of the (ε, δ)-DP guarantee (default 1e-6)")
    account_parser.add_argument(
        "--with", dest="also", action="append", default=[],
        metavar="MECHANISM:NAME=VALUE[:...][:repeat=N]",
        help="another mechanism released as well (repeatable), composed with the first, e.g. "
             "laplace_location:b=2:repeat=10 (sensitivity defaults to 1)")
    account_parser.add_argument(
        "--accountant", choices=("rdp", "pld"), default="rdp",
        help="rdp (default): RDP curves converted to (ε, δ); pld: also the tight ε of the "
             "privacy-loss distributions composed by Google's dp_accounting (pip install "
             "'raosym[dp]'), reported as dp.pld")
    account_parser.add_argument(
        "--pld-interval", type=float, default=None, metavar="H",
        help="with --accountant pld: the spacing of the privacy-loss grid (default 1e-4); "
             "the pessimistic ε is at most releases·H above the exact one")
    account_parser.set_defaults(run=_account_command, takes_parameter_options=True)

    calibrate_parser = subparsers.add_parser(
        "calibrate", allow_abbrev=False,
        help="find the noise parameter that meets a target privacy budget",
        description="Find the value of one mechanism parameter (the noise scale, or p for "
                    "randomized response) at which the releases meet a target: Rao-DP "
                    "(--theta), (ε, δ)-DP through RDP (--epsilon and --delta) or KL (--kl).")
    _add_mechanism_arguments(calibrate_parser)
    target = calibrate_parser.add_argument_group("target (one of)")
    target.add_argument("--theta", type=float, help="total Rao-DP budget θ")
    target.add_argument("--epsilon", type=float, help="ε of (ε, δ)-DP (with --delta)")
    target.add_argument("--delta", type=float, help="δ of (ε, δ)-DP (with --epsilon)")
    target.add_argument("--kl", type=float, help="total KL divergence")
    calibrate_parser.add_argument("--conversion", choices=sorted(CONVERSIONS), default="balle",
                                  help="RDP to (ε, δ) conversion for --epsilon (default balle)")
    calibrate_parser.add_argument("--solve", metavar="NAME",
                                  help="the parameter to calibrate (default: the one not "
                                       "given); --solve sensitivity finds the largest "
                                       "sensitivity the given noise affords")
    calibrate_parser.set_defaults(run=_calibrate_command, takes_parameter_options=True)


def _add_mechanism_arguments(parser) -> None:
    parser.add_argument("--mechanism", required=True, metavar="NAME",
                        help="a generated mechanism, e.g. gaussian_location, laplace_location, "
                             "bernoulli (randomized response)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a mechanism parameter by its name in the derivation file "
                             "(repeatable); --NAME VALUE is the same for any parameter, "
                             "e.g. --s 2 for Cauchy or logistic noise, --N 1.5")
    for name, text in (("sigma", "Gaussian noise std"), ("b", "Laplace noise scale"),
                       ("p", "randomized response: probability of the truth")):
        parser.add_argument(f"--{name}", type=float, default=None, help=f"{text} (= --param "
                                                                          f"{name}=VALUE)")
    parser.add_argument("--sensitivity", type=float, default=None,
                        help=f"query sensitivity Δ of an additive mechanism (default "
                             f"{DEFAULT_SENSITIVITY:g})")
    parser.add_argument("--repeat", type=int, default=1,
                        help="number of independent releases composed (default 1)")
    parser.add_argument("--generated", default=None, metavar="DIR",
                        help="the generated folder holding python/NAME.py (default: generated)")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def _parameter_values(arguments) -> dict:
    values: dict[str, float] = {}
    for item in arguments.param:
        name, equals, text = item.partition("=")
        name = name.strip()
        if not equals or not _NAME.match(name):
            raise AccountingError(f"--param expects NAME=VALUE (e.g. sigma=4); got {item!r}")
        values[name] = _number(text, f"--param {name}")
    given = [(name, getattr(arguments, name)) for name in ("sigma", "b", "p", "sensitivity")]
    given += parameter_options(getattr(arguments, "extra", None) or [])
    for name, value in given:
        if value is not None:
            if name in values:
                raise AccountingError(f"{name} is given twice (--{name} and --param {name}=...)")
            values[name] = _number(value, f"--{name}")
    return values


def parameter_options(tokens: list[str]) -> list[tuple[str, str]]:
    """``--NAME VALUE`` and ``--NAME=VALUE`` options argparse did not know, as (name, text)
    pairs: a mechanism's own parameters (``--s 2``, ``--N 1.5``). Whether the mechanism has
    such a parameter is checked when its values are (:meth:`Mechanism.check`)."""
    pairs, index = [], 0
    while index < len(tokens):
        token = tokens[index]
        name, equals, text = token[2:].partition("=") if token.startswith("--") else ("", "", "")
        if not _NAME.match(name):
            raise AccountingError(
                f"unrecognized argument {token!r}: a mechanism parameter is given as --NAME "
                "VALUE, --NAME=VALUE or --param NAME=VALUE")
        if not equals:
            if index + 1 >= len(tokens) or tokens[index + 1].startswith("--"):
                raise AccountingError(f"--{name}: expected a value (--{name} VALUE)")
            index += 1
            text = tokens[index]
        pairs.append((name, text))
        index += 1
    return pairs


#: The sensitivity of an additive mechanism when none is given (counting queries), in
#: ``raosym account``, ``raosym calibrate`` and ``raosym plot rdp`` alike.
DEFAULT_SENSITIVITY = 1.0


def with_default_sensitivity(mechanism: Mechanism, values: dict,
                             solve: str | None = None) -> dict:
    """``values`` with ``sensitivity`` = :data:`DEFAULT_SENSITIVITY` added when the mechanism
    takes one and none is given (unless it is the parameter being solved for)."""
    if ("sensitivity" in mechanism.parameters and "sensitivity" not in values
            and solve != "sensitivity"):
        return {**values, "sensitivity": DEFAULT_SENSITIVITY}
    return dict(values)


def _number(text, where: str) -> float:
    """A finite float (float() parses the text: nothing is evaluated)."""
    try:
        value = float(text)
    except ValueError:
        raise AccountingError(f"{where}: expected a number; got {text!r}") from None
    if not math.isfinite(value):
        raise AccountingError(f"{where}: expected a finite number; got {text!r}")
    return value


def _mechanism_and_values(arguments) -> tuple[Mechanism, dict]:
    mechanism = load_mechanism(arguments.mechanism, arguments.generated)
    values = with_default_sensitivity(mechanism, _parameter_values(arguments),
                                      getattr(arguments, "solve", None))
    if arguments.repeat < 1:
        raise AccountingError(f"--repeat must be a positive integer; got {arguments.repeat}")
    return mechanism, values


def _account_command(arguments) -> int:
    mechanism, values = _mechanism_and_values(arguments)
    releases = [Release(mechanism, values, arguments.repeat)]
    releases += [_release(text, arguments.generated) for text in arguments.also]
    summary = account(releases, delta=arguments.delta)
    if arguments.accountant == "pld":
        from raosym import pld

        summary["dp"]["pld"] = pld.pld_epsilon(
            releases, arguments.delta,
            pld.INTERVAL if arguments.pld_interval is None else arguments.pld_interval).as_json()
    elif arguments.pld_interval is not None:
        raise AccountingError("--pld-interval goes with --accountant pld")
    print(json.dumps(summary) if arguments.json else _account_text(summary))
    return 0


def _release(text: str, generated) -> Release:
    """``MECHANISM:NAME=VALUE[:NAME=VALUE...][:repeat=N]`` (numbers read with float())."""
    name, *assignments = text.split(":")
    values: dict[str, float] = {}
    repeat = 1
    for assignment in assignments:
        key, equals, number = assignment.partition("=")
        if not equals or not _NAME.match(key):
            raise AccountingError(f"--with {text!r}: expected NAME=VALUE, got {assignment!r}")
        if key == "repeat":
            if not re.fullmatch(r"[0-9]+", number) or int(number) < 1:
                raise AccountingError(f"--with {text!r}: repeat must be a positive integer")
            repeat = int(number)
        else:
            values[key] = _number(number, f"--with {name}: {key}")
    mechanism = load_mechanism(name, generated)
    return Release(mechanism, with_default_sensitivity(mechanism, values), repeat)


def _account_text(summary: dict) -> str:
    lines = []
    for row in summary["releases"]:
        count = row["repeat"]
        line = (f"{row['mechanism']} ({_describe(row['parameters'])}) × {count} "
                f"[{row['module']}]")
        if "theta_per_release" in row:
            line += f"\n  Rao-DP θ = {row['theta_per_release']:.10g} per release"
        if "kl_per_release" in row:
            line += f"; KL = {row['kl_per_release']:.10g} per release"
        lines.append(line)
    lines.append("composed:")
    if "rao_dp" in summary:
        lines.append(f"  Rao-DP   θ = {summary['rao_dp']['theta']:.10g}  (distances taken in the "
                     "family with the noise scale fixed; θ adds in quadrature)")
    if "kl" in summary:
        lines.append(f"  KL       {summary['kl']['total']:.10g}")
    for dp in (summary["dp"][conversion] for conversion in CONVERSIONS):
        note = ("  (minimum at the end of the α range: the curve flattens)"
                if dp["at_boundary"] else "")
        lines.append(f"  (ε, δ)   ε = {dp['epsilon']:.10f} at δ = {dp['delta']:g}, "
                     f"optimal α = {dp['alpha']:.6g}  [{dp['reference']}]{note}")
    if "pld" in summary["dp"]:
        from raosym.pld import guarantee_text

        lines.append(guarantee_text(summary["dp"]["pld"]))
    return "\n".join(lines)


def _calibrate_command(arguments) -> int:
    mechanism, values = _mechanism_and_values(arguments)
    targets = [arguments.theta is not None, arguments.epsilon is not None,
               arguments.kl is not None]
    if sum(targets) != 1:
        raise AccountingError("give exactly one target: --theta, --epsilon with --delta, or --kl")
    if (arguments.epsilon is None) != (arguments.delta is None):
        raise AccountingError("--epsilon and --delta go together")
    if arguments.theta is not None:
        result = calibrate_rao(mechanism, arguments.theta, values, repeat=arguments.repeat,
                               solve=arguments.solve)
    elif arguments.epsilon is not None:
        result = calibrate_dp(mechanism, arguments.epsilon, arguments.delta, values,
                              repeat=arguments.repeat, conversion=arguments.conversion,
                              solve=arguments.solve)
    else:
        result = calibrate_kl(mechanism, arguments.kl, values, repeat=arguments.repeat,
                              solve=arguments.solve)
    given = {k: v for k, v in values.items() if k != result.parameter}
    if arguments.json:
        print(json.dumps({"mechanism": mechanism.name, "definition": result.definition,
                          "parameter": result.parameter, "value": result.value,
                          "given": given, "target": result.target, "method": result.method}))
    else:
        target = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in result.target.items())
        print(f"mechanism {mechanism.name} ({_describe(given) or 'no other parameter'}): "
              f"{result.parameter} = {result.value:.12g} meets {result.definition} {target}  "
              f"[{result.method}]")
    return 0

