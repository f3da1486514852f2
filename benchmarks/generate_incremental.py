"""Benchmark: incremental and parallel ``raosym generate`` over the catalog.

Runs the real command (``python -m raosym generate``) on a copy of ``derivations/`` and of the
``raosym`` package (so that edits made meanwhile do not count), with a temporary output folder
and a temporary cache, and prints:

1. a cold run with ``--jobs 1 --no-cache`` (the single-process baseline, measured here);
2. a cold run over every core into an empty cache, and its speed-up over (1);
3. a warm run with nothing changed (target: at most 5 s on the 2-core machine), and whether
   the output is byte-identical to the cold run's (and to a warm render into a new folder);
4. after touching one derivation file (a comment appended), which families were derived
   again (target: only that one) and how long it took.

    python3 benchmarks/generate_incremental.py [--skip-serial] [--touch gamma]

``--skip-serial`` leaves out (1), which takes as long as the cold run times the core count.
Not part of the test suite: it prints figures, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def generate(workspace: Path, output: Path, *options: str) -> tuple[float, dict]:
    environment = {**os.environ, "PYTHONPATH": str(workspace),
                   "RAOSYM_DERIVATIONS": str(workspace / "derivations"),
                   "RAOSYM_CACHE": str(workspace / "cache")}
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "raosym", "generate", "--output", str(output), "--json",
         *options], check=False, cwd=workspace, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 1) or not result.stdout.strip():
        sys.exit(f"raosym generate {' '.join(options)} failed ({result.returncode}):\n"
                 f"{result.stderr[-3000:]}")
    summary = json.loads(result.stdout)
    failed = [row["family"] for row in summary["families"] if row["status"] != "ok"]
    if failed:  # the others are still written; the figures stay comparable run to run
        print(f"  (failed in this tree, not emitted: {', '.join(failed)})")
    return seconds, summary


def derived_again(summary: dict) -> list[str]:
    return sorted(row["family"] for row in summary["families"] if not row["cached"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-serial", action="store_true",
                        help="skip the --jobs 1 baseline")
    parser.add_argument("--touch", default="gamma", help="the family to touch (default gamma)")
    arguments = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="raosym-bench-") as temporary:
        workspace = Path(temporary)
        shutil.copytree(REPOSITORY / "derivations", workspace / "derivations")
        # A snapshot of the package: edits made to the tree while this runs (a new engine
        # version) must not turn the warm run into a cold one.
        shutil.copytree(REPOSITORY / "raosym", workspace / "raosym",
                        ignore=shutil.ignore_patterns("__pycache__"))
        families = len(list((workspace / "derivations").glob("*.toml")))
        print(f"catalog: {families} families; {cores} cores")

        serial = None
        if not arguments.skip_serial:
            serial, _ = generate(workspace, workspace / "serial", "--jobs", "1", "--no-cache")
            print(f"cold, --jobs 1, no cache:        {serial:7.1f} s")
        cold, summary = generate(workspace, workspace / "out")
        line = f"cold, --jobs {cores}, empty cache:     {cold:7.1f} s"
        if serial is not None:
            line += f"   speed-up over --jobs 1: {serial / cold:.2f}x"
        print(line + f"   (derived {len(derived_again(summary))} families)")
        cold_tree = snapshot(workspace / "out")
        if serial is not None:
            serial_tree = snapshot(workspace / "serial")
            differ = sorted(path for path in set(serial_tree) | set(cold_tree)
                            if serial_tree.get(path) != cold_tree.get(path))
            print("  --jobs 1 output byte-identical to the parallel one: "
                  f"{not differ}{'; differing files: ' + ', '.join(differ) if differ else ''}")

        warm, summary = generate(workspace, workspace / "out")
        print(f"warm, nothing changed:           {warm:7.1f} s   (target <= 5 s; "
              f"{cold / warm:.0f}x faster than cold; derived again: "
              f"{derived_again(summary) or 'none'}; files changed: {len(summary['changed'])})")
        print(f"  output byte-identical after the warm run: "
              f"{snapshot(workspace / 'out') == cold_tree}")
        fresh, _ = generate(workspace, workspace / "fresh")
        print(f"warm, into an empty folder:      {fresh:7.1f} s   byte-identical to the cold "
              f"output: {snapshot(workspace / 'fresh') == cold_tree}")

        touched = workspace / "derivations" / f"{arguments.touch}.toml"
        with open(touched, "a", encoding="utf-8") as file:
            file.write("# touched by benchmarks/generate_incremental.py\n")
        after, summary = generate(workspace, workspace / "out")
        print(f"after touching {touched.name}: {after:7.1f} s   derived again: "
              f"{derived_again(summary)} (expected ['{arguments.touch}']); files changed: "
              f"{summary['changed']}")


if __name__ == "__main__":
    main()
