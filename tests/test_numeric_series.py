"""Discrete families with a Fisher entry the module cannot print: it sums the entry's series.

The negative binomial with its shape r as the coordinate (g_rr has no closed form: the sum of
trigammas psi1(r) - E[psi1(k + r)]), the Yule-Simon family (a power-law tail k^-(rho + 1)) and
the zeta family (closed with derivatives of zeta, which NumPy and SciPy lack) are written here
as derivation files and generated through the CLI, as a user would. Each module's value is
compared with a reference computed here and nowhere else, at 30 digits: the Hessian form
-E[d^2 log f / d theta^2] summed with mpmath (the module sums the score products E[s^2], a
different series), or for the zeta family its closed form with mpmath's derivatives of zeta.
The module promises 1e-10 relative.

The module's log-Gamma helpers are checked against mpmath at arguments from 1e-300 to 1e300.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import mpmath
import numpy as np
import pytest
import sympy
from conftest import REPOSITORY, generate_through_cli

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

#: The zeta family: its Fisher entry closes (derivatives of zeta), but NumPy and SciPy have no
#: derivative of zeta, so the module sums the entry's series instead.
ZIPF = """name = "zipf"
variable = "k"
support = "integers >= 1"
density = "k**(-s)/zeta(s)"

[coordinates]
s = "> 1"
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
    families = {"nb_shape": NEGATIVE_BINOMIAL_SHAPE, "yule_simon": YULE_SIMON, "zipf": ZIPF}
    return generate_through_cli(tmp_path_factory.mktemp("series"), families, "series")[1]


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


@pytest.mark.parametrize("s", [1.1, 1.5, 2.0, 30.0])
def test_zipf_entry_matches_the_derivatives_of_zeta(modules, s):
    """g = zeta''/zeta - (zeta'/zeta)**2, with mpmath's derivatives of zeta; at s = 1.1 the
    score products fall like k**-1.1 log(k)**2 and the series reaches k = 1e300."""
    with mpmath.workdps(30):
        S = mpmath.mpf(s)
        reference = mpmath.zeta(S, 1, 2) / mpmath.zeta(S) - (mpmath.zeta(S, 1, 1)
                                                             / mpmath.zeta(S)) ** 2
        value = modules["zipf"].fisher_information([s])[0, 0]
        assert relative_error(value, reference) <= 1e-10


def test_a_series_too_slow_for_floats_is_refused(modules):
    """At s = 1.001 the terms beyond k = 1e300 still carry most of the sum: the module raises
    instead of returning the sum cut short, and its docstring says so."""
    module = modules["zipf"]
    with pytest.raises(ArithmeticError, match="too slowly"):
        module.fisher_information([1.001])
    assert "Raises ArithmeticError" in module.fisher_information.__doc__
    assert "<class" not in module.__doc__  # the distance's reason in words, not a tool message


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


NEGATIVE_BINOMIAL = """name = "negative_binomial_rp"
variable = "k"
support = "integers >= 0"
density = "gamma(k + r)/(gamma(r)*factorial(k))*p**r*(1 - p)**k"

[coordinates]
r = "positive"
p = "(0, 1)"
"""


def test_entries_the_zero_mean_scores_fix_are_closed_by_the_hessian_form(tmp_path):
    """With r and p both coordinates, g_rp and g_pp close without a sum (the literature's
    -1/p and r/(p^2 (1 - p))): the Hessian of log f is linear in k, whose mean E[s_p] = 0
    gives; g_rr holds polygamma(1, k + r), which no score fixes, and stays numeric."""
    path = tmp_path / "negative_binomial_rp.toml"
    path.write_text(NEGATIVE_BINOMIAL)
    run = subprocess.run([sys.executable, "-m", "raosym", "derive", "--json", "--quiet",
                          str(path)], capture_output=True, text=True, cwd=REPOSITORY,
                         timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    r, p = sympy.symbols("r p", positive=True)
    assert report["coordinates"] == ["r", "p"]
    assert report["fisher_strategies"] == [["numeric", "Hessian form"],
                                           ["Hessian form", "Hessian form"]]
    assert report["fisher"][0][0] is None
    literature = {(1, 0): -1 / p, (1, 1): r / (p**2 * (1 - p))}
    for (i, j), expected in literature.items():
        derived = sympy.sympify(report["fisher"][i][j], locals={"r": r, "p": p})
        assert sympy.simplify(derived - expected) == 0, (i, j, derived)
    assert all(check["digits"] >= 30 for check in report["verification"]
               if check["quantity"] in ("g_p_r", "g_p_p"))


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
