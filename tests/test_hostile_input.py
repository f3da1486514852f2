"""Hostile and broken input: every row of the README's error table has a test here (or names
one elsewhere), and the loader and the CLI are fuzzed with hypothesis.

Each test checks the message a user reads (file, key, position, what was expected) and the exit
status, and that nothing was written that should not be: an interrupted or failed run leaves
the output folder byte for byte as it was; an expression never runs code or reads a file.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import mpmath
import pytest
from conftest import REPOSITORY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raosym import cli
from raosym.errors import SpecError
from raosym.spec import load_spec
from raosym.spec.model import FamilySpec

README = (REPOSITORY / "README.md").read_text(encoding="utf-8")
GAUSSIAN = "exp(-(x - mu)**2/2) / sqrt(2*pi)"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def family(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(body))
    return path


def derive(path: Path, capsys) -> tuple[int, str]:
    """``raosym derive PATH`` in this process: (exit status, stderr)."""
    capsys.readouterr()
    status = cli.main(["derive", str(path), "--quiet", "--no-cache"])
    return status, capsys.readouterr().err


# ----------------------------------------------------------------------------- the README table


def readme_rows() -> list[str]:
    section = README[README.index("### Every error a user can meet"):]
    section = section[:section.index("\n#")]
    rows = [line.split("|")[1].strip() for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| problem")]
    return rows


#: README row -> the test of that row (in this file unless a path is given).
ROW_TESTS = {
    "malformed TOML": "test_malformed_toml",
    "the same key twice": "test_the_same_key_twice",
    "a missing key": "test_missing_key",
    "an unknown key (a typo)": "test_unknown_key",
    "a parameter declared twice": "test_parameter_declared_twice",
    "the variable used as a parameter": "test_variable_used_as_a_parameter",
    "an unknown name": "test_unknown_name",
    "an expression that tries to run code": "test_expression_that_tries_to_run_code",
    "an expression that tries to read a file": "test_expression_that_tries_to_read_a_file",
    "an expression that reaches for Python internals": "test_python_internals",
    "a support that depends on a coordinate": "test_support_depending_on_a_coordinate",
    "a density that does not integrate (sum) to 1": "test_density_that_does_not_integrate_to_one",
    "a negative density": "tests/test_core.py::test_sign_change_is_named_negative",
    "a Fisher entry that diverges on the declared domain":
        "tests/test_core.py::test_diverging_fisher_entry_on_the_declared_domain",
    "a family that is not in `derivations/`": "test_family_not_in_the_folder",
    "a family name that does not match its file name": "test_family_name_not_the_file_name",
    "a derivation over its time budget": "test_derivation_over_its_time_budget",
    "a result that fails its numeric check":
        "tests/test_core.py::test_a_wrong_fisher_matrix_fails_verification_with_both_values",
    "`generated/` out of date (`generate --check`)":
        "tests/test_generate_cli.py::test_check_exit_codes_and_diff",
    "Ctrl-C, or a killed process, during `generate`": "test_interrupted_generate",
    "a read-only output folder": "test_read_only_output_folder",
    "`raosym new` with an existing name":
        "tests/test_workflow.py::test_new_refuses_to_overwrite_and_names_the_file",
    "`raosym new` with a bad name":
        "tests/test_workflow.py::test_new_rejects_names_that_cannot_name_a_module",
    "a bad command line": "test_bad_command_line",
    "a corrupt, truncated or foreign cache entry":
        "tests/test_workflow.py::test_a_damaged_entry_is_derived_again_and_rewritten",
}


def test_every_row_of_the_error_table_has_a_test():
    rows = readme_rows()
    assert len(rows) == len(set(rows)) >= 20
    assert set(rows) == set(ROW_TESTS), "README rows and ROW_TESTS differ"
    for row, test in ROW_TESTS.items():
        path, _, name = test.rpartition("::")
        source = (REPOSITORY / path).read_text() if path else Path(__file__).read_text()
        assert re.search(rf"^def {re.escape(name)}\(", source, re.MULTILINE), (row, test)


def test_malformed_toml(tmp_path, capsys):
    path = family(tmp_path, "broken", 'name = "broken"\nvariable = "x\n')
    status, error = derive(path, capsys)
    assert status == 2
    assert f"{path}:2:" in error and "malformed TOML" in error


def test_the_same_key_twice(tmp_path, capsys):
    path = family(tmp_path, "twice", f'''\
        name = "twice"
        name = "twice"
        variable = "x"
        support = "real"
        density = "{GAUSSIAN}"
        [coordinates]
        mu = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and f"{path}:2:" in error and "Cannot overwrite a value" in error


def test_missing_key(tmp_path, capsys):
    path = family(tmp_path, "missing", '''\
        name = "missing"
        variable = "x"
        support = "real"
        [coordinates]
        mu = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2
    assert f"{path}: key 'density': missing required key 'density'" in error


def test_unknown_key(tmp_path, capsys):
    path = family(tmp_path, "typo", f'''\
        name = "typo"
        variable = "x"
        support = "real"
        density = "{GAUSSIAN}"
        densty = "1"
        [coordinates]
        mu = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2
    assert f"{path}:5: key 'densty': unknown top-level key 'densty'" in error
    assert "density" in error.split("allowed keys are:")[1]


def test_parameter_declared_twice(tmp_path, capsys):
    path = family(tmp_path, "duplicate", f'''\
        name = "duplicate"
        variable = "x"
        support = "real"
        density = "{GAUSSIAN}"
        [coordinates]
        mu = "real"
        [constants]
        mu = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and f"{path}:8: key 'constants.mu'" in error
    assert "declared both as a coordinate and as a constant" in error


def test_variable_used_as_a_parameter(tmp_path, capsys):
    path = family(tmp_path, "self", f'''\
        name = "self"
        variable = "x"
        support = "real"
        density = "{GAUSSIAN}"
        [coordinates]
        mu = "real"
        x = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and str(path) in error
    assert "the variable 'x' is also declared as a coordinate" in error


def test_unknown_name(tmp_path, capsys):
    path = family(tmp_path, "stray", '''\
        name = "stray"
        variable = "x"
        support = "real"
        density = "exp(-(x - y)**2/2) / sqrt(2*pi)"
        [coordinates]
        mu = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and f"{path}:4:" in error and "key 'density'" in error
    assert "unknown name 'y'" in error and "mu" in error


@pytest.mark.parametrize("payload, reported", [
    ("__import__('os').system('touch PWNED')", "'.system'"),
    ("eval('1')", "eval"),
    ("exec('import os')", "exec"),
    ("(lambda: 1)()", "lambda"),
])
def test_expression_that_tries_to_run_code(tmp_path, capsys, monkeypatch, payload, reported):
    monkeypatch.chdir(tmp_path)
    text = 'name = "attack"\nvariable = "x"\nsupport = "real"\n' \
           f'density = "{payload}"\n[coordinates]\nmu = "real"\n'
    path = tmp_path / "attack.toml"
    path.write_text(text)
    status, error = derive(path, capsys)
    assert status == 2 and f"{path}:4:" in error and "key 'density'" in error
    assert reported in error
    assert not (tmp_path / "PWNED").exists()


def test_expression_that_tries_to_read_a_file(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("the-secret-text")
    for key, payload in (("density", f"open('{secret}').read()"),
                         ("support", f"open('{secret}')")):
        values = {"density": GAUSSIAN, "support": "real"} | {key: payload}
        path = family(tmp_path, "reader", f'''\
            name = "reader"
            variable = "x"
            support = "{values['support']}"
            density = "{values['density']}"
            [coordinates]
            mu = "real"
            ''')
        status, error = derive(path, capsys)
        assert status == 2 and f"key '{key}'" in error and str(path) in error
        assert "the-secret-text" not in error


def test_python_internals(tmp_path, capsys):
    for payload in ("x.__class__", "().__class__.__bases__[0].__subclasses__()",
                    "mu.__globals__", "[x for x in ()]"):
        path = family(tmp_path, "internals", f'''\
            name = "internals"
            variable = "x"
            support = "real"
            density = "{payload}"
            [coordinates]
            mu = "real"
            ''')
        status, error = derive(path, capsys)
        assert status == 2 and f"{path}:4:" in error and "key 'density'" in error, payload
        assert "not allowed" in error or "only whitelisted" in error, error


def test_support_depending_on_a_coordinate(tmp_path, capsys):
    path = family(tmp_path, "uniform", '''\
        name = "uniform"
        variable = "x"
        support = "(0, theta)"
        density = "1/theta"
        [coordinates]
        theta = "positive"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and str(path) in error
    assert "the support depends on the coordinate 'theta'" in error and "non-regular" in error


def test_density_that_does_not_integrate_to_one(tmp_path, capsys):
    path = family(tmp_path, "unnormalized", '''\
        name = "unnormalized"
        variable = "x"
        support = "real"
        density = "exp(-(x - mu)**2/2)"
        [coordinates]
        mu = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and f"{path}: key 'density'" in error
    assert "does not integrate to 1" in error
    integral = float(re.search(r"over the support 'real' is ([0-9.]+)", error).group(1))
    assert integral == pytest.approx(float(mpmath.sqrt(2 * mpmath.pi)), rel=1e-10)


def test_family_not_in_the_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(tmp_path))
    family(tmp_path, "alpha", "name = 'alpha'\n")
    family(tmp_path, "beta", "name = 'beta'\n")
    assert cli.main(["derive", "gamma", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert f"no derivation file {tmp_path / 'gamma.toml'}" in error
    assert "alpha, beta" in error


def test_family_name_not_the_file_name(catalog, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "derivations"
    folder.mkdir()
    text = (REPOSITORY / "derivations" / "poisson.toml").read_text()
    (folder / "poisson.toml").write_text(text)
    (folder / "renamed.toml").write_text(text)  # says name = "poisson"
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(folder))
    output = tmp_path / "out"
    assert cli.main(["generate", "--output", str(output), "--quiet"]) == 1
    error = capsys.readouterr().err
    assert f"{folder / 'renamed.toml'}: the family name 'poisson' must match the file name" in error
    assert sorted(snapshot(output)) == ["latex/appendix.tex", "latex/poisson.tex",
                                        "python/poisson.py"]


def run_raosym(*arguments, cwd=REPOSITORY, environment=None, **options):
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY), **(environment or {})}
    return subprocess.run([sys.executable, "-m", "raosym", *arguments], check=False, cwd=cwd,
                          env=environment, capture_output=True, text=True, **options)


def test_derivation_over_its_time_budget():
    # The budget is read when raosym starts, so this needs its own process.
    result = run_raosym("derive", "cauchy", "--no-cache", "--quiet",
                        environment={"RAOSYM_BUDGET": "0.02"}, timeout=600)
    assert result.returncode == 1, result.stderr
    error = result.stderr
    assert "cauchy.toml" in error and "could not close the Fisher entry g_" in error
    assert "did not finish within its budget of 0.02 s" in error
    assert "raise it with RAOSYM_BUDGET=SECONDS" in error


def processes_mentioning(text: str) -> list[str]:
    """Command lines of the running processes that contain ``text`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if text in command:
            found.append(f"{entry.name}: {command}")
    return found


@pytest.mark.parametrize("how", ["Ctrl-C", "SIGINT to raosym only", "SIGTERM to raosym only",
                                 "SIGKILL"])
def test_interrupted_generate(tmp_path, how):
    """Interrupt a cold ``generate`` while it derives: the output is exactly as before."""
    output = tmp_path / "generated"
    shutil.copytree(REPOSITORY / "generated", output)
    (output / "python" / "laplace.py").write_text("# an old, hand-made state\n")
    before = snapshot(output)
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY),
                   "RAOSYM_CACHE": str(tmp_path / "cache")}
    process = subprocess.Popen(
        [sys.executable, "-m", "raosym", "generate", "--output", str(output), "--no-cache"],
        cwd=REPOSITORY, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True)
    # Wait until a family is being derived (progress lines go to stderr, one per step).
    seen = []
    for line in process.stderr:
        seen.append(line)
        if ": derive (" in line:
            break
    assert process.poll() is None, "".join(seen)
    if how == "Ctrl-C":  # the terminal signals the whole foreground process group
        os.killpg(process.pid, signal.SIGINT)
    elif how == "SIGINT to raosym only":
        process.send_signal(signal.SIGINT)
    elif how == "SIGTERM to raosym only":  # `kill PID`: handled like Ctrl-C
        process.send_signal(signal.SIGTERM)
    else:
        os.killpg(process.pid, signal.SIGKILL)
    try:
        _, rest = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    if how == "SIGKILL":
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 130, rest
        assert "raosym: interrupted" in rest and "Traceback" not in rest
    assert snapshot(output) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".generated-")] == []
    # No worker (or budgeted SymPy call) is left running on its own.
    deadline = time.monotonic() + 30
    while processes_mentioning(str(output)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_mentioning(str(output)) == []


def test_read_only_output_folder(catalog, tmp_path, monkeypatch, capsys):
    output = tmp_path / "generated"
    assert cli.main(["generate", "poisson", "--output", str(output), "--quiet"]) == 0
    (output / "python" / "poisson.py").write_text("# old\n")
    before = snapshot(output)
    if os.geteuid() == 0:
        # root ignores permission bits: make the write stage meet what a read-only folder
        # gives an ordinary user.
        from raosym.emit import write

        def refuse(*arguments, **options):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path))

        monkeypatch.setattr(write.tempfile, "mkdtemp", refuse)
    for folder in (output, output / "python", output / "latex", tmp_path):
        folder.chmod(0o555)
    try:
        capsys.readouterr()
        assert cli.main(["generate", "poisson", "--output", str(output), "--quiet"]) == 1
    finally:
        for folder in (output, output / "python", output / "latex", tmp_path):
            folder.chmod(0o755)
    error = capsys.readouterr().err
    assert f"raosym generate: cannot write {output}: Permission denied" in error
    assert "left as it was" in error
    assert snapshot(output) == before


def test_bad_command_line(capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(["derive", "--bogus"])
    assert exit.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("usage: raosym") and "unrecognized arguments: --bogus" in error


# ----------------------------------------------------------------------------- fuzzing


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, lone surrogates aside)."""
    import json

    return json.dumps(text)


EXPRESSIONS = st.one_of(
    st.sampled_from([GAUSSIAN, "lam*exp(-lam*x)", "exp(-Abs(x - mu)/b)/(2*b)", "1/theta",
                     "x**(a - 1)*exp(-x)/gamma(a)", "__import__('os')", "open('/etc/passwd')",
                     "x.__class__", "9**9**9**9", "(" * 200 + "x" + ")" * 200, "x^2",
                     "exp(" * 60 + "x" + ")" * 60, "lambda: 0", "'a'*10", "x if x else 0"]),
    st.text(alphabet=string.ascii_letters + string.digits + "+-*/()., _'\"[]{}<>=!^%", max_size=60),
    st.text(max_size=30),
)
KEYS = st.sampled_from(["name", "title", "reference", "variable", "support", "density",
                        "coordinates", "constants", "mechanism", "extra", "Name", "densty"])
DOMAINS = st.one_of(st.sampled_from(["real", "positive", "(0, 1)", "> 1/2", "integer >= 1",
                                     "[0, oo)", "nonsense", "", "(1, 0)", "<= -3"]),
                    st.text(max_size=12))
PARAMETERS = st.sampled_from(["mu", "b", "sigma", "x", "theta", "lam", "N", "pi", "exp",
                              "__class__", "a b", "1x", "import"])


@st.composite
def derivation_files(draw) -> str:
    """A derivation file: mostly well-formed TOML with plausible and hostile values, sometimes
    raw text or a mangled version of a catalog file."""
    kind = draw(st.sampled_from(["structured", "structured", "structured", "raw", "mangled"]))
    if kind == "raw":
        return draw(st.text(max_size=200))
    if kind == "mangled":
        text = (REPOSITORY / "derivations" / draw(st.sampled_from(
            ["laplace.toml", "poisson.toml", "student_t.toml", "beta.toml"]))).read_text()
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 20)))
        return text[:start] + draw(st.text(max_size=10)) + text[end:]
    lines = []
    values = {"name": st.sampled_from(["fuzzed", "Fuzzed", "", "a" * 300]),
              "variable": st.sampled_from(["x", "t", "mu", "1", ""]),
              "support": st.one_of(st.sampled_from(["real", "positive", "(0, 1)", "{0, 1}",
                                                    "integers >= 0", "range(0, n + 1)",
                                                    "(0, theta)", "[0, n]"]),
                                   st.text(max_size=15)),
              "density": EXPRESSIONS, "title": st.text(max_size=20),
              "reference": st.text(max_size=20)}
    for key in draw(st.lists(KEYS, max_size=8)):
        if key in ("coordinates", "constants", "mechanism"):
            continue
        value = draw(values.get(key, st.text(max_size=10)))
        lines.append(f"{key} = {toml_string(value)}")
    if draw(st.booleans()):
        lines.append(f"density = {draw(st.sampled_from(['1', 'true', '[1, 2]', '{a = 1}']))}")
    for table in draw(st.lists(st.sampled_from(["coordinates", "constants", "mechanism"]),
                               max_size=3)):
        lines.append(f"[{table}]")
        for parameter in draw(st.lists(PARAMETERS, max_size=3)):
            name = parameter if re.fullmatch(r"[A-Za-z_]\w*", parameter) \
                else toml_string(parameter)
            lines.append(f"{name} = {toml_string(draw(DOMAINS))}")
    return "\n".join(lines) + "\n"


@fuzz(1200)
@given(text=derivation_files())
def test_fuzzed_derivation_files_load_or_raise_spec_error(tmp_path, text):
    path = tmp_path / "fuzzed.toml"
    try:
        path.write_text(text, encoding="utf-8")
    except UnicodeEncodeError:
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        spec = load_spec(path)
    except SpecError as error:
        assert str(path) in str(error), str(error)  # every message names the file
    else:
        assert isinstance(spec, FamilySpec)


class Workspace:
    """A folder to run the CLI in: derivation files that fail early (or are unusual), an
    output folder and a cache folder, and bystander files that must never change."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="raosym-cli-fuzz-"))
        self.derivations = self.root / "derivations"
        self.derivations.mkdir()
        (self.derivations / "broken.toml").write_text('name = "broken"\nvariable = "x\n')
        (self.derivations / "unsafe.toml").write_text(
            'name = "unsafe"\nvariable = "x"\nsupport = "real"\n'
            'density = "__import__(\'os\').system(\'touch PWNED\')"\n[coordinates]\nmu = "real"\n')
        (self.derivations / "unnormalized.toml").write_text(
            'name = "unnormalized"\nvariable = "x"\nsupport = "real"\n'
            'density = "exp(-(x - mu)**2/2)"\n[coordinates]\nmu = "real"\n')
        bystanders = self.root / "bystanders"
        bystanders.mkdir()
        (bystanders / "notes.txt").write_text("keep me\n")
        self.before = snapshot(self.root)

    def changed_outside(self) -> list[str]:
        """Files added, changed or removed outside derivations/ (raosym new), the output
        folders and the cache."""
        allowed = ("derivations/", "generated/", "out/", "cache/")
        after = snapshot(self.root)
        names = set(self.before) | set(after)
        return sorted(name for name in names
                      if not name.startswith(allowed)
                      and self.before.get(name) != after.get(name))


ARGUMENT = st.one_of(
    st.sampled_from(["broken", "unsafe", "unnormalized", "missing", "derivations/broken.toml",
                     "--all", "--json", "--quiet", "--no-cache", "--check", "--jobs", "1", "2",
                     "0", "-3", "--output", "out", "generated", "--like", "broken", "--help",
                     "-h", "--", "-", "''", "new_family", "Bad Name", "../escape"]),
    st.text(alphabet=string.ascii_letters + string.digits + "-_./=", max_size=15),
    st.text(max_size=10),
)


@fuzz(600)
@given(command=st.sampled_from(["derive", "generate", "new", "plot", "", "--version"]),
       arguments=st.lists(ARGUMENT, max_size=5))
def test_fuzzed_command_lines(monkeypatch, command, arguments):
    arguments = [a for a in arguments if a != "--pdf"]  # pdflatex is not under test here
    workspace = Workspace()
    try:
        monkeypatch.chdir(workspace.root)
        monkeypatch.setenv("RAOSYM_DERIVATIONS", str(workspace.derivations))
        monkeypatch.setenv("RAOSYM_CACHE", str(workspace.root / "cache"))
        argv = [command, *arguments] if command else arguments
        # Only into the workspace's output folders (raosym writes where it is told).
        argv = ["out" if index and argv[index - 1] == "--output" and a != "generated" else
                "--output=out" if a.startswith("--output=") else a
                for index, a in enumerate(argv)]
        try:
            status = cli.main(argv)
        except SystemExit as exit:  # argparse: --help is 0, a bad command line 2
            status = exit.code
        assert status in (0, 1, 2), (argv, status)
        assert workspace.changed_outside() == [], argv
        assert not (workspace.root / "PWNED").exists()
    finally:
        monkeypatch.chdir(REPOSITORY)
        shutil.rmtree(workspace.root, ignore_errors=True)


def test_fuzz_budget_meets_the_issue():
    """The suite's generated inputs: this file's two fuzzers and test_parser_fuzz.py's."""
    here = Path(__file__).read_text()
    counts = [int(n) for n in re.findall(r"^@fuzz\((\d+)\)", here, re.MULTILINE)]
    parser = (REPOSITORY / "tests" / "test_parser_fuzz.py").read_text()
    counts += [int(n) for n in re.findall(r"@fuzz\((\d+)\)", parser)]
    assert sum(counts[:2]) >= 1500 and sum(counts) >= 2000
