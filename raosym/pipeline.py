"""The pipeline in one place: spec -> (density check) -> derive -> verify -> emit -> write.

``run_family`` takes a family name or a path and returns a :class:`Verified` or raises the
stage's own error; ``run_families`` runs several in parallel over the available cores;
``generate`` runs them and then the emit and write stages into ``generated/``. The CLI and the
Python API (``raosym.load``, ``raosym.derive``, ``raosym.verify``, ``raosym.generate``) call
these.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from raosym.derive import derive
from raosym.errors import RaosymError, SpecError
from raosym.spec import load_spec
from raosym.spec.model import FamilySpec
from raosym.verify.checks import Verified, verify
from raosym.verify.density import check_density

#: Where family names are looked up: $RAOSYM_DERIVATIONS, else ./derivations.
def derivations_folder() -> Path:
    return Path(os.environ.get("RAOSYM_DERIVATIONS", "derivations"))


def resolve(name_or_path: str | os.PathLike) -> Path:
    """``laplace`` -> ``derivations/laplace.toml``; a path is taken as it is."""
    text = str(name_or_path)
    if text.endswith(".toml") or os.sep in text or "/" in text:
        path = Path(text)
    else:
        path = derivations_folder() / f"{text}.toml"
    if not path.is_file():
        known = ", ".join(p.stem for p in all_derivation_files()) or "none"
        raise SpecError(f"no derivation file {path} (families in {derivations_folder()}: {known})",
                        path=str(path))
    return path


def all_derivation_files() -> list[Path]:
    folder = derivations_folder()
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def load(name_or_path: str | os.PathLike) -> FamilySpec:
    """Parse and validate a derivation file, including the density check."""
    spec = load_spec(resolve(name_or_path))
    check_density(spec)
    return spec


def run_family(name_or_path: str | os.PathLike) -> Verified:
    """Load, derive and verify one family."""
    started = time.perf_counter()
    spec = load(name_or_path)
    derivation = derive(spec)
    verified_at = time.perf_counter()
    verified = verify(derivation)
    derivation.timings["verify"] = time.perf_counter() - verified_at
    derivation.timings["total"] = time.perf_counter() - started
    return verified


@dataclass(frozen=True)
class FamilyOutcome:
    """What happened to one family: its Verified result or the error that stopped it."""

    name: str
    verified: Verified | None = None
    error: RaosymError | None = None


def _outcome(name_or_path) -> FamilyOutcome:
    try:
        return FamilyOutcome(str(name_or_path), verified=run_family(name_or_path))
    except RaosymError as error:
        return FamilyOutcome(str(name_or_path), error=error)


def run_families(names, *, jobs: int | None = None) -> list[FamilyOutcome]:
    """Run several families, in parallel over ``jobs`` processes (default: every core)."""
    names = list(names)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names) or 1))
    if jobs == 1:
        return [_outcome(name) for name in names]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_outcome, names))


# ----------------------------------------------------------------------------- generate


@dataclass(frozen=True)
class Generation:
    """What ``raosym generate`` did: the families that failed (their files untouched), the
    files written or removed, and, for ``--check``, the diff from the output to a fresh render."""

    output: Path
    failures: tuple[FamilyOutcome, ...]
    changed: tuple[str, ...] = ()
    diff: str = ""


def generate(names=None, *, output: str | os.PathLike = "generated", check: bool = False,
             jobs: int | None = None) -> Generation:
    """Derive, verify and emit the named families (default: every derivation file) into
    ``output``; with ``check``, only compare a fresh render with ``output``."""
    files = all_derivation_files()
    if not files:
        raise SpecError(f"no derivation files in {derivations_folder()}",
                        path=str(derivations_folder()))
    targets = [str(resolve(name)) for name in names] if names else [str(f) for f in files]
    outcomes = run_families(targets, jobs=jobs)
    return generate_from(outcomes, output=output, families={f.stem for f in files}, check=check)


def generate_from(outcomes, *, output: str | os.PathLike, families: set[str],
                  check: bool = False) -> Generation:
    """The emit and write stages for outcomes already derived and verified.

    ``families`` names every family that exists (one per derivation file): the files of any
    other family in ``output`` are stale and removed. Rendering happens entirely in memory
    before anything is written, so an exception leaves ``output`` untouched.
    """
    from raosym import emit
    from raosym.emit import write
    from raosym.errors import EmitError

    output = Path(output)
    rendered, failures = {}, []
    for outcome in outcomes:
        if outcome.error is not None:
            failures.append(outcome)
            continue
        spec = outcome.verified.derivation.spec
        if spec.name != Path(spec.path).stem:
            failures.append(FamilyOutcome(outcome.name, error=EmitError(
                f"{spec.path}: the family name {spec.name!r} must match the file name, which "
                "names its generated files")))
            continue
        try:
            rendered[spec.name] = emit.render_family(outcome.verified)
        except EmitError as error:
            failures.append(FamilyOutcome(outcome.name, error=EmitError(f"{spec.path}: {error}")))
    plan = write.plan_tree(output, rendered, families)
    if check:
        return Generation(output, tuple(failures), diff=write.drift(output, plan))
    return Generation(output, tuple(failures), changed=tuple(write.write_tree(output, plan)))
