"""The paper cuts of a new user's first hour (issue 17), each as the user's own command.

Every test runs ``python -m raosym ...`` in a subprocess (against the committed generated/ and
derivations/ of the repository, or in a temporary folder), as the user did. Expected values
come from outside the code under test: Fisher informations and Rényi divergences from the
literature (Cauchy location 1/(2s^2); Gaussian KL Δ²/(2σ²), Mironov 2017 Table II) and
mpmath written here.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mpmath as mp
import pytest
from conftest import REPOSITORY


def raosym(*arguments: str, cwd: Path = REPOSITORY, timeout: float = 600):
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    environment.pop("RAOSYM_DERIVATIONS", None)
    environment.pop("RAOSYM_GENERATED", None)
    return subprocess.run([sys.executable, "-W", "ignore", "-m", "raosym", *arguments],
                          cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=timeout, check=False)


# ----------------------------------------------------------------- mechanism parameter options


def test_account_takes_a_mechanism_parameter_as_its_own_option():
    """``raosym account --mechanism cauchy --s 2`` was refused as an ambiguous abbreviation
    of --sigma and --sensitivity. Cauchy location: g = 1/(2 s²), so θ = Δ/(s√2)."""
    for option in (["--s", "2"], ["--s=2"], ["--param", "s=2"]):
        result = raosym("account", "--mechanism", "cauchy", *option, "--delta", "1e-6",
                        "--json")
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        (release,) = summary["releases"]
        assert release["parameters"] == {"sensitivity": 1.0, "s": 2.0}
        assert release["theta_per_release"] == pytest.approx(1 / (2 * math.sqrt(2)), rel=1e-14)


def test_abbreviations_are_not_options_and_unknown_parameters_are_named():
    result = raosym("account", "--mechanism", "gaussian_location", "--sig", "4")
    assert result.returncode == 2
    assert "no parameter 'sig'" in result.stderr and "sensitivity, sigma" in result.stderr
    result = raosym("account", "--mechanism", "cauchy", "--s")
    assert result.returncode == 2 and "--s: expected a value" in result.stderr
    result = raosym("account", "--mechanism", "cauchy", "--s", "2", "--s", "3")
    assert result.returncode == 2 and "s is given twice" in result.stderr
    # Commands without mechanism parameters refuse unknown options as before.
    result = raosym("derive", "laplace", "--bogus")
    assert result.returncode == 2 and "unrecognized arguments: --bogus" in result.stderr


# ---------------------------------------------------------------------- the sensitivity default


def test_the_sensitivity_defaults_to_one_everywhere_and_help_says_so(tmp_path):
    output = tmp_path / "rdp.png"
    result = raosym("plot", "rdp", str(output), "--panel", "laplace_location:b=1,2")
    assert result.returncode == 0, result.stderr
    assert output.stat().st_size > 10_000
    for command in (["account"], ["calibrate"], ["plot", "rdp"]):
        text = " ".join(raosym(*command, "--help").stdout.split())
        assert "defaults to 1" in text or "(default 1)" in text, command


# ------------------------------------------------------------------- calibrate --solve sensitivity


def _gaussian_balle(rho, delta):
    """min over α > 1 of αρ + log((α-1)/α) - (log δ + log α)/(α-1) (Balle et al. 2020,
    Theorem 21, for the Gaussian curve ε(α) = αρ), by mpmath."""
    with mp.workdps(40):
        rho, delta = mp.mpf(rho), mp.mpf(delta)

        def bound(a):
            return a * rho + mp.log((a - 1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)

        start = 1 + mp.sqrt(mp.log(1 / delta) / rho)
        alpha = mp.findroot(lambda a: mp.diff(bound, a), start)
        return bound(alpha)


def test_calibrate_solves_for_the_sensitivity():
    """The largest sensitivity Gaussian noise of σ = 4 affords: θ = Δ/σ, KL = Δ²/(2σ²)."""
    result = raosym("calibrate", "--mechanism", "gaussian_location", "--sigma", "4",
                    "--theta", "0.5", "--solve", "sensitivity", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["value"] == pytest.approx(2.0, rel=1e-12)
    result = raosym("calibrate", "--mechanism", "gaussian_location", "--sigma", "4",
                    "--kl", "0.5", "--solve", "sensitivity", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["value"] == pytest.approx(4.0, rel=1e-12)
    result = raosym("calibrate", "--mechanism", "gaussian_location", "--sigma", "4",
                    "--epsilon", "1", "--delta", "1e-6", "--solve", "sensitivity", "--json")
    assert result.returncode == 0, result.stderr
    sensitivity = json.loads(result.stdout)["value"]
    assert float(_gaussian_balle(sensitivity**2 / 32, 1e-6)) == pytest.approx(1.0, rel=1e-10)


def test_calibrate_says_why_a_mechanism_without_sensitivity_cannot_solve_for_it():
    result = raosym("calibrate", "--mechanism", "bernoulli", "--p", "0.7", "--theta", "1",
                    "--solve", "sensitivity")
    assert result.returncode == 2
    assert "bernoulli has no parameter 'sensitivity'; its parameters are p" in result.stderr


# ------------------------------------------------------------- generate a file outside derivations/


RAYLEIGH = """\
name = "rayleigh"
title = "Rayleigh distribution (scale sigma)"
variable = "x"
support = "positive"
density = "x / sigma**2 * exp(-x**2 / (2*sigma**2))"

[coordinates]
sigma = "positive"
"""


def test_generate_a_file_outside_derivations_and_keep_it(tmp_path):
    """``raosym generate ../rayleigh.toml`` in a folder without derivations/ writes the
    module; a later plain ``raosym generate`` of derivations/ keeps it (it did not produce
    it) and removes only the files of a derivation file that was deleted."""
    (tmp_path / "rayleigh.toml").write_text(RAYLEIGH)
    work = tmp_path / "work"
    work.mkdir()
    result = raosym("generate", "../rayleigh.toml", "--quiet", cwd=work)
    assert result.returncode == 0, result.stderr
    module = work / "generated" / "python" / "rayleigh.py"
    assert module.is_file()
    (work / "derivations").mkdir()
    shutil.copy(REPOSITORY / "derivations" / "exponential.toml", work / "derivations")
    result = raosym("generate", "--quiet", cwd=work)
    assert result.returncode == 0, result.stderr
    assert module.is_file() and (work / "generated" / "python" / "exponential.py").is_file()
    appendix = (work / "generated" / "latex" / "appendix.tex").read_text()
    assert "\\input{rayleigh}" in appendix and "\\input{exponential}" in appendix
    assert raosym("generate", "--check", "--quiet", cwd=work).returncode == 0
    (work / "derivations" / "exponential.toml").unlink()
    shutil.copy(REPOSITORY / "derivations" / "poisson.toml", work / "derivations")
    result = raosym("generate", "--quiet", cwd=work)
    assert result.returncode == 0, result.stderr
    assert "removed generated/python/exponential.py" in result.stdout
    assert module.is_file()
    # The module works: Rayleigh's Fisher information in its scale is 4/σ².
    check = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, 'generated/python'); "
         "import rayleigh; print(float(rayleigh.fisher_information([2.0])[0, 0]))"],
        cwd=work, capture_output=True, text=True, check=True)
    assert float(check.stdout) == pytest.approx(1.0, rel=1e-15)


# ----------------------------------------------------------------- derive prints the mechanism


def test_derive_prints_the_mechanism_results():
    """Mironov 2017, Table II: the Gaussian curve αΔ²/(2σ²), KL Δ²/(2σ²); Rao-DP θ = Δ/σ
    (Soto 2025). The logistic curve has no closed form and the text says how it is computed."""
    result = raosym("derive", "gaussian_location", "--quiet")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "Rao-DP budget: theta = Delta/sigma" in text
    assert "calibration: sigma = Delta/theta" in text
    assert "RDP curve: D_alpha = Delta**2*alpha/(2*sigma**2)" in text
    assert "rho-zCDP with rho = Delta**2/(2*sigma**2)" in text
    assert "KL divergence: Delta**2/(2*sigma**2)" in text
    result = raosym("derive", "logistic", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "Rao-DP budget: theta = sqrt(3)*Delta/(3*s)" in result.stdout
    assert "no closed form" in result.stdout and "by quadrature" in result.stdout


# ------------------------------------------------------- the inverse Gaussian's closed distance


def _inverse_gaussian_distance(one, two):
    """MATH.md §6: with v = 2/√μ and w = 1/√λ the metric diag(λ/μ³, 1/(2λ²)) is
    (dv² + 2 dw²)/w² = 2((v/√2)² + w²)/w²: d = √2·acosh(1 + ((v₁-v₂)²/2 + (w₁-w₂)²)/(2 w₁ w₂))."""
    with mp.workdps(50):
        (m1, l1), (m2, l2) = [[mp.mpf(float(c)) for c in point] for point in (one, two)]
        v1, v2, w1, w2 = 2 / mp.sqrt(m1), 2 / mp.sqrt(m2), 1 / mp.sqrt(l1), 1 / mp.sqrt(l2)
        return mp.sqrt(2) * mp.acosh(1 + ((v1 - v2) ** 2 / 2 + (w1 - w2) ** 2) / (2 * w1 * w2))


def test_inverse_gaussian_has_its_closed_distance(tmp_path):
    """The curvature -1/2 is printed, and now the distance too: rao_distance([1, 1],
    [10, 0.1]) raised GeodesicError; the true value is 1.7666 (and it is accurate for nearby
    and far apart points)."""
    family = REPOSITORY / "tests" / "families" / "inverse_gaussian.toml"
    result = raosym("generate", str(family), "--quiet", "--output", str(tmp_path / "out"),
                    cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = raosym("derive", str(family), "--json", "--quiet", cwd=tmp_path)
    derived = json.loads(result.stdout)
    assert derived["curvature"] == "-1/2"
    assert derived["rao_distance_structure"] == "warped half-plane"
    check = subprocess.run(
        [sys.executable, "-c", "import sys, json; sys.path.insert(0, 'out/python'); "
         "import inverse_gaussian as m; pairs = json.load(sys.stdin); "
         "print(json.dumps([float(m.rao_distance(a, b)) for a, b in pairs]))"],
        input=json.dumps(PAIRS), cwd=tmp_path, capture_output=True, text=True, check=True)
    for (one, two), got in zip(PAIRS, json.loads(check.stdout), strict=True):
        expected = _inverse_gaussian_distance(one, two)
        assert abs(got - float(expected)) <= 1e-14 * float(expected), (one, two, got, expected)
    assert json.loads(check.stdout)[0] == pytest.approx(1.7666, abs=5e-5)


PAIRS = [([1, 1], [10, 0.1]), ([1, 1], [1 + 1e-9, 1]), ([1, 1], [1, 1 - 1e-9]),
         ([0.01, 100], [50, 1e-3]), ([3, 2], [2, 3]), ([1e-6, 1e6], [1e6, 1e-6])]


# ----------------------------------------------------- account and calibrate, in seconds


#: Shape parameters held fixed (Student-t degrees of freedom, generalized Gaussian shape).
SHAPES = {"nu": 3.0, "N": 1.5}
#: Seconds a command may take on a loaded two-core machine (measured: 1 to 5 s each).
SECONDS = 30.0


def _mechanism_options(name):
    """--NAME VALUE for every parameter but the sensitivity: shapes from SHAPES, p = 0.75,
    a noise scale of 2; and the name of the one calibrate solves for (the first)."""
    from raosym import accounting

    mechanism = accounting.load_mechanism(name, REPOSITORY / "generated",
                                       REPOSITORY / "derivations")
    free = [p for p in mechanism.parameters if p != "sensitivity"]
    values = {p: SHAPES.get(p, 0.75 if mechanism.domains[p][1] == 1.0 else 2.0) for p in free}
    solved = next(p for p in free if p not in SHAPES)
    return values, solved


def _generated_mechanisms():
    from raosym import accounting

    return accounting.available_mechanisms(REPOSITORY / "generated")


@pytest.mark.parametrize("name", _generated_mechanisms())
def test_account_and_calibrate_take_seconds_and_print_no_warnings(name):
    import time

    values, solved = _mechanism_options(name)
    options = [item for p, v in values.items() for item in (f"--{p}", f"{v:g}")]
    given = [item for p, v in values.items() if p != solved for item in (f"--{p}", f"{v:g}")]
    for command in (["account", "--mechanism", name, *options, "--delta", "1e-6",
                     "--repeat", "10"],
                    ["calibrate", "--mechanism", name, *given, "--epsilon", "1",
                     "--delta", "1e-6"]):
        started = time.perf_counter()
        environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
        result = subprocess.run([sys.executable, "-m", "raosym", *command], cwd=REPOSITORY,
                                env=environment, capture_output=True, text=True, timeout=300,
                                check=False)
        elapsed = time.perf_counter() - started
        assert result.returncode == 0, (command, result.stderr)
        assert result.stderr == "", (command, result.stderr[:2000])  # no SciPy warnings
        assert elapsed < SECONDS, (command, elapsed)
