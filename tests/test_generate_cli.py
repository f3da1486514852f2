"""``raosym generate``: determinism, --check, atomic writes, failed and stale families.

The catalog is derived once per session (conftest); here ``pipeline.run_families`` is replaced
by a lookup into it, so the CLI runs the emit and write stages without deriving again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPOSITORY, family_names

from raosym import cli, pipeline
from raosym.cache import transport
from raosym.errors import VerificationError

FAMILIES = family_names()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture
def derived(catalog, generated_tree, monkeypatch):
    """Make the pipeline answer from the session's catalog; returns the outcomes by name.
    They count as cache hits, so their files come from the render cache that generated_tree
    filled (rendering and gating the catalog again in every test would take minutes)."""
    outcomes = {name: dataclasses.replace(outcome, cached=True)
                for name, outcome in catalog.items()}

    def run_families(names, *, jobs=None, **options):  # options: cache, on_step
        return [outcomes[Path(name).stem] for name in names]

    monkeypatch.setattr(pipeline, "run_families", run_families)
    return outcomes


def generate(output: Path, *arguments: str) -> int:
    return cli.main(["generate", "--output", str(output), *arguments])


def test_generate_twice_gives_identical_bytes(derived, tmp_path, capsys):
    assert generate(tmp_path / "first") == 0
    assert generate(tmp_path / "second") == 0
    first, second = snapshot(tmp_path / "first"), snapshot(tmp_path / "second")
    expected = {f"python/{n}.py" for n in FAMILIES} | {f"latex/{n}.tex" for n in FAMILIES}
    assert set(first) == expected | {"latex/appendix.tex"}
    assert first == second
    # Writing again changes nothing and says so.
    capsys.readouterr()
    assert generate(tmp_path / "first") == 0
    assert capsys.readouterr().out == ""


def test_rendering_does_not_depend_on_the_hash_seed(catalog, tmp_path):
    """Emit the same Verified objects in a process with another PYTHONHASHSEED (sent the
    way a worker sends them: raosym.cache.transport, which keeps the expressions as derived):
    every backend's files of every family are the same bytes. (The emitted-code gate, whose
    measured accuracy the docstrings quote, is left out here: ``generate --check`` compares
    the committed tree, written by other processes with other random hash seeds, with a
    fresh one, in CI and in test_committed_generated_folder_is_up_to_date.)"""
    from raosym import emit

    pickled = tmp_path / "catalog.pickle"
    pickled.write_bytes(transport.dumps(list(catalog.values())))
    script = (
        "import json, sys\n"
        "from raosym import emit\nfrom raosym.cache import transport\n"
        "outcomes = transport.loads(open(sys.argv[1], 'rb').read())\n"
        "files = {}\n"
        "for outcome in outcomes:\n"
        "    files.update(emit.render_files(outcome.verified))\n"
        "open(sys.argv[2], 'w').write(json.dumps(files))\n"
    )
    environment = os.environ | {"PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", script, str(pickled), str(tmp_path / "files.json")],
                   check=True, env=environment, cwd=REPOSITORY)
    here = {}
    for outcome in catalog.values():
        here.update(emit.render_files(outcome.verified))
    there = json.loads((tmp_path / "files.json").read_text())
    assert set(there) == set(here) and len(here) == 2 * len(FAMILIES)
    assert [name for name in sorted(here) if there[name] != here[name]] == []


def test_check_exit_codes_and_diff(derived, tmp_path, capsys):
    output = tmp_path / "generated"
    assert generate(output) == 0
    assert generate(output, "--check") == 0
    module = output / "python" / "laplace.py"
    module.write_text(module.read_text().replace("def fisher_information", "def fisher_info"))
    before = snapshot(output)
    capsys.readouterr()
    assert generate(output, "--check") == 1
    captured = capsys.readouterr()
    assert f"--- {module.as_posix()}" in captured.out
    assert "-def fisher_info(theta):" in captured.out
    assert "+def fisher_information(theta):" in captured.out
    assert "out of date" in captured.err
    assert snapshot(output) == before  # --check writes nothing
    module.unlink()
    assert generate(output, "--check") == 1
    assert "--- /dev/null" in capsys.readouterr().out


def test_failure_half_way_leaves_the_output_unchanged(derived, tmp_path, monkeypatch):
    output = tmp_path / "generated"
    assert generate(output) == 0
    edited = output / "latex" / "gamma.tex"
    edited.write_text("% an old version\n")
    before = snapshot(output)

    from raosym.emit import latex

    real_render, calls = latex.render, []

    def render_failing_on_the_third_family(verified):
        calls.append(verified.derivation.spec.name)
        if len(calls) == 3:
            raise RuntimeError("renderer crashed")
        return real_render(verified)

    monkeypatch.setattr(latex, "render", render_failing_on_the_third_family)
    for name, outcome in derived.items():  # rendered now, not taken from the render cache
        derived[name] = dataclasses.replace(outcome, cached=False)
    with pytest.raises(RuntimeError, match="renderer crashed"):
        generate(output)
    assert snapshot(output) == before
    assert [p.name for p in tmp_path.iterdir()] == ["generated"]  # no staging folder left


def test_failed_family_keeps_its_files_and_fails_the_run(derived, tmp_path, capsys):
    output = tmp_path / "generated"
    assert generate(output) == 0
    for path in (output / "python" / "poisson.py", output / "latex" / "poisson.tex",
                 output / "python" / "gaussian.py"):
        path.write_text("# previous version\n")
    derived["poisson"] = pipeline.FamilyOutcome(
        str(REPOSITORY / "derivations" / "poisson.toml"),
        error=VerificationError("derivations/poisson.toml: 1 of 7 checks failed"))
    capsys.readouterr()
    assert generate(output) == 1
    assert "poisson.toml: 1 of 7 checks failed" in capsys.readouterr().err
    assert (output / "python" / "poisson.py").read_text() == "# previous version\n"
    assert (output / "latex" / "poisson.tex").read_text() == "# previous version\n"
    assert (output / "python" / "gaussian.py").read_text() != "# previous version\n"
    assert "\\input{poisson}" in (output / "latex" / "appendix.tex").read_text()


def _header(marker: str, source: str) -> str:
    """The first line raosym writes into a generated file (raosym/emit/provenance.py)."""
    return f"{marker} Generated by raosym 0.1.0 from {source} (sha256 {'0' * 64})\n"


def test_stale_files_are_removed(derived, tmp_path):
    """Files generated from derivations/retired.toml, which no longer exists, are removed."""
    output = tmp_path / "generated"
    assert generate(output) == 0
    (output / "python" / "retired.py").write_text(_header("#", "derivations/retired.toml"))
    (output / "latex" / "retired.tex").write_text(_header("%", "derivations/retired.toml"))
    (output / "latex" / "appendix.pdf").write_bytes(b"%PDF not managed by generate")
    assert generate(output, "--check") == 1
    assert generate(output) == 0
    assert not (output / "python" / "retired.py").exists()
    assert not (output / "latex" / "retired.tex").exists()
    assert (output / "latex" / "appendix.pdf").exists()
    assert "retired" not in (output / "latex" / "appendix.tex").read_text()


def test_files_generate_did_not_produce_are_kept(derived, tmp_path):
    """A module generated from a file outside derivations/ (raosym generate ../x.toml) and a
    file raosym did not write stay; the outside family's section stays in the appendix."""
    output = tmp_path / "generated"
    assert generate(output) == 0
    outside = _header("%", "../elsewhere.toml") + "\\section{Elsewhere}\n"
    (output / "python" / "elsewhere.py").write_text(_header("#", "../elsewhere.toml"))
    (output / "latex" / "elsewhere.tex").write_text(outside)
    (output / "python" / "handwritten.py").write_text("# written by a person\n")
    (output / "latex" / "handwritten.tex").write_text("% written by a person\n")
    assert generate(output) == 0
    for name in ("python/elsewhere.py", "latex/elsewhere.tex", "python/handwritten.py",
                 "latex/handwritten.tex"):
        assert (output / name).exists(), name
    appendix = (output / "latex" / "appendix.tex").read_text()
    assert "\\input{elsewhere}" in appendix and "handwritten" not in appendix
    assert generate(output, "--check") == 0


def test_named_families_only(derived, tmp_path):
    output = tmp_path / "generated"
    assert generate(output, "gamma") == 0
    assert sorted(snapshot(output)) == ["latex/appendix.tex", "latex/gamma.tex",
                                        "python/gamma.py"]
    assert generate(output, "poisson") == 0
    appendix = (output / "latex" / "appendix.tex").read_text()
    assert "\\input{gamma}" in appendix and "\\input{poisson}" in appendix


def test_pdf(derived, tmp_path):
    output = tmp_path / "generated"
    assert generate(output, "laplace", "gamma", "--pdf") == 0
    assert (output / "latex" / "appendix.pdf").read_bytes().startswith(b"%PDF")
    assert not list((output / "latex").glob("*.aux"))


def test_committed_generated_folder_is_up_to_date(catalog, generated_tree):
    """The one comparison with the committed generated/: `raosym generate --check`, with the
    files generated_tree rendered this session (from the render cache)."""
    failed = [name for name, outcome in catalog.items() if outcome.error is not None]
    assert not failed, f"families that did not verify: {failed}"
    from raosym.cache import DerivationCache

    outcomes = [dataclasses.replace(outcome, cached=True) for outcome in catalog.values()]
    generation = pipeline.generate_from(outcomes, output=REPOSITORY / "generated",
                                        families=set(FAMILIES), check=True,
                                        cache=DerivationCache(os.environ["RAOSYM_CACHE"]))
    assert generation.diff == "", "generated/ is out of date: run `raosym generate`\n" + \
        generation.diff[:5000]
