"""The generated ``rao_distance`` functions against independent 50-digit evaluations.

The references are written here, from the literature, not from raosym's derivation: the Fisher
metrics of the catalog's families (Amari 1985; Mitchell 1988 for Student t; Arwini and Dodson
2008) and the distances they imply (the Poincaré half-plane, Hellinger-type arcs), evaluated
with mpmath at 50 digits from the *exact* float inputs the generated code receives. The
generalized Gaussian's constants come from an mpmath quadrature of its score products, written
here too. The grid is adversarial (issue 4): ordinary pairs; pairs differing by 1e-4, 1e-9 and
1e-12 (relative) in each coordinate; far pairs (scale ratios 1e-6 and 1e6, mean differences
1e8); translated pairs (means near 1e4 differing by 1). Closed forms must agree to 1e-15
relative; the numeric path (gamma, beta) to 1e-10 with raosym.verify.geodesic's mpmath
geodesic, itself certified independently of the generated solver.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import mpmath
import numpy as np
import pytest
from conftest import verified
from hypothesis import given, settings
from hypothesis import strategies as st

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_distance_accuracy")

DIGITS = 50
CLOSED_TOLERANCE = 1e-15
NUMERIC_TOLERANCE = 1e-10
RELATIVE_STEPS = (1e-4, 1e-9, 1e-12)


def load_module(tree: Path, name: str):
    path = tree / "python" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"distance_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- references


def mp(value) -> mpmath.mpf:
    """A float input as the exact binary number it is."""
    return mpmath.mpf(float(value))


def half_plane(a, c):
    """d for ds² = (a dμ² + c ds²)/s² (b = 0 for these symmetric families): the Poincaré
    half-plane (dx² + dy²)/y² with x = μ·sqrt(a/c), scaled by sqrt(c)."""
    def distance(p, q, constants):
        a_, c_ = a(constants), c(constants)
        (mu1, s1), (mu2, s2) = [[mp(v) for v in point] for point in (p, q)]
        z = ((mu1 - mu2) ** 2 * a_ / c_ + (s1 - s2) ** 2) / (2 * s1 * s2)
        return mpmath.sqrt(c_) * mpmath.acosh(1 + z)
    return distance


def constant(function):
    return lambda constants: mpmath.mpf(function(constants))


def generalized_gaussian_constants(N):
    """(a, c) of the generalized Gaussian at μ = 0, σ = 1 by quadrature of the score products:
    f = N/(2Γ(1/N)) exp(-|x|^N), ∂μ log f = N|x|^(N-1) sign x, ∂σ log f = N|x|^N - 1."""
    N = mpmath.mpf(N)
    norm = N / (2 * mpmath.gamma(1 / N))

    def expectation(h):
        # Even integrands: twice the half line.
        return 2 * mpmath.quad(lambda x: h(x) * norm * mpmath.exp(-x**N), [0, 1, mpmath.inf])

    a = expectation(lambda x: (N * x ** (N - 1)) ** 2)
    c = expectation(lambda x: (N * x**N - 1) ** 2)
    return a, c


@functools.cache
def _gg(N):
    with mpmath.workdps(DIGITS + 10):
        return generalized_gaussian_constants(N)


def one_coordinate(function):
    def distance(p, q, constants):
        return function(mp(p[0]), mp(q[0]), constants)
    return distance


def _bernoulli(p1, p2, constants):
    # Fisher 1/(p(1-p)): d = 2|asin √p1 - asin √p2| (Hellinger arc); binomial: times √n.
    n = constants.get("n", 1)
    return 2 * mpmath.sqrt(n) * abs(mpmath.asin(mpmath.sqrt(p1)) - mpmath.asin(mpmath.sqrt(p2)))


def _geometric(p1, p2, constants):
    # Fisher 1/(p²(1-p)): ∫ dp/(p√(1-p)) = -2 atanh √(1-p).
    return 2 * abs(mpmath.atanh(mpmath.sqrt(1 - p1)) - mpmath.atanh(mpmath.sqrt(1 - p2)))


#: family -> (reference distance, constants used on the grid, coordinate kinds)
def sheared_half_plane(a, b, c):
    """d for ds² = (a dμ² + 2b dμ ds + c ds²)/s² with constant a, b, c: μ' = μ + (b/a)s
    removes the cross term, leaving the half-plane of :func:`half_plane` with c - b²/a (the
    Gumbel family, MATH.md section 6)."""
    def distance(p, q, constants):
        (mu1, s1), (mu2, s2) = [[mp(v) for v in point] for point in (p, q)]
        sheared = (mu1 - mu2) + b / a * (s1 - s2)
        c_prime = c - b**2 / a
        z = (sheared**2 * a / c_prime + (s1 - s2) ** 2) / (2 * s1 * s2)
        return mpmath.sqrt(c_prime) * mpmath.acosh(1 + z)
    return distance


def _gumbel():
    euler = mpmath.euler
    return sheared_half_plane(mpmath.mpf(1), euler - 1, (1 - euler) ** 2 + mpmath.pi**2 / 6)


def _mahalanobis(p, q, constants):
    """√(Δᵀ Σ⁻¹ Δ) of the bivariate normal with fixed covariance (s1, s2, rho)."""
    s1, s2, rho = (mp(constants[name]) for name in ("s1", "s2", "rho"))
    covariance = mpmath.matrix([[s1**2, rho * s1 * s2], [rho * s1 * s2, s2**2]])
    delta = mpmath.matrix([mp(a) - mp(b) for a, b in zip(p, q)])
    return mpmath.sqrt((delta.T * covariance**-1 * delta)[0])


def _isotropic(p, q, constants):
    return mpmath.sqrt(mpmath.fsum((mp(a) - mp(b)) ** 2 for a, b in zip(p, q))) / mp(
        constants["sigma"])


def _isotropic_laplace(p, q, constants):
    """The product of Laplace location factors: metric I/b**2, Euclidean distance over b."""
    return mpmath.sqrt(mpmath.fsum((mp(a) - mp(c)) ** 2 for a, c in zip(p, q))) / mp(
        constants["b"])


def _round_gaussian(p, q, constants):
    """The isotropic normal N(μ, s² I) of the plane (Costa, Santos and Strapasson 2015):
    metric (|dμ|² + 4 ds²)/s², a hyperbolic half-space scaled by 4, so
    d = 2 acosh(1 + (|Δμ|² + 4 Δs²)/(8 s₁ s₂)) = 4 asinh(√(|Δμ|²/4 + Δs²)/(2√(s₁ s₂)))."""
    (a1, a2, s), (b1, b2, t) = ([mp(v) for v in point] for point in (p, q))
    squared = ((a1 - b1) ** 2 + (a2 - b2) ** 2) / 4 + (s - t) ** 2
    return 4 * mpmath.asinh(mpmath.sqrt(squared) / (2 * mpmath.sqrt(s * t)))


def _round_sphere(p, q, constants):
    """2 arccos Σ √(p_i q_i) over the three outcomes (p3 = 1 - p1 - p2), through the
    well-conditioned 4 asin(‖√p - √q‖/2); for the multinomial of n trials the sphere has
    radius 2√n (Kass and Vos 1997), so the distance is √n times the categorical's."""
    first, second = ([mp(v) for v in point] for point in (p, q))
    first.append(1 - first[0] - first[1])
    second.append(1 - second[0] - second[1])
    chord = mpmath.sqrt(mpmath.fsum((mpmath.sqrt(a) - mpmath.sqrt(b)) ** 2
                                    for a, b in zip(first, second)))
    return 4 * mpmath.sqrt(constants.get("n", 1)) * mpmath.asin(chord / 2)


REFERENCES = {
    "gaussian": (half_plane(constant(lambda k: 1), constant(lambda k: 2)), {}),
    "lognormal": (half_plane(constant(lambda k: 1), constant(lambda k: 2)), {}),
    "gumbel": (lambda p, q, k: _gumbel()(p, q, k), {}),
    "laplace": (half_plane(constant(lambda k: 1), constant(lambda k: 1)), {}),
    "cauchy": (half_plane(constant(lambda k: mpmath.mpf(1) / 2),
                          constant(lambda k: mpmath.mpf(1) / 2)), {}),
    "logistic": (half_plane(constant(lambda k: mpmath.mpf(1) / 3),
                            lambda k: (mpmath.pi**2 + 3) / 9), {}),
    "student_t": (half_plane(lambda k: (mp(k["nu"]) + 1) / (mp(k["nu"]) + 3),
                             lambda k: 2 * mp(k["nu"]) / (mp(k["nu"]) + 3)), {"nu": 3.5}),
    "generalized_gaussian": (half_plane(lambda k: _gg(k["N"])[0], lambda k: _gg(k["N"])[1]),
                             {"N": 1.5}),
    "gaussian_location": (one_coordinate(lambda m1, m2, k: abs(m1 - m2) / mp(k["sigma"])),
                          {"sigma": 0.7}),
    "laplace_location": (one_coordinate(lambda m1, m2, k: abs(m1 - m2) / mp(k["b"])),
                         {"b": 2.5}),
    "exponential": (one_coordinate(lambda l1, l2, k: abs(mpmath.log(l2 / l1))), {}),
    "poisson": (one_coordinate(lambda l1, l2, k: 2 * abs(mpmath.sqrt(l1) - mpmath.sqrt(l2))), {}),
    "bernoulli": (one_coordinate(_bernoulli), {}),
    "binomial": (one_coordinate(_bernoulli), {"n": 7}),
    "geometric": (one_coordinate(_geometric), {}),
    "normal2_fixed": (_mahalanobis, {"s1": 0.8, "s2": 2.5, "rho": 0.6}),
    "gaussian_vector3": (_isotropic, {"sigma": 0.7}),
    # The same isotropic normal, as a vector mechanism (tests/test_vector_mechanisms.py).
    "gaussian_mechanism3": (_isotropic, {"sigma": 0.7}),
    "laplace_mechanism2": (_isotropic_laplace, {"b": 2.5}),
    "categorical3": (_round_sphere, {}),
    "multinomial3": (_round_sphere, {"n": 7}),
    "normal2_isotropic": (_round_gaussian, {}),
}
CLOSED_FAMILIES = sorted(REFERENCES)


# ----------------------------------------------------------------------------- the grid


def _location_scale_grid():
    base = [(1.3, 0.8), (-2.7, 3.1), (1e4, 1.0)]
    ordinary = [((0.3, 1.7), (-1.2, 0.4)), ((2.0, 3.0), (2.5, 0.9)), ((-5.0, 0.2), (7.0, 40.0))]
    near = [(p, _moved(p, i, step)) for p in base for i in range(2) for step in RELATIVE_STEPS]
    far = [((0.5, 1.0), (0.5, 1e-6)), ((0.5, 1.0), (0.5, 1e6)), ((0.5, 1.0), (-0.7, 1e-6)),
           ((-5e7, 1.0), (5e7, 1.0)), ((0.0, 2.0), (1e8, 3.0)), ((3.0, 1e-3), (1e8 + 3, 1e3))]
    translated = [((1e4, 1.0), (1e4 + 1, 1.0)), ((1e4, 0.5), (1e4 - 1, 0.7)),
                  ((-1e4, 2.0), (-1e4 + 1, 2.0 * (1 + 1e-9)))]
    return ordinary + near + far + translated


def _positive_grid():
    base = [(0.3,), (2.5,), (1e4,)]
    ordinary = [((0.3,), (2.5,)), ((7.0,), (1.1,))]
    near = [(p, _moved(p, 0, step)) for p in base for step in RELATIVE_STEPS]
    far = [((1.0,), (1e-6,)), ((1.0,), (1e6,)), ((1e-3,), (1e8,))]
    translated = [((1e4,), (1e4 + 1,)), ((1e8,), (1e8 + 1,))]
    return ordinary + near + far + translated


def _real_grid():
    base = [(1.3,), (-2.7,), (1e4,)]
    ordinary = [((0.3,), (2.5,)), ((-7.0,), (1.1,))]
    near = [(p, _moved(p, 0, step)) for p in base for step in RELATIVE_STEPS]
    far = [((-5e7,), (5e7,)), ((0.0,), (1e8,))]
    translated = [((1e4,), (1e4 + 1,)), ((-1e4,), (-1e4 - 1,))]
    return ordinary + near + far + translated


def _probability_grid():
    base = [(0.3,), (0.97,), (1e-6,), (1 - 1e-6,)]
    ordinary = [((0.2,), (0.7,)), ((0.01,), (0.99,)), ((0.5,), (0.5001,))]
    near = [(p, _moved(p, 0, -step)) for p in base for step in RELATIVE_STEPS]
    # Near 1, move the complement (the distance lives there; a relative 1e-12 of 1e-6 is
    # below the spacing of floats near 1).
    near += [((1 - 1e-6,), (1 - 1e-6 * (1 + step),)) for step in RELATIVE_STEPS[:2]]
    far = [((1e-6,), (0.5,)), ((1e-6,), (1 - 1e-6,)), ((1e-12,), (0.999,))]
    return ordinary + near + far


def _mean_grid(dimension):
    def grid():
        base = [tuple(1.3 * (i + 1) * (-1) ** i for i in range(dimension)),
                tuple(1e4 + i for i in range(dimension))]
        ordinary = [(tuple(0.3 * i for i in range(dimension)),
                     tuple(-1.2 + i for i in range(dimension)))]
        near = [(p, _moved(p, i, step)) for p in base for i in range(dimension)
                for step in RELATIVE_STEPS]
        far = [(tuple(-5e7 for _ in range(dimension)), tuple(5e7 * (i + 1)
                                                          for i in range(dimension)))]
        return ordinary + near + far
    return grid


def _half_space_grid():
    """Two locations and one scale: the location-scale grid's kinds of pairs."""
    base = [(1.3, -0.4, 0.8), (-2.7, 5.0, 3.1), (1e4, -1e4, 1.0)]
    ordinary = [((0.3, 0.1, 1.7), (-1.2, 2.0, 0.4)), ((-5.0, 1.0, 0.2), (7.0, -3.0, 40.0))]
    near = [(p, _moved(p, i, step)) for p in base for i in range(3) for step in RELATIVE_STEPS]
    far = [((0.5, 0.5, 1.0), (0.5, 0.5, 1e-6)), ((0.5, 0.5, 1.0), (0.5, 0.5, 1e6)),
           ((-5e7, 5e7, 1.0), (5e7, -5e7, 1.0)), ((3.0, 0.0, 1e-3), (1e8 + 3, 1e8, 1e3))]
    translated = [((1e4, 1e4, 1.0), (1e4 + 1, 1e4, 1.0)),
                  ((-1e4, 3.0, 2.0), (-1e4 + 1, 3.0, 2.0 * (1 + 1e-9)))]
    return ordinary + near + far + translated


def _simplex_grid():
    base = [(0.2, 0.3), (1e-6, 0.5), (0.999, 5e-4), (1e-3, (1 - 1e-3) * (1 - 1e-9))]
    ordinary = [((0.2, 0.3), (0.5, 0.1)), ((0.01, 0.01), (0.49, 0.5)),
                ((1e-6, 1e-6), (0.5, 0.5 - 1e-6))]
    near = [(p, _moved(p, i, -step)) for p in base for i in range(2) for step in RELATIVE_STEPS]
    return ordinary + near


def _moved(point, index, step):
    moved = list(point)
    moved[index] = point[index] * (1 + step)
    return tuple(moved)


GRIDS = {
    "gaussian": _location_scale_grid, "laplace": _location_scale_grid,
    "lognormal": _location_scale_grid, "gumbel": _location_scale_grid,
    "cauchy": _location_scale_grid, "logistic": _location_scale_grid,
    "student_t": _location_scale_grid, "generalized_gaussian": _location_scale_grid,
    "gaussian_location": _real_grid, "laplace_location": _real_grid,
    "exponential": _positive_grid, "poisson": _positive_grid,
    "bernoulli": _probability_grid, "binomial": _probability_grid,
    "geometric": _probability_grid,
    "normal2_fixed": _mean_grid(2), "gaussian_vector3": _mean_grid(3),
    "gaussian_mechanism3": _mean_grid(3), "laplace_mechanism2": _mean_grid(2),
    "categorical3": _simplex_grid, "multinomial3": _simplex_grid,
    "normal2_isotropic": _half_space_grid,
}


def relative_errors(module, name):
    """(error, pair) for every pair of the family's grid, in both orders."""
    reference, constants = REFERENCES[name]
    results = []
    for p, q in GRIDS[name]():
        for first, second in ((p, q), (q, p)):
            got = float(module.rao_distance(first, second, **constants))
            with mpmath.workdps(DIGITS):
                exact = reference(first, second, constants)
                error = abs(mpmath.mpf(got) - exact) / exact
            results.append((float(error), (first, second)))
    return results


# ----------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def modules(generated_tree):
    return {name: load_module(generated_tree, name) for name in (*CLOSED_FAMILIES, "gamma",
                                                                    "beta")}


def test_every_closed_form_family_has_a_reference(catalog):
    closed = {name for name, outcome in catalog.items()
              if outcome.verified is not None and outcome.verified.derivation.distance
              and outcome.verified.derivation.distance.closed}
    assert closed == set(REFERENCES)


def test_generalized_gaussian_reference_constants_at_N_2_are_the_gaussians():
    # σ-parametrization: N = 2 is a Gaussian of standard deviation σ/√2, whose metric is
    # (2 dμ² + 2 dσ²)/σ² in (μ, σ): an independent check of the quadrature.
    with mpmath.workdps(30):
        a, c = generalized_gaussian_constants(2)
    assert abs(a - 2) < 1e-25 and abs(c - 2) < 1e-25


@pytest.mark.parametrize("name", CLOSED_FAMILIES)
def test_rao_distance_matches_50_digits_on_the_adversarial_grid(catalog, modules, name):
    verified(catalog, name)
    errors = relative_errors(modules[name], name)
    worst, pair = max(errors)
    assert worst <= CLOSED_TOLERANCE, f"{name}: relative error {worst:.3g} at {pair}"


@pytest.mark.parametrize("name", CLOSED_FAMILIES)
def test_rao_distance_is_symmetric_and_zero_on_the_diagonal(modules, name):
    module = modules[name]
    _, constants = REFERENCES[name]
    pairs = GRIDS[name]()
    first = np.array([p for p, _ in pairs])
    second = np.array([q for _, q in pairs])
    forward = module.rao_distance(first, second, **constants)
    backward = module.rao_distance(second, first, **constants)
    assert np.all(np.abs(forward - backward) <= 2e-16 * forward)
    assert np.all(module.rao_distance(first, first, **constants) == 0.0)
    assert np.all(module.rao_distance(second, second, **constants) == 0.0)
    assert np.all(forward > 0)


def _random_point(name, draw):
    grid = GRIDS[name]
    if grid is _location_scale_grid:
        return (draw(st.floats(-50, 50)), draw(st.floats(1e-3, 1e3)))
    if grid is _real_grid:
        return (draw(st.floats(-1e6, 1e6)),)
    if grid is _positive_grid:
        return (draw(st.floats(1e-4, 1e6)),)
    if grid is _half_space_grid:
        return (draw(st.floats(-50, 50)), draw(st.floats(-50, 50)), draw(st.floats(1e-3, 1e3)))
    if grid is _simplex_grid:
        first = draw(st.floats(1e-9, 1 - 1e-6))
        return (first, (1 - first) * draw(st.floats(1e-9, 1 - 1e-9)))
    if name in ("normal2_fixed", "gaussian_vector3", "gaussian_mechanism3",
                "laplace_mechanism2"):
        return tuple(draw(st.floats(-1e6, 1e6)) for _ in range(len(GRIDS[name]()[0][0])))
    return (draw(st.floats(1e-9, 1 - 1e-9)),)


@pytest.mark.parametrize("name", CLOSED_FAMILIES)
def test_triangle_inequality_on_random_triples(modules, name):
    module = modules[name]
    _, constants = REFERENCES[name]

    @settings(max_examples=60, deadline=None, database=None)
    @given(st.data())
    def check(data):
        p, q, r = (_random_point(name, data.draw) for _ in range(3))
        pq = float(module.rao_distance(p, q, **constants))
        qr = float(module.rao_distance(q, r, **constants))
        pr = float(module.rao_distance(p, r, **constants))
        # Equality holds for a q between p and r on a geodesic (every q of a one-coordinate
        # family): allow the rounding of three distances accurate to 1e-15 each.
        assert pr <= (pq + qr) * (1 + 3 * CLOSED_TOLERANCE)

    check()


@pytest.mark.parametrize("name", CLOSED_FAMILIES)
def test_rao_distance_broadcasts(modules, name):
    module = modules[name]
    _, constants = REFERENCES[name]
    pairs = GRIDS[name]()[:6]
    first = np.array([p for p, _ in pairs]).reshape(2, 3, -1)
    second = np.array([q for _, q in pairs]).reshape(2, 3, -1)
    table = module.rao_distance(first, second, **constants)
    assert table.shape == (2, 3)
    # A single point against a (2, 3) array, and a (3,) row against a (2, 1) column.
    against_one = module.rao_distance(first[0, 0], second, **constants)
    assert against_one.shape == (2, 3)
    crossed = module.rao_distance(first[0][None, :, :], second[:, :1, :], **constants)
    assert crossed.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            single = module.rao_distance(tuple(first[i, j]), tuple(second[i, j]), **constants)
            assert single.shape == ()
            assert table[i, j] == single
            assert against_one[i, j] == module.rao_distance(first[0, 0], second[i, j],
                                                              **constants)
            assert crossed[i, j] == module.rao_distance(first[0, j], second[i, 0], **constants)
    with pytest.raises(ValueError, match="theta1 and theta2 must broadcast together"):
        module.rao_distance(first[:, :2], second, **constants)


@pytest.mark.parametrize("name", ["gaussian", "student_t", "geometric"])
def test_large_inputs_computed_in_blocks_equal_small_ones(modules, name):
    # Above the module's block size (16384 pairs) the pairs are computed block by block.
    module = modules[name]
    _, constants = REFERENCES[name]
    pairs = GRIDS[name]()
    rng = np.random.default_rng(1)
    first = np.array([pairs[i][0] for i in rng.integers(len(pairs), size=3 * 20000)])
    first = first.reshape(3, 20000, -1)
    second = np.array(pairs[0][1])
    whole = module.rao_distance(first, second, **constants)
    assert whole.shape == (3, 20000)
    for row in range(3):
        for start in range(0, 20000, 5000):
            part = module.rao_distance(first[row, start:start + 5000], second, **constants)
            assert np.array_equal(whole[row, start:start + 5000], part)
    bad = first.copy()
    bad[2, 19999, -1] = np.nan
    with pytest.raises(ValueError, match="of theta1 must lie in"):
        module.rao_distance(bad, second, **constants)


def test_rao_distance_errors_name_the_argument(modules):
    module = modules["gaussian"]
    with pytest.raises(ValueError, match="coordinate 'sigma' of theta2 must lie in"):
        module.rao_distance((0.0, 1.0), (0.0, -1.0))
    with pytest.raises(ValueError, match="coordinate 'mu' of theta1 must lie in"):
        module.rao_distance((np.nan, 1.0), (0.0, 1.0))
    with pytest.raises(ValueError, match=r"theta2 must have shape \(\.\.\., 2\)"):
        module.rao_distance((0.0, 1.0), (0.0, 1.0, 2.0))


# ----------------------------------------------------------------------------- numeric path

NUMERIC_PAIRS = {
    "gamma": [((2.0, 1.5), (3.5, 0.7)), ((0.8, 2.0), (5.0, 0.3)),
              ((2.0, 1.5), (2.0 * (1 + 1e-4), 1.5)), ((4.0, 1.0), (4.0, 1.0 + 1e-9))],
    "beta": [((2.0, 3.0), (0.7, 1.5)), ((1.5, 1.5), (6.0, 2.0)),
             ((2.0, 3.0), (2.0, 3.0 * (1 + 1e-4))), ((0.9, 4.0), (0.9 * (1 + 1e-9), 4.0))],
}


def _midpoint_length(model, start, end):
    middle = [(a + b) / 2 for a, b in zip(start, end)]
    delta = [b - a for a, b in zip(start, end)]
    metric = model.metric_matrix(middle)
    n = len(delta)
    return mpmath.sqrt(sum(delta[i] * metric[i][j] * delta[j]
                           for i in range(n) for j in range(n)))


@pytest.mark.parametrize("name", sorted(NUMERIC_PAIRS))
def test_numeric_rao_distance_matches_the_mpmath_geodesic(catalog, modules, name):
    from raosym.verify import geodesic

    family = verified(catalog, name)
    assert not family.derivation.distance.closed
    model = geodesic.metric_model(family.derivation, {})
    module = modules[name]
    for p, q in NUMERIC_PAIRS[name]:
        got = float(module.rao_distance(p, q))
        with mpmath.workdps(DIGITS):
            start, end = [mp(v) for v in p], [mp(v) for v in q]
            if max(abs(a - b) / abs(a) for a, b in zip(start, end)) < 1e-6:
                # Too close for the shooting solver's convergence test at 40 digits: the
                # midpoint metric, d² = Δᵀ g(m) Δ + O(|Δ|⁴), exact here to ~1e-18 relative.
                value = _midpoint_length(model, start, end)
            else:
                # 30 working digits give ~24 correct ones: ample against the 1e-10 tolerance.
                value = geodesic.geodesic_distance(model, start, end, digits=30).distance
            error = abs(mpmath.mpf(got) - value) / value
        assert error <= NUMERIC_TOLERANCE, f"{name} {p} {q}: {float(error):.3g}"
    assert module.rao_distance((2.0, 3.0), (2.0, 3.0)) == 0.0
    assert module.rao_distance([(2.0, 3.0)] * 2, (2.5, 1.0)).shape == (2,)
