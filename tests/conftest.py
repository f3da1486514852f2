"""Shared fixtures: the catalog is derived and verified once per test session (in parallel).

The suite runs under pytest-xdist (one worker per core, pyproject's addopts): the workers
share one session cache, and the first that needs the catalog derives it while the others
wait for it (:func:`_one_worker_at_a_time`).

The derivation cache: every test (and every ``raosym`` subprocess a test starts, through the
environment) uses a cache folder of this session, empty at the start. So the ``catalog``
fixture really derives every family once per run, and later CLI runs of the same families
are answered from that cache instead of deriving again. To reuse a cache across runs while
working on tests that do not touch the engine, set ``RAOSYM_TEST_CACHE=/some/folder`` (the
cache key contains the engine's source hash, so an engine change still derives again). The
cache's HMAC secret is ``RAOSYM_CACHE_KEY``: the cache folder's name with ``-key`` appended.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
DERIVATIONS = REPOSITORY / "derivations"


def _session_cache() -> str:
    if os.environ.get("RAOSYM_TEST_CACHE"):
        return os.environ["RAOSYM_TEST_CACHE"]
    folder = tempfile.mkdtemp(prefix="raosym-test-cache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    # pytest-xdist's workers start after this (the controller loads this file first) and
    # inherit the variable: one cache for the whole run, removed when the controller exits.
    os.environ["RAOSYM_TEST_CACHE"] = folder
    return folder


@contextlib.contextmanager
def _one_worker_at_a_time(name: str):
    """Under pytest-xdist, the first worker that needs the catalog derives it into the shared
    session cache while the others wait, and then answer from the cache: the catalog is
    derived once per run however many workers there are."""
    with open(SESSION_CACHE.rstrip(os.sep) + f"-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# Set before any test runs, so that no test writes the project's own .raosym-cache/.
os.environ["RAOSYM_CACHE"] = SESSION_CACHE = _session_cache()
# The cache's HMAC secret of this session, beside (never inside) the cache folder, so that no
# test writes the user's own ~/.config/raosym/cache-key.
os.environ["RAOSYM_CACHE_KEY"] = SESSION_CACHE.rstrip(os.sep) + "-key"


def catalog_outcomes(names) -> list:
    """The FamilyOutcome of each named family of derivations/, derived and verified into the
    session cache (or answered from it)."""
    from raosym import pipeline
    from raosym.cache import DerivationCache

    with _one_worker_at_a_time("catalog"):
        return pipeline.run_families([str(DERIVATIONS / f"{name}.toml") for name in names],
                                     cache=DerivationCache(SESSION_CACHE))


@pytest.fixture(scope="session")
def catalog():
    """name -> FamilyOutcome for every file in derivations/ (derived and verified)."""
    os.environ.setdefault("RAOSYM_DERIVATIONS", str(DERIVATIONS))
    return {Path(outcome.name).stem: outcome for outcome in catalog_outcomes(family_names())}


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
    """The emit and write stages run once on the whole catalog, into a temporary folder (the
    emitted-code gate included: the only time the tests gate the whole catalog)."""
    from raosym import pipeline
    from raosym.cache import DerivationCache

    output = tmp_path_factory.mktemp("generated")
    # Rendered files go into the session cache, so that a later `raosym generate` answering
    # from it (the CLI tests) takes them from there instead of rendering and gating again.
    with _one_worker_at_a_time("generated"):
        generation = pipeline.generate_from(list(catalog.values()), output=output,
                                            families=set(family_names()),
                                            cache=DerivationCache(SESSION_CACHE))
    assert not generation.failures, [str(failure.error) for failure in generation.failures]
    return output


def derivation_text(name: str, body: str, coordinates: dict, constants: dict) -> str:
    """A derivation file in ``x``: ``body`` (its support and density lines), then the tables of
    coordinates and (when there are any) constants, name -> domain."""
    text = f'name = "{name}"\nvariable = "x"\n{body}\n\n[coordinates]\n'
    text += "".join(f'{key} = "{value}"\n' for key, value in coordinates.items())
    if constants:
        text += "\n[constants]\n" + "".join(f'{k} = "{v}"\n' for k, v in constants.items())
    return text


def generate_through_cli(folder: Path, texts: dict[str, str], prefix: str):
    """Write each derivation file ``NAME.toml`` of ``texts`` into ``folder`` and generate them
    all with the CLI, as a user would (``--jobs 1 --json``): ``(summary, modules)``, the
    ``--json`` entry of each family by name and its generated module, imported as
    ``PREFIX_NAME``. Fails the test unless the run exits 0."""
    import importlib.util
    import json
    import subprocess
    import sys

    paths = []
    for name, text in texts.items():
        path = folder / f"{name}.toml"
        path.write_text(text)
        paths.append(str(path))
    output = folder / "generated"
    run = subprocess.run([sys.executable, "-m", "raosym", "generate", *paths, "--output",
                          str(output), "--jobs", "1", "--json"],
                         capture_output=True, text=True, cwd=REPOSITORY, timeout=1200,
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = {family["family"]: family for family in json.loads(run.stdout)["families"]}
    modules = {}
    for name in texts:
        if not (output / "python" / f"{name}.py").exists():
            continue
        spec = importlib.util.spec_from_file_location(f"{prefix}_{name}",
                                                      output / "python" / f"{name}.py")
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    return summary, modules
