"""Tests of the RDP interop with dp_accounting (raosym/interop.py).

The references are dp_accounting's own models (its Gaussian and Laplace RDP, its conversion)
and the literature's curves written here (Mironov 2017, Table II), not raosym's code.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from raosym import accounting, interop

dp_accounting = pytest.importorskip("dp_accounting")  # CI installs it (".[test,dp]")
from dp_accounting.rdp import rdp_privacy_accountant

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    monkeypatch.chdir(REPOSITORY)


def curve(name, **values):
    return accounting.load_mechanism(name).curve(**values)


def test_a_generated_curve_at_dp_accountings_orders_gives_its_epsilon():
    """52 Gaussians of σ = 4: the generated curve on dp_accounting's 156 orders converts to the
    ε its own GaussianDpEvent gives (10.32694, the issue's figure)."""
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(4.0), 52)
    orders, values = interop.rdp_at_orders(curve("gaussian_location", sensitivity=1, sigma=4)
                                           .repeated(52))
    assert np.array_equal(orders, accountant.orders)
    np.testing.assert_allclose(values, accountant.rdp, rtol=1e-14)
    epsilon, _ = rdp_privacy_accountant.compute_epsilon(orders, values, 1e-6)
    assert epsilon == pytest.approx(accountant.get_epsilon(1e-6), rel=1e-13)
    assert epsilon == pytest.approx(10.32694, abs=5e-6)


def test_a_mechanism_dp_accounting_has_no_model_for_joins_its_accountant():
    """52 Gaussians in the accountant, 10 Cauchy releases (no DpEvent) from raosym: the
    accountant's RDP plus the curve, converted by dp_accounting, equals raosym's own
    composition at the same orders under the same conversion (Balle et al. 2020)."""
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(4.0), 52)
    cauchy = curve("cauchy", sensitivity=1, s=4).repeated(10)
    epsilon, order = interop.epsilon_with_accountant(accountant, 1e-6, cauchy)
    orders = np.asarray(accountant.orders)
    gaussian = orders * 52 / (2 * 4.0**2)  # Mironov 2017, Table II
    total = accounting.compose_orders(gaussian, cauchy(orders))
    own = accounting.dp_epsilon_at_orders(orders, total, 1e-6, "balle")
    assert epsilon == pytest.approx(own.epsilon, rel=1e-12)
    assert order == own.alpha
    # More releases cost more: above the Gaussians alone.
    assert epsilon > accountant.get_epsilon(1e-6)


def test_an_accountants_composition_converts_with_raosyms_conversions():
    """dp_accounting's 52 Laplace (b = 4) releases as (orders, rdp): Mironov's Laplace curve
    written here matches, and raosym's conversion over those orders gives its ε."""
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_accounting.LaplaceDpEvent(4.0), 52)
    orders, rdp = interop.accountant_curve(accountant)
    lam = 4.0
    table = [52 * math.log(a / (2 * a - 1) * math.exp((a - 1) / lam)
                           + (a - 1) / (2 * a - 1) * math.exp(-a / lam)) / (a - 1)
             for a in orders[orders < 200]]
    np.testing.assert_allclose(rdp[orders < 200], table, rtol=1e-9)
    guarantee = accounting.dp_epsilon_at_orders(orders, rdp, 1e-6, "balle")
    assert guarantee.epsilon == pytest.approx(accountant.get_epsilon(1e-6), rel=1e-12)


def test_bad_orders_are_refused():
    with pytest.raises(accounting.AccountingError, match="greater than 1"):
        interop.rdp_at_orders(curve("bernoulli", p=0.75), [0.5, 2.0])
