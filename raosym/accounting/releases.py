"""Accounting of repeated releases: what ``raosym account`` reports (runtime, without SymPy).

Independent releases compose: RDP curves and KL divergences add, Rao-DP budgets add in
quadrature; the composed curve is converted to (ε, δ)-DP under both conversions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from raosym.accounting.mechanisms import Mechanism
from raosym.accounting.rao import compose_rao, repeated_rao
from raosym.accounting.rdp import CONVERSIONS, _positive_count, compose, dp_epsilon
from raosym.errors import AccountingError


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
        if mechanism.sensitivity_norm is not None:
            row["sensitivity_norm"] = mechanism.sensitivity_norm  # a vector query
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
