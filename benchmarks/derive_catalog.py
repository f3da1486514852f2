"""Benchmark: CPU seconds to derive and verify each catalog family, and the whole catalog.

Each family is derived and verified cold (``--no-cache``) by ``raosym derive`` in a process of
its own, one after the other, and the CPU time of that process and of every process it started
(the forked SymPy calls under a time budget) is read from ``getrusage(RUSAGE_CHILDREN)``:
CPU seconds, unlike wall seconds, do not depend on what else the machine is doing. Target:
no family above 30 s of CPU. With ``--parallel`` the catalog is also derived with every core
and its wall time printed.

    python benchmarks/derive_catalog.py [--parallel] [--jobs N] [FAMILY ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
TARGET_CPU_SECONDS = 30.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def family_cpu(path: Path) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of a cold derive of one family."""
    before, started = children_cpu(), time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "raosym", "derive", "--no-cache", "--quiet",
                          str(path)], cwd=REPOSITORY, capture_output=True, text=True)
    return children_cpu() - before, time.perf_counter() - started, run.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help="default: every file in derivations/")
    parser.add_argument("--parallel", action="store_true",
                        help="also time the whole catalog in parallel (wall seconds)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    arguments = parser.parse_args()
    folder = REPOSITORY / "derivations"
    paths = ([folder / f"{name}.toml" for name in arguments.families] if arguments.families
             else sorted(folder.glob("*.toml")))
    print(f"{'family':<22}{'CPU s':>8}{'wall s':>8}  status")
    seconds = []
    for path in paths:
        cpu, wall, status = family_cpu(path)
        seconds.append(cpu)
        verdict = "ok" if cpu <= TARGET_CPU_SECONDS else f"over the {TARGET_CPU_SECONDS:g} s target"
        if status:
            verdict = f"exit {status}"
        print(f"{path.stem:<22}{cpu:>8.1f}{wall:>8.1f}  {verdict}")
    print(f"\n{len(paths)} families: {sum(seconds):.1f} CPU s in all, the most "
          f"{max(seconds):.1f} s")
    if arguments.parallel:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "raosym", "derive", "--no-cache", "--quiet",
                        "--jobs", str(arguments.jobs), *map(str, paths)], cwd=REPOSITORY,
                       capture_output=True)
        print(f"catalog with {arguments.jobs} jobs: {time.perf_counter() - started:.1f} s wall")


if __name__ == "__main__":
    main()
