"""Benchmark: derivation and verification time per catalog family, and the whole catalog.

Prints, per family, the seconds spent deriving (SymPy) and verifying (mpmath), then the wall
time of the catalog in parallel over every core and its speed-up over the sum of the single-
family times. Targets on a 2-core machine: each family <= 20 s, the catalog <= 3 minutes.

    python benchmarks/derive_catalog.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
os.environ.setdefault("RAOSYM_DERIVATIONS", str(REPOSITORY / "derivations"))

from raosym import pipeline  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    jobs = parser.parse_args().jobs
    files = [str(path) for path in pipeline.all_derivation_files()]
    started = time.perf_counter()
    outcomes = pipeline.run_families(files, jobs=jobs)
    wall = time.perf_counter() - started
    print(f"{'family':<22}{'derive s':>10}{'verify s':>10}{'total s':>10}  status")
    serial = 0.0
    for outcome in outcomes:
        name = Path(outcome.name).stem
        if outcome.verified is None:
            print(f"{name:<22}{'':>30}  FAILED: {outcome.error}")
            continue
        timings = outcome.verified.derivation.timings
        serial += timings["total"]
        status = "ok" if timings["total"] <= 20 else "over the 20 s target"
        print(f"{name:<22}{timings['derive']:>10.2f}{timings['verify']:>10.2f}"
              f"{timings['total']:>10.2f}  {status}")
    print(f"\ncatalog of {len(files)} families with {jobs} jobs: {wall:.1f} s wall "
          f"(target 180 s); sum of per-family times {serial:.1f} s; "
          f"speed-up {serial / wall:.2f}x")


if __name__ == "__main__":
    main()
