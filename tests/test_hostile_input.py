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
    "a scale declared `real` (`sigma = \"real\"`)": "test_a_scale_declared_real",
    "an integer domain with no integer in it": "test_an_integer_domain_without_an_integer",
    "a constant the density does not use": "test_an_unused_constant",
    "a file over 1 MB": "test_a_huge_file_is_refused_before_it_is_read",
    "a constant named like a name of the generated module":
        "test_names_the_generated_code_needs_are_refused_at_spec_time",
    "a parameter named like a coordinate at a point of the distance (`mu_1` beside `mu`)":
        "test_a_parameter_named_like_a_coordinate_at_a_distance_point",
    "a mechanism parameter named `alpha`, `theta`, `a` or `sensitivity`":
        "test_names_the_generated_code_needs_are_refused_at_spec_time",
    "a family that is not in `derivations/`": "test_family_not_in_the_folder",
    "a family name that does not match its file name": "test_family_name_not_the_file_name",
    "a derivation over its time budget": "test_derivation_over_its_time_budget",
    "a result that fails its numeric check":
        "tests/test_core.py::test_a_wrong_fisher_matrix_fails_verification_with_both_values",
    "`generated/` out of date (`generate --check`)":
        "tests/test_generate_cli.py::test_check_exit_codes_and_diff",
    "Ctrl-C, or a killed process, during `generate`": "test_interrupted_generate",
    "Ctrl-C while raosym starts (importing SymPy)": "test_ctrl_c_during_start_up",
    "a kill during the write phase": "test_a_kill_in_the_write_phase_leaves_the_old_or_the_new_tree",
    "a read-only output folder, or a read-only `generated/python`": "test_read_only_output_folder",
    "`raosym new` with an existing name":
        "tests/test_workflow.py::test_new_refuses_to_overwrite_and_names_the_file",
    "`raosym new` with a bad name":
        "tests/test_workflow.py::test_new_rejects_names_that_cannot_name_a_module",
    "a bad command line": "test_bad_command_line",
    "a corrupt, truncated or foreign cache entry":
        "tests/test_workflow.py::test_a_damaged_entry_is_derived_again_and_rewritten",
    "a planted cache entry (a pickle with a payload, a wrong HMAC, a render entry naming `../../X`)":
        "test_planted_cache_entries_run_nothing_and_are_rebuilt",
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


def test_derivation_over_its_time_budget(tmp_path):
    # The budget is read when raosym starts, so this needs its own process. A linear density
    # on (0, 1): its Fisher entry is left to SymPy's integrate (no closer's kernel), which
    # cannot finish in 0.02 s; running out is an error, never the numeric route.
    path = tmp_path / "linear.toml"
    path.write_text('name = "linear"\nvariable = "x"\nsupport = "(0, 1)"\n'
                    'density = "1 + theta*(2*x - 1)"\n\n[coordinates]\ntheta = "(-1, 1)"\n')
    result = run_raosym("derive", str(path), "--no-cache", "--quiet",
                        environment={"RAOSYM_BUDGET": "0.02"}, timeout=600)
    assert result.returncode == 1, result.stderr
    error = result.stderr
    assert "linear.toml" in error and "could not close the Fisher entry g_" in error
    assert "did not finish within its budget of 0.02 s" in error
    assert "raise it with RAOSYM_BUDGET=SECONDS" in error


#: (family, the budgeted SymPy call made to run out): every kind of budgeted call the
#: catalog makes, in the cheapest family that makes it (SymPy's integrate in the Fisher
#: ladder, which the catalog never reaches, is test_derivation_over_its_time_budget's).
BUDGETED_CALLS = [
    ("exponential", "simplify"),  # a proof step: simplify or else exact rational points
    ("exponential", "the antiderivative of"),  # the Rao distance's recognizers
    ("logistic", "summation of the Dirichlet series"),  # a closer of the ladder
    ("laplace_location", "the Rényi integral"),  # the privacy accounting
    ("cauchy", "integrate the Beta kernel"),  # the Beta closer
]


@pytest.mark.parametrize("name, call", BUDGETED_CALLS)
def test_a_budget_that_runs_out_fails_the_family(monkeypatch, name, call):
    """Issue 14, item 5b: a budget that runs out is an error that says so, wherever it runs
    out. Before, it chose the route: the Beta and series closers declined (SymPy's integrate
    was tried next), a distance recognizer declined (another recognizer, or the numeric
    geodesic), a simplify that ran out proved the step by exact points instead, and a Rényi
    integral that ran out left the accounting "unavailable" while generate exited 0 -- so a
    loaded machine committed other files than a fast one."""
    import sys as system

    from raosym import pipeline
    from raosym.derive import budget

    real = budget.run_with_budget
    made = []

    def running_out(function, *args, seconds=None, what=""):
        if what.startswith(call):  # the real budget, too short for anything SymPy does
            made.append(what)
            return real(function, *args, seconds=1e-6, what=what)
        return real(function, *args, seconds=seconds, what=what)

    for module in ("fisher", "closers", "integrals", "distance", "divergence"):
        monkeypatch.setattr(system.modules[f"raosym.derive.{module}"], "run_with_budget",
                            running_out)
    monkeypatch.setattr(system.modules["raosym.derive.closers"], "_kernel_cache", [])
    with pytest.raises(budget.BudgetExceeded) as raised:
        pipeline.run_family(REPOSITORY / "derivations" / f"{name}.toml")
    assert made, f"{name} made no budgeted call starting with {call!r}"
    message = str(raised.value)
    assert f"{call}" in message and "did not finish within its budget of 1e-06 s" in message
    assert "raise it with RAOSYM_BUDGET=SECONDS" in message


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
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".generated")] == []
    # No worker (or budgeted SymPy call) is left running on its own.
    deadline = time.monotonic() + 30
    while processes_mentioning(str(output)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_mentioning(str(output)) == []


@pytest.mark.parametrize("read_only", ["python", "everything"])
def test_read_only_output_folder(catalog, tmp_path, monkeypatch, capsys, read_only):
    """A read-only python/ (or the whole output and its parent): exit 1, the folder that
    cannot be written named, and the tree byte for byte as it was (root included: the
    owner's write bit is honoured)."""
    output = tmp_path / "generated"
    assert cli.main(["generate", "poisson", "--output", str(output), "--quiet"]) == 0
    (output / "python" / "poisson.py").write_text("# old\n")
    (output / "latex" / "poisson.tex").write_text("% old\n")
    before = snapshot(output)
    folders = ([output / "python"] if read_only == "python"
               else [output, output / "python", output / "latex", tmp_path])
    for folder in folders:
        folder.chmod(0o555)
    try:
        capsys.readouterr()
        assert cli.main(["generate", "poisson", "--output", str(output), "--quiet"]) == 1
    finally:
        for folder in folders:
            folder.chmod(0o755)
    error = capsys.readouterr().err
    named = output / "python" if read_only == "python" else tmp_path
    assert f"raosym generate: cannot write {output}: Permission denied ({named})" in error
    assert "left as it was" in error
    assert snapshot(output) == before
    assert [p.name for p in tmp_path.iterdir() if ".raosym-" in p.name] == []


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


# ----------------------------------------------------------------------------- issue 14


EXPONENTIAL = '''\
    name = "{name}"
    title = {title}
    reference = {reference}
    variable = "x"
    support = "positive"
    density = "lam*exp(-lam*x)"

    [coordinates]
    lam = "positive"
    '''
PAYLOAD_TITLE = '"""; __import__("os").system("touch PWNED"); """ \\N{BULLET} \\u00e9 Rényi–Gauß 中'


def hostile_workspace(tmp_path: Path, name: str = "hostile") -> tuple[Path, Path]:
    """A derivation folder whose name holds a newline and code, with a family whose title and
    reference are the issue's payloads; returns (derivation file, output folder)."""
    folder = tmp_path / "fam\nimport os; os.system('touch PWNED_FOLDER')\n#"
    folder.mkdir()
    path = folder / f"{name}.toml"
    path.write_text(textwrap.dedent(EXPONENTIAL).format(
        name=name, title=toml_string(PAYLOAD_TITLE + "\u0000 end"),
        reference=toml_string("C:\\xdata \\u12 \\ \"\"\" ''' %{}$&#_^~")), encoding="utf-8")
    return path, tmp_path / "out"


def test_hostile_free_text_runs_nothing_and_compiles(tmp_path, monkeypatch, capsys):
    """Issue 14, items 1 and 8: a title that closes the docstring, \\N{...}, \\u, NUL,
    backslashes and a folder name with a newline give a module that imports, runs nothing and
    keeps the text, and LaTeX that pdflatex compiles (non-ASCII title, --pdf)."""
    path, output = hostile_workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(path.parent))
    assert cli.main(["generate", "--output", str(output), "--quiet", "--pdf"]) == 0
    assert cli.main(["generate", "--output", str(output), "--quiet", "--check"]) == 0
    module = output / "python" / "hostile.py"
    result = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import hostile; "
         "print(ascii(hostile.__doc__)); print(hostile.fisher_information([2.0])[0, 0])",
         str(module.parent)], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("PWNED")) == []
    documentation = eval(result.stdout.splitlines()[0])  # noqa: S307 - ascii() of a str
    assert documentation.startswith(PAYLOAD_TITLE + "\u0000 end: Fisher information")
    assert "Reference: C:\\xdata \\u12 \\ \"\"\" ''' %{}$&#_^~." in documentation
    assert float(result.stdout.splitlines()[1]) == 0.25  # 1/lam**2 at lam = 2
    header = module.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("# Generated by raosym") and "\\nimport os" in header
    assert (output / "latex" / "appendix.pdf").stat().st_size > 0


def exponential_cache(tmp_path: Path):
    """A derivation file, its cache (with this test's HMAC key) and the key's path."""
    from raosym.cache import DerivationCache

    folder = tmp_path / "derivations"
    folder.mkdir()
    shutil.copy(REPOSITORY / "derivations" / "exponential.toml", folder)
    return folder / "exponential.toml", DerivationCache(tmp_path / "cache")


@pytest.mark.parametrize("planted", ["pickle with a payload", "wrong HMAC",
                                     "traversal render entry", "absolute render entry",
                                     "traversal render entry, forged with the key"])
def test_planted_cache_entries_run_nothing_and_are_rebuilt(tmp_path, monkeypatch, capsys,
                                                           planted):
    """Issue 14, item 2: entries someone else wrote are never unpickled nor obeyed."""
    import hashlib
    import hmac
    import json
    import pickle

    from raosym import cache as cache_module

    derivation_file, store = exponential_cache(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(derivation_file.parent))
    monkeypatch.setenv("RAOSYM_CACHE", str(store.folder))
    monkeypatch.setenv("RAOSYM_CACHE_KEY", str(tmp_path / "secret" / "cache-key"))
    store.folder.mkdir()
    key = cache_module.cache_key(derivation_file)
    render_key = cache_module.render_key(derivation_file)

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'PWNED'}",))

    def envelope(k, mac, payload):
        return cache_module.MAGIC + k.encode() + b"\n" + mac + b"\n" + payload

    escaped = tmp_path / "ESCAPED.py"
    if planted.startswith("pickle"):
        payload = pickle.dumps(Payload())
        store.entry_path(key).write_bytes(  # the old format's checksum, which anyone can make
            envelope(key, hashlib.sha256(payload).hexdigest().encode(), payload))
    elif planted == "wrong HMAC":
        payload = pickle.dumps(Payload())
        store.entry_path(key).write_bytes(envelope(key, b"0" * 64, payload))
    else:
        # First a real run, so that the Verified entry is genuine and the render entry is used.
        assert cli.main(["generate", "--output", str(tmp_path / "first"), "--quiet"]) == 0
        target = "../../ESCAPED.py" if "traversal" in planted else str(escaped)
        files = json.dumps({target: "print('escaped')\n", "python/exponential.py": "x = 1\n",
                            "latex/exponential.tex": "x\n"}).encode()
        mac = (hmac.new(store.secret, b"render\0" + render_key.encode() + b"\0" + files,
                        hashlib.sha256).hexdigest().encode() if "forged" in planted
               else b"f" * 64)
        (store.folder / f"{render_key}.render").write_bytes(envelope(render_key, mac, files))
    output = tmp_path / "generated"
    capsys.readouterr()
    assert cli.main(["generate", "--output", str(output), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not (tmp_path / "PWNED").exists()
    assert not escaped.exists() and not (tmp_path.parent / "ESCAPED.py").exists()
    assert sorted(report["changed"]) == ["latex/appendix.tex", "latex/exponential.tex",
                                         "python/exponential.py"]
    # The real module was written, not the planted text; and the entries were rebuilt.
    assert "def fisher_information" in (output / "python" / "exponential.py").read_text()
    assert store.lookup(derivation_file).reason == "hit"
    assert store.load_rendered(derivation_file) is not None
    assert oct((tmp_path / "secret" / "cache-key").stat().st_mode & 0o777) == "0o600"


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a regression must not OOM


@pytest.mark.parametrize("planted", ["a FIFO", "a link to /dev/zero", "a link to a file",
                                     "a file over the size limit", "the folder a link"])
def test_planted_special_files_in_the_cache_are_not_read(tmp_path, monkeypatch, planted):
    """Issue 14, item 2: the entry's path is predictable, so what sits there may be anything.
    A FIFO hung `raosym generate` forever (and `/dev/zero` would be read without end); a
    `.raosym-cache` shipped as a link made the cache read and write where it points."""
    from raosym import cache as cache_module
    from raosym.cache import DerivationCache

    derivation_file, _ = exponential_cache(tmp_path)
    secret = tmp_path / "secret" / "cache-key"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / ".raosym-cache"
    environment = {"RAOSYM_DERIVATIONS": str(derivation_file.parent),
                   "RAOSYM_CACHE_KEY": str(secret), "RAOSYM_CACHE": ""}
    if planted == "the folder a link":
        folder.symlink_to(elsewhere, target_is_directory=True)
    else:
        folder.mkdir()
        entry = folder / f"{cache_module.cache_key(derivation_file)}.pickle"
        if planted == "a FIFO":
            os.mkfifo(entry)
        elif planted == "a link to /dev/zero":
            entry.symlink_to("/dev/zero")
        elif planted == "a link to a file":
            (elsewhere / "entry").write_bytes(cache_module.MAGIC + b"x\n")
            entry.symlink_to(elsewhere / "entry")
        else:
            with open(entry, "wb") as file:
                file.write(cache_module.MAGIC)
                file.truncate(cache_module.MAX_ENTRY_BYTES + 1)
    result = run_raosym("generate", "--output", str(tmp_path / "generated"), "--quiet",
                        cwd=tmp_path, environment=environment, timeout=300,
                        preexec_fn=_limit_memory)
    assert result.returncode == 0, result.stderr
    assert "def fisher_information" in (tmp_path / "generated/python/exponential.py").read_text()
    if planted == "the folder a link":
        assert sorted(elsewhere.iterdir()) == []  # nothing read or written through the link
        assert DerivationCache(Path(".raosym-cache")).folder == Path(".raosym-cache")
    else:
        assert sorted(elsewhere.iterdir()) in ([], [elsewhere / "entry"])
        if planted == "a link to a file":
            assert (elsewhere / "entry").read_bytes() == cache_module.MAGIC + b"x\n"
        # The family was derived again and its entry rewritten as a plain file.
        monkeypatch.setenv("RAOSYM_CACHE_KEY", str(secret))
        assert DerivationCache(folder).lookup(derivation_file).reason == "hit"


def test_a_cache_key_inside_the_cache_folder_is_not_used(tmp_path, monkeypatch):
    derivation_file, store = exponential_cache(tmp_path)
    monkeypatch.setenv("RAOSYM_CACHE_KEY", str(store.folder / "cache-key"))
    assert store.secret is None
    assert store.lookup(derivation_file).reason.startswith("disabled")


WRITE_SCRIPT = '''
import os, signal, sys
from pathlib import Path
from raosym.emit import write
output, point = Path(sys.argv[1]), sys.argv[2]
def kill(name=None):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "while building":
    real_fsync, calls = os.fsync, []
    def fsync(descriptor):
        real_fsync(descriptor)
        calls.append(descriptor)
        if len(calls) == 2:
            kill()
    write.os.fsync = fsync
else:
    write._checkpoint = lambda name: kill() if name == point else None
files = {"python/aaa.py": "new a\\n", "python/bbb.py": "new b\\n", "latex/aaa.tex": "new\\n"}
write.write_tree(output, write.TreePlan(files, stale=("python/zzz.py",)))
'''


def old_tree(output: Path) -> dict[str, bytes]:
    (output / "python").mkdir(parents=True)
    (output / "latex").mkdir()
    for name, text in (("python/aaa.py", "old a\n"), ("python/bbb.py", "old b\n"),
                       ("python/zzz.py", "stale\n"), ("latex/aaa.tex", "old\n"),
                       ("latex/appendix.pdf", "a compiled file raosym does not manage\n")):
        (output / name).write_text(text)
    return snapshot(output)


@pytest.mark.parametrize("point", ["while building", "built", "old moved aside", "new moved in"])
def test_a_kill_in_the_write_phase_leaves_the_old_or_the_new_tree(tmp_path, point):
    """Issue 14, item 3: SIGKILL at every step of the swap, then the next start."""
    output = tmp_path / "generated"
    before = old_tree(output)
    result = subprocess.run([sys.executable, "-c", WRITE_SCRIPT, str(output), point],
                            cwd=REPOSITORY, env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr
    after_kill = snapshot(output) if output.exists() else None
    from raosym.emit import write

    write.recover(output)  # what the next run does first
    after = snapshot(output)
    new = {"python/aaa.py": b"new a\n", "python/bbb.py": b"new b\n", "latex/aaa.tex": b"new\n",
           "latex/appendix.pdf": before["latex/appendix.pdf"]}
    if point == "new moved in":  # past the commit point: the new tree, whole
        assert after == after_kill == new
    else:
        assert after == before
        assert after_kill in (before, None)  # None: killed between the two renames
    assert [p.name for p in tmp_path.iterdir()] == ["generated"]  # no staging folder left


SLOW_WRITE_SCRIPT = """
import sys, time
from pathlib import Path
from raosym.emit import write
output = Path(sys.argv[1])
def pause(name):
    if name == "built":  # the new tree is complete in .generated.raosym-new, not swapped yet
        (output.parent / "BUILT").touch()
        time.sleep(3)
write._checkpoint = pause
files = {"python/aaa.py": "new a\\n", "python/bbb.py": "new b\\n", "latex/aaa.tex": "new\\n"}
write.write_tree(output, write.TreePlan(files, stale=("python/zzz.py",)))
"""


def test_a_run_starting_during_another_s_swap_waits_for_it(tmp_path):
    """Issue 14, item 3: every run starts with recover(), which deletes staging folders; one
    started while another run had built its new tree but not yet swapped it deleted that
    tree under it (the writer then failed, or swapped in what was left). It must wait."""
    output = tmp_path / "generated"
    old_tree(output)
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITE_SCRIPT, str(output)],
                              cwd=REPOSITORY, env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "BUILT").exists():
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr.read()
            time.sleep(0.05)
        from raosym.emit import write

        write.recover(output)  # what a second `raosym generate` does first
        after_recover = snapshot(output)  # recover returned only once the swap was done
    finally:
        _, error = writer.communicate(timeout=60)
    assert writer.returncode == 0, error
    assert after_recover == snapshot(output) == {"python/aaa.py": b"new a\n", "python/bbb.py": b"new b\n",
                                "latex/aaa.tex": b"new\n",
                                "latex/appendix.pdf": b"a compiled file raosym does not manage\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["BUILT", "generated"]


def test_stale_staging_folders_of_old_versions_are_removed(tmp_path):
    from raosym.emit import write

    output = tmp_path / "generated"
    old_tree(output)
    stale = tmp_path / ".generated-k2j4_x9a"  # what tempfile.mkdtemp left before
    (stale / "python").mkdir(parents=True)
    keep = tmp_path / ".generated-notes"  # not a staging folder's name: left alone
    keep.mkdir()
    write.recover(output)
    assert not stale.exists() and keep.is_dir()
    gitignore = (REPOSITORY / ".gitignore").read_text()
    assert ".*.raosym-new/" in gitignore and ".*.raosym-old/" in gitignore


def test_planted_staging_links_are_removed_not_followed(tmp_path):
    """Staging names are predictable: links planted there (by an archive, say) must not make
    the output a link to another folder, nor delete what they point to."""
    from raosym.emit import write

    victim = tmp_path / "victim"
    (victim / "python").mkdir(parents=True)
    (victim / "python" / "keep.py").write_text("mine\n")
    output = tmp_path / "generated"  # missing: as after a kill between the two renames
    (tmp_path / ".generated.raosym-old").symlink_to(victim, target_is_directory=True)
    (tmp_path / ".generated.raosym-new").symlink_to(victim, target_is_directory=True)
    write.write_tree(output, write.TreePlan({"python/aaa.py": "new a\n"}, stale=()))
    assert not output.is_symlink() and snapshot(output) == {"python/aaa.py": b"new a\n"}
    assert snapshot(victim) == {"python/keep.py": b"mine\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated", "victim"]


def test_killing_the_parent_ends_its_workers(tmp_path):
    """Issue 14, item 4: kill -9 of `raosym generate` alone (not its process group): no
    worker or budgeted SymPy child outlives it, and a caller reading its stdout (as
    `$(raosym generate)` does) gets end-of-file instead of hanging."""
    import threading

    output = tmp_path / "generated"
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY),
                   "RAOSYM_CACHE": str(tmp_path / "cache"),
                   "RAOSYM_DERIVATIONS": str(REPOSITORY / "derivations")}
    process = subprocess.Popen(
        [sys.executable, "-m", "raosym", "generate", "--output", str(output), "--no-cache",
         "--jobs", "2"], cwd=REPOSITORY, env=environment, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in process.stderr:
            if ": derive (" in line:
                break
        assert processes_mentioning(str(output)), "no worker was started"
        process.kill()  # SIGKILL to the parent only
        process.wait(timeout=30)
        captured: list[str] = []
        reader = threading.Thread(target=lambda: captured.append(process.stdout.read()),
                                  daemon=True)
        reader.start()
        reader.join(timeout=30)
        assert not reader.is_alive(), "reading raosym's stdout hangs: a child still holds it"
        deadline = time.monotonic() + 30
        while processes_mentioning(str(output)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_mentioning(str(output)) == []
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


GATE_SCRIPT = """
from raosym.gate import emitted as gate
# A module whose import takes ten minutes: the gate's interpreter is busy when we are killed.
gate._run("slow", "import time\\ntime.sleep(600)\\n", [])
"""


def children_of(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def test_killing_the_parent_during_the_gate_ends_the_gate_s_interpreter():
    """Issue 14, item 4: the emitted-code gate's interpreter (and pdflatex, started the same
    way) is a child too; after a kill -9 of raosym it went on running on its own."""
    process = subprocess.Popen([sys.executable, "-c", GATE_SCRIPT], cwd=REPOSITORY,
                               env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    try:
        deadline = time.monotonic() + 120
        while not (runners := children_of(process.pid)):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)  # the runner is past its start-up, importing the module
        process.kill()
        process.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(Path(f"/proc/{pid}").exists() for pid in runners) and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        alive = [pid for pid in runners if Path(f"/proc/{pid}").exists()]
        for pid in alive:
            os.kill(pid, signal.SIGKILL)
        assert alive == [], "the gate's interpreter outlived the process that started it"
    finally:
        if process.poll() is None:
            process.kill()


def test_output_does_not_depend_on_where_families_are_derived(tmp_path):
    """Issue 14, item 5a: --jobs 1 (in this process), --jobs 2 (forked workers) and one
    family alone give the same bytes, which are the committed ones."""
    folder = tmp_path / "derivations"
    folder.mkdir()
    for name in ("gaussian", "exponential"):
        shutil.copy(REPOSITORY / "derivations" / f"{name}.toml", folder)
    environment = {"RAOSYM_DERIVATIONS": str(folder)}
    trees = {}
    for label, arguments in (("jobs 1", ["--jobs", "1"]), ("jobs 2", ["--jobs", "2"])):
        output = tmp_path / label.replace(" ", "")
        result = run_raosym("generate", "--no-cache", "--quiet", "--output", str(output),
                            *arguments, environment=environment, timeout=900)
        assert result.returncode == 0, result.stderr
        trees[label] = snapshot(output)
    alone = tmp_path / "alone"
    shutil.copytree(tmp_path / "jobs2", alone)
    (alone / "latex" / "gaussian.tex").unlink()
    (alone / "python" / "gaussian.py").unlink()
    result = run_raosym("generate", "gaussian", "--no-cache", "--quiet", "--output", str(alone),
                        environment=environment, timeout=900)
    assert result.returncode == 0, result.stderr
    trees["gaussian alone"] = snapshot(alone)
    assert trees["jobs 1"] == trees["jobs 2"] == trees["gaussian alone"]
    for path in ("latex/gaussian.tex", "latex/exponential.tex", "python/gaussian.py"):
        assert trees["jobs 1"][path] == (REPOSITORY / "generated" / path).read_bytes(), path


COLLIDING = '''\
    name = "colliding"
    variable = "x"
    support = "real"
    density = "exp(-(x - shape)**2/(2*s**2*argument**2*where**2*fisher**2)) / sqrt(2*pi*s**2*argument**2*where**2*fisher**2)"

    [coordinates]
    shape = "real"
    s = "positive"

    [constants]
    argument = "positive"
    where = "positive"
    fisher = "positive"
    '''


def test_parameters_named_like_internal_names_work(tmp_path, monkeypatch):
    """Issue 14, item 6: constants `argument`, `where`, `fisher` (names the generated code
    used itself), a coordinate `shape`, and a coordinate `c` (which crashed verification)."""
    folder = tmp_path / "derivations"
    folder.mkdir()
    (folder / "colliding.toml").write_text(textwrap.dedent(COLLIDING))
    (folder / "coordc.toml").write_text(
        'name = "coordc"\nvariable = "x"\nsupport = "real"\n'
        'density = "exp(-(x - c)**2/2) / sqrt(2*pi)"\n[coordinates]\nc = "real"\n')
    monkeypatch.setenv("RAOSYM_DERIVATIONS", str(folder))
    output = tmp_path / "out"
    assert cli.main(["generate", "--output", str(output), "--quiet"]) == 0
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import colliding, coordc\n"
        "k = dict(argument=2.0, where=1.5, fisher=0.5)\n"
        "print(colliding.fisher_information([0.3, 2.0], **k).tolist())\n"
        "print(float(colliding.rao_distance([0.0, 1.0], [1.0, 1.0], **k)))\n"
        "print(coordc.fisher_information([1.0]).tolist(), float(coordc.rao_distance([0.0], [2.0])))\n"
        "try:\n    colliding.fisher_information([0.0, 1.0], argument=-1.0, where=1.0, fisher=1.0)\n"
        "except ValueError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", script, str(output / "python")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    sigma = 2.0 * 2.0 * 1.5 * 0.5  # s * argument * where * fisher
    fisher = [value for row in eval(lines[0]) for value in row]  # noqa: S307 - a printed list
    # The Gaussian in (mu, s) with standard deviation s * argument * where * fisher.
    assert fisher == pytest.approx([1 / sigma**2, 0, 0, 2 / 2.0**2], rel=1e-15)
    # The Gaussian's Rao distance at equal scales (Atkinson and Mitchell 1981), sigma = 1.5.
    scale = 1.0 * 2.0 * 1.5 * 0.5
    expected = float(mpmath.sqrt(2) * mpmath.acosh(1 + 1 / (4 * scale**2)))
    assert float(lines[1]) == pytest.approx(expected, rel=1e-14)
    assert lines[2] == "[[1.0]] 2.0"
    assert lines[3] == "constant 'argument' must lie in (0, oo); got -1.0"


@pytest.mark.parametrize("table, name, message", [
    ("constants", "sensitivity",
     "'sensitivity' names the sensitivity argument of the generated accounting functions"),
    ("constants", "alpha", "'alpha' names the order of the Renyi divergence"),
    ("constants", "theta", "the constant name 'theta' is a name of the generated module"),
])
def test_names_the_generated_code_needs_are_refused_at_spec_time(tmp_path, capsys, table,
                                                                 name, message):
    """Issue 14, item 6: a mechanism scale `alpha` (a ZeroDivisionError before), a constant
    `sensitivity` (a duplicate argument before), a constant `theta`."""
    path = family(tmp_path, "laplacian", f'''\
        name = "laplacian"
        variable = "x"
        support = "real"
        density = "exp(-Abs(x - mu)/{name})/(2*{name})"
        [coordinates]
        mu = "real"
        [{table}]
        {name} = "positive"
        [mechanism]
        location = "mu"
        scale = "{name}"
        ''')
    status, error = derive(path, capsys)
    assert status == 2, error
    assert f"{path}:8: key '{table}.{name}': {message}" in error


def test_a_parameter_named_like_a_coordinate_at_a_distance_point(tmp_path, capsys):
    """A constant `mu_1` beside a coordinate `mu`: the engine's name for mu at the first point
    of the Rao distance. It ended in a SyntaxError traceback (duplicate argument 'mu_1' in
    lambdify) after 5 s of verification; now it is refused at spec time."""
    path = family(tmp_path, "clash", """\
        name = "clash"
        variable = "x"
        support = "real"
        density = "exp(-(x - mu)**2/(2*sigma**2*mu_1**2)) / sqrt(2*pi*sigma**2*mu_1**2)"
        [coordinates]
        mu = "real"
        sigma = "positive"
        [constants]
        mu_1 = "positive"
        """)
    status, error = derive(path, capsys)
    assert status == 2 and "Traceback" not in error
    assert f"{path}:9: key 'constants.mu_1': 'mu_1' is the name raosym gives the coordinate " \
           "'mu' at the first of the two points of the Rao distance; rename the parameter" in error


def test_a_constant_named_like_an_integration_variable(tmp_path):
    """A Laplace family shifted by a constant `t`: the location-scale reduction integrates
    over its own t, which was the constant's symbol itself; the Fisher matrix came out
    singular and derive ended in a NonInvertibleMatrixError traceback. The Fisher information
    of the Laplace family in (mu, b) is diag(1/b^2, 1/b^2) whatever the fixed shift."""
    name = "t"
    import sympy

    from raosym import pipeline

    path = family(tmp_path, "shifted", f"""\
        name = "shifted"
        variable = "x"
        support = "real"
        density = "exp(-Abs(x - mu - {name})/b) / (2*b)"
        [coordinates]
        mu = "real"
        b = "positive"
        [constants]
        {name} = "real"
        """)
    derivation = pipeline.derive(path)
    b = sympy.Symbol("b", positive=True)
    assert sympy.simplify(derivation.fisher - sympy.diag(1 / b**2, 1 / b**2)) == sympy.zeros(2)


def test_a_scale_declared_real(tmp_path, capsys):
    """Issue 14, item 8: `sigma = "real"` made the printer fail on DiracDelta."""
    path = family(tmp_path, "realscale", '''\
        name = "realscale"
        variable = "x"
        support = "real"
        density = "exp(-(x - mu)**2/(2*sigma**2)) / sqrt(2*pi*sigma**2)"
        [coordinates]
        mu = "real"
        sigma = "real"
        ''')
    status, error = derive(path, capsys)
    assert status == 2 and "Traceback" not in error
    assert f"{path}: key 'coordinates.sigma': the Fisher entry g_sigma_sigma contains " \
           "DiracDelta(sigma)" in error
    assert "declare it 'positive'" in error


def test_an_integer_domain_without_an_integer(tmp_path, capsys):
    path = family(tmp_path, "emptyint", f'''\
        name = "emptyint"
        variable = "x"
        support = "real"
        density = "{GAUSSIAN}"
        [coordinates]
        mu = "real"
        [constants]
        n = "integer in (0, 1)"
        ''')
    status, error = derive(path, capsys)
    assert status == 2
    assert f"{path}:8:" in error and "key 'constants.n'" in error
    assert "the domain 'integer in (0, 1)' holds no integer" in error


def test_an_unused_constant(tmp_path, capsys):
    path = family(tmp_path, "unused", f'''\
        name = "unused"
        variable = "x"
        support = "real"
        density = "{GAUSSIAN}"
        [coordinates]
        mu = "real"
        [constants]
        k = "positive"
        ''')
    status, error = derive(path, capsys)
    assert status == 2
    assert f"{path}:8: key 'constants.k': the constant 'k' is used neither in the density " \
           "nor in the support" in error


def test_a_huge_file_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch):
    path = tmp_path / "huge.toml"
    with open(path, "wb") as file:  # 100 MB, sparse: nothing to parse in the first place
        file.write(b'name = "huge"\n')
        file.truncate(100 * 1024 * 1024)
    read_sizes = []
    real_open = open

    class Spy:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def fileno(self):
            return self.handle.fileno()

        def read(self, size=-1):
            read_sizes.append(size)
            return self.handle.read(size)

    from raosym.spec import schema

    monkeypatch.setattr(schema, "open", lambda *a, **k: Spy(real_open(*a, **k)), raising=False)
    status, error = derive(path, capsys)
    assert status == 2
    assert f"{path}: the file is {100 * 1024 * 1024} bytes long; a derivation file may have " \
           "at most 1048576 bytes" in error
    assert read_sizes == [1048577]  # never the whole file


@pytest.mark.parametrize("delay", [0.15, 0.4, 0.8])
def test_ctrl_c_during_start_up(tmp_path, delay):
    """Issue 14, item 8: SIGINT while Python imports raosym, SymPy and NumPy."""
    process = subprocess.Popen(
        [sys.executable, "-m", "raosym", "derive", "exponential", "--no-cache", "--quiet"],
        cwd=REPOSITORY, env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=120)
    assert process.returncode == 130, error
    assert error.strip().endswith("raosym: interrupted") and "Traceback" not in error


def test_ctrl_c_inside_a_callback_is_not_swallowed(tmp_path):
    """A KeyboardInterrupt raised inside a weakref callback (where Ctrl-C during an import can
    land: importlib's module-lock callback) is only printed by Python, and a command would run
    on to exit 0; the command's start-up makes it a KeyboardInterrupt of the code after it."""
    script = tmp_path / "callback.py"
    script.write_text(
        "import time, weakref\n"
        "import raosym.__main__\n"
        "raosym.__main__.install_interrupt_handling()\n"
        "class Lock: pass\n"
        "def callback(reference): raise KeyboardInterrupt\n"
        "lock = Lock(); reference = weakref.ref(lock, callback)\n"
        "try:\n"
        "    del lock\n"
        "    time.sleep(5)\n"
        "    print('swallowed')\n"
        "except KeyboardInterrupt:\n"
        "    print('raised again')\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPOSITORY)}, timeout=60)
    assert result.stdout.strip() == "raised again", result.stderr
    assert "Exception ignored" not in result.stderr
