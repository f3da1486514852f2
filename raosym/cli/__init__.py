"""Command-line interface (``raosym``): parses arguments, calls the pipeline, formats results.

After every stage; thin. This module has the parser and the pipeline's commands; beside it
:mod:`~raosym.cli.accounting` (``account``, ``calibrate``), :mod:`~raosym.cli.arguments`
(every NAME=VALUE argument, parsed once), :mod:`~raosym.cli.progress`,
:mod:`~raosym.cli.report` and :mod:`~raosym.cli.scaffold`. Commands: ``new`` (start a derivation file from a commented template or another family),
``derive`` (derive and verify, print the results) and ``generate`` (derive, verify, emit and
write ``generated/``; ``--check`` compares instead of writing, ``--pdf`` compiles the
appendix). ``derive`` and ``generate`` take Verified results from the derivation cache
(:mod:`raosym.cache`; ``--no-cache`` bypasses it), report progress per family on stderr
(:mod:`raosym.cli.progress`; ``--quiet`` silences it) and end with a summary table on stderr
(``--json``: machine-readable output on stdout instead).

Exit status: 0 when every family's Fisher matrix derived and verified (quantities that did
not, such as a distance whose check failed, are reported as unavailable; ``--strict`` makes
them an error) and, with ``--check``, ``generated/`` is up to date; 1 when a derivation, a check or an emit failed (or ``generated/`` drifted, or
it could not be written), 2 for bad input (a derivation file that is malformed, unsafe or not
a density; a bad command line), 130 when interrupted.

Other modules add commands through :data:`COMMAND_MODULES`: each names a module exposing
``add_commands(subparsers)``, which adds its parsers and sets ``run`` (a function of the
parsed arguments returning the exit status) as their default. A command that also sets
``takes_parameter_options=True`` receives the options argparse does not know (``--s 2``) as
``arguments.extra``, to check itself; any other command refuses them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
import threading
from pathlib import Path

from raosym.cli import progress
from raosym.errors import RaosymError

# The stages (SymPy, NumPy: a second or more to import) are imported by the commands that
# derive (`derive`, `generate`), inside main()'s Ctrl-C handling, so an interrupt during
# start-up is "raosym: interrupted" too; `--help`, `account` and `calibrate` never import them.
# (No placeholder is named like a submodule, report: `from raosym.cli import report` would
# return the placeholder instead of importing the module.)
pipeline = DerivationCache = None

#: Modules that add subcommands (``add_commands(subparsers)``); one line per module.
COMMAND_MODULES: tuple[str, ...] = (
    "raosym.cli.accounting",
    "raosym.plot",
)


def _derive_command(arguments) -> int:
    _import_stages()
    if arguments.all == bool(arguments.families):
        print("raosym derive: name families (or paths), or pass --all", file=sys.stderr)
        return 2
    names = ([str(p) for p in pipeline.all_derivation_files()] if arguments.all
             else arguments.families)
    if not names:
        print(f"raosym derive: no derivation files in {pipeline.derivations_folder()}",
              file=sys.stderr)
        return 2
    outcomes = _run_with_progress(
        arguments, len(names),
        lambda on_step: pipeline.run_families(names, jobs=arguments.jobs,
                                              cache=_cache(arguments), on_step=on_step))
    status = 0
    for outcome in outcomes:
        status = max(status, _report(outcome, as_json=arguments.json))
    _summary(arguments, outcomes)
    return max(status, _strict_status(arguments, outcomes))


def _strict_status(arguments, outcomes) -> int:
    """1 under ``--strict`` when a verified family left some quantity unavailable."""
    partial = [outcome for outcome in outcomes
               if outcome.verified is not None and outcome.verified.unavailable]
    if not (arguments.strict and partial):
        return 0
    for outcome in partial:
        quantities = ", ".join(item.quantity for item in outcome.verified.unavailable)
        print(f"raosym: {Path(outcome.name).stem}: unavailable under --strict: {quantities}",
              file=sys.stderr)
    return 1


def _cache(arguments) -> DerivationCache | None:
    return None if arguments.no_cache else DerivationCache()


def _run_with_progress(arguments, total: int, run):
    """Call ``run(on_step)`` with this run's progress reporter, closing it afterwards."""
    reporter = progress.reporter(quiet=arguments.quiet or arguments.json, total=total)
    try:
        return run(reporter)
    finally:
        if reporter is not None:
            reporter.close()


def _summary(arguments, outcomes) -> None:
    if not (arguments.quiet or arguments.json) and outcomes:
        print(report.summary_table(outcomes, colour=progress.colour_enabled()), file=sys.stderr)


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
    _import_stages()
    total = len(arguments.families) or len(pipeline.all_derivation_files())
    try:
        generation = _run_with_progress(
            arguments, total,
            lambda on_step: pipeline.generate(arguments.families, output=arguments.output,
                                              check=arguments.check, jobs=arguments.jobs,
                                              cache=_cache(arguments), on_step=on_step))
    except OSError as error:
        # The output folder (or its parent) cannot be written: nothing was swapped in.
        print(f"raosym generate: cannot write {arguments.output}: "
              f"{error.strerror or error} ({error.filename or arguments.output}); "
              "the output folder was left as it was", file=sys.stderr)
        return 1
    status = 0
    for failure in generation.failures:
        print(f"raosym: {failure.error} (files of this family left as they were)",
              file=sys.stderr)
        status = max(status, failure.error.exit_status)
    _summary(arguments, generation.outcomes)
    status = max(status, _strict_status(arguments, generation.outcomes))
    if arguments.check:
        if generation.diff:
            if not arguments.json:
                sys.stdout.write(generation.diff)
            print(f"raosym generate --check: {generation.output} is out of date; run "
                  "`raosym generate`", file=sys.stderr)
            status = max(status, 1)
    else:
        for path in generation.changed if not arguments.json else ():
            print(f"wrote {Path(generation.output, path)}"
                  if (Path(generation.output) / path).exists()
                  else f"removed {Path(generation.output, path)}")
        if arguments.pdf:
            from raosym.gate.pdf import compile_appendix
            from raosym.plot import appendix_figures

            latex = Path(generation.output) / "latex"
            pdf = compile_appendix(latex, latex / "appendix.pdf", draw_figures=lambda folder:
                                   appendix_figures(generation.output, folder))
            if not arguments.json:
                print(f"wrote {pdf}")
    if arguments.json:
        print(json.dumps({
            "output": str(generation.output),
            "status": status,
            "families": [report.summary_row(outcome) for outcome in generation.outcomes],
            "changed": list(generation.changed),
            "up_to_date": not generation.diff if arguments.check else None,
        }))
    return status


def _new_command(arguments) -> int:
    from raosym.cli.scaffold import new_derivation

    path = new_derivation(arguments.name, like=arguments.like)
    print(f"wrote {path}")
    if not arguments.quiet:
        print(f"next: edit {path}, then run `raosym derive {arguments.name}` and "
              f"`raosym generate {arguments.name}`", file=sys.stderr)
    return 0


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by the commands that derive: parallelism, cache, output style."""
    parser.add_argument("--jobs", type=int, default=None,
                        help="families derived in parallel (default: the number of cores)")
    parser.add_argument("--no-cache", action="store_true",
                        help="derive everything again, ignoring the derivation cache "
                             "($RAOSYM_CACHE, default .raosym-cache/)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress and no summary on stderr (errors still shown)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a family leaves any quantity unavailable (by default "
                             "a family whose Fisher matrix verified delivers the rest that "
                             "verified and exits 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="raosym",
        allow_abbrev=False,  # an abbreviation must not silently become another option
        description="Derive, verify and emit the information geometry of noise families.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    derive = commands.add_parser(
        "derive", allow_abbrev=False, help="derive and verify the Fisher information of families")
    derive.add_argument("families", nargs="*", metavar="NAME_OR_PATH",
                        help="a family in derivations/ (e.g. laplace) or a path to a .toml file")
    derive.add_argument("--all", action="store_true", help="every file in derivations/")
    derive.add_argument("--json", action="store_true", help="one JSON object per family per line")
    _add_run_options(derive)
    derive.set_defaults(run=_derive_command)
    generate = commands.add_parser(
        "generate", allow_abbrev=False,
        help="derive, verify and emit Python modules and LaTeX proofs")
    generate.add_argument("families", nargs="*", metavar="NAME",
                          help="families in derivations/ (default: every one)")
    generate.add_argument("--check", action="store_true",
                          help="compare a fresh render with the output folder; exit 1 with a "
                               "unified diff when they differ")
    generate.add_argument("--pdf", action="store_true",
                          help="also compile latex/appendix.tex into latex/appendix.pdf")
    generate.add_argument("--output", default="generated",
                          help="the output folder (default: generated)")
    generate.add_argument("--json", action="store_true",
                          help="one JSON object on stdout: the summary of every family, the "
                               "files changed, and (with --check) whether the output is up "
                               "to date")
    _add_run_options(generate)
    generate.set_defaults(run=_generate_command)
    new = commands.add_parser(
        "new", allow_abbrev=False,
        help="start a derivation file: derivations/NAME.toml from a commented template")
    new.add_argument("name", metavar="NAME", help="the new family's name ([a-z][a-z0-9_]*)")
    new.add_argument("--like", metavar="FAMILY",
                     help="copy this existing family (a name or a path) instead of the template")
    new.add_argument("--quiet", action="store_true", help="print only the path written")
    new.set_defaults(run=_new_command)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(commands)
    return parser


def _interrupt_on_terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def _import_stages() -> None:
    global pipeline, report, DerivationCache
    from raosym import pipeline
    from raosym.cache import DerivationCache
    from raosym.cli import report


def main(argv: list[str] | None = None) -> int:
    # A `kill` is handled like Ctrl-C: the workers are stopped and nothing is written.
    previous = signal.signal(signal.SIGTERM, _interrupt_on_terminate) \
        if threading.current_thread() is threading.main_thread() else None
    try:
        parser = build_parser()
        # Commands that take the options of a mechanism's own parameters (``raosym account
        # --mechanism cauchy --s 2``) receive the options argparse does not know as
        # ``arguments.extra`` and check them against the mechanism; every other command
        # refuses them as argparse would.
        arguments, extra = parser.parse_known_args(argv)
        if extra and not getattr(arguments, "takes_parameter_options", False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        arguments.extra = extra
        return arguments.run(arguments)
    except RaosymError as error:
        print(f"raosym: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("raosym: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
