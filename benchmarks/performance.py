"""The figures of issue 15, as ratios to hand-written NumPy measured in the same run.

Prints, for the generated modules in ``generated/python`` (run ``raosym generate`` first):

- Gaussian ``fisher_information`` at 1 point and at 10**6 points, Gaussian ``rao_distance`` at
  1 pair, 10**4 pairs (no target) and 10**6 pairs, beta ``fisher_information`` at 1 point (against SciPy's polygamma),
  and at 10**6 points, each against the formula written by hand with NumPy (targets: <= 2x at
  one point, <= 1.2x at 10**6 points);
- the Laplace and Gaussian RDP curves at 156 orders (target <= 1.5x), and the (eps, delta)
  conversion of 52 composed Gaussians against the least bound over a grid of orders, with
  dp_accounting and autodp when they are importable (never required);
- the gamma and beta ``rao_distance`` on random pairs in [0.1, 20]**2 (``--pairs 200`` for
  issue 15's set): pairs that converged (each certified to 1e-10 by the module), seconds per
  pair, and the same pairs solved by a hand-written ``scipy.integrate.solve_bvp`` (the
  geodesic equation in log coordinates, tolerance 1e-8), with the largest difference;
- start-up: ``raosym --help``, ``raosym account`` and ``import`` of every generated module, as
  ratios to ``python -c "import numpy"`` (targets: <= 3x and <= 1.5x).

CPU time, best of several rounds. Never part of the pass/fail suite.

    python benchmarks/performance.py [--generated DIR] [--pairs N] [--skip-startup]
                                     [--only fisher|rdp|geodesic|startup]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np
import scipy.integrate
import scipy.special

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
GENERATED = REPOSITORY / "generated" / "python"
#: 156 orders, as in benchmarks/rdp_curve.py.
ORDERS = np.concatenate([1 + np.arange(1, 100) / 10, np.arange(11, 64), [128, 256, 512, 1024]])


def load(folder: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seconds(function, number: int, repeat: int = 5) -> float:
    """Best CPU-bound wall time of one call (the machine is shared: best of rounds)."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def row(label: str, generated: float, hand: float, target: str = "") -> None:
    print(f"  {label:<44} generated {_time(generated):>10}  hand {_time(hand):>10}  "
          f"ratio {generated / hand:5.2f}{'  (target ' + target + ')' if target else ''}")


def _time(value: float) -> str:
    return f"{value * 1e6:.2f} µs" if value < 1e-3 else f"{value * 1e3:.2f} ms"


# ----------------------------------------------------------------------------- hand-written


def gaussian_fisher(theta):
    sigma = theta[..., 1]
    fisher = np.zeros(theta.shape[:-1] + (2, 2))
    fisher[..., 0, 0] = 1 / sigma**2
    fisher[..., 1, 1] = 2 / sigma**2
    return fisher


def gaussian_distance(theta1, theta2):
    mu1, s1, mu2, s2 = theta1[..., 0], theta1[..., 1], theta2[..., 0], theta2[..., 1]
    return 2 * np.sqrt(2) * np.arcsinh(
        np.sqrt((mu1 - mu2) ** 2 / 2 + (s1 - s2) ** 2) / (2 * np.sqrt(s1 * s2)))


def beta_fisher(theta):
    a, b = theta[..., 0], theta[..., 1]
    both = scipy.special.polygamma(1, a + b)
    fisher = np.empty(theta.shape[:-1] + (2, 2))
    fisher[..., 0, 0] = scipy.special.polygamma(1, a) - both
    fisher[..., 0, 1] = fisher[..., 1, 0] = -both
    fisher[..., 1, 1] = scipy.special.polygamma(1, b) - both
    return fisher


def laplace_rdp(orders, b):
    """Mironov (2017), Table II, for sensitivity 1."""
    return np.log((orders / (2 * orders - 1)) * np.exp((orders - 1) / b)
                  + ((orders - 1) / (2 * orders - 1)) * np.exp(-orders / b)) / (orders - 1)


def gamma_geometry(k, theta):
    """The gamma metric (g_kk, g_ktheta, g_thetatheta) and Christoffel symbols
    ((G^k_kk, G^k_ktheta, G^k_thetatheta), (G^theta_kk, ...)) in (shape k, scale theta)."""
    trigamma, tetragamma = scipy.special.polygamma(1, k), scipy.special.polygamma(2, k)
    det = k * trigamma - 1
    g = (trigamma, 1 / theta, k / theta**2)
    gamma = ((k * tetragamma / (2 * det), -1 / (2 * theta * det), -k / (2 * theta**2 * det)),
             (-theta * tetragamma / (2 * det), trigamma / (2 * det),
              (1.5 - k * trigamma) / (theta * det)))
    return g, gamma


def beta_geometry(a, b):
    """The beta metric and Christoffel symbols: g is the Hessian of F = log B(a, b), so
    G^k_ij = g^kl T_lij / 2 with T the third derivatives of F."""
    both, both2 = scipy.special.polygamma(1, a + b), scipy.special.polygamma(2, a + b)
    g00, g01, g11 = scipy.special.polygamma(1, a) - both, -both, scipy.special.polygamma(1, b) - both
    t000, t111 = scipy.special.polygamma(2, a) - both2, scipy.special.polygamma(2, b) - both2
    t001 = t011 = -both2
    det = g00 * g11 - g01 * g01
    i00, i01, i11 = g11 / det, -g01 / det, g00 / det
    gamma = tuple(tuple((ik0 * t0 + ik1 * t1) / 2 for t0, t1 in pairs)
                  for ik0, ik1 in ((i00, i01), (i01, i11))
                  for pairs in [((t000, t001), (t001, t011), (t011, t111))])
    return (g00, g01, g11), gamma


def distance_by_solve_bvp(geometry, p, q):
    """The geodesic of a 2-parameter family on (0, oo)**2 as a user would solve it with
    solve_bvp: log coordinates, straight initial guess, tolerance 1e-8; the length by 16-point
    Gauss-Legendre of the speed. geometry(x, y) gives the metric and Christoffel symbols."""
    def rhs(_, state):
        (x, y), (wx, wy) = np.exp(state[:2]), state[2:]
        vx, vy = x * wx, y * wy
        _, ((a, b, c), (d, e, f)) = geometry(x, y)
        ax = -(a * vx * vx + 2 * b * vx * vy + c * vy * vy)
        ay = -(d * vx * vx + 2 * e * vx * vy + f * vy * vy)
        return np.vstack((wx, wy, ax / x - wx**2, ay / y - wy**2))

    first, last = np.log(p), np.log(q)
    mesh = np.linspace(0, 1, 11)
    guess = np.vstack((first[:, None] + np.outer(last - first, mesh),
                       np.repeat((last - first)[:, None], 11, axis=1)))
    # Iterates that wander off overflow: solve_bvp reports that as a failed solve.
    with np.errstate(all="ignore"):
        solution = scipy.integrate.solve_bvp(
            rhs, lambda a, b: np.concatenate((a[:2] - first, b[:2] - last)), mesh, guess,
            tol=1e-8, max_nodes=100000)
        nodes, weights = np.polynomial.legendre.leggauss(16)
        state = solution.sol((nodes + 1) / 2)
        (x, y), (wx, wy) = np.exp(state[:2]), state[2:]
        (g00, g01, g11), _ = geometry(x, y)
        vx, vy = x * wx, y * wy
        speed = np.sqrt(g00 * vx**2 + 2 * g01 * vx * vy + g11 * vy**2)
    return solution.status == 0, float(weights @ speed / 2)


# ----------------------------------------------------------------------------- the figures


def fisher_and_distance(folder: Path) -> None:
    gaussian, beta = load(folder, "gaussian"), load(folder, "beta")
    rng = np.random.default_rng(0)
    point = np.array([0.3, 1.7])
    many = np.column_stack((rng.normal(size=10**6), rng.uniform(0.5, 2.0, 10**6)))
    np.testing.assert_allclose(gaussian.fisher_information(many[:1000]),
                               gaussian_fisher(many[:1000]), rtol=1e-15)
    print("Fisher information and distance")
    row("gaussian fisher_information, 1 point", seconds(lambda: gaussian.fisher_information(point), 5000),
        seconds(lambda: gaussian_fisher(point), 5000), "<= 2")
    row("gaussian fisher_information, 1e6 points", seconds(lambda: gaussian.fisher_information(many), 3),
        seconds(lambda: gaussian_fisher(many), 3), "<= 1.2")
    other = np.column_stack((rng.normal(size=10**4), rng.uniform(0.5, 2.0, 10**4)))
    row("gaussian rao_distance, 1 pair", seconds(lambda: gaussian.rao_distance(point, other[0]), 5000),
        seconds(lambda: gaussian_distance(point, other[0]), 5000), "<= 2")
    # Issue 15's target is at 10**6 points; 10**4 pairs (in the CPU cache, where the checks'
    # passes weigh more than memory traffic) is shown for comparison, without a target.
    row("gaussian rao_distance, 1e4 pairs", seconds(lambda: gaussian.rao_distance(many[:10**4], other), 50),
        seconds(lambda: gaussian_distance(many[:10**4], other), 50))
    far = np.column_stack((rng.normal(size=10**6), rng.uniform(0.5, 2.0, 10**6)))
    row("gaussian rao_distance, 1e6 pairs", seconds(lambda: gaussian.rao_distance(many, far), 3),
        seconds(lambda: gaussian_distance(many, far), 3), "<= 1.2")
    beta_point = np.array([2.5, 0.7])
    np.testing.assert_allclose(beta.fisher_information(beta_point), beta_fisher(beta_point),
                               rtol=1e-13)
    row("beta fisher_information, 1 point (scipy polygamma)",
        seconds(lambda: beta.fisher_information(beta_point), 500),
        seconds(lambda: beta_fisher(beta_point), 500), "<= 2")
    beta_many = rng.uniform(0.1, 20, (10**6, 2))
    row("beta fisher_information, 1e6 points", seconds(lambda: beta.fisher_information(beta_many), 1, 3),
        seconds(lambda: beta_fisher(beta_many), 1, 3), "<= 1.2")


def rdp_curves(folder: Path) -> None:
    from raosym import accounting

    laplace = load(folder, "laplace_location")
    gaussian = load(folder, "gaussian_location")
    print("RDP curves, 156 orders, and the (eps, delta) conversion")
    np.testing.assert_allclose(laplace.rdp_epsilon(ORDERS, sensitivity=1.0, b=2.0),
                               laplace_rdp(ORDERS, 2.0), rtol=1e-12)
    row("Laplace rdp_epsilon", seconds(lambda: laplace.rdp_epsilon(ORDERS, sensitivity=1.0, b=2.0), 2000),
        seconds(lambda: laplace_rdp(ORDERS, 2.0), 2000), "<= 1.5")
    row("Gaussian rdp_epsilon", seconds(lambda: gaussian.rdp_epsilon(ORDERS, sensitivity=1.0, sigma=4.0), 2000),
        seconds(lambda: ORDERS * 1.0**2 / (2 * 4.0**2), 2000), "<= 1.5")
    mechanism = accounting.load_mechanism("gaussian_location", folder.parent)
    curve = mechanism.curve(sensitivity=1.0, sigma=4.0).repeated(52)
    converted = seconds(lambda: accounting.dp_epsilon(curve, 1e-6), 50)
    grid = seconds(lambda: accounting.dp_epsilon_at_orders(ORDERS, 52 * ORDERS / 32, 1e-6), 500)
    row("(eps, delta) of 52 Gaussians vs grid of orders", converted, grid)
    print(f"    eps = {accounting.dp_epsilon(curve, 1e-6).epsilon:.12g} (continuous alpha), "
          f"grid {accounting.dp_epsilon_at_orders(ORDERS, 52 * ORDERS / 32, 1e-6).epsilon:.12g}")
    try:
        import dp_accounting
        from dp_accounting.rdp import rdp_privacy_accountant as rdp
    except Exception:  # noqa: BLE001 - optional peer
        print("    dp_accounting not importable: not measured")
    else:
        def peer():
            accountant = rdp.RdpAccountant(list(ORDERS))
            accountant.compose(dp_accounting.GaussianDpEvent(4.0), 52)
            return accountant.get_epsilon(1e-6)
        print(f"    dp_accounting {_time(seconds(peer, 50))} (eps = {peer():.12g}); raosym is "
              f"{seconds(peer, 50) / converted:.2f}x faster")
    try:
        from autodp import mechanism_zoo, transformer_zoo  # noqa: F401
    except Exception:  # noqa: BLE001 - optional peer
        print("    autodp not importable: not measured")


def numeric_distance(folder: Path, name: str, geometry, pairs: int) -> None:
    """The family's rao_distance on random pairs in [0.1, 20]**2 (the first is issue 15's
    failing gamma pair): how many converged (each certified by the module to 1e-10: end
    point, constant speed, length), and the time against a hand-written solve_bvp."""
    module = load(folder, name)
    rng = np.random.default_rng(15)
    first = np.vstack(([3.366, 1.714], rng.uniform(0.1, 20, (pairs - 1, 2))))
    second = np.vstack(([0.627, 1.059], rng.uniform(0.1, 20, (pairs - 1, 2))))
    print(f"{name} rao_distance on {pairs} pairs in [0.1, 20]^2 (the first from issue 15)")
    started = time.process_time()
    try:
        got = module.rao_distance(first, second)
        failed = 0
    except module.GeodesicError as error:
        if getattr(error, "distances", None) is None:
            # A module generated before issue 15: one failure loses the batch; pair by pair.
            got = np.array([_or_nan(module, p, q) for p, q in zip(first, second)])
            failed = int(np.isnan(got).sum())
        else:
            got, failed = error.distances, len(error.failures)
    generated = (time.process_time() - started) / pairs
    started = time.process_time()
    by_hand = [distance_by_solve_bvp(geometry, p, q) for p, q in zip(first, second)]
    hand = (time.process_time() - started) / pairs
    agree = max(abs(d - h) / h for d, (ok, h) in zip(got, by_hand) if ok and np.isfinite(d))
    print(f"  generated: {pairs - failed} of {pairs} converged and certified to 1e-10, "
          f"{generated:.3f} s a pair")
    print(f"  hand-written solve_bvp: {sum(ok for ok, _ in by_hand)} of {pairs} converged, "
          f"{hand:.3f} s a pair; ratio {generated / hand:.2f}; largest relative difference "
          f"{agree:.1e} (the hand solve's own error is about 1e-11)")


def _or_nan(module, p, q) -> float:
    try:
        return float(module.rao_distance(p, q))
    except module.GeodesicError:
        return float("nan")


def startup(folder: Path) -> None:
    def best_run(code: list[str], repeat: int = 5) -> float:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run([sys.executable, *code], cwd=REPOSITORY, check=True,
                           capture_output=True)
            times.append(time.perf_counter() - started)
        return min(times)

    numpy = best_run(["-c", "import numpy"])
    print(f"Start-up (wall time, best of 5), against `python -c 'import numpy'` = {numpy * 1e3:.0f} ms")
    for label, code, target in (
            ("raosym --help", ["-m", "raosym", "--help"], "<= 3"),
            ("raosym account", ["-m", "raosym", "account", "--mechanism", "gaussian",
                                "--sigma", "2", "--repeat", "3"], ""),
    ):
        value = best_run(code)
        print(f"  {label:<28} {value * 1e3:6.0f} ms  ratio {value / numpy:5.2f}"
              f"{'  (target ' + target + ')' if target else ''}")
    worst = max((best_run(["-c", f"import sys; sys.path.insert(0, '{folder}'); import {path.stem}"],
                          repeat=3), path.stem) for path in sorted(folder.glob("*.py")))
    print(f"  import of a generated module, the slowest ({worst[1]}): {worst[0] * 1e3:.0f} ms  "
          f"ratio {worst[0] / numpy:.2f} (target <= 1.5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=Path, default=GENERATED)
    parser.add_argument("--pairs", type=int, default=28,
                        help="pairs for the gamma and beta distances (default 28; issue 15 "
                             "asks for 200)")
    parser.add_argument("--skip-startup", action="store_true")
    parser.add_argument("--only", choices=("fisher", "rdp", "geodesic", "startup"),
                        help="one group of figures")
    arguments = parser.parse_args()
    wanted = {arguments.only} if arguments.only else {"fisher", "rdp", "geodesic", "startup"}
    if arguments.skip_startup:
        wanted.discard("startup")
    if "fisher" in wanted:
        fisher_and_distance(arguments.generated)
    if "rdp" in wanted:
        rdp_curves(arguments.generated)
    if "geodesic" in wanted:
        numeric_distance(arguments.generated, "gamma", gamma_geometry, arguments.pairs)
        numeric_distance(arguments.generated, "beta", beta_geometry, arguments.pairs)
    if "startup" in wanted:
        startup(arguments.generated)


if __name__ == "__main__":
    main()
