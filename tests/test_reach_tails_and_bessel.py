"""Reach, third round: four textbook families that failed as a user first wrote them.

- the log-Cauchy family, ``s/(pi x (s^2 + (log x - mu)^2))``: its mass falls like
  ``1/(x log(x)^2)`` at both ends of (0, oo), 0.35 % of it below x = 1e-40, and the density
  check refused it (exit 2, "does not integrate to 1"). Its Fisher matrix is the Cauchy
  family's, ``diag(1, 1)/(2 s^2)`` (Fisher information is invariant under the bijection
  x -> log x of the sample space);
- the Kumaraswamy family at shapes below 1 (``x^(a-1)`` at 0 and ``(1 - x^a)^(b-1)`` at 1 both
  singular): the verification's quadrature reached 24 of 30 digits and refused a true result;
- the Rice family in its noncentrality v: a score with ``I_1/I_0`` that SymPy's integrate
  searched until its budget, and an emitted density whose ``I_0`` overflows;
- a symmetric two-component normal mixture in mu: its score cancels to ``mu (x^2 - 1)`` as
  mu -> 0, and its mass sits at +-mu, far from 0 at mu = 1e6.

References are computed here: the literature's closed forms, or mpmath quadrature of scores
written by hand (not derived) at 40 digits. No code in raosym knows any of these families.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy
from conftest import derivation_text, generate_through_cli

# Its module fixture generates the families once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_reach_tails_and_bessel")

FAMILIES = {
    "logcauchy": (('support = "positive"\n'
                  'density = "s/(pi*x*(s**2 + (log(x) - mu)**2))"'),
                  {"mu": "real", "s": "positive"}, {}),
    "kumaraswamy": ('support = "(0, 1)"\ndensity = "a*b*x**(a - 1)*(1 - x**a)**(b - 1)"',
                    {"a": "positive", "b": "positive"}, {}),
    "rice": (('support = "positive"\n'
             'density = "x/s**2*exp(-(x**2 + v**2)/(2*s**2))*besseli(0, x*v/s**2)"'),
             {"v": "positive"}, {"s": "positive"}),
    "mixture": (('support = "real"\n'
                'density = "(exp(-(x - mu)**2/2) + exp(-(x + mu)**2/2))/(2*sqrt(2*pi))"'),
                {"mu": "positive"}, {}),
}


def _derivation_file(name: str) -> str:
    return derivation_text(name, *FAMILIES[name])


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The families generated through the CLI, as a user would: reports and modules."""
    return generate_through_cli(tmp_path_factory.mktemp("third_round"),
                                {name: _derivation_file(name) for name in FAMILIES}, "third")


def _relative(value, reference):
    return abs(mpmath.mpf(value) - reference) / abs(reference)


# ------------------------------------------------------------------------------- log-Cauchy


def test_log_cauchy_is_accepted_and_has_the_cauchy_metric(generated):
    summary, modules = generated
    assert summary["logcauchy"]["status"] == "ok"
    for mu, s in ((0.3, 1.7), (-40.0, 1e-3), (2.0, 1e5)):
        g = modules["logcauchy"].fisher_information([mu, s])
        expected = 1 / (2 * s * s)
        np.testing.assert_allclose(g, [[expected, 0.0], [0.0, expected]], rtol=1e-14,
                                   atol=0.0)


# ------------------------------------------------------------------------------ Kumaraswamy


def kumaraswamy_reference(a, b):
    """E[s_a^2], E[s_a s_b], E[s_b^2] in u = x^a (u has the density b (1 - u)^(b - 1)), with
    ``1 - u = t^(1/b)`` near u = 1 so that the endpoint singularity becomes smooth."""
    with mpmath.workdps(60):
        a, b = mpmath.mpf(a), mpmath.mpf(b)

        def scores(u, one_minus_u, log_u):
            s_a = (1 + log_u - (b - 1) * u * log_u / one_minus_u) / a
            s_b = 1 / b + mpmath.log(one_minus_u) if one_minus_u else 1 / b
            return s_a, s_b

        def moments(u, one_minus_u, log_u, weight):
            s_a, s_b = scores(u, one_minus_u, log_u)
            return [weight * s_a * s_a, weight * s_a * s_b, weight * s_b * s_b]

        half = mpmath.mpf(1) / 2
        low = [mpmath.quad(lambda u, k=k: moments(u, 1 - u, mpmath.log(u),
                                                  b * (1 - u) ** (b - 1))[k], [0, half])
               for k in range(3)]
        high = [mpmath.quad(lambda t, k=k: moments(1 - t ** (1 / b), t ** (1 / b),
                                                   mpmath.log1p(-t ** (1 / b)), 1)[k],
                            [0, half ** b]) for k in range(3)]
        return [lo + hi for lo, hi in zip(low, high)]


def test_kumaraswamy_with_both_ends_singular_verifies_and_agrees(generated):
    summary, modules = generated
    assert summary["kumaraswamy"]["status"] in ("ok", "partial")
    assert summary["kumaraswamy"]["digits"] >= 30
    for a, b in ((0.4013618985749425, 0.3600730227794981), (0.2, 0.15), (3.0, 0.5)):
        g = modules["kumaraswamy"].fisher_information([a, b])
        aa, ab, bb = kumaraswamy_reference(a, b)
        for got, reference in ((g[0, 0], aa), (g[0, 1], ab), (g[1, 1], bb)):
            assert _relative(got, reference) < 1e-13, (a, b, got, reference)


# ------------------------------------------------------------------------------------- Rice


def rice_reference(v, s):
    """E[s_v^2] with the score ``(x I_1(x v/s^2)/I_0(x v/s^2) - v)/s^2`` written by hand,
    split where the mass is (x near sqrt(v^2 + s^2), width s)."""
    with mpmath.workdps(40):
        v, s = mpmath.mpf(v), mpmath.mpf(s)

        def integrand(x):
            z = x * v / s**2
            log_density = (mpmath.log(x / s**2) - (x - v) ** 2 / (2 * s**2)
                           + mpmath.log(mpmath.besseli(0, z) * mpmath.exp(-z)))
            score = (x * mpmath.besseli(1, z) / mpmath.besseli(0, z) - v) / s**2
            return score**2 * mpmath.exp(log_density)

        centre = mpmath.sqrt(v**2 + s**2)
        breaks = sorted({max(centre + k * s, centre / 2) for k in (-40, -8, -1, 0, 1, 8, 40)})
        return mpmath.quad(integrand, [0, *breaks, mpmath.inf])


@pytest.mark.parametrize("v, s", [(1.3, 0.9), (40.0, 0.35), (1e6, 2.0), (1e-3, 1.0)])
def test_rice_noncentrality_entry_is_numeric_and_accurate(generated, v, s):
    summary, modules = generated
    assert summary["rice"]["status"] in ("ok", "partial")
    got = modules["rice"].fisher_information([v], s=s)[0, 0]
    assert _relative(got, rice_reference(v, s)) < 1e-10, (v, s, got)


# ---------------------------------------------------------------------------------- mixture


def mixture_reference(mu):
    """E[(x tanh(mu x) - mu)^2] under the mixture (the score written by hand), twice the
    integral over x > 0 (the integrand is even), split at mu."""
    with mpmath.workdps(40):
        mu = mpmath.mpf(mu)

        def integrand(x):
            density = (mpmath.exp(-(x - mu) ** 2 / 2) + mpmath.exp(-(x + mu) ** 2 / 2)) \
                / (2 * mpmath.sqrt(2 * mpmath.pi))
            return (x * mpmath.tanh(mu * x) - mu) ** 2 * density

        breaks = sorted({mu, *(mu + k for k in (-10, -1, 1, 10) if mu + k > 0)})
        return 2 * mpmath.quad(integrand, [0, *breaks, mpmath.inf])


@pytest.mark.parametrize("mu", [1e-6, 1e-3, 0.7, 2.5, 1e6])
def test_mixture_entry_keeps_its_digits_as_the_components_merge_and_part(generated, mu):
    _, modules = generated
    got = modules["mixture"].fisher_information([mu])[0, 0]
    assert _relative(got, mixture_reference(mu)) < 1e-10, (mu, got)


def test_mixture_score_is_written_without_its_cancellation():
    """The rewrite the module's integrand uses is an identity (SymPy at two points, 30
    digits) and keeps every digit of ``mu (x^2 - 1)`` at mu = 1e-9 in floats."""
    from raosym.emit.python.numeric import stable_score
    x, mu = sympy.symbols("x mu", real=True)
    density = sympy.exp(-(x - mu) ** 2 / 2) + sympy.exp(-(x + mu) ** 2 / 2)
    score = sympy.diff(sympy.log(density), mu)
    stable = stable_score(score)
    for point in ({x: sympy.Rational(7, 10), mu: sympy.Rational(3, 10)},
                  {x: -3, mu: sympy.Rational(5, 2)}):
        assert abs(sympy.N((stable - score).subs(point), 30)) < 1e-28
    in_floats = sympy.lambdify((x, mu), stable, modules="math")
    with mpmath.workdps(40):
        truth = 2 * mpmath.tanh(mpmath.mpf(1e-9) * 2) - mpmath.mpf(1e-9)
    assert _relative(in_floats(2.0, 1e-9), truth) < 1e-15
    assert _relative(sympy.lambdify((x, mu), score, modules="math")(2.0, 1e-9), truth) > 1e-9
