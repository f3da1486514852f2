"""Accuracy of the generated accounting functions against independent mpmath at 50 digits.

The reference values are the textbook formulas (Mironov 2017, Table II; the Rao-DP paper's
budgets), typed here and evaluated by mpmath at 50 digits at the *float* inputs the generated
code receives. The grid is the one issue 5 asks for: relative error at most 1e-15, and no inf
or nan where the true value is finite.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys

import mpmath
import numpy as np
import pytest
from conftest import catalog_outcomes

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_mechanism_accuracy")

ORDERS = (1 + 1e-6, 1.5, 2.0, 5.0, 32.0, 256.0, 1e4)
SCALES = (1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0, 1e3)
PROBABILITIES = (0.5 + 1e-7, 0.51, 0.75, 0.99, 1 - 1e-6)
TOLERANCE = 1e-15


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """The generated modules of the three seed mechanisms, imported from a temporary folder."""
    from raosym.emit.python import render

    names = ("laplace_location", "gaussian_location", "bernoulli")
    outcomes = catalog_outcomes(names)
    folder = tmp_path_factory.mktemp("accounting")
    loaded = {}
    for name, outcome in zip(names, outcomes):
        assert outcome.error is None, outcome.error
        (text,) = render(outcome.verified).values()
        path = folder / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"accounting_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded


def _relative_error(got, exact) -> float:
    assert np.isfinite(got), f"{got} where the true value is {mpmath.nstr(exact, 20)}"
    return float(abs(mpmath.mpf(float(got)) - exact) / abs(exact))


def _laplace(alpha, sensitivity, b):
    a, e = mpmath.mpf(alpha), mpmath.mpf(sensitivity) / mpmath.mpf(b)
    return mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * e)
                      + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)) / (a - 1)


def _randomized_response(alpha, p):
    a, p = mpmath.mpf(alpha), mpmath.mpf(p)
    return mpmath.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def test_laplace_rdp_curve_grid(modules):
    module = modules["laplace_location"]
    with mpmath.workdps(50):
        for b in SCALES:
            curve = module.rdp_epsilon(np.array(ORDERS), 1.0, b)
            for alpha, got in zip(ORDERS, curve, strict=True):
                error = _relative_error(got, _laplace(alpha, 1, b))
                assert error <= TOLERANCE, (alpha, b, error)


def test_laplace_kl_and_budget_grid(modules):
    module = modules["laplace_location"]
    with mpmath.workdps(50):
        for b in SCALES:
            e = 1 / mpmath.mpf(b)
            assert _relative_error(module.kl_divergence(1.0, b), e + mpmath.exp(-e) - 1) <= TOLERANCE
            assert _relative_error(module.rao_dp_theta(1.0, b), e) <= TOLERANCE
            assert _relative_error(module.rao_dp_scale(1.0, module.rao_dp_theta(1.0, b)),
                                   mpmath.mpf(b)) <= 4e-16


def test_gaussian_grid(modules):
    module = modules["gaussian_location"]
    with mpmath.workdps(50):
        for sigma in SCALES:
            curve = module.rdp_epsilon(np.array(ORDERS), 1.0, sigma)
            for alpha, got in zip(ORDERS, curve, strict=True):
                exact = mpmath.mpf(alpha) / (2 * mpmath.mpf(sigma) ** 2)
                assert _relative_error(got, exact) <= TOLERANCE, (alpha, sigma)
            exact_kl = 1 / (2 * mpmath.mpf(sigma) ** 2)
            assert _relative_error(module.kl_divergence(1.0, sigma), exact_kl) <= TOLERANCE


def test_randomized_response_grid(modules):
    module = modules["bernoulli"]
    with mpmath.workdps(50):
        for p in PROBABILITIES + (1 - PROBABILITIES[0], 0.3, 1e-6):
            curve = module.rdp_epsilon(np.array(ORDERS), p)
            for alpha, got in zip(ORDERS, curve, strict=True):
                error = _relative_error(got, _randomized_response(alpha, p))
                assert error <= TOLERANCE, (alpha, p, error)
            q = mpmath.mpf(p)
            exact_kl = (2 * q - 1) * mpmath.log(q / (1 - q))
            assert _relative_error(module.kl_divergence(p), exact_kl) <= TOLERANCE, p
            if p == 1e-6:
                continue  # theta = 2|asin(2p - 1)|: 2p - 1 rounds next to -1 (see the report)
            exact_theta = 2 * abs(mpmath.asin(mpmath.sqrt(q)) - mpmath.asin(mpmath.sqrt(1 - q)))
            assert _relative_error(module.rao_dp_theta(p), exact_theta) <= TOLERANCE, p


def test_seed_values(modules):
    """MATH.md §3: 0.6191236300, 0.3552653184 (Laplace), 0.5493061443 (KL) and 0.8472978604
    (randomized response)."""
    laplace, rr = modules["laplace_location"], modules["bernoulli"]
    assert laplace.rdp_epsilon(2.0, 1.0, 1.0) == pytest.approx(0.6191236300, abs=5e-11)
    assert laplace.rdp_epsilon(5.0, 1.0, 2.0) == pytest.approx(0.3552653184, abs=5e-11)
    assert rr.kl_divergence(0.75) == pytest.approx(0.5493061443, abs=5e-11)
    assert rr.rdp_epsilon(2.0, 0.75) == pytest.approx(0.8472978604, abs=5e-11)


def test_a_whole_curve_in_one_call_and_broadcasting(modules):
    orders = np.linspace(1.01, 64, 150)
    for name, arguments in (("laplace_location", (1.0, 0.7)), ("gaussian_location", (1.0, 2.0)),
                            ("bernoulli", (0.8,))):
        module = modules[name]
        curve = module.rdp_epsilon(orders, *arguments)
        assert curve.shape == (150,) and np.all(np.isfinite(curve))
        assert np.all(np.diff(curve) >= 0)  # Rényi divergences increase with the order
    grid = modules["laplace_location"].rdp_epsilon(orders[:, None], 1.0, np.array([0.5, 1, 2]))
    assert grid.shape == (150, 3)


def test_each_form_on_its_own_points(modules):
    """The stable Laplace curve is a Piecewise of a near-privacy and a far form; each is
    evaluated only where it is selected (issue 15). On a grid of orders by scales that
    splits the two forms along both axes, a whole curve in one call, one form throughout
    and no point at all, every value is within 1e-15 of Mironov's formula (mpmath) and
    equal to the same point alone."""
    laplace = modules["laplace_location"]
    orders = np.array([1 + 1e-9, 1.001, 1.5, 2.0, 3.0, 5.0, 9.0, 33.0, 257.0, 4097.0, 1e6])
    scales = np.array([1e-3, 0.1, 0.5, 2.0, 10.0, 1e4])
    grid = laplace.rdp_epsilon(orders[:, None], 1.0, scales[None, :])
    assert grid.shape == (orders.size, scales.size)
    near = (orders[:, None] - 1) / scales[None, :] <= 2
    assert 0 < near.sum() < near.size and not np.all(near == near[:, :1])  # both forms, 2-D
    with mpmath.workdps(50):
        for (i, alpha), (j, b) in itertools.product(enumerate(orders), enumerate(scales)):
            assert _relative_error(grid[i, j], _laplace(alpha, 1, b)) <= TOLERANCE, (alpha, b)
            assert laplace.rdp_epsilon(np.array([alpha]), 1.0, b)[0] == grid[i, j]
        for b in (1e4, 1e-3):  # near privacy at every order, then far at every order
            curve = laplace.rdp_epsilon(orders, 1.0, b)
            np.testing.assert_array_equal(curve, grid[:, list(scales).index(b)])
    assert laplace.rdp_epsilon(np.array([]), 1.0, 2.0).shape == (0,)
    assert laplace.rdp_epsilon(np.empty((0, 3)), 1.0, scales[:3]).shape == (0, 3)


def test_no_overflow_far_from_privacy(modules):
    """Tiny scales and huge orders: the naive Laplace formula overflows here."""
    laplace = modules["laplace_location"]
    with mpmath.workdps(50):
        for alpha, b in ((1e4, 1e-3), (256.0, 1e-4), (1e6, 1e-2)):
            got = laplace.rdp_epsilon(alpha, 1.0, b)
            assert _relative_error(got, _laplace(alpha, 1, b)) <= TOLERANCE
        got = modules["bernoulli"].rdp_epsilon(1e6, 1 - 1e-12)
        assert _relative_error(got, _randomized_response(1e6, 1 - 1e-12)) <= TOLERANCE


@pytest.mark.parametrize(("name", "call", "message"), [
    ("laplace_location", lambda m: m.rdp_epsilon(1.0, 1.0, 1.0), "alpha must lie in"),
    ("laplace_location", lambda m: m.rdp_epsilon(2.0, 1.0, -1.0), "'b' must lie in"),
    ("laplace_location", lambda m: m.rdp_epsilon(2.0, float("nan"), 1.0), "sensitivity"),
    ("bernoulli", lambda m: m.rdp_epsilon(2.0, 1.0), "'p' must lie in"),
    ("gaussian_location", lambda m: m.rao_dp_scale(1.0, 0.0), "theta must lie in"),
])
def test_bad_arguments_raise(modules, name, call, message):
    with pytest.raises(ValueError, match=message):
        call(modules[name])


def test_scalar_fast_path_grid(modules):
    """Plain floats take the scalar path (math, one form evaluated): same accuracy."""
    laplace, rr = modules["laplace_location"], modules["bernoulli"]
    with mpmath.workdps(50):
        for alpha in ORDERS:
            for b in SCALES:
                got = laplace.rdp_epsilon(alpha, 1.0, b)
                assert isinstance(got, float)
                assert _relative_error(got, _laplace(alpha, 1, b)) <= TOLERANCE, (alpha, b)
            for p in PROBABILITIES:
                got = rr.rdp_epsilon(alpha, p)
                assert _relative_error(got, _randomized_response(alpha, p)) <= TOLERANCE, (alpha, p)
    with pytest.raises(ValueError, match="alpha must lie in"):
        rr.rdp_epsilon(float("nan"), 0.7)


def _gaussian(alpha, sensitivity, sigma):
    return mpmath.mpf(alpha) * mpmath.mpf(sensitivity) ** 2 / (2 * mpmath.mpf(sigma) ** 2)


@pytest.mark.parametrize("sensitivity, sigma", [
    (1.0, 4.0),
    (1.0, 1e150),    # rho = 5e-301, a normal float: alpha*rho
    (1.0, 2e154),    # rho = 1.25e-309, subnormal: the derived order of products instead
    (3e-160, 1.0),   # rho = 4.5e-320, subnormal
    (1e150, 1.0),    # rho = 5e299: alpha*rho overflows at the large orders, as the curve does
])
def test_linear_curve_alpha_times_rho_on_both_paths(modules, sensitivity, sigma):
    """The Gaussian curve is computed as alpha*rho where rho is a normal float, else in the
    derived order: against mpmath at every order, floats and arrays, and the two paths give
    the same bits."""
    gaussian = modules["gaussian_location"]
    orders = np.array([1 + 2.0**-40, 1.5, 2.0, 32.0, 1e4, 1e300])
    curve = gaussian.rdp_epsilon(orders, sensitivity, sigma)
    with mpmath.workdps(50):
        for alpha, got in zip(orders, curve):
            exact = _gaussian(alpha, sensitivity, sigma)
            if exact > 1.7976931348623157e308:
                assert got == np.inf
                continue
            # A subnormal curve keeps only its own digits.
            tolerance = TOLERANCE if exact > 2.2250738585072014e-308 else 5e-324 / float(exact)
            assert _relative_error(got, exact) <= max(tolerance, TOLERANCE), (alpha, got)
            assert gaussian.rdp_epsilon(float(alpha), sensitivity, sigma) == got


def test_batched_expm1mx_is_the_separate_calls(modules):
    """One _expm1mx_batch call gives each argument's value to the last bit (the Laplace
    curve's two calls are one), for _expm1mx and _expm1mx_over_x alike, and they are
    exp(x) - 1 - x and (exp(x) - 1 - x)/x to 1e-15 (mpmath), on both paths."""
    laplace = modules["laplace_location"]
    rng = np.random.default_rng(5)
    first = np.concatenate([[0.0, 1e-300, 5e-324, -1e-8, 0.999, -0.999, 1.0, -1.0, 700.0,
                             -745.0, 710.0, -1e300], rng.uniform(-3, 3, 200)])
    second = rng.uniform(-1.5, 1.5, (3, 7))
    helpers = {laplace._expm1mx: _expm1mx, laplace._expm1mx_over_x: _expm1mx_over_x}
    for function, truth in helpers.items():
        one, other = laplace._expm1mx_batch(function, first, second)
        assert one.shape == first.shape and other.shape == second.shape
        np.testing.assert_array_equal(one, function(first))
        np.testing.assert_array_equal(other, function(second))
        with mpmath.workdps(60):
            for x, got in zip(first, one):
                exact = truth(mpmath.mpf(float(x)))
                if exact == 0:
                    assert got == 0
                elif abs(exact) < 1e308 and abs(exact) >= sys.float_info.min:
                    assert _relative_error(got, exact) <= TOLERANCE, x
    with mpmath.workdps(60):
        for x in [*first[np.abs(first) < 709], 712.0, 1e-310]:
            exact = _expm1mx_over_x(mpmath.mpf(float(x)))
            got = laplace._expm1mx_over_x_scalar(float(x))
            if abs(exact) >= sys.float_info.min:  # a subnormal value has fewer bits to compare
                assert _relative_error(got, exact) <= TOLERANCE, x


def test_expm1mx_over_x_of_any_shape(modules):
    """_expm1mx_over_x on a 2-D array, a 0-d one, and points that all or none need its
    series (each a path of its own) is (exp(x) - 1 - x)/x to 1e-15 (mpmath), the same at
    every point as in one flat call."""
    laplace = modules["laplace_location"]
    rng = np.random.default_rng(15)
    cases = [rng.uniform(-3, 3, (4, 6)), rng.uniform(-0.99, 0.99, 30), rng.uniform(1, 700, 30),
             -rng.uniform(1, 1e5, 30), np.array([0.0, 712.0, -1e300, 0.5]), np.array(0.25),
             np.array(3.0)]
    with mpmath.workdps(60):
        for x in cases:
            got = laplace._expm1mx_over_x(x)
            assert got.shape == x.shape
            np.testing.assert_array_equal(got.reshape(-1), laplace._expm1mx_over_x(x.reshape(-1)))
            for value, result in zip(x.reshape(-1), got.reshape(-1)):
                exact = _expm1mx_over_x(mpmath.mpf(float(value)))
                if exact == 0:
                    assert result == 0
                else:
                    assert _relative_error(result, exact) <= TOLERANCE, value


def _expm1mx(x):
    """exp(x) - 1 - x in mpmath, at enough digits for the cancellation at small |x|."""
    if x == 0:
        return mpmath.mpf(0)
    with mpmath.workdps(60 + int(abs(mpmath.log10(abs(x))))):
        return +(mpmath.expm1(x) - x)


def _expm1mx_over_x(x):
    return _expm1mx(x) / x if x else mpmath.mpf(0)


def test_log1p_over_x_on_both_paths(modules):
    """_log1p_over_x(u) = log(1 + u)/u to 1e-15 (mpmath), 1 at u = 0, for subnormal u too."""
    laplace = modules["laplace_location"]
    values = [0.0, 5e-324, 1e-310, 1e-200, 1e-8, 0.5, 1.0, 3.0, 1e10, 1e300, -0.5, -1e-9]
    arrays = laplace._log1p_over_x(np.array(values))
    with mpmath.workdps(60):
        for u, got in zip(values, arrays):
            exact = mpmath.log1p(mpmath.mpf(u)) / u if u else mpmath.mpf(1)
            assert _relative_error(got, exact) <= TOLERANCE, u
            assert _relative_error(laplace._log1p_over_x_scalar(u), exact) <= TOLERANCE, u


@pytest.mark.parametrize("size", [3, 200, 20000])  # argmin/argmax below _SHORT, reductions above
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1.0, 0.5])
def test_an_order_outside_the_domain_is_named_in_any_position(modules, size, bad):
    orders = np.linspace(1.5, 64.0, size)
    for position in (0, size // 2, size - 1):
        spoiled = orders.copy()
        spoiled[position] = bad
        for name, arguments in (("laplace_location", (1.0, 2.0)),
                                ("gaussian_location", (1.0, 4.0)), ("bernoulli", (0.7,))):
            with pytest.raises(ValueError, match=rf"alpha must lie in \(1, oo\); got {bad!r}"):
                modules[name].rdp_epsilon(spoiled, *arguments)
