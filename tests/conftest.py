"""Shared fixtures: the catalog is derived and verified once per test session (in parallel)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
DERIVATIONS = REPOSITORY / "derivations"


@pytest.fixture(scope="session")
def catalog():
    """name -> FamilyOutcome for every file in derivations/ (derived and verified)."""
    from raosym import pipeline

    os.environ.setdefault("RAOSYM_DERIVATIONS", str(DERIVATIONS))
    files = sorted(DERIVATIONS.glob("*.toml"))
    outcomes = pipeline.run_families([str(f) for f in files])
    return {Path(outcome.name).stem: outcome for outcome in outcomes}
