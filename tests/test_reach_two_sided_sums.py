"""Reach, sixth round: probability mass functions on all the integers, or on those below a bound.

The discrete Laplace distribution ``(1 - q)/(1 + q) q^|k|`` on all the integers (the noise of
the geometric mechanism) once ended in a traceback at load time (``int(-inf)`` while probing
the density's sign), and a geometric count mirrored onto the integers ``k <= 0`` likewise:
every sum started from its lower bound. Both now derive, verify and emit.

References are computed here with mpmath alone: the Fisher information as the two-sided
series ``Σ_k s(k)^2 f(k)`` by ``mpmath.nsum`` (which sums over (-oo, oo) itself), and the
discrete Laplace's closed form ``2 (1 + q^2)/(q (1 - q^2)^2)`` (its statistic |k| has variance
``2q(1 + q^2)/(1 - q^2)^2`` in the natural coordinate log q), the distance as the arc length
of the one-coordinate metric by ``mpmath.quad``.
"""

from __future__ import annotations

import mpmath
import pytest
from conftest import generate_through_cli

pytestmark = pytest.mark.xdist_group("test_reach_two_sided_sums")

DISCRETE_LAPLACE = """\
name = "discrete_laplace"
variable = "k"
support = "integers"
density = "(1 - q)/(1 + q)*q**Abs(k)"

[coordinates]
q = "(0, 1)"
"""

MIRRORED_GEOMETRIC = """\
name = "mirrored_geometric"
variable = "k"
support = "integers <= 0"
density = "p*(1 - p)**(-k)"

[coordinates]
p = "(0, 1)"
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_through_cli(tmp_path_factory.mktemp("two_sided"),
                                {"discrete_laplace": DISCRETE_LAPLACE,
                                 "mirrored_geometric": MIRRORED_GEOMETRIC}, "two_sided")


def discrete_laplace_fisher_by_series(q):
    """Σ_k s(k)^2 f(k) over all the integers, s = d log f / dq, at 40 digits."""
    with mpmath.workdps(40):
        q = mpmath.mpf(float(q))

        def term(k):
            score = -1 / (1 - q) - 1 / (1 + q) + abs(k) / q
            return score**2 * (1 - q) / (1 + q) * q ** abs(k)

        return mpmath.nsum(term, [-mpmath.inf, mpmath.inf])


@pytest.mark.parametrize("q", ["0.3", "0.999", "1e-6"])
def test_discrete_laplace_fisher_is_the_two_sided_series(generated, q):
    summary, modules = generated
    assert summary["discrete_laplace"]["status"] == "ok"
    with mpmath.workdps(40):
        value = mpmath.mpf(float(q))  # the float input itself, exactly
        closed = 2 * (1 + value**2) / (value * (1 - value**2) ** 2)
    if q != "0.999":  # nsum's extrapolation is itself unreliable at ratio 0.999
        assert abs(discrete_laplace_fisher_by_series(q) - closed) < mpmath.mpf(10) ** -25 * closed
    got = modules["discrete_laplace"].fisher_information([float(q)])[0, 0]
    assert abs(got - float(closed)) <= 4e-16 * float(closed)


def test_discrete_laplace_distance_is_the_arc_length(generated):
    _, modules = generated
    with mpmath.workdps(30):
        expected = mpmath.quad(lambda q: mpmath.sqrt(2 * (1 + q**2) / (q * (1 - q**2) ** 2)),
                               [mpmath.mpf("0.3"), mpmath.mpf("0.9")])
    got = modules["discrete_laplace"].rao_distance([0.3], [0.9])
    assert abs(got - float(expected)) <= 1e-12 * float(expected)


@pytest.mark.parametrize("p", ["0.5", "0.001", "0.97"])
def test_a_count_below_zero_has_the_geometric_information(generated, p):
    """k <= 0 with -k geometric: the Fisher information 1/(p^2 (1 - p)), summed here by
    nsum over k <= 0 as well."""
    summary, modules = generated
    assert summary["mirrored_geometric"]["status"] == "ok"
    with mpmath.workdps(40):
        value = mpmath.mpf(float(p))  # the float input itself, exactly
        series = mpmath.nsum(lambda k: (1 / value + k / (1 - value)) ** 2 * value
                             * (1 - value) ** (-k), [-mpmath.inf, 0])
        closed = 1 / (value**2 * (1 - value))
        assert abs(series - closed) < mpmath.mpf(10) ** -25 * closed
    got = modules["mirrored_geometric"].fisher_information([float(p)])[0, 0]
    assert abs(got - float(closed)) <= 4e-16 * float(closed)
