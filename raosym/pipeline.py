"""The pipeline in one place: spec -> (density check) -> derive -> verify.

``run_family`` takes a family name or a path and returns a :class:`Verified` or raises the
stage's own error; ``run_families`` runs several in parallel over the available cores. The CLI
and the Python API (``raosym.load``, ``raosym.derive``, ``raosym.verify``) both call these.
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
