"""Discrete families with a Fisher entry no rung closes: the generated module sums its series.

The negative binomial with its shape r as the coordinate (g_rr has no closed form: the sum of
trigammas psi1(r) - E[psi1(k + r)]) and the Yule-Simon family (a power-law tail k^-(rho + 1))
are written here as derivation files and generated through the CLI, as a user would. Each
module's value is compared with a reference computed here and nowhere else: the Hessian form
-E[d^2 log f / d theta^2] (the module sums the score products E[s^2], a different series),
summed with mpmath at 30 digits. The module promises 1e-10 relative.

The module's log-Gamma helpers are checked against mpmath at arguments from 1e-300 to 1e300.
"""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from conftest import REPOSITORY

# The module fixture generates two families once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_numeric_series")

NEGATIVE_BINOMIAL_SHAPE = """name = "nb_shape"
variable = "k"
support = "integers >= 0"
density = "gamma(k + r)/(gamma(r)*factorial(k))*p**r*(1 - p)**k"

[coordinates]
r = "positive"

[constants]
p = "(0, 1)"
"""

YULE_SIMON = """name = "yule_simon"
variable = "k"
support = "integers >= 1"
density = "rho*beta(k, rho + 1)"

[coordinates]
rho = "positive"
"""


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("series")
    paths = []
    for name, text in (("nb_shape", NEGATIVE_BINOMIAL_SHAPE), ("yule_simon", YULE_SIMON)):
        path = folder / f"{name}.toml"
        path.write_text(text)
        paths.append(str(path))
    output = folder / "generated"
    run = subprocess.run([sys.executable, "-m", "raosym", "generate", *paths, "--output",
                          str(output), "--jobs", "1", "--quiet"],
                         capture_output=True, text=True, cwd=REPOSITORY, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = {}
    for name in ("nb_shape", "yule_simon"):
        spec = importlib.util.spec_from_file_location(f"series_{name}",
                                                      output / "python" / f"{name}.py")
        loaded[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded[name])
    return loaded


# ------------------------------------------------------------------ independent references


def negative_binomial_reference(r, p):
    """g_rr = psi1(r) - E[psi1(k + r)]: the first 2000 terms added, the rest by mpmath's
    Euler-Maclaurin summation with its integral split at the mean +- multiples of the
    standard deviation (where the mass is)."""
    r, p = mpmath.mpf(r), mpmath.mpf(p)

    def term(k):
        return mpmath.exp(mpmath.loggamma(k + r) - mpmath.loggamma(r) - mpmath.loggamma(k + 1)
                          + r * mpmath.log(p) + k * mpmath.log1p(-p)) * mpmath.psi(1, k + r)

    head = mpmath.fsum(term(k) for k in range(2000))
    mean, sd = r * (1 - p) / p, mpmath.sqrt(r * (1 - p)) / p
    cuts = sorted({mpmath.mpf(2000), *(mean + j * sd for j in range(-8, 60)
                                       if mean + j * sd > 2000)})
    integral = mpmath.quad(term, [*cuts, mpmath.inf])
    return mpmath.psi(1, r) - head - mpmath.sumem(term, [2000, mpmath.inf], integral=integral)


def yule_simon_reference(rho):
    """g = 1/rho^2 - psi1(rho + 1) + E[psi1(k + rho + 1)], by mpmath's Euler-Maclaurin nsum
    (the terms fall like k^-(rho + 2))."""
    rho = mpmath.mpf(rho)
    expectation = mpmath.nsum(
        lambda k: rho * mpmath.beta(k, rho + 1) * mpmath.psi(1, k + rho + 1),
        [1, mpmath.inf], method="euler-maclaurin")
    return 1 / rho**2 - mpmath.psi(1, rho + 1) + expectation


def relative_error(value, reference):
    return float(abs((mpmath.mpf(float(value)) - reference) / reference))


# ------------------------------------------------------------------ the generated modules


@pytest.mark.parametrize("r, p", [(2.7, 0.3), (1e-3, 0.5), (1.1734900619086992, 1e-6),
                                  (1e6, 0.8633328067821767), (30.0, 0.999)])
def test_negative_binomial_shape_entry_matches_the_hessian_form(modules, r, p):
    """Mass near 0, spread over 10^7 terms (p = 1e-6), or at k ~ 1.6e5 within 400 terms
    (r = 1e6, where log f is a difference of log-Gammas near 1.3e7)."""
    with mpmath.workdps(30):
        reference = negative_binomial_reference(r, p)
        value = modules["nb_shape"].fisher_information([r], p=p)[0, 0]
        assert relative_error(value, reference) <= 1e-10


@pytest.mark.parametrize("rho", [0.43, 2.7, 1e3, 1e6])
def test_yule_simon_entry_matches_the_hessian_form(modules, rho):
    """rho = 0.43: the score products fall like k^-1.43 log^2 k, summed to k = 1e300."""
    with mpmath.workdps(30):
        reference = yule_simon_reference(rho)
        value = modules["yule_simon"].fisher_information([rho])[0, 0]
        assert relative_error(value, reference) <= 1e-10


def test_a_batch_gives_each_point_its_own_value(modules):
    module = modules["yule_simon"]
    points = np.array([[0.7], [2.7], [40.0]])
    batch = module.fisher_information(points)[:, 0, 0]
    single = [module.fisher_information(point)[0, 0] for point in points]
    assert batch.shape == (3,) and list(batch) == single


def test_the_docstring_says_the_entry_is_summed(modules):
    doc = modules["yule_simon"].fisher_information.__doc__
    assert "computed numerically by summation of its series" in doc
    assert "quadrature" not in doc


# ------------------------------------------------------------------ the log-Gamma helpers

ARGUMENTS = [1e-300, 1e-8, 0.5, 3.0, 9.99, 10.0, 1e6, 1e15, 1e300]
SHIFTS = [0.0, 1e-12, 0.3, 1.0, 7.5, 1e6, 1e200]


def _digits_for(*values):
    """Working digits for a difference of log-Gammas at these arguments (log Gamma(1e300) has
    303 digits before the point)."""
    return 40 + int(max(mpmath.log10(abs(mpmath.mpf(v)) + 1) for v in values))


def test_loggamma_difference_keeps_its_digits(modules):
    helper = modules["nb_shape"]._loggamma_difference
    for x, y, sign in itertools.product(ARGUMENTS, SHIFTS, (1, -1)):
        if x + sign * y <= 0:
            continue
        with mpmath.workdps(_digits_for(x, y)):
            reference = mpmath.loggamma(mpmath.mpf(x) + sign * mpmath.mpf(y)) \
                - mpmath.loggamma(mpmath.mpf(x))
            value = helper(x, sign * y)
            error = abs(value - reference) if reference == 0 else \
                relative_error(value, reference)
            assert error <= 1e-14, (x, sign * y, value, reference)


def test_loggamma_second_difference_keeps_its_digits(modules):
    """[log G(v + c) - log G(v)] - [log G(v0 + c) - log G(v0)], near v0 and 1e300 away."""
    helper = modules["nb_shape"]._loggamma_second_difference
    for v, v0, c in itertools.product([1.0, 3.5, 1e3, 1e6, 1e12, 1e300], [1.0, 2.0, 1e6],
                                      [-0.5, 0.43, 1.43, 1e6 - 1, -(1e6 - 1)]):
        if v + c <= 0 or v0 + c <= 0 or v == v0:
            continue
        with mpmath.workdps(_digits_for(v, v0, c)):
            V, V0, C = map(mpmath.mpf, (v, v0, c))
            reference = (mpmath.loggamma(V + C) - mpmath.loggamma(V)) \
                - (mpmath.loggamma(V0 + C) - mpmath.loggamma(V0))
            assert relative_error(helper(v, v0, c), reference) <= 1e-14, (v, v0, c)


def test_digamma_difference_keeps_its_digits(modules):
    """psi(x) - psi(x + y) by _polygamma_difference(0, ...): at x = 1e6, y = 1 the two
    digammas agree in 6 of their digits (the Yule-Simon score at rho = 1e6)."""
    helper = modules["yule_simon"]._polygamma_difference
    for x, y in itertools.product(ARGUMENTS, SHIFTS[1:]):
        with mpmath.workdps(_digits_for(x, y)):
            reference = mpmath.psi(0, mpmath.mpf(x)) - mpmath.psi(0, mpmath.mpf(x) + mpmath.mpf(y))
            if abs(reference) < 1e-290:
                continue  # below the normal floats: no relative accuracy to ask for
            assert relative_error(helper(0, x, y), reference) <= 1e-14, (x, y)
