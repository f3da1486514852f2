"""Command-line interface: parses arguments, calls the pipeline, formats results.

Commands: ``derive`` (derive and verify, print the results) and ``generate`` (derive, verify,
emit and write ``generated/``; ``--check`` compares instead of writing, ``--pdf`` compiles the
appendix). Exit status: 0 when every family derived and verified (and, with ``--check``,
``generated/`` is up to date), 1 when a derivation, a check or an emit failed (or
``generated/`` drifted), 2 for bad input (a derivation file that is malformed, unsafe or not a
density).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from raosym import pipeline, report
from raosym.errors import RaosymError


def _derive_command(arguments) -> int:
    if arguments.all == bool(arguments.families):
        print("raosym derive: name families (or paths), or pass --all", file=sys.stderr)
        return 2
    names = [str(p) for p in pipeline.all_derivation_files()] if arguments.all else arguments.families
    if not names:
        print(f"raosym derive: no derivation files in {pipeline.derivations_folder()}",
              file=sys.stderr)
        return 2
    status = 0
    for outcome in pipeline.run_families(names, jobs=arguments.jobs):
        status = max(status, _report(outcome, as_json=arguments.json))
    return status


def _report(outcome: pipeline.FamilyOutcome, *, as_json: bool) -> int:
    if outcome.error is not None:
        print(f"raosym: {outcome.error}", file=sys.stderr)
        if as_json:
            print(json.dumps({"name": outcome.name, "error": str(outcome.error)}))
        return outcome.error.exit_status
    if as_json:
        print(json.dumps(report.as_json(outcome.verified)))
    else:
        print(report.as_text(outcome.verified))
    return 0


def _generate_command(arguments) -> int:
    generation = pipeline.generate(arguments.families, output=arguments.output,
                                   check=arguments.check, jobs=arguments.jobs)
    status = 0
    for failure in generation.failures:
        print(f"raosym: {failure.error} (files of this family left as they were)",
              file=sys.stderr)
        status = max(status, failure.error.exit_status)
    if arguments.check:
        if generation.diff:
            sys.stdout.write(generation.diff)
            print(f"raosym generate --check: {generation.output} is out of date; run "
                  "`raosym generate`", file=sys.stderr)
            status = max(status, 1)
        return status
    for path in generation.changed:
        print(f"wrote {Path(generation.output, path)}"
              if (Path(generation.output) / path).exists()
              else f"removed {Path(generation.output, path)}")
    if arguments.pdf:
        from raosym.emit.pdf import compile_appendix

        latex = Path(generation.output) / "latex"
        print(f"wrote {compile_appendix(latex, latex / 'appendix.pdf')}")
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="raosym",
        description="Derive, verify and emit the information geometry of noise families.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    derive = commands.add_parser(
        "derive", help="derive and verify the Fisher information of families")
    derive.add_argument("families", nargs="*", metavar="NAME_OR_PATH",
                        help="a family in derivations/ (e.g. laplace) or a path to a .toml file")
    derive.add_argument("--all", action="store_true", help="every file in derivations/")
    derive.add_argument("--json", action="store_true", help="one JSON object per family per line")
    derive.add_argument("--jobs", type=int, default=None,
                        help="families derived in parallel (default: the number of cores)")
    derive.set_defaults(run=_derive_command)
    generate = commands.add_parser(
        "generate", help="derive, verify and emit Python modules and LaTeX proofs")
    generate.add_argument("families", nargs="*", metavar="NAME",
                          help="families in derivations/ (default: every one)")
    generate.add_argument("--check", action="store_true",
                          help="compare a fresh render with the output folder; exit 1 with a "
                               "unified diff when they differ")
    generate.add_argument("--pdf", action="store_true",
                          help="also compile latex/appendix.tex into latex/appendix.pdf")
    generate.add_argument("--jobs", type=int, default=None,
                          help="families derived in parallel (default: the number of cores)")
    generate.add_argument("--output", default="generated",
                          help="the output folder (default: generated)")
    generate.set_defaults(run=_generate_command)
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        return arguments.run(arguments)
    except RaosymError as error:
        print(f"raosym: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("raosym: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
