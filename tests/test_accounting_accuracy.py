"""Every catalog mechanism's emitted accounting against mpmath written here (issue 17).

For each mechanism that ``generated/`` holds (the committed modules; the drift test keeps
them current), ``rdp_epsilon``, ``kl_divergence`` and ``rao_dp_theta`` are compared with
mpmath at 30 to 50 digits (more as Δ/scale shrinks) over a grid with the adversarial
points: orders 1 + 2⁻⁴⁰ to 1e6, noise scales from 1e-6 to 1e13 times the sensitivity,
randomized response next to p = 1/2 and 1; then the three calibrations (Rao-DP, KL, (ε, δ)
through RDP) are checked to be the parameter value at which the mpmath budget meets the
target. Relative tolerance 1e-12 throughout.

The references are the literature's, not the generated code's: the textbook curves where
they exist (Mironov 2017, Table II: Gaussian, Laplace, randomized response), otherwise
D_α(f || f(· - Δ/s)) integrated by mpmath from the standardized log-density
(``mp_renyi``: the integrand cut at the kinks and around its peak, the integral written as
I - 1 = ∫ f (e^{(α-1)L} - 1) where it is near 1), and Fisher informations of the location
(MATH.md: Cauchy 1/2, logistic 1/3, Student-t (ν+1)/(ν+3), generalized Gaussian
N·Γ(2-1/N)/Γ(1+1/N)). A mechanism in generated/ without a reference here fails the test.

Known limit, not in the grid: the generalized Gaussian with N near 1/2 loses digits at
scales beyond 1e6 times the sensitivity (2e-11 at N = 0.6 and 1e8: its score is unbounded
at the kink, and the pieces of the integral next to it cancel).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
import scipy.optimize

from raosym import accounting

REPOSITORY = Path(__file__).resolve().parents[1]
GENERATED = Path(os.environ.get("RAOSYM_GENERATED", REPOSITORY / "generated"))
DERIVATIONS = REPOSITORY / "derivations"
TOLERANCE = 1e-12
#: Digits of the mpmath references (at 30 some cancel: a curve of 1e-26 at scale 1e13).
DIGITS = 50


def quadrature_digits(distance) -> int:
    """Digits for a numeric reference at d = Δ/scale: 30, and one more for each decade of d
    below 1 (the log-densities at t and t - d cancel to that many digits), at most DIGITS
    (CI time: the quadrature's nodes grow with the digits asked for)."""
    return min(DIGITS, 30 + max(0, math.ceil(-math.log10(float(distance)))))



# The adversarial ends and a few points between them (CI time: each numeric mechanism's
# references are mpmath quadratures, about a second a point).
ORDERS = (1 + 2.0**-40, 1 + 1e-6, 1.5, 2.0, 10.0, 1e4, 1e6)
SCALES = (1e-6, 0.1, 1.0, 10.0, 1e6, 1e13)  # the sensitivity is 1
PROBABILITIES = (0.5 + 1e-9, 0.5 + 1e-4, 0.6, 0.9, 1 - 1e-9, 0.3)


# ----------------------------------------------------------------------- mpmath references


def mp_renyi(log_density, distance, alpha):
    """D_α(f || f(· - d)) for a standardized log-density, by mpmath quadrature."""
    with mp.workdps(quadrature_digits(distance)):
        a, d = mp.mpf(alpha), mp.mpf(distance)

        def exponent(t):
            return a * log_density(t) + (1 - a) * log_density(t - d)

        peak = _peak(exponent, d)
        try:
            width = 1 / mp.sqrt(-mp.diff(exponent, peak, 2))
        except (ValueError, ZeroDivisionError):
            width = mp.mpf(1)
        if not isinstance(width, mp.mpf) or not mp.isfinite(width) or not 0 < width < 1e6:
            width = mp.mpf(1)
        points = sorted({mp.mpf(0), d, peak}
                        | {peak + s * k * width for s in (-1, 1) for k in (1, 4, 16, 64)})
        points = [-mp.inf, *points, mp.inf]
        if (a - 1) * d < 1:  # I near 1: integrate I - 1 itself
            def excess(t):
                here = log_density(t)  # once a node: the quadrature's cost is the log-density
                return mp.exp(here) * mp.expm1((a - 1) * (here - log_density(t - d)))

            return mp.log1p(mp.quad(excess, points)) / (a - 1)
        top = exponent(peak)
        return (top + mp.log(mp.quad(lambda t: mp.exp(exponent(t) - top), points))) / (a - 1)


def _peak(exponent, d):
    """The largest value of the exponent: a grid of signed powers of 10^(1/4) around 0 and
    d out to 1e80, refined by golden section between the grid neighbours."""
    grid = sorted({mp.mpf(0), d, d / 2} | {s * mp.mpf(10) ** (mp.mpf(k) / 4) + c
                                         for s in (-1, 1) for k in range(-24, 321)
                                         for c in (0, d)})
    values = [exponent(t) for t in grid]
    best = max(range(len(grid)), key=values.__getitem__)
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    golden = (mp.sqrt(5) - 1) / 2
    for _ in range(80):  # a bracket 1e-17 of the grid step: the peak only places breaks
        left, right = high - golden * (high - low), low + golden * (high - low)
        if exponent(left) > exponent(right):
            high = right
        else:
            low = left
    return (low + high) / 2


def mp_kl(log_density, distance):
    with mp.workdps(quadrature_digits(distance)):
        d = mp.mpf(distance)
        points = sorted({mp.mpf(0), d} | {c + s * k for c in (0, d) for s in (-1, 1)
                                          for k in (1, 8, 64)})

        def integrand(t):
            here = log_density(t)
            return mp.exp(here) * (here - log_density(t - d))

        return mp.quad(integrand, [-mp.inf, *points, mp.inf])


def _laplace_curve(alpha, e):
    """Mironov 2017, Table II, λ = 1/e."""
    a = mp.mpf(alpha)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * e)
                  + (a - 1) / (2 * a - 1) * mp.exp(-a * e)) / (a - 1)


def _logistic(t):
    t = abs(mp.mpf(t))
    return -t - 2 * mp.log1p(mp.exp(-t))


def _cauchy(t):
    return -mp.log(mp.pi) - mp.log1p(mp.mpf(t) ** 2)


def _student(nu):
    nu = mp.mpf(nu)
    constant = mp.loggamma((nu + 1) / 2) - mp.loggamma(nu / 2) - mp.log(nu * mp.pi) / 2
    return lambda t: constant - (nu + 1) / 2 * mp.log1p(mp.mpf(t) ** 2 / nu)


def _generalized_gaussian(n):
    n = mp.mpf(n)
    constant = mp.log(n / (2 * mp.gamma(1 / n)))
    return lambda t: constant - abs(mp.mpf(t)) ** n


class Additive:
    """Noise of scale ``scale`` added to the query: the references in d = Δ/scale."""

    def __init__(self, scale, log_density=None, curve=None, kl=None, fisher=None, shapes=None,
                 largest=None):
        self.scale, self.log_density, self.curve, self.kl_of = scale, log_density, curve, kl
        self.fisher, self.shapes = fisher, shapes or [{}]
        self.largest = largest  # {shape: value, "scale": the largest scale tried at it}

    def renyi(self, alpha, values):
        d = mp.mpf(values["sensitivity"]) / mp.mpf(values[self.scale])
        if self.curve is not None:
            with mp.workdps(DIGITS):
                return self.curve(alpha, d)
        return mp_renyi(self.log_density(values), d, alpha)

    def kl(self, values):
        d = mp.mpf(values["sensitivity"]) / mp.mpf(values[self.scale])
        if self.kl_of is not None:
            with mp.workdps(DIGITS):
                return self.kl_of(d)
        return mp_kl(self.log_density(values), d)

    def theta(self, values):
        with mp.workdps(DIGITS):
            return (mp.mpf(values["sensitivity"]) / mp.mpf(values[self.scale])
                    * mp.sqrt(self.fisher(values)))

    def points(self):
        """The first shape at every scale, the others at the ends and at 1 (CI time: the
        numeric references cost about a second a point)."""
        for index, shape in enumerate(self.shapes):
            for scale in SCALES if index == 0 else (SCALES[0], 1.0, SCALES[-1]):
                limit = self.largest or {}
                if all(shape.get(k) == v for k, v in limit.items() if k != "scale") \
                        and limit and scale > limit["scale"]:
                    continue  # the known limit (module docstring)
                yield {"sensitivity": 1.0, self.scale: scale, **shape}


class RandomizedResponse:
    """Truth with probability p (Mironov 2017, Table II)."""

    def renyi(self, alpha, values):
        with mp.workdps(DIGITS):
            a, p = mp.mpf(alpha), mp.mpf(values["p"])
            return mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)

    def kl(self, values):
        with mp.workdps(DIGITS):
            p = mp.mpf(values["p"])
            return (2 * p - 1) * mp.log(p / (1 - p))

    def theta(self, values):
        with mp.workdps(DIGITS):
            p = mp.mpf(values["p"])
            return 2 * abs(mp.asin(mp.sqrt(p)) - mp.asin(mp.sqrt(1 - p)))

    def points(self):
        for p in PROBABILITIES:
            yield {"p": p}


def _gaussian_curve(alpha, d):
    return mp.mpf(alpha) * d**2 / 2


GAUSSIAN = Additive("sigma", curve=_gaussian_curve, kl=lambda d: d**2 / 2,
                    fisher=lambda values: mp.mpf(1))
LAPLACE = Additive("b", curve=_laplace_curve, kl=lambda d: d + mp.exp(-d) - 1,
                   fisher=lambda values: mp.mpf(1))
REFERENCES = {
    "bernoulli": RandomizedResponse(),
    "gaussian": GAUSSIAN,
    "gaussian_location": GAUSSIAN,
    # MATH.md §6: the l2 vector Gaussian mechanism has theta = Delta/sigma and the RDP curve
    # alpha Delta^2/(2 sigma^2), Delta the l2 sensitivity: the scalar Gaussian's.
    "gaussian_mechanism3": GAUSSIAN,
    "laplace": LAPLACE,
    "laplace_location": LAPLACE,
    # Mironov (2017), Table II: the l1 vector Laplace mechanism has the scalar Laplace curve
    # at Delta = the l1 sensitivity (its supremum sits at a vertex of the l1 ball).
    "laplace_mechanism2": LAPLACE,
    "cauchy": Additive("s", lambda values: _cauchy, fisher=lambda values: mp.mpf(1) / 2),
    "logistic": Additive("s", lambda values: _logistic, fisher=lambda values: mp.mpf(1) / 3),
    "student_t": Additive(
        "s", lambda values: _student(values["nu"]),
        fisher=lambda values: (mp.mpf(values["nu"]) + 1) / (mp.mpf(values["nu"]) + 3),
        shapes=[{"nu": 0.5}, {"nu": 3.0}, {"nu": 30.0}]),
    "generalized_gaussian": Additive(
        "sigma", lambda values: _generalized_gaussian(values["N"]),
        fisher=lambda values: (mp.mpf(values["N"]) * mp.gamma(2 - 1 / mp.mpf(values["N"]))
                               / mp.gamma(1 + 1 / mp.mpf(values["N"]))),
        shapes=[{"N": 0.8}, {"N": 1.5}, {"N": 4.0}], largest={"N": 0.8, "scale": 1e6}),
}

MECHANISMS = accounting.available_mechanisms(GENERATED)


def test_every_generated_mechanism_has_a_reference():
    assert MECHANISMS, f"no mechanism in {GENERATED}"
    missing = sorted(set(MECHANISMS) - set(REFERENCES))
    assert not missing, f"mechanisms without an mpmath reference in this test: {missing}"


def _mechanism(name):
    return accounting.load_mechanism(name, GENERATED, DERIVATIONS)


def _relative(got, exact) -> float:
    assert np.isfinite(got), f"{got} where the true value is {mp.nstr(exact, 17)}"
    return float(abs(mp.mpf(float(got)) - exact) / abs(exact))


# ----------------------------------------------------------------------- curves, KL, Rao-DP


@pytest.mark.parametrize("name", MECHANISMS)
def test_curve_kl_and_budget_against_mpmath(name):
    mechanism, reference = _mechanism(name), REFERENCES[name]
    failures = []
    for values in reference.points():
        curve = mechanism.curve(**values)(np.array(ORDERS))
        for alpha, got in zip(ORDERS, curve, strict=True):
            error = _relative(got, reference.renyi(alpha, values))
            if error > TOLERANCE:
                failures.append(f"rdp_epsilon(alpha={alpha!r}, {values}): {error:.2e}")
        for quantity, got, exact in (("kl_divergence", mechanism.kl(**values),
                                      reference.kl(values)),
                                     ("rao_dp_theta", mechanism.theta(**values),
                                      reference.theta(values))):
            error = _relative(got, exact)
            if error > TOLERANCE:
                failures.append(f"{quantity}({values}): {error:.2e}")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- calibration


def _mp_dp_epsilon(reference, values, count, delta, alpha_hint):
    """min over α of Balle et al.'s bound for ``count`` releases (mpmath; in u = log(α - 1),
    on a bracket around the hint checked to hold the minimum). The minimum is located by
    SciPy's bounded Brent search to 1e-9 in u, a dozen evaluations where a golden section
    takes forty; the value there is within (1e-9)^2 of the minimum, and is computed in mpmath."""
    with mp.workdps(DIGITS):
        log_delta = mp.log(mp.mpf(delta))

        def bound(u):
            a = 1 + mp.exp(u)
            return (count * reference.renyi(a, values) + mp.log((a - 1) / a)
                    - (log_delta + mp.log(a)) / (a - 1))

        centre = mp.log(mp.mpf(alpha_hint) - 1)
        low, high = centre - 1, centre + 1
        middle = bound(centre)
        assert bound(low) > middle and bound(high) > middle, "the bracket holds no minimum"
        search = scipy.optimize.minimize_scalar(
            lambda u: float(bound(mp.mpf(u))), bounds=(float(low), float(high)),
            method="bounded", options={"xatol": 1e-9})
        assert search.success, search
        return bound(mp.mpf(search.x))


CALIBRATIONS = {  # mechanism -> (the parameter solved, the others given)
    "bernoulli": ("p", {}),
    "student_t": ("s", {"nu": 3.0}),
    "generalized_gaussian": ("sigma", {"N": 1.5}),
}


@pytest.mark.parametrize("name", MECHANISMS)
def test_calibrations_meet_their_targets_in_mpmath(name):
    """The value each calibration returns is where the mpmath budget meets the target:
    Rao-DP θ = 0.5 over 4 releases, KL = 0.05 over 10, (ε, δ) = (1, 1e-6) over 10."""
    mechanism, reference = _mechanism(name), REFERENCES[name]
    scale = getattr(reference, "scale", "p")
    solved, given = CALIBRATIONS.get(name, (scale, {}))
    given = accounting.with_default_sensitivity(mechanism, given)

    result = accounting.calibrate_rao(mechanism, 0.5, given, repeat=4)
    assert result.parameter == solved
    theta = reference.theta({**given, solved: result.value})
    assert _relative(0.25, theta) <= TOLERANCE, result

    result = accounting.calibrate_kl(mechanism, 0.05, given, repeat=10)
    assert _relative(0.005, reference.kl({**given, solved: result.value})) <= TOLERANCE, result

    result = accounting.calibrate_dp(mechanism, 1.0, 1e-6, given, repeat=10)
    values = {**given, solved: result.value}
    hint = accounting.dp_epsilon(mechanism.curve(**values).repeated(10), 1e-6).alpha
    epsilon = _mp_dp_epsilon(reference, values, 10, 1e-6, hint)
    assert _relative(1.0, epsilon) <= TOLERANCE, (result, epsilon)


def test_the_solved_value_is_mpmaths_own_root():
    """One calibration solved in mpmath end to end (Laplace, whose curve is Table II's): the
    scale b with ε = 1 at δ = 1e-6 over 10 releases, by a secant iteration on the mpmath
    (ε, δ) budget, against the calibrate command's value."""
    mechanism, reference = _mechanism("laplace_location"), REFERENCES["laplace_location"]
    found = accounting.calibrate_dp(mechanism, 1.0, 1e-6, {"sensitivity": 1.0}, repeat=10).value
    with mp.workdps(DIGITS):
        def gap(b):
            values = {"sensitivity": 1.0, "b": b}
            hint = accounting.dp_epsilon(mechanism.curve(**values).repeated(10), 1e-6).alpha
            return _mp_dp_epsilon(reference, {"sensitivity": 1, "b": b}, 10, 1e-6, hint) - 1

        root = mp.findroot(gap, (mp.mpf(found) * (1 - mp.mpf(10) ** -6), mp.mpf(found)),
                           solver="secant", tol=mp.mpf(10) ** -24, verify=False)
    assert math.isclose(found, float(root), rel_tol=TOLERANCE)
