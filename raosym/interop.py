"""RDP curves between raosym and Google's dp_accounting, both ways.

Where it sits: the applications layer, after emit, beside :mod:`raosym.accounting`. dp_accounting's
``RdpAccountant`` composes DpEvents it has models for (Gaussian, Laplace, randomized response,
subsampling, ...) on a fixed set of orders; a generated mechanism it has no model for (Cauchy,
logistic, Student-t, generalized Gaussian noise) has none. The adapter works on the
accountant's public ``orders`` and ``rdp`` and on dp_accounting's public
``rdp_privacy_accountant.compute_epsilon``:

- :func:`rdp_at_orders`: a raosym curve (:class:`raosym.accounting.RdpCurve`) as values at the
  accountant's orders (dp_accounting's 156 default orders unless given);
- :func:`compose_with_accountant`: the accountant's composed RDP plus raosym curves, at its
  orders, and :func:`epsilon_with_accountant` their (ε, δ) by dp_accounting's conversion;
- :func:`accountant_curve`: the other way, an accountant's composition as ``(orders, rdp)``,
  which :func:`raosym.accounting.dp_epsilon_at_orders` converts (or adds to raosym curves known at
  the same orders with :func:`raosym.accounting.compose_orders`).
"""

from __future__ import annotations

import numpy as np

from raosym.accounting.rdp import RdpCurve, _evaluate
from raosym.errors import AccountingError

INSTALL_HINT = ("dp_accounting is an optional dependency: pip install 'raosym[dp]' (or pip "
                "install dp_accounting)")


def _rdp_module():
    try:
        from dp_accounting.rdp import rdp_privacy_accountant
    except ImportError:
        raise AccountingError(INSTALL_HINT) from None
    return rdp_privacy_accountant


def default_orders() -> np.ndarray:
    """dp_accounting's default RDP orders (``DEFAULT_RDP_ORDERS``: 1.1 to 1024)."""
    return np.asarray(_rdp_module().DEFAULT_RDP_ORDERS, dtype=float)


def rdp_at_orders(curve: RdpCurve, orders=None) -> tuple[np.ndarray, np.ndarray]:
    """``(orders, ε(orders))`` of a raosym curve; orders where the curve cannot be evaluated
    (a numeric curve at extreme orders) are +inf, which no conversion picks."""
    orders = default_orders() if orders is None else np.asarray(orders, dtype=float)
    if orders.ndim != 1 or orders.size == 0 or np.any(~(orders > 1.0)):
        raise AccountingError("RDP orders must be a non-empty list of numbers greater than 1")
    values = _evaluate(curve, orders)
    return orders, np.where(np.isfinite(values), values, np.inf)


def compose_with_accountant(accountant, *curves: RdpCurve) -> tuple[np.ndarray, np.ndarray]:
    """The RDP of what ``accountant`` (a dp_accounting ``RdpAccountant``) has composed together
    with the raosym ``curves``, at the accountant's orders: the sum (curves add)."""
    orders = np.asarray(accountant.orders, dtype=float)
    total = np.asarray(accountant.rdp, dtype=float).copy()
    for curve in curves:
        total = total + rdp_at_orders(curve, orders)[1]
    return orders, total


def epsilon_with_accountant(accountant, delta: float, *curves: RdpCurve) -> tuple[float, float]:
    """``(ε, order)`` at ``delta`` of the accountant's composition with raosym ``curves``, by
    dp_accounting's own conversion (``compute_epsilon``: Canonne, Kamath and Steinke 2020,
    Proposition 12, the bound of Balle et al. 2020, Theorem 21)."""
    orders, total = compose_with_accountant(accountant, *curves)
    epsilon, order = _rdp_module().compute_epsilon(orders, total, float(delta))
    return float(epsilon), float(order)


def accountant_curve(accountant) -> tuple[np.ndarray, np.ndarray]:
    """``(orders, rdp)`` of an ``RdpAccountant``'s composition (copies)."""
    return np.asarray(accountant.orders, dtype=float), np.asarray(accountant.rdp, dtype=float)


__all__ = ["accountant_curve", "compose_with_accountant", "default_orders",
           "epsilon_with_accountant", "rdp_at_orders"]
