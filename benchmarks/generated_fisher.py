"""Throughput and latency of the generated ``fisher_information`` functions.

Prints, per family with a hand-written reference below: the time for 10**6 points, the ratio
to a hand-written NumPy expression of the same matrix (target: at most 1.2), and the latency
of a single-point call. Run ``raosym generate`` first; this reads ``generated/python``.
Never part of the pass/fail suite.

    python benchmarks/generated_fisher.py [--points N] [--generated DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import timeit
from pathlib import Path

import numpy as np

GENERATED = Path(__file__).resolve().parents[1] / "generated" / "python"


def _diagonal(first, second):
    def fisher(theta):
        out = np.zeros(theta.shape[:-1] + (2, 2))
        out[..., 0, 0] = first(theta)
        out[..., 1, 1] = second(theta)
        return out
    return fisher


def _scalar(entry):
    def fisher(theta):
        return entry(theta)[..., None, None]
    return fisher


#: Hand-written NumPy versions of the closed forms (the literature values).
HAND_WRITTEN = {
    "gaussian": _diagonal(lambda t: 1 / t[..., 1] ** 2, lambda t: 2 / t[..., 1] ** 2),
    "laplace": _diagonal(lambda t: 1 / t[..., 1] ** 2, lambda t: 1 / t[..., 1] ** 2),
    "cauchy": _diagonal(lambda t: 0.5 / t[..., 1] ** 2, lambda t: 0.5 / t[..., 1] ** 2),
    "logistic": _diagonal(lambda t: 1 / (3 * t[..., 1] ** 2),
                          lambda t: (3 + np.pi**2) / (9 * t[..., 1] ** 2)),
    "poisson": _scalar(lambda t: 1 / t[..., 0]),
    "exponential": _scalar(lambda t: 1 / t[..., 0] ** 2),
    "bernoulli": _scalar(lambda t: 1 / (t[..., 0] * (1 - t[..., 0]))),
    "geometric": _scalar(lambda t: 1 / (t[..., 0] ** 2 * (1 - t[..., 0]))),
}


def load(name: str, folder: Path):
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def points(name: str, count: int, rng) -> np.ndarray:
    if name in ("poisson", "exponential"):
        return rng.uniform(0.1, 10, size=(count, 1))
    if name in ("bernoulli", "geometric"):
        return rng.uniform(0.01, 0.99, size=(count, 1))
    return np.stack([rng.uniform(-5, 5, count), rng.uniform(0.1, 10, count)], axis=-1)


def best(function, repeat: int = 5) -> float:
    return min(timeit.repeat(function, number=1, repeat=repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10**6)
    parser.add_argument("--generated", type=Path, default=GENERATED,
                        help="the folder of generated modules (default: generated/python)")
    arguments = parser.parse_args()
    count = arguments.points
    rng = np.random.default_rng(0)
    print(f"{'family':<12} {'generated':>10} {'by hand':>10} {'ratio':>6} {'one point':>10}")
    for name, reference in HAND_WRITTEN.items():
        module = load(name, arguments.generated)
        theta = points(name, count, rng)
        np.testing.assert_allclose(module.fisher_information(theta[:100]), reference(theta[:100]),
                                   rtol=1e-14)
        function, one = module.fisher_information, list(theta[0])
        generated = best(lambda f=function, t=theta: f(t))
        by_hand = best(lambda f=reference, t=theta: f(t))
        latency = best(lambda f=function, t=one: f(t), repeat=200)
        print(f"{name:<12} {generated * 1e3:8.1f}ms {by_hand * 1e3:8.1f}ms "
              f"{generated / by_hand:6.2f} {latency * 1e6:8.1f}us")


if __name__ == "__main__":
    main()
