"""Cost and accuracy of the generated RDP curves, against baselines measured in the same run.

Issue 5's performance targets:
- a whole Laplace RDP curve of 156 orders in one call: at most 1.5x the naive vectorized NumPy
  formula (Mironov 2017, Table II) timed here, with full accuracy where the naive one overflows;
- randomized response at a single order: at most 5 µs per call.
It also times the continuous-α conversion of raosym.account against the least bound over the
156 orders. dp_accounting and autodp are timed when importable; otherwise the figures quoted in
issue 5 are printed, labelled "quoted". Never part of the pass/fail suite.

Run ``raosym generate`` first (this reads ``generated/python``); without the generated
``rdp_epsilon`` functions the script says so and exits with status 1.

    python benchmarks/rdp_curve.py [--generated DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import timeit
from pathlib import Path

import mpmath as mp
import numpy as np

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from raosym import accounting

#: 156 orders, as an accountant would use: 1.1 ... 10.9 by 0.1, 11 ... 63, 128, 256, 512, 1024.
ORDERS = np.concatenate([1 + np.arange(1, 100) / 10, np.arange(11, 64), [128, 256, 512, 1024]])

QUOTED = {  # issue 5, "Performance"
    "dp_accounting 0.6, Laplace curve of 156 orders": 205.0,
    "autodp 0.2.3, Laplace curve of 156 orders": 1300.0,
    "naive vectorized NumPy, Laplace curve": 13.0,
    "dp_accounting, randomized response at one order": 200.0,
}


def naive_laplace(orders, b):
    """Mironov's Table II formula as written (sensitivity 1), vectorized."""
    a = orders
    return np.log(a / (2 * a - 1) * np.exp((a - 1) / b)
                  + (a - 1) / (2 * a - 1) * np.exp(-a / b)) / (a - 1)


def naive_rr(alpha, p):
    """Mironov's Table II formula for randomized response as written, one order."""
    return math.log(p ** alpha * (1 - p) ** (1 - alpha)
                    + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def mp_laplace(alpha, b):
    a, b = mp.mpf(alpha), mp.mpf(b)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) / b)
                  + (a - 1) / (2 * a - 1) * mp.exp(-a / b)) / (a - 1)


def mp_rr(alpha, p):
    a, p = mp.mpf(alpha), mp.mpf(p)
    return mp.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def best_microseconds(statement, number: int, repeat: int = 7) -> float:
    return min(timeit.repeat(statement, number=number, repeat=repeat)) / number * 1e6


def relative_error(values, reference) -> tuple[float, int]:
    """Largest relative error over the finite reference values, and the count of inf/nan."""
    values = np.asarray(values, dtype=float)
    bad = int(np.sum(~np.isfinite(values)))
    finite = np.isfinite(values)
    errors = np.abs(values[finite] - reference[finite]) / np.abs(reference[finite])
    return (float(errors.max()) if errors.size else math.nan), bad


def accuracy_rows(laplace) -> None:
    print("\naccuracy over the 156 orders (relative error against mpmath at 50 digits)")
    print(f"{'Laplace scale b':>16} {'generated':>12} {'naive':>12} {'naive inf/nan':>14}")
    with mp.workdps(50):
        for b in (1e-3, 1e-2, 0.1, 1.0, 10.0, 1e3):
            reference = np.array([float(mp_laplace(a, b)) for a in ORDERS])
            generated, bad_generated = relative_error(
                laplace.rdp_epsilon(ORDERS, sensitivity=1.0, b=b), reference)
            with np.errstate(all="ignore"):
                naive, bad_naive = relative_error(naive_laplace(ORDERS, b), reference)
            flag = f" ({bad_generated} inf/nan!)" if bad_generated else ""
            print(f"{b:>16g} {generated:>12.2e} {naive:>12.2e} {bad_naive:>14d}{flag}")


def curve_timing(laplace) -> None:
    b = 2.0
    generated = best_microseconds(lambda: laplace.rdp_epsilon(ORDERS, sensitivity=1.0, b=b),
                                  2000)
    naive = best_microseconds(lambda: naive_laplace(ORDERS, b), 2000)
    print(f"\nLaplace RDP curve, {ORDERS.size} orders per call (b = {b:g}, sensitivity 1)")
    print(f"  generated rdp_epsilon          {generated:9.2f} µs")
    print(f"  naive vectorized NumPy         {naive:9.2f} µs   (measured baseline)")
    print(f"  ratio generated / naive        {generated / naive:9.2f}    (target ≤ 1.5)")
    for library, measured in (("dp_accounting", _dp_accounting_laplace(b)),
                              ("autodp", _autodp_laplace(b))):
        if measured is not None:
            print(f"  {library:<30} {measured:9.2f} µs   (measured; ratio to generated "
                  f"{measured / generated:.1f})")
    for label, micro in QUOTED.items():
        if "Laplace" in label:
            print(f"  {label:<48} {micro:7.0f} µs   (quoted)")


def rr_timing(rr) -> None:
    alpha, p = 2.0, 0.75
    generated = best_microseconds(lambda: rr.rdp_epsilon(alpha, p=p), 20000)
    naive = best_microseconds(lambda: naive_rr(alpha, p), 20000)
    with mp.workdps(50):
        reference = float(mp_rr(alpha, p))
        # The reference at the float the function receives (ε ∝ (p - 1/2)² near 1/2, so the
        # rounding of 0.5 + 1e-7 alone would change it by 1e-10 relative).
        near_half = float(mp_rr(1.5, mp.mpf(0.5 + 1e-7)))
    value = float(rr.rdp_epsilon(alpha, p=p))
    print(f"\nrandomized response at one order (α = {alpha:g}, p = {p:g})")
    print(f"  generated rdp_epsilon          {generated:9.2f} µs   (target ≤ 5 µs), "
          f"relative error {abs(value - reference) / reference:.1e}")
    print(f"  naive scalar formula (math)    {naive:9.2f} µs   (measured baseline)")
    print(f"  {'dp_accounting':<30} {QUOTED['dp_accounting, randomized response at one order']:9.0f}"
          f" µs   (quoted)")
    generated_half = float(rr.rdp_epsilon(1.5, p=0.5 + 1e-7))
    naive_half = naive_rr(1.5, 0.5 + 1e-7)
    print(f"  at α = 1.5, p = 0.5 + 1e-7: relative error generated "
          f"{abs(generated_half - near_half) / near_half:.1e}, naive "
          f"{abs(naive_half - near_half) / near_half:.1e}")


def conversion_timing(laplace) -> None:
    curve = accounting.RdpCurve(
        lambda a: 52 * laplace.rdp_epsilon(a, sensitivity=1.0, b=4.0), "52 Laplace")
    continuous = best_microseconds(lambda: accounting.dp_epsilon(curve, 1e-6), 50, repeat=5)
    discrete = best_microseconds(
        lambda: accounting.dp_epsilon_at_orders(ORDERS, curve(ORDERS), 1e-6), 500, repeat=5)
    found = accounting.dp_epsilon(curve, 1e-6)
    at_orders = accounting.dp_epsilon_at_orders(ORDERS, curve(ORDERS), 1e-6)
    print("\nconversion to (ε, δ), 52 Laplace releases b = 4, δ = 1e-6 (Balle et al. Thm 21)")
    print(f"  continuous α (grid + Brent)    {continuous:9.1f} µs   ε = {found.epsilon:.10f} "
          f"at α = {found.alpha:.5g}")
    print(f"  least bound over 156 orders    {discrete:9.1f} µs   ε = {at_orders.epsilon:.10f} "
          f"at α = {at_orders.alpha:g}")


def _dp_accounting_laplace(b):
    if importlib.util.find_spec("dp_accounting") is None:
        return None
    try:
        from dp_accounting import dp_event
        from dp_accounting.rdp import rdp_privacy_accountant

        def run():
            accountant = rdp_privacy_accountant.RdpAccountant(list(ORDERS))
            accountant.compose(dp_event.LaplaceDpEvent(b))
            return accountant
        run()
    except (ImportError, AttributeError, TypeError, ValueError) as error:  # an API that moved
        print(f"  dp_accounting is installed but could not be called: {error}")
        return None
    return best_microseconds(run, 200)


def _autodp_laplace(b):
    if importlib.util.find_spec("autodp") is None:
        return None
    try:
        from autodp import rdp_bank

        def run():
            return [rdp_bank.RDP_laplace({"b": b}, float(a)) for a in ORDERS]
        run()
    except (ImportError, AttributeError, TypeError, ValueError, KeyError) as error:
        print(f"  autodp is installed but could not be called: {error}")
        return None
    return best_microseconds(run, 50)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", default=str(REPOSITORY / "generated"),
                        help="the generated folder (default: the repository's generated/)")
    arguments = parser.parse_args()
    try:
        laplace = accounting.load_mechanism("laplace_location", arguments.generated)
        rr = accounting.load_mechanism("bernoulli", arguments.generated)
    except accounting.AccountingError as error:
        print(f"rdp_curve benchmark: the generated accounting functions are not there yet: "
              f"{error}", file=sys.stderr)
        return 1
    print(f"numpy {np.__version__}; modules {laplace.source}, {rr.source}")
    curve_timing(laplace)
    rr_timing(rr)
    conversion_timing(laplace)
    accuracy_rows(laplace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
