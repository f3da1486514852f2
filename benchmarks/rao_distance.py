"""Throughput and accuracy of the generated ``rao_distance`` functions (issue 4).

Prints:

- the time of the generated Gaussian ``rao_distance`` on 10**6 pairs, and its ratio to a
  hand-written NumPy asinh form timed in the same run (target: at most 1.2);
- geomstats' normal distance on the same pairs when geomstats is importable; otherwise the
  figure quoted in issue 4 (1.84 ms per 10**4 distances, geomstats 2.8), labelled as quoted;
- the numeric path (gamma, beta: no closed form): seconds per pair, and the relative error
  against raosym.verify.geodesic's certified mpmath geodesic (target: at most 1e-10).

Run ``raosym generate`` first (this reads ``generated/python``); the numeric path's
references derive and verify gamma and beta (about a minute). Never part of the pass/fail suite.

    python benchmarks/rao_distance.py [--pairs N] [--generated DIR] [--skip-numeric]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import timeit
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parents[1]
GENERATED = REPOSITORY / "generated" / "python"
#: geomstats 2.8's normal distance on this machine, quoted in issue 4 (not measured here).
GEOMSTATS_QUOTED_SECONDS_PER_10K = 1.84e-3
#: Pairs of the numeric path: ordinary, far apart and nearby (relative 1e-4).
NUMERIC_PAIRS = {
    "gamma": [((2.0, 1.5), (3.5, 0.7)), ((0.8, 2.0), (5.0, 0.3)), ((0.1, 10.0), (20.0, 0.05)),
              ((2.0, 1.5), (2.0002, 1.5))],
    "beta": [((2.0, 3.0), (0.7, 1.5)), ((1.5, 1.5), (6.0, 2.0)), ((0.5, 0.5), (50.0, 20.0)),
             ((2.0, 3.0), (2.0, 3.0003))],
}


def load(name: str, folder: Path):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def by_hand(theta1, theta2):
    """The Gaussian Rao distance as one would write it: 2√2·asinh(√(Δμ²/2 + Δσ²)/(2√(σ₁σ₂)))."""
    mu1, s1 = theta1[..., 0], theta1[..., 1]
    mu2, s2 = theta2[..., 0], theta2[..., 1]
    return 2 * np.sqrt(2) * np.arcsinh(
        np.sqrt((mu1 - mu2) ** 2 / 2 + (s1 - s2) ** 2) / (2 * np.sqrt(s1 * s2)))


def by_hand_checked(theta1, theta2):
    """The same, after the input checks the generated function makes (each coordinate's least
    and greatest value against its domain, nan included): where the rest of the time goes."""
    for theta in (theta1, theta2):
        mu, sigma = theta[..., 0], theta[..., 1]
        if not (-np.inf < mu.min() and mu.max() < np.inf and 0 < sigma.min()
                and sigma.max() < np.inf):
            raise ValueError("outside the domain")
    return by_hand(theta1, theta2)


def best(function, repeat: int = 5) -> float:
    return min(timeit.repeat(function, number=1, repeat=repeat))


def closed_form(folder: Path, pairs: int) -> None:
    module = load("gaussian", folder)
    rng = np.random.default_rng(0)
    theta1 = np.stack([rng.uniform(-5, 5, pairs), rng.uniform(0.1, 10, pairs)], axis=-1)
    theta2 = np.stack([rng.uniform(-5, 5, pairs), rng.uniform(0.1, 10, pairs)], axis=-1)
    np.testing.assert_allclose(module.rao_distance(theta1[:1000], theta2[:1000]),
                               by_hand(theta1[:1000], theta2[:1000]), rtol=1e-14)
    generated = best(lambda: module.rao_distance(theta1, theta2))
    hand = best(lambda: by_hand(theta1, theta2))
    checked = best(lambda: by_hand_checked(theta1, theta2))
    print(f"Gaussian rao_distance on {pairs:.0e} pairs")
    print(f"  generated           {generated * 1e3:8.1f} ms")
    print(f"  hand-written asinh  {hand * 1e3:8.1f} ms   ratio generated/hand "
          f"{generated / hand:.2f} (target <= 1.2)")
    print(f"  hand-written + the same input checks {checked * 1e3:8.1f} ms   ratio generated/that "
          f"{generated / checked:.2f}")
    try:
        # geomstats 2.8 keeps it in information_geometry (geometry.normal_distributions
        # does not exist there).
        from geomstats.information_geometry.normal import NormalDistributions
    except Exception:  # noqa: BLE001 - any import failure means: not available here
        quoted = GEOMSTATS_QUOTED_SECONDS_PER_10K * pairs / 1e4
        small = best(lambda: module.rao_distance(theta1[:10**4], theta2[:10**4]), repeat=50)
        print("  geomstats           not importable here. QUOTED figure (issue 4, geomstats 2.8, "
              "NOT measured in this run): 1.84 ms per 1e4 distances")
        print(f"    generated on 1e4 pairs (measured) {small * 1e3:.3f} ms: "
              f"{GEOMSTATS_QUOTED_SECONDS_PER_10K / small:.1f}x the quoted throughput")
        print(f"    generated on {pairs:.0e} pairs vs the quoted figure scaled linearly "
              f"({quoted * 1e3:.0f} ms): {quoted / generated:.1f}x (target >= 5x)")
        return
    space = NormalDistributions(sample_dim=1)
    # geomstats' normal coordinates are (mean, standard deviation), as here.
    measured = best(lambda: space.metric.dist(theta1, theta2), repeat=3)
    print(f"  geomstats (measured){measured * 1e3:8.1f} ms   throughput ratio "
          f"{measured / generated:.1f}x (target >= 5x)")


def numeric_path(folder: Path) -> None:
    sys.path.insert(0, str(REPOSITORY))
    import mpmath

    from raosym import pipeline
    from raosym.verify import geodesic

    print("Numeric path (no closed form): time per pair, error vs the mpmath geodesic")
    for name, pairs in NUMERIC_PAIRS.items():
        module = load(name, folder)
        model = geodesic.metric_model(pipeline.run_family(name).derivation, {})
        for p, q in pairs:
            started = time.perf_counter()
            value = float(module.rao_distance(p, q))
            seconds = time.perf_counter() - started
            exact = geodesic.geodesic_distance(model, [mpmath.mpf(v) for v in p],
                                               [mpmath.mpf(v) for v in q]).distance
            error = float(abs(mpmath.mpf(value) - exact) / exact)
            print(f"  {name:<6} {p!s:>12} -> {q!s:<14} d = {value:.15g}  "
                  f"{seconds:6.3f} s/pair  relative error {error:.1e} (target <= 1e-10)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10**6)
    parser.add_argument("--generated", type=Path, default=GENERATED,
                        help="the folder of generated modules (default: generated/python)")
    parser.add_argument("--skip-numeric", action="store_true",
                        help="only the closed form (the numeric references take minutes)")
    arguments = parser.parse_args()
    closed_form(arguments.generated, arguments.pairs)
    if not arguments.skip_numeric:
        numeric_path(arguments.generated)


if __name__ == "__main__":
    main()
