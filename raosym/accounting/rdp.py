"""RDP curves, their composition and their conversion to (ε, δ)-DP (runtime accounting).

After the pipeline, without SymPy: the numeric layer on top of the generated
``rdp_epsilon`` functions (:mod:`raosym.accounting.mechanisms` loads them).

- RDP curves (:class:`RdpCurve`, callables α ↦ ε vectorized over α, or plain arrays over a set
  of orders) compose by addition (Mironov 2017, Proposition 1);
- conversion to (ε, δ)-DP minimizes over *continuous* α, with Mironov's Proposition 3
  ``ε + log(1/δ)/(α-1)`` or the improved bound of Balle et al. 2020, Theorem 21
  ``ε + log((α-1)/α) - (log δ + log α)/(α-1)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from raosym.errors import AccountingError, AccountingFailure

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


def _bound_float(rdp: float, alpha_minus_one: float, delta: float, conversion: str) -> float:
    """:func:`_bound` of Python floats (``conversion`` already checked); inf or nan where the
    curve is."""
    log_delta = math.log(delta)
    if conversion == "mironov":
        return rdp - log_delta / alpha_minus_one
    log_alpha = math.log1p(alpha_minus_one)
    return (rdp + math.log(alpha_minus_one) - log_alpha
            - (log_delta + log_alpha) / alpha_minus_one)


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

    def objective_at(u):
        # One order, as Brent's method asks: the bound on Python floats (NumPy's calls on a
        # one-element array cost several times the curve's own evaluation).
        alpha_minus_one = math.exp(u)
        value = _bound_float(float(_evaluate(curve, np.array([1.0 + alpha_minus_one]))[0]),
                             alpha_minus_one, delta, conversion)
        return value if math.isfinite(value) else math.inf

    grid = objective(_LOG_ALPHA_GRID)
    if not np.isfinite(grid).any():
        raise AccountingFailure(f"the RDP curve {curve.label} is not finite at any order searched")
    best = int(np.argmin(grid))
    u_best, value = float(_LOG_ALPHA_GRID[best]), float(grid[best])
    at_boundary = best in (0, len(_LOG_ALPHA_GRID) - 1)
    if not at_boundary:
        result = optimize.minimize_scalar(
            objective_at,
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
