"""The privacy-loss random variable of one release, L = log f_D(X)/f_D'(X) with X ~ f_D.

Where it sits: the applications layer, after emit, beside :mod:`raosym.accounting`; used by
:mod:`raosym.pld` (PLDs for dp_accounting) and :mod:`raosym.composition_plot`. Nothing is
derived here: the loss and the densities are the generated ``privacy_loss(x, ...)`` and
``log_output_density(x, ...)`` of ``generated/python/NAME.py`` (verified log-densities,
checked by the emitted-code gate). This module:

- discretizes the distribution of L for a continuous mechanism (:meth:`ContinuousLoss.rounded`:
  the masses of the loss grid ``k·h``, rounded up (pessimistic) or down (optimistic)), for
  dp_accounting's ``create_from_rounded_probability``;
- gives the exact masses of a finite discrete mechanism (:func:`discrete_log_masses`);
- computes the single-release hockey-stick curve ``δ(ε) = E_D[(1 - e^{ε-L})₊]`` and its inverse
  (:class:`HockeyStick`, :func:`dp_delta`, :func:`dp_epsilon`) by quadrature, without
  dp_accounting.

How a continuous loss is cut (:class:`ContinuousLoss`): the output axis is sampled on grids
``x = k + s·sinh(u)`` around each kink k of the densities (the two locations 0 and Δ of an
additive mechanism; s its scale; u in steps of 1/16 out to |x - k| = 1e30·s); the local extrema
of L on those nodes are refined by Brent's method and cut the axis into pieces on which L is
taken to be monotone (a feature narrower than the grid would be missed: the price of working
from a black-box function); on each piece the outputs where L crosses a level are found by
bisection. Masses are Gauss–Legendre quadratures (16 nodes) of f_D between consecutive cuts
and nodes, where f_D is smooth; the sum of all masses must be 1 to 1e-9, or the quadrature
is refused. The loss is the generated difference of two log-densities: far beyond the mass
(|x| of 1e16 scales) it has lost its digits, and only outputs that carry mass are used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from raosym.accounting.mechanisms import Mechanism, _bound_call, import_by_path
from raosym.errors import AccountingError, AccountingFailure

#: Steps of the sinh grids in u, and how far out they reach (|x - kink| = 1e30 scales).
_GRID_STEP = 1.0 / 16.0
_GRID_REACH = math.asinh(1e30)
#: Gauss–Legendre nodes per piece.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
#: Halvings of the bisection for a level crossing: a piece between sinh-grid nodes is at most
#: 7% of its distance to the kink wide, so 64 halvings resolve it to below 1e-19 of that.
_BISECTIONS = 64
#: |total mass - 1| above which the quadrature of f_D is refused.
_MASS_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------------------------
# The generated functions of a mechanism


def generated_functions(mechanism: Mechanism) -> tuple[Callable, Callable]:
    """``(log_output_density, privacy_loss)`` of the mechanism's generated module."""
    module = import_by_path(mechanism.name, Path(mechanism.source))
    functions = (getattr(module, "log_output_density", None), getattr(module, "privacy_loss", None))
    if not all(callable(f) for f in functions):
        raise AccountingError(
            f"{mechanism.source} has no privacy_loss and log_output_density: generated/ "
            "predates them (run `raosym generate`)")
    return functions


def _bound(mechanism: Mechanism, function: Callable, values: dict) -> Callable:
    """``x ↦ function(x, **values)`` (parameters passed by the names the signature has)."""
    call = _bound_call(mechanism, function, values)
    return lambda x: np.asarray(call(np.asarray(x, dtype=float)), dtype=float)


def _scale_and_kinks(mechanism: Mechanism, values: dict, spec) -> tuple[float, tuple]:
    """The noise scale and the kinks (the two locations) of an additive mechanism; a unit
    scale and the origin otherwise."""
    if spec is not None and spec.mechanism.kind == "additive":
        return float(values[spec.mechanism.scale.name]), (0.0, float(values["sensitivity"]))
    if spec is None and mechanism.parameters[:1] == ("sensitivity",) \
            and len(mechanism.parameters) > 1:  # the generated order: sensitivity, scale, ...
        return float(values[mechanism.parameters[1]]), (0.0, float(values["sensitivity"]))
    return 1.0, (0.0,)


def load_loss(mechanism: Mechanism, values: dict, spec=None) -> ContinuousLoss:
    """The privacy loss of one release of a continuous mechanism, from its generated
    functions, with the parameter values ``values``."""
    values = mechanism.check(values)
    if spec is not None and spec.support.discrete:
        raise AccountingError(f"mechanism {mechanism.name} is discrete: use its exact masses "
                              "(discrete_log_masses), not a continuous discretization")
    log_density, loss = generated_functions(mechanism)
    scale, kinks = _scale_and_kinks(mechanism, values, spec)
    lower, upper = _support_bounds(spec)
    return ContinuousLoss(
        log_density=_bound(mechanism, log_density, values),
        loss=_bound(mechanism, loss, values), scale=scale, kinks=kinks, lower=lower,
        upper=upper,
        description=("privacy loss discretized from the generated privacy_loss and "
                     "log_output_density"))


def _support_bounds(spec) -> tuple[float, float]:
    if spec is None:
        return -math.inf, math.inf
    bounds = []
    for bound in (spec.support.lower, spec.support.upper):
        bounds.append(float(bound) if bound.is_number else (-math.inf if not bounds else math.inf))
    return bounds[0], bounds[1]


# ---------------------------------------------------------------------------------------------
# A continuous privacy loss and its discretization


@dataclass(frozen=True)
class RoundedLoss:
    """A privacy-loss distribution on the grid ``k·interval``: ``masses[k]`` and the mass at
    +∞ (dp_accounting's ``create_from_rounded_probability`` arguments)."""

    masses: dict
    infinity_mass: float
    interval: float


@dataclass(frozen=True)
class ContinuousLoss:
    """L(x) and log f_D(x) of one release (vectorized callables), the noise scale and the
    kinks of the densities, the support (lower, upper)."""

    log_density: Callable[[np.ndarray], np.ndarray]
    loss: Callable[[np.ndarray], np.ndarray]
    scale: float
    kinks: tuple[float, ...]
    lower: float = -math.inf
    upper: float = math.inf
    description: str = ""
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def reversed(self) -> ContinuousLoss:
        """The loss of the pair (D', D): X ~ f_D' = f_D·e^{-L}, loss -L."""
        def log_density(x):
            return self.log_density(x) - self.loss(x)

        return ContinuousLoss(log_density, lambda x: -self.loss(x), self.scale, self.kinks,
                              self.lower, self.upper, self.description + " (reversed)")

    # -- the output axis --------------------------------------------------------------------

    def nodes(self) -> np.ndarray:
        """The sorted sinh-grid nodes around every kink, inside the support."""
        u = np.arange(-_GRID_REACH, _GRID_REACH + _GRID_STEP / 2, _GRID_STEP)
        found = [kink + self.scale * np.sinh(u) for kink in self.kinks]
        nodes = np.unique(np.concatenate([*found, np.asarray(self.kinks, dtype=float)]))
        return nodes[(nodes > self.lower) & (nodes < self.upper)]

    def pieces(self) -> np.ndarray:
        """Cuts of the output axis between which L is taken to be monotone: the grid nodes,
        the kinks and the refined local extrema of L (sorted)."""
        if "pieces" not in self._cache:
            nodes = self.nodes()
            losses = self.loss(nodes)
            extrema = [_refine_extremum(self.loss, nodes[i - 1], nodes[i + 1], losses[i] > losses[i - 1])
                       for i in range(1, len(nodes) - 1)
                       if (losses[i] - losses[i - 1]) * (losses[i + 1] - losses[i]) < 0]
            self._cache["pieces"] = np.unique(np.concatenate([nodes, np.asarray(extrema)]))
        return self._cache["pieces"]

    def segment_masses(self, cuts: np.ndarray) -> np.ndarray:
        """∫ f_D over each [cuts[i], cuts[i+1]] (Gauss–Legendre)."""
        left, right = cuts[:-1], cuts[1:]
        half, middle = (right - left) / 2, (right + left) / 2
        x = middle[:, None] + half[:, None] * _NODES[None, :]
        return half * (_density(self.log_density, x) @ _WEIGHTS)

    # -- the discretized PLD ------------------------------------------------------------------

    def rounded(self, interval: float, *, pessimistic: bool = True,
                tail_mass: float = 1e-15) -> RoundedLoss:
        """The distribution of L under f_D on the grid ``k·interval``.

        Pessimistic: each bit of mass goes to the least grid value at or above every loss it
        carries, and the two tails of mass ``tail_mass/2`` each beyond the outermost cuts
        count as infinite loss; optimistic: the greatest at or below, tails dropped.
        """
        cuts = self.pieces()
        masses = self.segment_masses(cuts)
        total = math.fsum(masses)
        if not abs(total - 1.0) <= _MASS_TOLERANCE:
            raise AccountingFailure(
                f"the output density integrates to {total!r} over the grid, not 1: its mass "
                "lies beyond 1e30 scales (or in a feature the grid misses); the privacy loss "
                "cannot be discretized")
        first, last = _truncation(masses, tail_mass / 2)
        kept = cuts[first:last + 2]
        pieces = _level_cuts(self.loss, kept, interval)
        losses = self.loss(pieces.points)
        upper_index = np.where(pieces.level_index >= 0, pieces.level,
                               np.ceil(losses / interval)).astype(np.int64)
        lower_index = np.where(pieces.level_index >= 0, pieces.level,
                               np.floor(losses / interval)).astype(np.int64)
        if pessimistic:
            index = np.maximum(upper_index[:-1], upper_index[1:])
        else:
            index = np.minimum(lower_index[:-1], lower_index[1:])
        cell_masses = self.segment_masses(pieces.points)
        found: dict[int, float] = {}
        for key, mass in zip(index.tolist(), cell_masses.tolist(), strict=True):
            if mass > 0.0:
                found[key] = found.get(key, 0.0) + mass
        outside = math.fsum(masses[:first]) + math.fsum(masses[last + 1:])
        return RoundedLoss(found, outside if pessimistic else 0.0, interval)

    # -- the hockey-stick curve ---------------------------------------------------------------

    def hockey_stick(self, epsilon: float) -> float:
        """δ(ε) = ∫ f_D (1 - e^{ε-L})₊ over the whole grid (no truncation), cut where L = ε."""
        cuts = self.pieces()
        crossing = _crossings(self.loss, cuts, float(epsilon))
        points = np.unique(np.concatenate([cuts, crossing]))
        left, right = points[:-1], points[1:]
        half, middle = (right - left) / 2, (right + left) / 2
        x = middle[:, None] + half[:, None] * _NODES[None, :]
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            excess = np.nan_to_num(np.clip(-np.expm1(epsilon - self.loss(x)), 0.0, None))
        integrand = _density(self.log_density, x) * excess
        return float(max(math.fsum(half * (integrand @ _WEIGHTS)), 0.0))

    def loss_range(self, tail: float = 1e-30) -> tuple[float, float]:
        """The least and the greatest loss over the outputs that carry all but ``tail`` of
        the mass under f_D (the greatest is the ε of pure DP, when the mechanism has one).
        Farther out the loss, a difference of two large log-densities, has lost its digits
        (|x| of 1e16 scales), and those outputs carry no mass that matters."""
        cuts = self.pieces()
        first, last = _truncation(self.segment_masses(cuts), tail)
        losses = self.loss(cuts[first:last + 2])
        return float(np.min(losses)), float(np.max(losses))

    def greatest_loss(self) -> float:
        """The greatest loss where the output has mass (:meth:`loss_range`)."""
        return self.loss_range()[1]


def _density(log_density, x) -> np.ndarray:
    """f = exp(log f), 0 where log f is -inf or undefined (both log-densities underflowed
    to -inf far in a tail, so their difference is nan)."""
    with np.errstate(under="ignore", invalid="ignore"):
        values = np.exp(log_density(x))
    return np.nan_to_num(values, nan=0.0, posinf=0.0)


def _refine_extremum(loss, left: float, right: float, maximum: bool) -> float:
    """The local extremum of L between two grid nodes (Brent's bounded method)."""
    from scipy import optimize

    sign = -1.0 if maximum else 1.0
    result = optimize.minimize_scalar(lambda x: sign * float(loss(np.array([x]))[0]),
                                      bounds=(left, right), method="bounded",
                                      options={"xatol": 1e-14 * max(1.0, abs(left), abs(right))})
    return float(result.x)


def _truncation(masses: np.ndarray, tail: float) -> tuple[int, int]:
    """The first and last segment kept: the tails beyond them each carry at most ``tail``
    (summed outward from the ends, so tiny masses keep their digits)."""
    left = np.cumsum(masses)
    right = np.cumsum(masses[::-1])[::-1]
    first = int(np.searchsorted(left, tail, side="right"))
    last = int(len(masses) - 1 - np.searchsorted(right[::-1], tail, side="right"))
    return min(first, last), max(first, last)


@dataclass(frozen=True)
class _Cuts:
    """Points of the output axis and, for those where L crosses a grid level, its index
    (``level_index >= 0``; ``level`` holds the level number there)."""

    points: np.ndarray
    level: np.ndarray
    level_index: np.ndarray


def _level_cuts(loss, cuts: np.ndarray, interval: float) -> _Cuts:
    """``cuts`` together with every output where L crosses a level ``k·interval`` on a
    monotone piece between two consecutive cuts (vectorized bisection)."""
    values = loss(cuts)
    low, high = np.minimum(values[:-1], values[1:]), np.maximum(values[:-1], values[1:])
    first = np.floor(low / interval).astype(np.int64) + 1
    last = np.ceil(high / interval).astype(np.int64) - 1
    counts = np.maximum(last - first + 1, 0)
    piece = np.repeat(np.arange(len(counts)), counts)
    levels = first[piece] + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts,
                                                                  counts))
    roots = _bisect(loss, cuts[piece], cuts[piece + 1], levels * interval,
                    values[piece] < values[piece + 1])
    points = np.concatenate([cuts, roots])
    level = np.concatenate([np.zeros(len(cuts), dtype=np.int64), levels])
    index = np.concatenate([np.full(len(cuts), -1), np.arange(len(roots))])
    order = np.argsort(points, kind="stable")
    return _Cuts(points[order], level[order], index[order])


def _crossings(loss, cuts: np.ndarray, level: float) -> np.ndarray:
    """The outputs between consecutive cuts where L crosses ``level``."""
    values = loss(cuts)
    between = (np.minimum(values[:-1], values[1:]) < level) & (
        level < np.maximum(values[:-1], values[1:]))
    piece = np.nonzero(between)[0]
    return _bisect(loss, cuts[piece], cuts[piece + 1], np.full(len(piece), level),
                   values[piece] < values[piece + 1])


def _bisect(loss, left, right, target, increasing) -> np.ndarray:
    """x in [left, right] with loss(x) = target, elementwise (L monotone on each interval)."""
    left, right = np.array(left, dtype=float), np.array(right, dtype=float)
    if left.size == 0:
        return left
    for _ in range(_BISECTIONS):
        middle = left + (right - left) / 2
        below = (loss(middle) < target) == increasing
        left, right = np.where(below, middle, left), np.where(below, right, middle)
    return left + (right - left) / 2


# ---------------------------------------------------------------------------------------------
# A finite discrete mechanism


def discrete_log_masses(mechanism: Mechanism, values: dict, spec) -> tuple[dict, dict]:
    """``({x: log f_D(x)}, {x: log f_D'(x)})`` over the finite support of ``spec``, from the
    generated ``log_output_density`` and ``privacy_loss`` (log f_D' = log f_D - L).

    Raises when the support is infinite, or when either output's masses do not sum to 1
    over it (f_D' would put mass outside the support)."""
    support = spec.support
    points = [p for p in support.points if getattr(p, "is_number", False)]
    if support.kind != "finite" or not points or len(points) != len(support.points):
        raise AccountingError(
            f"mechanism {spec.name}: its support '{support.text}' is not a finite set of "
            "numbers, so its privacy-loss distribution cannot be enumerated")
    values = mechanism.check(values)
    log_density, loss = (_bound(mechanism, f, values) for f in generated_functions(mechanism))
    outputs = np.array([float(p) for p in points])
    first = log_density(outputs)
    with np.errstate(invalid="ignore"):
        second = first - loss(outputs)
    log_first = dict(zip(outputs.tolist(), first.tolist(), strict=True))
    log_second = dict(zip(outputs.tolist(), second.tolist(), strict=True))
    for name, masses in (("D", first), ("D'", second)):
        total = math.fsum(np.exp(masses))
        if not abs(total - 1.0) <= 1e-12:
            raise AccountingError(
                f"mechanism {spec.name}: the output on {name} puts mass {total:.15g} on the "
                f"support {support.text}, not 1")
    return log_first, log_second


# ---------------------------------------------------------------------------------------------
# The hockey-stick curve of one release: δ(ε) and its inverse


@dataclass(frozen=True)
class DiscreteOutputs:
    """The log-masses of the two outputs of a discrete mechanism over its support."""

    log_first: dict
    log_second: dict

    def reversed(self) -> DiscreteOutputs:
        return DiscreteOutputs(self.log_second, self.log_first)

    def greatest_loss(self) -> float:
        """The greatest loss over the outputs that have mass under D."""
        return max(log_mass - self.log_second[x] for x, log_mass in self.log_first.items()
                   if log_mass > -math.inf)

    def hockey_stick(self, epsilon: float) -> float:
        """δ(ε) = Σ f_D(x) (1 - e^{ε-L(x)})₊, exactly (a sum)."""
        total = []
        for x, log_mass in self.log_first.items():
            loss = log_mass - self.log_second[x]
            if loss > epsilon:
                total.append(-math.exp(log_mass) * math.expm1(epsilon - loss)
                             if math.isfinite(loss) else math.exp(log_mass))
        return math.fsum(total)


@dataclass(frozen=True)
class HockeyStick:
    """δ(ε) = E_D[(1 - e^{ε-L})₊] of one release, the larger of the pair (D, D') and of the
    reversed pair (D', D): the mechanism is (ε, δ(ε))-DP and no smaller δ will do.

    ``parts`` are the two :class:`ContinuousLoss` (or :class:`DiscreteOutputs`).
    """

    parts: tuple

    @classmethod
    def of(cls, outputs) -> HockeyStick:
        return cls((outputs, outputs.reversed()))

    def _one(self, epsilon: float) -> float:
        return max(part.hockey_stick(epsilon) for part in self.parts)

    def delta(self, epsilon):
        """δ(ε), elementwise over an array of ε ≥ 0."""
        epsilon = np.asarray(epsilon, dtype=float)
        if np.any(~(epsilon >= 0)) or not np.all(np.isfinite(epsilon)):
            raise AccountingError("ε of the hockey-stick curve must be finite and ≥ 0")
        return np.vectorize(self._one, otypes=[float])(epsilon)

    def epsilon(self, delta: float) -> float:
        """The least ε ≥ 0 with δ(ε) ≤ delta (δ decreases in ε; Brent's root-finder)."""
        from scipy import optimize

        delta = float(delta)
        if not 0.0 < delta < 1.0:
            raise AccountingError(f"delta must lie in (0, 1); got {delta!r}")
        if self._one(0.0) <= delta:
            return 0.0
        high = 1.0
        while self._one(high) > delta:
            high *= 2.0
            if high > 1e6:
                raise AccountingFailure(f"δ(ε) stays above {delta:g} up to ε = 1e6")
        return float(optimize.brentq(lambda e: self._one(e) - delta, 0.0, high, xtol=1e-13,
                                     rtol=1e-15, maxiter=200))


def hockey_stick(mechanism: Mechanism, *, derivations=None, **values) -> HockeyStick:
    """The single-release hockey-stick curve of a generated mechanism with these values."""
    from raosym.pld import _spec

    values = mechanism.check(values)
    spec = _spec(mechanism.name, derivations)
    if spec is not None and spec.support.discrete:
        return HockeyStick.of(DiscreteOutputs(*discrete_log_masses(mechanism, values, spec)))
    return HockeyStick.of(load_loss(mechanism, values, spec))


def dp_delta(mechanism: Mechanism, epsilon, **values):
    """δ(ε) of one release: the least δ for which it is (ε, δ)-DP (arrays of ε allowed)."""
    return hockey_stick(mechanism, **values).delta(epsilon)


def dp_epsilon(mechanism: Mechanism, delta: float, **values) -> float:
    """The inverse of :func:`dp_delta`: the least ε at which one release is (ε, delta)-DP."""
    return hockey_stick(mechanism, **values).epsilon(delta)


__all__ = ["ContinuousLoss", "DiscreteOutputs", "HockeyStick", "RoundedLoss", "discrete_log_masses", "dp_delta",
           "dp_epsilon", "generated_functions", "hockey_stick", "load_loss"]
