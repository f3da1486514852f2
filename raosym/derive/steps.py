"""Proof steps and the immutable output of the derive stage.

The derivation engine appends a :class:`ProofStep` each time it really transforms or closes a
quantity; the LaTeX backend only renders them. A step is data: a one-sentence claim, the
equation it establishes (``lhs = rhs`` as SymPy objects, usually unevaluated ``Integral``s or
``Sum``s), and the justification that makes it valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy

from raosym.spec.model import FamilySpec

if TYPE_CHECKING:  # the mechanism's module builds on these records
    from raosym.derive.mechanism import MechanismDerivation

#: The strategy of the step that reduces a Rao distance modulo a period (see RaoDistance).
PERIOD_STRATEGY = "period"


def fisher_symbol(row_name: str, column_name: str) -> sympy.Symbol:
    """The symbol ``g_{row column}`` naming a Fisher entry in proof steps (part of the
    records' vocabulary: the LaTeX backend prints it as ``g_{\\mu\\sigma}``)."""
    return sympy.Symbol(f"g_{row_name}_{column_name}")


class UnitCircleIntegral(sympy.Integral):
    """``Integral(f, z)`` over the unit circle ``|z| = 1``, traversed once counterclockwise:
    the contour of a residue computation, which a proof must name (an ``Integral`` without
    limits would read as an antiderivative). A record only: nothing evaluates it."""


@dataclass(frozen=True)
class ProofStep:
    """One step the engine took: ``lhs = rhs`` because ``justification``.

    ``chain`` holds the intermediate right-hand sides of a computation the engine did in one
    go (``lhs = chain[0] = ... = rhs``: the combination it evaluated, then its value), and
    ``also`` further equations the same step establishes (``(lhs, rhs)`` pairs: the
    statistics, natural parameters and log-partition function read off together)."""

    claim: str
    lhs: sympy.Basic | None
    rhs: sympy.Basic
    justification: str
    strategy: str = ""
    chain: tuple = ()
    also: tuple = ()


@dataclass(frozen=True)
class FisherEntry:
    """An entry ``g_ij`` of the Fisher matrix, with the steps that closed it; ``value`` is None
    for an entry computed numerically (strategy ``numeric``)."""

    row: int
    column: int
    value: sympy.Expr | None
    strategy: str
    steps: tuple[ProofStep, ...]
    hypotheses: tuple[str, ...] = ()
    #: For a numeric entry, ``(s_i, s_j)``: what the verify and emit stages integrate
    #: against the density.
    scores: tuple[sympy.Expr, sympy.Expr] | None = None


@dataclass(frozen=True)
class Geometry:
    """Riemannian quantities of the Fisher metric."""

    line_element: sympy.Expr
    differentials: tuple[sympy.Symbol, ...]
    christoffel: tuple  # christoffel[k][i][j] = Γ^k_ij
    scalar_curvature: sympy.Expr | None
    gaussian_curvature: sympy.Expr | None  # two coordinates only
    steps: tuple[ProofStep, ...] = ()


@dataclass(frozen=True)
class RaoDistance:
    """The Fisher-Rao distance between two points of the manifold, or why it has no closed form.

    ``points`` is ``(first, second)``: the coordinates of each point, named by suffixing ``_1``
    and ``_2`` to the coordinate names (``mu_1``, ``sigma_2``) with the coordinates'
    assumptions; constants keep their own symbols. ``textbook`` is the distance as the
    literature writes it, ``stable`` an equal form that evaluates without cancellation (both
    None when ``structure`` is ``"numeric only"``, and then ``reason`` says why).
    """

    structure: str  # "one coordinate", "constant metric", "location-scale half-plane", "product", "numeric only"
    textbook: sympy.Expr | None
    stable: sympy.Expr | None
    points: tuple[tuple[sympy.Symbol, ...], tuple[sympy.Symbol, ...]]
    steps: tuple[ProofStep, ...] = ()
    reason: str | None = None
    #: ``(coordinate, period)`` of each periodic coordinate (the von Mises mean direction,
    #: period 2π): the distance is between classes of points modulo the period, taken between
    #: the representatives within half a period of each other.
    periods: tuple[tuple[sympy.Symbol, sympy.Expr], ...] = ()

    @property
    def closed(self) -> bool:
        return self.textbook is not None


@dataclass(frozen=True)
class Unavailable:
    """A quantity raosym could not deliver for a family (not derived, or not verified), and
    why. The family still delivers everything else that verified."""

    quantity: str   # "Rao distance", "scalar curvature", "privacy accounting", ...
    reason: str


@dataclass(frozen=True)
class Derivation:
    """Everything the derive stage found for one family (not yet checked numerically)."""

    spec: FamilySpec
    fisher: sympy.ImmutableMatrix
    entries: tuple[FisherEntry, ...]
    geometry: Geometry
    hypotheses: tuple[str, ...]
    timings: dict = field(default_factory=dict, compare=False, hash=False)
    distance: RaoDistance | None = None
    #: The accounting of a family with a [mechanism] table, else None.
    mechanism: MechanismDerivation | None = None
    #: What could not be derived or verified, with the reasons (see :class:`Unavailable`).
    unavailable: tuple[Unavailable, ...] = ()
    #: The scores ``s_i = d log f / d theta_i`` the Fisher entries integrate (in the order of
    #: the coordinates), exactly as the Fisher ladder formed them: a proof states them once
    #: and writes its integrals of score products with them.
    scores: tuple[sympy.Expr, ...] = ()

    @property
    def numeric_metric(self) -> bool:
        """Whether a Fisher entry is known only numerically: no connection or curvature is
        derived from such a metric, and a line's distance integrates its quadrature."""
        return any(entry.value is None for entry in self.entries)
