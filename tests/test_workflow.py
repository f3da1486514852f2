"""The new-family workflow: ``raosym new``, the derivation cache, progress and summary, the
Python API and notebook display, and the README's tutorial and API example (run as written).

Truth comes from outside the code under test: Fisher informations from the literature
(exponential in its scale 1/theta^2, Rayleigh 4/sigma^2, Laplace 1/b^2) and mpmath quadrature
written here; cache behaviour from the bytes on disk; the LaTeX display compiled by pdflatex.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
import sympy
from conftest import REPOSITORY, verified

from raosym import cache as cache_module
from raosym import cli, pipeline
from raosym.cache import DerivationCache, cache_key, engine_version
from raosym.cli import progress, report
from raosym.cli.scaffold import TEMPLATE, new_derivation
from raosym.errors import SpecError
from raosym.verify.checks import REQUIRED_DIGITS

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_workflow")

README = (REPOSITORY / "README.md").read_text(encoding="utf-8")


def fenced_blocks(marker: str) -> list[tuple[str, str]]:
    """``(info string, body)`` of the README's fenced blocks whose info string has ``marker``,
    in order, with the list indentation removed."""
    pattern = re.compile(r"^( *)```(\S+ [^\n]*)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
    blocks = []
    for match in pattern.finditer(README):
        indent, info, body = match.groups()
        if any(word == marker or word.startswith(marker + "-file=") for word in info.split()):
            blocks.append((info, "".join(line[len(indent):] + "\n"
                                         for line in body.splitlines())))
    return blocks


# ----------------------------------------------------------------------------- raosym new


def test_template_derives_as_written_to_the_exponential_scale_information(tmp_path):
    """The template is the exponential distribution with scale theta: g = 1/theta^2."""
    path = new_derivation("scaled_waiting", folder=tmp_path)
    assert path == tmp_path / "scaled_waiting.toml"
    assert path.read_text() == TEMPLATE.format(name="scaled_waiting")
    derivation = pipeline.derive(str(path))
    theta = sympy.Symbol("theta", positive=True)
    assert sympy.simplify(derivation.fisher[0, 0] - 1 / theta**2) == 0


def test_new_refuses_to_overwrite_and_names_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(tmp_path))
    existing = tmp_path / "mine.toml"
    existing.write_text("# my own work\n")
    assert cli.main(["new", "mine"]) == 2
    error = capsys.readouterr().err
    assert str(existing) in error and "already exists" in error and "never overwrites" in error
    assert existing.read_text() == "# my own work\n"


@pytest.mark.parametrize("name", ["Bad", "1st", "has-dash", "", "x/y", "../escape"])
def test_new_rejects_names_that_cannot_name_a_module(tmp_path, monkeypatch, capsys, name):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(tmp_path))
    assert cli.main(["new", name]) == 2
    assert f"the family name {name!r} is not allowed" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_new_like_copies_a_family_under_the_new_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(tmp_path))
    shutil.copy(REPOSITORY / "derivations" / "laplace.toml", tmp_path)
    assert cli.main(["new", "laplace_copy", "--like", "laplace"]) == 0
    assert f"wrote {tmp_path / 'laplace_copy.toml'}" in capsys.readouterr().out
    original = (tmp_path / "laplace.toml").read_text()
    copy = (tmp_path / "laplace_copy.toml").read_text()
    assert copy == original.replace('name = "laplace"', 'name = "laplace_copy"', 1)
    spec = pipeline.load("laplace_copy")  # a valid derivation file, with the new name
    assert spec.name == "laplace_copy"


# ----------------------------------------------------------------------------- the cache


@pytest.fixture
def exponential_file(tmp_path):
    target = tmp_path / "derivations" / "exponential.toml"
    target.parent.mkdir()
    shutil.copy(REPOSITORY / "derivations" / "exponential.toml", target)
    return target


def test_cache_round_trip_is_a_real_derivation_then_a_hit(exponential_file, tmp_path):
    store = DerivationCache(tmp_path / "cache")
    assert store.lookup(exponential_file).reason == "absent"
    first = pipeline._outcome(str(exponential_file), store)
    assert first.error is None and not first.cached  # derived for real
    lam = sympy.Symbol("lam", positive=True)
    assert sympy.simplify(first.verified.derivation.fisher[0, 0] - 1 / lam**2) == 0
    entries = list((tmp_path / "cache").iterdir())
    assert [entry.name for entry in entries] == [f"{cache_key(exponential_file)}.pickle"]
    second = pipeline._outcome(str(exponential_file), store)
    assert second.cached
    assert second.verified.derivation.fisher == first.verified.derivation.fisher
    assert second.verified.checks == first.verified.checks


def test_a_changed_derivation_file_is_a_new_key(exponential_file):
    before = cache_key(exponential_file)
    with open(exponential_file, "a") as file:
        file.write("# a comment changes the bytes\n")
    assert cache_key(exponential_file) != before


def test_engine_version_follows_engine_sources_but_not_templates(tmp_path, monkeypatch):
    package = tmp_path / "raosym"
    shutil.copytree(REPOSITORY / "raosym", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "PACKAGE", package)

    def version():
        engine_version.cache_clear()
        return engine_version()

    original = version()
    cache_module.emit_version.cache_clear()
    emit_before = cache_module.emit_version()
    templates = sorted((package / "emit").rglob("*.j2"))
    assert templates, "the emit backends have templates"
    templates[0].write_text(templates[0].read_text() + "\n")
    (package / "emit" / "__init__.py").write_text("# emit is not the engine\n")
    assert version() == original  # a template change re-renders without re-deriving
    cache_module.emit_version.cache_clear()
    assert cache_module.emit_version() != emit_before  # ... because it is a new emit version
    for source in ("derive/fisher.py", "verify/checks.py", "spec/parser.py", "errors.py"):
        path = package / source
        saved = path.read_bytes()
        path.write_bytes(saved + b"\n# changed\n")
        assert version() != original, source
        path.write_bytes(saved)
        assert version() == original
    engine_version.cache_clear()
    cache_module.emit_version.cache_clear()


def _entry(store: DerivationCache, derivation_file: Path) -> Path:
    return store.entry_path(cache_key(derivation_file))


@pytest.fixture(scope="module")
def exponential_entry(tmp_path_factory):
    """The exponential family derived for real (once for these tests) into a fresh cache:
    its derivation file and the bytes of its entry."""
    folder = tmp_path_factory.mktemp("entry")
    derivation_file = folder / "derivations" / "exponential.toml"
    derivation_file.parent.mkdir()
    shutil.copy(REPOSITORY / "derivations" / "exponential.toml", derivation_file)
    store = DerivationCache(folder / "cache")
    outcome = pipeline._outcome(str(derivation_file), store)
    assert outcome.error is None and not outcome.cached
    return derivation_file, _entry(store, derivation_file).read_bytes()


@pytest.fixture
def filled_cache(exponential_entry, tmp_path):
    derivation_file, good = exponential_entry
    store = DerivationCache(tmp_path / "cache")
    store.folder.mkdir()
    _entry(store, derivation_file).write_bytes(good)
    assert store.lookup(derivation_file).reason == "hit"
    return store, derivation_file, good


def _damage(blob: bytes, how: str, key: str) -> bytes:
    header_end = blob.index(b"\n", blob.index(b"\n", len(cache_module.MAGIC)) + 1) + 1
    if how == "truncated":
        return blob[: len(blob) * 2 // 3]
    if how == "header only":
        return blob[: len(cache_module.MAGIC) + 10]
    if how == "bit flip":
        position = header_end + (len(blob) - header_end) // 2
        return blob[:position] + bytes([blob[position] ^ 0x01]) + blob[position + 1:]
    if how == "another key":
        return blob.replace(key.encode(), ("0" * 64).encode(), 1)
    if how == "not a cache entry":
        return b"PK\x03\x04 some zip file" + blob[:100]
    if how == "empty":
        return b""
    if how == "another object":
        payload = pickle.dumps({"fisher": "1/lam**2"})
        return (cache_module.MAGIC + key.encode() + b"\n"
                + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "header only", "bit flip", "another key",
                                 "not a cache entry", "empty", "another object"])
def test_damaged_or_foreign_entries_are_detected(filled_cache, how):
    store, derivation_file, good = filled_cache
    _entry(store, derivation_file).write_bytes(_damage(good, how, cache_key(derivation_file)))
    lookup = store.lookup(derivation_file)
    assert lookup.verified is None
    assert lookup.reason.startswith(("corrupt", "foreign")), lookup.reason


def test_a_damaged_entry_is_derived_again_and_rewritten(filled_cache):
    store, derivation_file, good = filled_cache
    entry = _entry(store, derivation_file)
    entry.write_bytes(_damage(good, "bit flip", cache_key(derivation_file)))
    outcome = pipeline._outcome(str(derivation_file), store)
    assert outcome.error is None and not outcome.cached  # derived again, not trusted
    lam = sympy.Symbol("lam", positive=True)
    assert sympy.simplify(outcome.verified.derivation.fisher[0, 0] - 1 / lam**2) == 0
    assert store.lookup(derivation_file).reason == "hit"  # and the entry was rewritten
    assert not [p for p in store.folder.iterdir() if p.name.startswith(".entry-")]


def test_an_entry_of_another_file_copied_under_this_key_is_foreign(filled_cache, tmp_path):
    """Same header and checksum, but the Verified inside was derived from other bytes."""
    store, derivation_file, good = filled_cache
    other = tmp_path / "derivations" / "exponential.toml"
    other.parent.mkdir()
    other.write_text(derivation_file.read_text() + "# another version of the file\n")
    key = cache_key(other)
    payload = good.split(b"\n", 3)[3]
    store.entry_path(key).write_bytes(cache_module.MAGIC + key.encode() + b"\n"
                                      + hashlib.sha256(payload).hexdigest().encode() + b"\n"
                                      + payload)
    lookup = store.lookup(other)
    assert lookup.verified is None and lookup.reason.startswith("foreign")


def test_an_unwritable_cache_is_skipped_not_fatal(exponential_file, tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder should be")
    store = DerivationCache(blocker / "cache")
    outcome = pipeline._outcome(str(exponential_file), store)
    assert outcome.error is None and not outcome.cached
    assert blocker.read_text() == "a file where the cache folder should be"


def test_no_cache_neither_reads_nor_writes(exponential_file, tmp_path, monkeypatch, capsys):
    cache_folder = tmp_path / "cache"
    monkeypatch.setenv("RAOSYM_CACHE", str(cache_folder))
    assert cli.main(["derive", str(exponential_file), "--no-cache", "--quiet"]) == 0
    assert not cache_folder.exists()
    assert cli.main(["derive", str(exponential_file), "--json"]) == 0
    assert len(list(cache_folder.glob("*.pickle"))) == 1
    # A poisoned entry is not even opened with --no-cache: the result is derived again.
    entry = next(cache_folder.glob("*.pickle"))
    entry.write_bytes(b"garbage")
    capsys.readouterr()
    assert cli.main(["derive", str(exponential_file), "--no-cache", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    lam = sympy.Symbol("lam", positive=True)
    assert sympy.simplify(sympy.sympify(record["fisher"][0][0], locals={"lam": lam})
                          - 1 / lam**2) == 0
    assert entry.read_bytes() == b"garbage"
    assert not [p for p in cache_folder.iterdir() if p.name.startswith(".entry-")]


def test_cached_results_render_byte_identical_files(catalog, tmp_path):
    """The session's catalog came through the cache: a render from the cache entries equals a
    render from the objects derived in this process."""
    from raosym import gate

    store = DerivationCache()  # the session cache ($RAOSYM_CACHE, set by conftest)
    for name in ("laplace", "poisson"):
        fresh = verified(catalog, name)
        path = Path(fresh.derivation.spec.path)
        cached = store.load(path)
        assert cached is not None, f"{name} is in the session cache"
        assert gate.render_family(cached) == gate.render_family(fresh)


# ----------------------------------------------------------------------------- progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_log_lines_without_a_terminal():
    stream = io.StringIO()
    reporter = progress.reporter(quiet=False, total=2, stream=stream)
    assert isinstance(reporter, progress.LogProgress)
    reporter("gamma", "derive", 0.25)
    reporter("gamma", "done", 3.5)
    reporter("beta", "failed", 1.0)
    reporter.close()
    assert stream.getvalue().splitlines() == [
        "raosym: gamma: derive (0.2 s)", "raosym: gamma: derived and verified (3.5 s)",
        "raosym: beta: failed (1.0 s)"]
    assert "\033" not in stream.getvalue() and "\r" not in stream.getvalue()


def test_terminal_status_line_redrawn_in_place_with_colour():
    stream = FakeTerminal()
    reporter = progress.reporter(quiet=False, total=2, stream=stream)
    assert isinstance(reporter, progress.TerminalProgress)
    reporter("gamma", "verify", 1.0)
    assert "[0/2] gamma verify" in stream.getvalue()
    reporter("gamma", "done", 2.0)
    reporter.close()
    text = stream.getvalue()
    assert "\r\033[K" in text and "\033[32mgamma\033[0m: derived and verified (2.0 s)" in text
    assert progress.reporter(quiet=True, total=2, stream=stream) is None


def test_cli_progress_summary_and_quiet(catalog, capsys):
    laplace = verified(catalog, "laplace")
    path = laplace.derivation.spec.path
    assert cli.main(["derive", path]) == 0
    captured = capsys.readouterr()
    assert "raosym: laplace: from the cache" in captured.err  # the session cache
    header, row = captured.err.splitlines()[-3:-1]
    assert header.split() == ["family", "entries", "checks", "digits", "time", "status",
                              "cached"]
    cells = row.split()
    assert cells[0] == "laplace"
    assert int(cells[1]) == 3  # a 2x2 symmetric matrix has three entries to derive
    assert int(cells[2]) == len(laplace.checks)
    assert float(cells[3]) == pytest.approx(min(c.digits for c in laplace.checks
                                                if c.required == REQUIRED_DIGITS), abs=0.05)
    assert cells[-2:] == ["ok", "yes"]
    assert "\033" not in captured.err  # not a terminal: no colour
    assert cli.main(["derive", path, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "g[mu,mu] = b**(-2)" in captured.out


def test_generate_json_summary(catalog, tmp_path, capsys):
    assert cli.main(["generate", "poisson", "bernoulli", "--output", str(tmp_path / "out"),
                     "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    result = json.loads(captured.out)
    assert result["status"] == 0 and result["up_to_date"] is None
    rows = {row["family"]: row for row in result["families"]}
    assert set(rows) == {"poisson", "bernoulli"}
    for name, row in rows.items():
        assert row["cached"] is True and row["status"] == "ok" and row["error"] is None
        assert row["checks"] == len(verified(catalog, name).checks)
    assert sorted(result["changed"]) == ["latex/appendix.tex", "latex/bernoulli.tex",
                                         "latex/poisson.tex", "python/bernoulli.py",
                                         "python/poisson.py"]
    assert cli.main(["generate", "poisson", "--output", str(tmp_path / "out"), "--check",
                     "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["up_to_date"] is True


def test_touching_one_file_derives_only_that_family(catalog, tmp_path, monkeypatch, capsys):
    """Copies of two catalog files hit the session cache (the key is the file's name and
    bytes, not its folder); after one is edited, only that one is derived again."""
    folder = tmp_path / "derivations"
    folder.mkdir()
    for name in ("poisson", "exponential"):
        shutil.copy(REPOSITORY / "derivations" / f"{name}.toml", folder)
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(folder))
    output = tmp_path / "generated"

    def generate() -> dict[str, dict]:
        capsys.readouterr()
        assert cli.main(["generate", "--output", str(output), "--json"]) == 0
        return {row["family"]: row for row in json.loads(capsys.readouterr().out)["families"]}

    assert {name: row["cached"] for name, row in generate().items()} == {
        "poisson": True, "exponential": True}
    first = (output / "python" / "exponential.py").read_bytes()
    with open(folder / "poisson.toml", "a") as file:
        file.write("# edited\n")
    assert {name: row["cached"] for name, row in generate().items()} == {
        "poisson": False, "exponential": True}
    assert (output / "python" / "exponential.py").read_bytes() == first
    assert {name: row["cached"] for name, row in generate().items()} == {
        "poisson": True, "exponential": True}


def test_rendered_files_are_cached_and_a_damaged_render_entry_is_rendered_again(
        exponential_entry, tmp_path, monkeypatch):
    from raosym import gate

    source, good = exponential_entry
    folder = tmp_path / "derivations"
    folder.mkdir()
    shutil.copy(source, folder)
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(folder))
    monkeypatch.setenv("RAOSYM_CACHE", str(tmp_path / "cache"))
    store = DerivationCache(tmp_path / "cache")
    store.folder.mkdir()
    _entry(store, folder / "exponential.toml").write_bytes(good)
    expected, dropped = gate.render_family(store.load(folder / "exponential.toml"))
    assert dropped == ()
    for attempt in ("renders and stores", "from the render cache", "damaged entry"):
        if attempt == "damaged entry":
            entry = next(store.folder.glob("*.render"))
            entry.write_bytes(entry.read_bytes()[:-40] + b"x" * 40)
            assert store.load_rendered(folder / "exponential.toml") is None
        output = tmp_path / attempt.replace(" ", "_")
        assert cli.main(["generate", "--output", str(output), "--quiet"]) == 0
        assert {path: text for path, text in snapshot_text(output).items()
                if "exponential" in path} == expected
        assert store.load_rendered(folder / "exponential.toml") == (expected, ())


def snapshot_text(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_summary_row_of_a_failure():
    outcome = pipeline.FamilyOutcome("derivations/bad.toml",
                                     error=SpecError("broken", path="derivations/bad.toml"),
                                     seconds=0.5)
    row = report.summary_row(outcome)
    assert row["family"] == "bad" and row["status"] == "SpecError"
    assert row["error"] == "derivations/bad.toml: broken" and row["checks"] is None
    table = report.summary_table([outcome])
    assert "bad" in table and "SpecError" in table and "0 ok, 1 failed" in table


def test_parallel_run_reports_each_family_from_the_workers(catalog):
    events = []
    names = [verified(catalog, n).derivation.spec.path for n in ("gamma", "beta", "poisson")]
    outcomes = pipeline.run_families(names, jobs=2, cache=DerivationCache(),
                                     on_step=lambda *event: events.append(event))
    assert [outcome.cached for outcome in outcomes] == [True, True, True]
    finished = {family for family, step, _ in events if step == "cached"}
    assert finished == {"gamma", "beta", "poisson"}


def test_command_modules_register_with_one_line(monkeypatch, tmp_path, capsys):
    plugin = tmp_path / "raosym_test_plugin.py"
    plugin.write_text(
        "def add_commands(subparsers):\n"
        "    hello = subparsers.add_parser('hello', help='say hello')\n"
        "    hello.add_argument('who')\n"
        "    hello.set_defaults(run=lambda arguments: print('hello', arguments.who) or 0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("raosym_test_plugin",))
    assert cli.main(["hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"


# ----------------------------------------------------------------------------- the API


def test_api_derive_takes_a_spec_a_name_or_a_path(catalog, monkeypatch):
    import raosym

    monkeypatch.chdir(REPOSITORY)
    spec = raosym.load("laplace_location")
    b = sympy.Symbol("b", positive=True)
    for argument in (spec, "laplace_location", "derivations/laplace_location.toml"):
        derivation = raosym.derive(argument)
        assert sympy.simplify(derivation.fisher[0, 0] - 1 / b**2) == 0


def test_latex_display_compiles_and_shows_the_fisher_matrix_and_the_proof(catalog, tmp_path):
    """What a notebook shows: IPython's own LaTeX formatter, with raosym's registration."""
    from IPython.core.formatters import LatexFormatter

    import raosym

    formatter = LatexFormatter()
    raosym.register_notebook_display(formatter)
    laplace = verified(catalog, "laplace")
    derivation = laplace.derivation
    text = formatter(derivation)
    assert text.startswith("$$") and text.endswith("$$")
    assert r"\frac{1}{b^{2}}" in text  # SymPy's own LaTeX of the literature value 1/b^2
    assert r"\operatorname{acosh}" in text  # the half-plane distance
    for entry in derivation.entries:
        for step in entry.steps:
            assert step.claim.split()[0] in text
    assert "checks" in formatter(laplace)
    assert r"\mu \in \mathbb{R}" in formatter(derivation.spec)
    document = tmp_path / "display.tex"
    document.write_text("\\documentclass{article}\\usepackage{amsmath,amssymb}\n"
                        "\\begin{document}\n" + "\n".join(
                            formatter(obj) for obj in (laplace, derivation.spec,
                                                           verified(catalog, "gamma")))
                        + "\n\\end{document}\n")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                             document.name], check=False, cwd=tmp_path, capture_output=True,
                            text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]


def test_readme_api_example_runs(catalog, tmp_path):
    (_, code), = fenced_blocks("api-example")
    result = subprocess.run([sys.executable, "-c", code], check=False, cwd=REPOSITORY,
                            capture_output=True,
                            text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    assert result.returncode == 0, result.stderr
    fisher, good = result.stdout.splitlines()
    b = sympy.Symbol("b", positive=True)
    assert sympy.sympify(fisher, locals={"b": b}) == sympy.Matrix([[1 / b**2, 0], [0, 1 / b**2]])
    assert good == "True"


# ----------------------------------------------------------------------------- the tutorial


def _copy_of_the_repository(destination: Path) -> Path:
    ignored = shutil.ignore_patterns(".git", "__pycache__", ".raosym-cache", ".pytest_cache",
                                     ".hypothesis", "*.egg-info", "build", "*.pdf")
    shutil.copytree(REPOSITORY, destination, ignore=ignored)
    return destination


def _shims(folder: Path) -> Path:
    """``raosym`` and ``python`` on PATH as they are after ``pip install .``."""
    folder.mkdir()
    for name, command in (("raosym", f'"{sys.executable}" -m raosym'),
                          ("python", f'"{sys.executable}"')):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        shim.chmod(0o755)
    return folder


def rayleigh_fisher_by_quadrature(sigma: float) -> mpmath.mpf:
    """E[(d/dsigma log f)^2] for the Rayleigh density, by mpmath quadrature (at 30 digits,
    within this function: a global mp.dps left set would change what later tests compute)."""
    with mpmath.workdps(30):
        s = mpmath.mpf(sigma)

        def integrand(x):
            density = x / s**2 * mpmath.exp(-x**2 / (2 * s**2))
            score = -2 / s + x**2 / s**3
            return score**2 * density

        return +mpmath.quad(integrand, [0, s, 10 * s, mpmath.inf])


def test_readme_tutorial_runs_end_to_end(tmp_path):
    blocks = fenced_blocks("tutorial")
    assert [info.split()[0] for info, _ in blocks].count("sh") >= 5
    repository = _copy_of_the_repository(tmp_path / "raosym")
    assert not (repository / "derivations" / "rayleigh.toml").exists()
    environment = {**os.environ, "PYTHONPATH": str(repository),
                   "PATH": f"{_shims(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("RAOSYM_DERIVATIONS", None)
    for info, body in blocks:
        target = [word.split("=", 1)[1] for word in info.split()
                  if word.startswith("tutorial-file=")]
        if target:  # the edit: the file as the tutorial shows it
            assert (repository / target[0]).exists(), "raosym new wrote the file first"
            (repository / target[0]).write_text(body)
            continue
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", body], check=False,
                                cwd=repository,
                                env=environment, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{body}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        if "rayleigh.fisher_information" in body:
            assert result.stdout.strip() == "[[1.]]"  # 4/sigma^2 at sigma = 2
    sys.path.insert(0, str(repository / "generated" / "python"))
    try:
        import rayleigh
    finally:
        sys.path.pop(0)
    for sigma in (1e-3, 0.7, 2.0, 1e4):
        expected = rayleigh_fisher_by_quadrature(sigma)
        assert float(rayleigh.fisher_information([sigma])[0, 0]) == pytest.approx(
            float(expected), rel=1e-13)
        assert float(expected) == pytest.approx(4 / sigma**2, rel=1e-20)  # the literature value
    sys.modules.pop("rayleigh", None)
    assert "\\input{rayleigh}" in (repository / "generated/latex/appendix.tex").read_text()
    pdf = repository / "generated" / "latex" / "appendix.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
