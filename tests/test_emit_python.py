"""The generated Python modules against the mathematics, not against themselves.

Each module is imported by path from a freshly generated tree and compared with an mpmath
evaluation (50 digits) of the symbolic Fisher matrix as ``raosym derive NAME --json`` prints
it (``sympy.sympify`` of the strings: an independent route from the generated code), at the
same floating-point inputs, including points far into each domain.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy
from conftest import family_names, verified

from raosym.cli import report
from raosym.emit import render_files
from raosym.emit.python.printer import ModulePrinter, check_printable, stable_forms
from raosym.errors import EmitError

FAMILIES = family_names()
DIGITS = 50
TOLERANCE = 1e-14


def load_module(tree: Path, name: str):
    path = tree / "python" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"generated_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def symbolic(verified_family) -> dict:
    """The JSON record of ``raosym derive NAME --json``, parsed back with plain symbols."""
    record = report.as_json(verified_family)
    spec = verified_family.derivation.spec
    names = {p.name: sympy.Symbol(p.name) for p in spec.parameters}
    names |= {f"d{p.name}": sympy.Symbol(f"d{p.name}") for p in spec.coordinates}

    def parse(text):
        return sympy.sympify(text, locals=names)

    return {
        "fisher": sympy.Matrix([[parse(entry) for entry in row] for row in record["fisher"]]),
        "line_element": parse(record["line_element"]),
        "curvature": parse(record["curvature"]) if record["curvature"] else None,
        "names": names,
    }


def exact(expr, values: dict, names: dict) -> mpmath.mpf:
    """``expr`` at the exact binary values of the floats, to DIGITS digits."""
    subs = {names[name]: sympy.Float(value, DIGITS + 10) for name, value in values.items()}
    return mpmath.mpf(sympy.N(expr.subs(subs), DIGITS))


# ----------------------------------------------------------------------------- points


def _random_value(domain, rng, moderate: bool):
    lower, upper = domain.lower, domain.upper
    if domain.integer:
        start = int(sympy.ceiling(lower)) + (1 if domain.lower_open and lower.is_integer else 0)
        return float(rng.integers(start, start + (20 if moderate else 1000)))
    if lower.is_finite and upper.is_finite:
        return float(lower) + (float(upper) - float(lower)) * rng.uniform(0.01, 0.99)
    span = 1 if moderate else 6
    if lower.is_finite:
        return float(lower) + 10 ** rng.uniform(-span, span)
    if upper.is_finite:
        return float(upper) - 10 ** rng.uniform(-span, span)
    return rng.uniform(-10, 10) if moderate else rng.uniform(-1e6, 1e6)


def _extremes(domain) -> list[float]:
    """Far into the domain: sigma = 1e-6 and 1e6, lambda = 1e8, p = 1e-9 and 1 - 1e-9."""
    lower, upper = domain.lower, domain.upper
    if domain.integer:
        start = int(sympy.ceiling(lower))
        return [float(start), float(start + 10**6)]
    if lower.is_finite and upper.is_finite:
        width = float(upper) - float(lower)
        return [float(lower) + 1e-9 * width, float(upper) - 1e-9 * width]
    if lower.is_finite:
        return [float(lower) + 1e-6, float(lower) + 1e6, float(lower) + 1e8]
    if upper.is_finite:
        return [float(upper) - 1e-6, float(upper) - 1e8]
    return [-1e8, 0.0, 1e8]


def _at(domain, values: dict):
    """The domain with ends in earlier coordinates (the categorical's p2 in (0, 1 - p1))
    evaluated at their values."""
    substitution = {symbol: sympy.Float(values[symbol.name], 30)
                    for symbol in domain.lower.free_symbols | domain.upper.free_symbols}
    if not substitution:
        return domain
    return dataclasses.replace(domain, lower=domain.lower.subs(substitution),
                               upper=domain.upper.subs(substitution))


def sample_points(spec, count: int, *, moderate: bool = False, extremes: bool = True):
    """``count`` random points, then one per (parameter, extreme value) with the rest random
    (a coordinate whose domain depends on the moved one drawn again when it left it)."""
    rng = np.random.default_rng(sum(map(ord, spec.name)))
    parameters = spec.parameters

    def point():
        values = {}
        for p in parameters:
            values[p.name] = _random_value(_at(p.domain, values), rng, moderate)
        return values

    def inside(values):
        for p in parameters:
            domain = _at(p.domain, values)
            if domain is not p.domain and not domain.contains(sympy.Float(values[p.name], 30)):
                values[p.name] = _random_value(domain, rng, moderate)
        return values

    points = [point() for _ in range(count)]
    if extremes:
        for parameter in parameters:
            for index in range(len(_extremes(_at(parameter.domain, points[0])))):
                base = point()
                value = _extremes(_at(parameter.domain, base))[index]
                points.append(inside(base | {parameter.name: value}))
    return points


def split(spec, values: dict):
    theta = [values[p.name] for p in spec.coordinates]
    constants = {p.name: values[p.name] for p in spec.constants}
    return theta, constants


# ----------------------------------------------------------------------------- accuracy


@pytest.mark.parametrize("name", FAMILIES)
def test_fisher_information_matches_mpmath(catalog, generated_tree, name):
    family = verified(catalog, name)
    if any(entry.value is None for entry in family.derivation.entries):
        pytest.skip("entries known only numerically: tests/test_new_families.py checks the "
                    "module's quadrature against an mpmath one")
    spec = family.derivation.spec
    module = load_module(generated_tree, name)
    truth = symbolic(family)
    fisher, names = truth["fisher"], truth["names"]
    points = sample_points(spec, 60)
    assert len(points) >= 50
    worst = (0.0, None)
    for values in points:
        theta, constants = split(spec, values)
        got = module.fisher_information(theta, **constants)
        assert got.shape == (fisher.rows, fisher.rows)
        expected = [[exact(fisher[i, j], values, names) for j in range(fisher.cols)]
                    for i in range(fisher.rows)]
        scale = max(abs(expected[i][i]) for i in range(fisher.rows))
        for i in range(fisher.rows):
            for j in range(fisher.cols):
                reference = expected[i][j]
                error = abs(mpmath.mpf(float(got[i, j])) - reference)
                relative = float(error / (abs(reference) if reference != 0 else scale))
                if relative > worst[0]:
                    worst = (relative, (values, i, j, float(got[i, j]), reference))
    assert worst[0] <= TOLERANCE, f"worst relative error {worst[0]:.3g} at {worst[1]}"


@pytest.mark.parametrize("name", FAMILIES)
def test_line_element_matches_mpmath(catalog, generated_tree, name):
    family = verified(catalog, name)
    if any(entry.value is None for entry in family.derivation.entries):
        pytest.skip("entries known only numerically: tests/test_new_families.py checks the "
                    "module's quadrature against an mpmath one")
    spec = family.derivation.spec
    module = load_module(generated_tree, name)
    truth = symbolic(family)
    rng = np.random.default_rng(7)
    for values in sample_points(spec, 20, moderate=True, extremes=False):
        theta, constants = split(spec, values)
        dtheta = rng.uniform(-1, 1, size=len(theta))
        got = module.line_element(theta, dtheta, **constants)
        differentials = {f"d{p.name}": float(d) for p, d in zip(spec.coordinates, dtheta)}
        expected = exact(truth["line_element"], values | differentials, truth["names"])
        # ds^2 is a sum of terms of both signs: measure against the sum of their sizes.
        terms = sympy.Add.make_args(sympy.expand(truth["line_element"]))
        size = sum(abs(exact(term, values | differentials, truth["names"])) for term in terms)
        assert abs(float(got) - expected) <= 1e-14 * size, (values, dtheta)


@pytest.mark.parametrize("name", FAMILIES)
def test_gaussian_curvature_matches_mpmath(catalog, generated_tree, name):
    family = verified(catalog, name)
    spec = family.derivation.spec
    module = load_module(generated_tree, name)
    truth = symbolic(family)
    if truth["curvature"] is None:
        assert not hasattr(module, "gaussian_curvature")
        return
    # Moderate points: the Beta and Gamma curvatures are differences of polygamma products,
    # which lose digits as the shapes grow (a limit of the formula, stated in the report).
    for values in sample_points(spec, 30, moderate=True, extremes=False):
        theta, constants = split(spec, values)
        got = float(module.gaussian_curvature(theta, **constants))
        expected = exact(truth["curvature"], values, truth["names"])
        assert abs(got - expected) <= 1e-10 * abs(expected), values


def test_polygamma_helpers_match_mpmath(generated_tree):
    module = load_module(generated_tree, "beta")
    xs = np.concatenate([np.logspace(-9, 9, 37), [0.5, 1.0, 1.5, 2.5, 9.99, 10.0, 10.01]])
    for order in (0, 1, 2, 3):
        got = module._polygamma(order, xs)
        for x, value in zip(xs, got):
            reference = mpmath.polygamma(order, mpmath.mpf(float(x)))
            if order == 0 and abs(reference) < 1:  # the root of digamma near 1.46
                assert abs(value - reference) <= 1e-15, (order, x)
            else:
                assert abs(value - reference) <= 1e-14 * abs(reference), (order, x)
    with mpmath.workdps(60):
        for x, y in [(1e6, 1e-6), (1e-3, 1e6), (2.5, 1e-12), (1e-9, 1e-9), (30.0, 0.1)]:
            got = float(module._polygamma_difference(1, x, y))
            reference = mpmath.polygamma(1, x) - mpmath.polygamma(1, mpmath.mpf(x) + y)
            assert abs(got - reference) <= 1e-14 * abs(reference), (x, y)


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("name", FAMILIES)
def test_broadcasting_shapes(catalog, generated_tree, name):
    spec = verified(catalog, name).derivation.spec
    module = load_module(generated_tree, name)
    k = len(spec.coordinates)
    points = sample_points(spec, 6, moderate=True, extremes=False)
    _, constants = split(spec, points[0])
    constants = {c: points[0][c] for c in constants}
    thetas = np.array([[values[p.name] for p in spec.coordinates] for values in points])
    one = module.fisher_information(list(thetas[0]), **constants)
    assert one.shape == (k, k)
    np.testing.assert_array_equal(one, one.T)
    many = module.fisher_information(thetas, **constants)
    assert many.shape == (6, k, k)
    grid = module.fisher_information(thetas.reshape(2, 3, k), **constants)
    assert grid.shape == (2, 3, k, k)
    for index in range(6):
        # Equal up to an ulp or two: NumPy's vectorized exp/log may round unlike its scalar path.
        single = module.fisher_information(tuple(thetas[index]), **constants)
        np.testing.assert_allclose(many[index], single, rtol=1e-15, atol=0)
        np.testing.assert_allclose(grid.reshape(6, k, k)[index], single, rtol=1e-15, atol=0)
    dtheta = np.ones((6, k))
    assert module.line_element(thetas, dtheta, **constants).shape == (6,)
    assert module.line_element(thetas, dtheta[0], **constants).shape == (6,)
    assert np.shape(module.line_element(thetas[0], dtheta[0], **constants)) == ()
    if hasattr(module, "gaussian_curvature"):
        assert module.gaussian_curvature(thetas.reshape(2, 3, k), **constants).shape == (2, 3)
        assert np.shape(module.gaussian_curvature(thetas[0], **constants)) == ()
    if k == 1:  # a bare number is one point of a one-coordinate family
        assert module.fisher_information(thetas[0, 0], **constants).shape == (1, 1)


# ----------------------------------------------------------------------------- bad input


def test_value_errors_name_the_parameter_and_domain(generated_tree):
    gaussian = load_module(generated_tree, "gaussian")
    with pytest.raises(ValueError, match=r"coordinate 'sigma' must lie in \(0, oo\); got nan"):
        gaussian.fisher_information([0.0, float("nan")])
    with pytest.raises(ValueError, match=r"coordinate 'sigma' must lie in \(0, oo\); got -1.0"):
        gaussian.fisher_information([[0.0, 1.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match=r"coordinate 'mu' must lie in \(-oo, oo\); got inf"):
        gaussian.line_element([float("inf"), 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"dtheta must lie in \(-oo, oo\); got nan"):
        gaussian.line_element([0.0, 1.0], [float("nan"), 1.0])
    with pytest.raises(ValueError, match=r"theta must have shape \(\.\.\., 2\) holding mu, sigma"):
        gaussian.fisher_information([1.0, 2.0, 3.0])

    bernoulli = load_module(generated_tree, "bernoulli")
    with pytest.raises(ValueError, match=r"coordinate 'p' must lie in \(0, 1\); got 1.0"):
        bernoulli.fisher_information([1.0])

    binomial = load_module(generated_tree, "binomial")
    with pytest.raises(ValueError, match=r"constant 'n' must lie in integers in \[1, oo\); got 2.5"):
        binomial.fisher_information([0.5], n=2.5)
    with pytest.raises(ValueError, match=r"constant 'n' must lie in integers in \[1, oo\); got 0.0"):
        binomial.fisher_information([0.5], n=0)
    with pytest.raises(ValueError, match=r"constant 'n' must be a single number"):
        binomial.fisher_information([0.5], n=[1, 2])
    # A missing constant is a wrong call, which Python reports as a TypeError naming it.
    with pytest.raises(TypeError, match=r"missing 1 required keyword-only argument: 'n'"):
        binomial.fisher_information([0.5])

    generalized = load_module(generated_tree, "generalized_gaussian")
    with pytest.raises(ValueError, match=r"constant 'N' must lie in \(1/2, oo\); got 0.5"):
        generalized.fisher_information([0.0, 1.0], N=0.5)
    with pytest.raises(ValueError, match=r"constant 'N' must lie in \(1/2, oo\); got nan"):
        generalized.fisher_information([0.0, 1.0], N=math.nan)


# ----------------------------------------------------------------------------- the module


@pytest.mark.parametrize("name", FAMILIES)
def test_module_is_standalone_and_documented(catalog, generated_tree, name):
    family = verified(catalog, name)
    spec = family.derivation.spec
    path = generated_tree / "python" / f"{name}.py"
    text = path.read_text()
    tree = ast.parse(text)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    # The contract: at module level only math and NumPy (itertools for numeric entries);
    # SciPy inside the functions that use it, so importing a module costs about NumPy's import.
    top_level = {alias.name for node in tree.body if isinstance(node, ast.Import)
                 for alias in node.names}
    top_level |= {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert top_level <= {"itertools", "math", "numpy"}, top_level
    distance = family.derivation.distance
    mechanism = family.derivation.mechanism
    numeric_rdp = mechanism is not None and not mechanism.renyi.closed
    numeric_entries = any(entry.value is None for entry in family.derivation.entries)
    if "_recompute_where(" in text:
        # mpmath, inside the helper, only for the points where a float formula cancels.
        imported.discard("mpmath")
    bessel = any(entry.value is not None and entry.value.has(sympy.besseli)
                 for entry in family.derivation.entries)
    if numeric_entries:
        # Entries known only numerically are integrated with scipy.integrate.quad.
        assert imported <= {"itertools", "math", "numpy", "scipy.integrate", "scipy.special"}
    elif bessel and (distance is None or distance.closed):
        assert imported <= {"math", "numpy", "scipy.special"}  # scipy.special.ive
    elif (distance is not None and not distance.closed) or numeric_rdp:
        # The numeric Rao distance (no closed form) solves its geodesics with SciPy; a
        # numeric RDP curve integrates with scipy.integrate.quad, cut at the integrand's peak
        # (found by scipy.optimize.minimize_scalar).
        # (warnings: the quadrature silences SciPy's IntegrationWarning inside the function.)
        assert imported <= {"math", "numpy", "scipy.integrate", "scipy.optimize", "scipy.special",
                            "warnings"}
    else:
        assert imported <= {"math", "numpy"}
    source = Path(spec.path).read_bytes()
    import hashlib

    assert f"from derivations/{name}.toml (sha256 {hashlib.sha256(source).hexdigest()})" in text
    assert f"SymPy {sympy.__version__}" in text and "Do not edit" in text
    docstring = ast.get_docstring(tree)
    assert f"{len(family.checks)} checks at" in docstring
    assert f"at least {family.min_digits:g} digits" in " ".join(docstring.split())
    for parameter in spec.parameters:
        assert f"{parameter.name} in {parameter.domain.describe()}" in docstring
    for hypothesis in family.derivation.hypotheses:
        assert hypothesis in docstring


def test_generated_modules_pass_ruff(generated_tree):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache",
         str(generated_tree / "python")],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


# ----------------------------------------------------------------------------- the printer


def test_printer_prints_helpers_and_refuses_what_it_cannot_compute():
    x = sympy.Symbol("x", positive=True)
    c = sympy.Symbol("c", positive=True)
    y = sympy.Symbol("y", real=True)
    printer = ModulePrinter({c})
    assert printer.doprint(sympy.gamma(c + 1)) == "math.gamma(c + 1)"
    assert printer.doprint(sympy.gamma(x)) == "_gamma(x)"
    assert printer.doprint(sympy.polygamma(1, x)) == "_polygamma(1, x)"
    assert printer.helpers == {"gamma", "polygamma"}
    assert printer.doprint(stable_forms(sympy.polygamma(1, x) - sympy.polygamma(1, x + c))) \
        == "_polygamma_difference(1, x, c)"
    assert str(stable_forms(sympy.gamma(2 - 1 / c))) == "gamma((2*c - 1)/c)"
    with pytest.raises(EmitError, match="not provably positive"):
        check_printable(sympy.polygamma(1, y))
    with pytest.raises(Exception, match="Unsupported by"):  # strict: an error, not a comment
        ModulePrinter(set()).doprint(sympy.polylog(2, x))
    assert ModulePrinter(set()).doprint(sympy.zeta(x)) == "scipy.special.zeta(x)"


def test_emit_accepts_only_verified(catalog):
    family = verified(catalog, "laplace")
    with pytest.raises(TypeError, match="emit accepts only Verified"):
        render_files(family.derivation)


@pytest.mark.parametrize("rho", [-0.998, 1 - 2.0**-30, -1 + 1e-12])
def test_a_polynomial_with_roots_at_the_domain_ends_is_printed_factored(rho):
    """(1 + rho²)/(rho⁴ - 2 rho² + 1), the fixed-mean bivariate normal's g_rho_rho: the
    expanded denominator cancels near rho = ±1 (7.5e-13 of the entry at rho = -0.998, the
    gate's point); printed factored, it keeps its digits. Reference: mpmath at 50 digits."""
    symbol = sympy.Symbol("rho", real=True)
    expr = (symbol**2 + 1) / (symbol**4 - 2 * symbol**2 + 1)
    code = ModulePrinter(set()).doprint(stable_forms(expr))
    got = eval(compile(code, "<printed>", "eval"), {"rho": rho, "np": np})  # the code under test
    with mpmath.workdps(50):
        r = mpmath.mpf(rho)
        reference = (r**2 + 1) / (r**4 - 2 * r**2 + 1)
    assert abs(got - reference) <= 4e-16 * reference, (code, got, reference)
