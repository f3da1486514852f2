"""Rao-DP budgets of repeated and composed releases (runtime accounting, without SymPy).

Budgets compose as ``sqrt(θ1² + θ2² + ...)`` (Soto 2025): independent releases are a product
family, whose Rao distance is the Euclidean norm of the components' distances.
"""

from __future__ import annotations

import math

from raosym.accounting.rdp import _positive_count
from raosym.errors import AccountingError


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
