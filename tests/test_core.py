"""The derive and verify stages: the ladder's routes, validation of densities, the budget,
geometry conventions, the CLI's exit statuses and JSON, and a family outside the catalog."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import mpmath
import pytest
import sympy

import raosym
from raosym.derive.budget import BudgetExceeded, run_with_budget
from raosym.derive.geometry import derive_geometry
from raosym.errors import SpecError, VerificationError
from raosym.verify.checks import REQUIRED_DIGITS

from conftest import DERIVATIONS, REPOSITORY


def write_family(folder, name, density, *, support="real", coordinates=None, constants=None):
    coordinates = coordinates or {"mu": "real", "s": "positive"}
    lines = [f'name = "{name}"', 'variable = "x"', f'support = "{support}"',
             f'density = "{density}"', "", "[coordinates]"]
    lines += [f'{key} = "{value}"' for key, value in coordinates.items()]
    if constants:
        lines += ["", "[constants]"] + [f'{key} = "{value}"' for key, value in constants.items()]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def strategies(outcome):
    return {step.strategy for entry in outcome.verified.derivation.entries for step in entry.steps}


# --- the ladder takes the documented routes ---------------------------------------------------

def test_exponential_families_need_no_integral(catalog):
    for name in ["gaussian", "gamma", "beta", "poisson", "bernoulli", "binomial", "geometric"]:
        entries = catalog[name].verified.derivation.entries
        assert {entry.strategy for entry in entries} == {"exponential family"}, name


def test_laplace_is_folded_and_its_cross_term_is_odd(catalog):
    derivation = catalog["laplace"].verified.derivation
    by_position = {(e.row, e.column): e for e in derivation.entries}
    cross_steps = [step.strategy for step in by_position[(1, 0)].steps]
    assert "location-scale" in cross_steps and "fold" in cross_steps
    assert by_position[(1, 0)].value == 0


def test_hard_kernels_are_closed_by_their_closers(catalog):
    assert "beta_substitution" in strategies(catalog["student_t"])
    assert "exponential_series" in strategies(catalog["logistic"])


def test_generalized_gaussian_keeps_its_convergence_hypothesis(catalog):
    hypotheses = catalog["generalized_gaussian"].verified.derivation.hypotheses
    assert any("1/2 < N" in h and "implied" in h for h in hypotheses)


def test_removable_singularity_at_n_equal_one_is_gone(catalog):
    """(N - 1)*gamma(1 - 1/N) is 0*oo at N = 1; the tidy form must be finite there and equal
    to the Laplace value 1/sigma^2."""
    entry = catalog["generalized_gaussian"].verified.derivation.fisher[0, 0]
    sigma = next(s for s in entry.free_symbols if s.name == "sigma")
    N = next(s for s in entry.free_symbols if s.name == "N")
    assert sympy.simplify(entry.subs(N, 1) - 1 / sigma**2) == 0


# --- validation of densities -------------------------------------------------------------------

def test_paper_generalized_gaussian_is_rejected_for_its_normalization(tmp_path):
    path = write_family(tmp_path, "printed", "(2*sigma*gamma(1/N)/N)**(-1) * exp(Abs(x - mu)**N/sigma)",
                        coordinates={"mu": "real", "sigma": "positive"}, constants={"N": "> 1/2"})
    with pytest.raises(SpecError) as raised:
        raosym.load(path)
    message = str(raised.value)
    assert str(path) in message and "key 'density'" in message
    assert "does not integrate to 1" in message


def test_missing_constant_factor_reports_the_mass(tmp_path):
    path = write_family(tmp_path, "half", "exp(-Abs(x - mu)/s) / (4*s)")
    with pytest.raises(SpecError, match=r"integral over the support 'real' is 0\.5 at"):
        raosym.load(path)


def test_sign_change_is_named_negative(tmp_path):
    path = write_family(tmp_path, "signed", "(2*(x - mu)**2 - 1) * exp(-(x - mu)**2) / sqrt(pi) + exp(-(x - mu)**2) / sqrt(pi)",
                        coordinates={"mu": "real"})
    # 2t^2 e^{-t^2}/sqrt(pi) is a density; subtracting and adding the Gaussian keeps it one.
    raosym.load(path)
    path = write_family(tmp_path, "signed2", "(2*(x - mu)**2 - 1/2) * exp(-(x - mu)**2) / sqrt(pi) * 2",
                        coordinates={"mu": "real"})
    with pytest.raises(SpecError, match="the density is negative"):
        raosym.load(path)


def test_diverging_fisher_entry_on_the_declared_domain(tmp_path):
    path = write_family(tmp_path, "gg_wide", "N / (2*sigma*gamma(1/N)) * exp(-(Abs(x - mu)/sigma)**N)",
                        coordinates={"mu": "real", "sigma": "positive"}, constants={"N": "positive"})
    spec = raosym.load(path)
    with pytest.raises(SpecError) as raised:
        raosym.derive(spec)
    message = str(raised.value)
    assert "g_mu_mu diverges" in message and "1/2 < N" in message and str(path) in message


# --- verification is a gate ----------------------------------------------------------------------

def test_a_wrong_fisher_matrix_fails_verification_with_both_values(catalog):
    derivation = catalog["laplace"].verified.derivation
    wrong = dataclasses.replace(derivation, fisher=derivation.fisher * sympy.Rational(101, 100),
                                entries=tuple(dataclasses.replace(e, value=e.value * sympy.Rational(101, 100))
                                              for e in derivation.entries))
    with pytest.raises(VerificationError) as raised:
        raosym.verify(wrong)
    assert "symbolic" in str(raised.value) and "numeric" in str(raised.value)
    assert f"{REQUIRED_DIGITS} required" in str(raised.value)


def test_budget_stops_a_long_call():
    with pytest.raises(BudgetExceeded, match="budget of 0.5 s"):
        run_with_budget(__import__("time").sleep, 5, seconds=0.5, what="sleeping")
    assert run_with_budget(sum, [1, 2, 3], seconds=5) == 6


def test_float_polygamma_is_scipys_for_positive_arguments_and_fps_elsewhere():
    """The double-precision first guesses of geodesics evaluate polygamma with SciPy where it
    is right (x > 0, to rounding), and with mpmath's fp elsewhere: SciPy's zeta(s, q < 0) is
    real and wrong, where fp's complex value ends a trajectory that left the domain."""
    from raosym.verify.evaluate import float_function

    k = sympy.Symbol("k")
    functions = [float_function(sympy.polygamma(n, k), [k]) for n in range(4)]
    with mpmath.workdps(30):
        for n, function in enumerate(functions):
            for x in (1e-8, 0.3, 3.0, 40.0, 1e9):
                exact = mpmath.polygamma(n, x)
                assert abs(function(x) - exact) <= 1e-14 * abs(exact), (n, x)
    assert functions[1](-73.8031836110006) == mpmath.fp.polygamma(1, -73.8031836110006)


def test_poincare_half_plane_has_curvature_minus_one():
    x, y = sympy.symbols("x y", positive=True)
    geometry = derive_geometry((x, y), sympy.Matrix([[1 / y**2, 0], [0, 1 / y**2]]))
    assert geometry.gaussian_curvature == -1
    assert geometry.scalar_curvature == -2
    # Gamma^x_xy = -1/y for the half-plane.
    assert sympy.simplify(geometry.christoffel[0][0][1] + 1 / y) == 0


def test_three_coordinates_keep_their_scalar_curvature():
    """The Gaussian (mu, s) times a scale t: a product of the half-plane of curvature -1/2
    (``ds^2 = (dmu^2 + 2 ds^2)/s^2``) and a line, so R = 2K = -1, whichever way the
    connection is screened before it is simplified (raosym.derive.geometry._connection)."""
    mu, s, t = sympy.symbols("mu s t", positive=True)
    metric = sympy.diag(1 / s**2, 2 / s**2, 1 / t**2)
    assert derive_geometry((mu, s, t), metric).scalar_curvature == -1
    # A coupled metric: the scalar curvature of the same manifold in the coordinates
    # (mu, s, u) with t = u*s (dt = s du + u ds), a sympy identity of the change of variables.
    u = sympy.Symbol("u", positive=True)
    jacobian = sympy.Matrix([[1, 0, 0], [0, 1, 0], [0, u, s]])
    pulled = (jacobian.T * metric.subs(t, u * s) * jacobian).applyfunc(sympy.simplify)
    assert sympy.simplify(derive_geometry((mu, s, u), pulled).scalar_curvature + 1) == 0


# --- a family outside the catalog, written from the README only --------------------------------

def test_new_families_derive_and_verify_without_code_changes(tmp_path):
    rayleigh = write_family(tmp_path, "rayleigh", "x / sigma**2 * exp(-x**2 / (2*sigma**2))",
                            support="positive", coordinates={"sigma": "positive"})
    weibull = write_family(tmp_path, "weibull", "kappa/lam * (x/lam)**(kappa - 1) * exp(-(x/lam)**kappa)",
                           support="positive", coordinates={"lam": "positive"},
                           constants={"kappa": "positive"})
    for path, expected in [(rayleigh, "4/sigma**2"), (weibull, "kappa**2/lam**2")]:
        verified = raosym.run(path)
        fisher = verified.derivation.fisher[0, 0]
        names = {s.name: s for s in fisher.free_symbols}
        assert sympy.simplify(fisher - sympy.sympify(expected, locals=names)) == 0
        assert verified.min_digits >= REQUIRED_DIGITS


# --- the CLI -------------------------------------------------------------------------------------

def run_cli(*arguments, cwd=REPOSITORY):
    # The checkout first on the path: the tests exercise this tree, installed or not.
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    return subprocess.run([sys.executable, "-m", "raosym", *arguments], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=600)


def test_cli_json_has_the_documented_keys_and_parses_back():
    result = run_cli("derive", "laplace_location", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    for key in ["name", "coordinates", "constants", "fisher", "line_element", "curvature",
                "hypotheses", "verification"]:
        assert key in record
    assert record["coordinates"] == ["mu"] and record["constants"] == {"b": "positive"}
    b = sympy.Symbol("b", positive=True)
    assert sympy.simplify(sympy.sympify(record["fisher"][0][0], locals={"b": b}) - 1 / b**2) == 0
    check = record["verification"][0]
    assert set(check) == {"quantity", "point", "symbolic", "numeric", "digits", "reached"}
    assert check["reached"] is True
    assert mpmath.mpf(check["symbolic"]) - mpmath.mpf(check["numeric"]) < 1e-25


def test_cli_exit_status_two_for_bad_input(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(textwrap.dedent('''\
        name = "bad"
        variable = "x"
        support = "real"
        density = "__import__('os').system('touch PWNED')"
        [coordinates]
        mu = "real"
    '''))
    result = run_cli("derive", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.toml" in result.stderr and "density" in result.stderr
    assert not (tmp_path / "PWNED").exists()
    assert run_cli("derive", "no_such_family").returncode == 2


def test_cli_text_report_shows_the_verification_table():
    result = run_cli("derive", "bernoulli")
    assert result.returncode == 0, result.stderr
    assert "g[p,p]" in result.stdout and "digits agreed" in result.stdout


def test_every_catalog_family_is_in_the_readme_table():
    """The README's catalog table lists exactly the files in derivations/."""
    readme = (DERIVATIONS.parent / "README.md").read_text()
    table = readme.split("## The catalog", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip() for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| file")}
    assert rows == {path.stem for path in DERIVATIONS.glob("*.toml")}


def test_a_form_that_cancels_is_evaluated_to_its_digits():
    """(e^x - 1 - x - x^2/2)/x^3 at x = 1e-30 is 1/6 + x/24 + ...: at 40 digits its terms
    cancel to nothing, and a check on them would report a false disagreement (the cardioid's
    curvature did). evaluate_to_precision raises the digits until two values agree."""
    from raosym.verify.evaluate import evaluate, evaluate_to_precision

    x = sympy.Symbol("x", positive=True)
    expr = (sympy.exp(x) - 1 - x - x**2 / 2) / x**3
    point = {x: mpmath.mpf("1e-30")}
    with mpmath.workdps(40):
        truth = mpmath.mpf(1) / 6 + point[x] / 24
        assert abs(evaluate(expr, point) - truth) >= truth / 2  # no digit survives at 40
        assert abs(evaluate_to_precision(expr, point) - truth) <= truth * mpmath.mpf(10) ** -35
