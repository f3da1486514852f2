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


def family_names() -> list[str]:
    """Every family in derivations/ (for parametrizing; nothing is derived here)."""
    return sorted(path.stem for path in DERIVATIONS.glob("*.toml"))


def verified(catalog, name):
    """The Verified result of a family, failing the test (not skipping) if it did not verify."""
    outcome = catalog[name]
    assert outcome.error is None, f"{name} did not derive and verify: {outcome.error}"
    return outcome.verified


@pytest.fixture(scope="session")
def generated_tree(catalog, tmp_path_factory):
    """The emit and write stages run once on the whole catalog, into a temporary folder."""
    from raosym import pipeline

    output = tmp_path_factory.mktemp("generated")
    generation = pipeline.generate_from(list(catalog.values()), output=output,
                                        families=set(family_names()))
    assert not generation.failures, [str(failure.error) for failure in generation.failures]
    return output
