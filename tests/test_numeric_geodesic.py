"""The numeric Rao distance of the generated modules: collocation, shooting, certificate (issue 15).

Families without a closed distance (gamma, beta, Weibull) get one generic solver from
``raosym/emit/python/templates/distance.py.j2``: SciPy's ``solve_bvp`` in a chart where every
coordinate's domain is the real line, its initial velocity polished by shooting, the path
certified. Truth comes from outside the code under test:

- The solver does not depend on the family, so it is run here on the Gaussian family with its
  distance marked numeric-only: the Gaussian distance is known in closed form (the Poincaré
  half-plane, Amari 1985: d = sqrt(2) acosh(1 + ((mu1 - mu2)**2/2 + (s1 - s2)**2)/(2 s1 s2))),
  evaluated here with mpmath at 50 digits, at 40 random pairs and at far and near ones.
- Gamma and beta: every pair of a random set in [0.1, 20]**2 (and the pair of issue 15, which
  raised GeodesicError after 10 s) converges in one batched call; a sample of them agrees with
  raosym.verify.geodesic's mpmath geodesic (Gragg-Bulirsch-Stoer shooting at 20 digits, no
  SciPy).
- Three coordinates: independent normal and exponential samples, (mu, sigma, lambda), the
  Riemannian product of the Gaussian half-plane and the exponential's line, whose distances
  add in squares: d**2 = d_N**2 + log(lam1/lam2)**2. The derive stage recognizes the product
  (tests/test_distance.py); here its closed form is withheld and the solver runs in three
  coordinates.
- A pair that fails in a batch is reported with its index, and the other pairs keep their
  distances.
"""

from __future__ import annotations

import dataclasses
import importlib.util

import mpmath
import numpy as np
import pytest
from conftest import verified

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_numeric_geodesic")

TOLERANCE = 1e-11
RANDOM_PAIRS = 32


def render_module(family, tmp_path, label):
    """The generated module of a Verified family, rendered and imported from tmp_path."""
    from raosym.emit import python as backend

    name = family.derivation.spec.name
    path = tmp_path / f"{label}.py"
    path.write_text(backend.render(family)[f"python/{name}.py"])
    spec = importlib.util.spec_from_file_location(f"numeric_geodesic_{label}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def numeric_gaussian(catalog, tmp_path_factory):
    """The Gaussian module with its closed distance withheld: rao_distance is the solver's."""
    family = verified(catalog, "gaussian")
    derivation = family.derivation
    withheld = dataclasses.replace(derivation.distance, structure="numeric only", textbook=None,
                                   stable=None, reason="withheld by the test")
    family = dataclasses.replace(family, derivation=dataclasses.replace(derivation,
                                                                        distance=withheld))
    module = render_module(family, tmp_path_factory.mktemp("numeric"), "gaussian_numeric")
    assert hasattr(module, "GeodesicError") and hasattr(module, "_collocation_velocity")
    return module


def half_plane_distance(p, q):
    with mpmath.workdps(50):
        (m1, s1), (m2, s2) = [[mpmath.mpf(float(v)) for v in point] for point in (p, q)]
        return mpmath.sqrt(2) * mpmath.acosh(1 + ((m1 - m2) ** 2 / 2 + (s1 - s2) ** 2)
                                             / (2 * s1 * s2))


def relative_error(got, exact):
    with mpmath.workdps(50):
        return float(abs(mpmath.mpf(float(got)) - exact) / exact)


def test_the_solver_gives_the_closed_gaussian_distance_at_random_pairs(numeric_gaussian):
    rng = np.random.default_rng(15)
    first = np.column_stack((rng.uniform(-20, 20, 40), rng.uniform(0.1, 20, 40)))
    second = np.column_stack((rng.uniform(-20, 20, 40), rng.uniform(0.1, 20, 40)))
    got = numeric_gaussian.rao_distance(first, second)
    errors = [relative_error(d, half_plane_distance(p, q))
              for p, q, d in zip(first, second, got, strict=True)]
    assert max(errors) <= TOLERANCE, max(errors)


@pytest.mark.parametrize("p, q", [
    ((0.0, 1.0), (0.0, 1e4)),                 # along a geodesic, scale ratio 1e4
    ((0.0, 1.0), (1e3, 1.0)),                 # far apart in the mean: d = 18.6
    ((0.0, 1e-3), (5.0, 1e3)),                # scales six decades apart
    ((3.0, 2.0), (3.0, 2.0 * (1 + 1e-5))),    # near: the solver, not the midpoint metric
    ((0.0, 1.0), (1e-4, 1.0)),                # a coordinate at 0 in both points
])
def test_the_solver_gives_the_closed_gaussian_distance_far_and_near(numeric_gaussian, p, q):
    got = numeric_gaussian.rao_distance(p, q)
    assert relative_error(got, half_plane_distance(p, q)) <= TOLERANCE


@pytest.mark.parametrize("name", ["gamma", "beta"])
def test_numeric_distance_converges_on_random_pairs(catalog, tmp_path, name):
    from raosym.verify import geodesic

    family = verified(catalog, name)
    assert not family.derivation.distance.closed
    module = render_module(family, tmp_path, name)
    rng = np.random.default_rng(150)
    first = np.vstack(([3.366, 1.714], rng.uniform(0.1, 20, (RANDOM_PAIRS, 2))))
    second = np.vstack(([0.627, 1.059], rng.uniform(0.1, 20, (RANDOM_PAIRS, 2))))
    # One batched call: it raises GeodesicError if any pair fails.
    got = module.rao_distance(first, second)
    assert got.shape == (RANDOM_PAIRS + 1,) and np.all(got > 0)
    model = geodesic.metric_model(family.derivation, {})
    # The pair of issue 15 and a random one (CI time: each mpmath geodesic takes seconds;
    # tests/test_distance_accuracy.py checks others at 50 digits).
    for index in (0, 1):
        exact = geodesic.geodesic_distance(model, list(first[index]), list(second[index]),
                                           digits=20).distance
        assert relative_error(got[index], exact) <= 1e-10, (first[index], second[index])


def test_a_failing_pair_keeps_the_others(numeric_gaussian, monkeypatch):
    module = numeric_gaussian
    first = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5]])
    second = np.array([[1.0, 3.0], [4.0, 1.0], [0.0, 0.7]])
    solve = module._collocation_velocity

    def failing_at_the_second_pair(start, end, constants):
        if start[0] == 1.0:
            raise module.GeodesicError("made to fail by the test")
        return solve(start, end, constants)

    monkeypatch.setattr(module, "_collocation_velocity", failing_at_the_second_pair)
    with pytest.raises(module.GeodesicError, match=r"1 of 3 pairs failed; the first, at index "
                                                   r"\(1,\): made to fail by the test") as caught:
        module.rao_distance(first, second)
    assert caught.value.failures == ((1,),)
    distances = caught.value.distances
    assert np.isnan(distances[1])
    for index in (0, 2):
        exact = half_plane_distance(first[index], second[index])
        assert relative_error(distances[index], exact) <= TOLERANCE


NORMAL_EXPONENTIAL = """name = "normal_exponential"
title = "Independent normal and exponential samples"
variables = ["x1", "x2"]
density = "exp(-(x1 - mu)**2/(2*sigma**2))/(sqrt(2*pi)*sigma) * lam*exp(-lam*x2)"

[support]
x1 = "real"
x2 = "positive"

[coordinates]
mu = "real"
sigma = "positive"
lam = "positive"
"""


def test_three_coordinates_get_a_certified_numeric_geodesic(tmp_path):
    """The solver in three coordinates, against the product of the half-plane and the line:
    random pairs, a far one and a nearby one, to the certified 1e-10 (the module's own check
    of the end point and the constant speed passed, or it would have raised)."""
    from raosym import run

    path = tmp_path / "normal_exponential.toml"
    path.write_text(NORMAL_EXPONENTIAL)
    family = run(str(path))
    derivation = family.derivation
    withheld = dataclasses.replace(derivation.distance, structure="numeric only", textbook=None,
                                   stable=None, reason="withheld by the test")
    family = dataclasses.replace(family, derivation=dataclasses.replace(derivation,
                                                                        distance=withheld))
    module = render_module(family, tmp_path, "normal_exponential")
    assert hasattr(module, "_collocation_velocity")  # the solver, not the closed form
    rng = np.random.default_rng(3)
    first = np.column_stack((rng.uniform(-3, 3, 6), rng.uniform(0.2, 5, 6), rng.uniform(0.2, 5, 6)))
    second = np.column_stack((rng.uniform(-3, 3, 6), rng.uniform(0.2, 5, 6), rng.uniform(0.2, 5, 6)))
    first = np.vstack((first, [0.0, 0.1, 0.1], [1.0, 2.0, 3.0]))
    second = np.vstack((second, [5.0, 8.0, 20.0], [1.0 + 1e-6, 2.0, 3.0 - 1e-6]))
    got = module.rao_distance(first, second)
    for p, q, value in zip(first, second, got):
        with mpmath.workdps(50):
            line = mpmath.log(mpmath.mpf(float(p[2])) / mpmath.mpf(float(q[2])))
            exact = mpmath.sqrt(half_plane_distance(p[:2], q[:2]) ** 2 + line**2)
        assert relative_error(value, exact) <= 1e-10, (p, q, value)
