"""The emitted-code gate's probes of a mechanism's accounting functions.

Part of the emitted-code gate, :mod:`raosym.gate.emitted` (kept apart so the geometry and the accounting
probes stay small). For ``rao_dp_theta``, the calibration (``rao_dp_scale`` or
``rao_dp_parameter``), ``rdp_epsilon`` and ``kl_divergence`` it lays out float inputs over
the arguments' domains and the values each must return:

- closed forms: the verified textbook expressions (Rao-DP budget, calibration, RDP curve, KL)
  evaluated by mpmath at the same float inputs; orders from ``1 + 2**-40`` to ``1e6``, noise
  scales from 1e-160 to 1e160 of the sensitivity, randomized-response probabilities down to
  the smallest subnormal;
- a curve without closed form: the Rényi integral (and KL) by the verify stage's mpmath
  quadrature at the float inputs, at fewer points (each reference is a quadrature), with
  orders near 1, ordinary and large, and noise small, equal to and larger than the
  sensitivity, at sensitivities 1e-6, 1 and 1e6 (the curve depends on their ratio only);
- ``log_output_density`` and ``privacy_loss``: the verified log-densities of the two outputs
  (and their difference) by mpmath at the same float inputs, at outputs from 1e3 scales below
  0 to 1e3 scales above the sensitivity (every support point of a discrete mechanism); the
  loss is a difference of two logarithms, so its error is measured against their magnitudes
  ``|log f_D| + |log f_D'|``, the density's against ``max(|log f_D|, 1)``.
"""

from __future__ import annotations

import itertools
import math

import mpmath

from raosym.derive.divergence import ALPHA
from raosym.derive.mechanism import THETA
from raosym.gate.emitted import (
    CLOSED_TOLERANCE,
    NUMERIC_CURVE_TOLERANCE,
    REFERENCE_DIGITS,
    Probe,
    Reference,
    adversarial_values,
    as_float,
)
from raosym.spec.points import sample_points

#: Orders of the closed RDP curves: next to 1 (where D_alpha -> KL cancels), ordinary, large.
ORDERS = (1 + 2.0**-40, 1 + 1e-6, 1.001, 1.5, 2.0, 5.0, 32.0, 1e3, 1e6)
#: (sensitivity, scale) of the additive closed forms: ordinary, little and much noise, both
#: tiny or huge, and the extremes of the float range.
ADDITIVE = ((1.0, 1.0), (0.3, 2.7), (1.0, 1e-6), (1.0, 1e6), (1e-6, 1e-6), (1e6, 1e6),
            (1.0, 1e-160), (1.0, 1e160), (1e-160, 1.0), (1e160, 1.0))
#: Budgets theta of the additive calibration, each at sensitivities 1e-6, 1 and 1e6.
BUDGETS = (1e-160, 1e-12, 1e-6, 0.5, 1.0, 1e6, 1e160)
#: Budgets of a neighbour map's calibration (theta in (0, pi]).
NEIGHBOUR_BUDGETS = (1e-300, 1e-12, 1e-6, 0.5, 1.0, 3.0, math.pi - 1e-9, math.pi)
#: A curve without closed form: orders and (sensitivity, scale) pairs. Not larger orders:
#: there the integrand peaks far from every break of the verify stage's mpmath quadrature,
#: which then misses it (generalized Gaussian, N = 4.9, order 32: 4e-5 off).
NUMERIC_ORDERS = (1.001, 2.0, 5.0)
NUMERIC_ADDITIVE = ((1.0, 1.0), (1.0, 0.5), (1.0, 10.0), (1e-6, 1e-6))
#: (sensitivity, scale) of the additive outputs' probes, and the outputs, in scales from 0
#: and from the sensitivity (the two locations).
OUTPUT_ADDITIVE = ((1.0, 1.0), (0.3, 2.7), (1.0, 1e-3), (1.0, 1e3), (1e-6, 1e-6), (1e6, 1e6))
OUTPUT_OFFSETS = (-1e3, -30.0, -3.0, -0.5, 0.0, 0.5, 3.0, 30.0, 1e3)
#: Outputs of a discrete mechanism whose support is not a finite set of numbers.
OUTPUT_INTEGERS = (0, 1, 2, 3, 5, 10, 100)
#: Working digits of the quadrature references (the tolerance is 1e-12).
NUMERIC_REFERENCE_DIGITS = 25


def signature(spec, mechanism):
    """``(positional symbols, keyword parameters)`` of the accounting functions, as the
    Python backend lays them out (the sensitivity and scale, or the moved probability,
    first; shape constants keyword-only)."""
    scale = getattr(spec.mechanism.scale, "symbol", None)
    keywords = [p for p in spec.constants if p.symbol in mechanism.arguments and p.symbol != scale]
    positional = [s for s in mechanism.arguments if s not in {p.symbol for p in keywords}]
    return positional, keywords


def mechanism_probes(verified) -> list[Probe]:
    derivation = verified.derivation
    spec, mechanism = derivation.spec, derivation.mechanism
    positional, keywords = signature(spec, mechanism)
    with mpmath.workdps(REFERENCE_DIGITS):
        base = {s: as_float(v) for s, v in sample_points(spec, 1)[0].items()}
    settings = _settings(spec, mechanism, positional, keywords, base)
    probes = _theta_probes(mechanism, positional, keywords, settings)
    probes += _calibration_probes(spec, mechanism, keywords, settings)
    if mechanism.renyi.closed:
        probes += _closed_curve_probes(mechanism, positional, keywords, settings)
    else:
        probes += _numeric_curve_probes(derivation, positional, keywords, base)
    probes += _output_probes(derivation, positional, keywords, settings, base)
    return probes


def _settings(spec, mechanism, positional, keywords, base) -> list[dict]:
    """Points ``{symbol: float}`` of the positional arguments and keywords (with the other
    parameters at the base point): the grid for the first keyword values, then each keyword
    at each of its adversarial values."""
    points = []
    if mechanism.kind == "additive":
        delta, scale = positional[:2]
        grid = [{delta: d, scale: s} for d, s in ADDITIVE]
    else:
        moved = positional[0]
        domain = next(p.domain for p in spec.parameters if p.symbol == moved)
        grid = [{moved: v} for v in sorted({*adversarial_values(domain, extreme=True),
                                            base[moved]})]
    points = [{**base, **values} for values in grid]
    for parameter in keywords:
        for value in adversarial_values(parameter.domain, extreme=True):
            points.append({**points[0], parameter.symbol: value})
    return points


def _arguments(symbols, point) -> tuple:
    return tuple(point[s] for s in symbols)


def _keywords(keywords, point) -> dict:
    return {p.name: point[p.symbol] for p in keywords}


def _probe(function, args, kwargs, value, tolerance=CLOSED_TOLERANCE) -> list[Probe]:
    """A one-element list, or none when the reference could not be computed."""
    if value is None:
        return []
    return [Probe(function, args, kwargs, (value,), (abs(value),), tolerance)]


def _theta_probes(mechanism, positional, keywords, settings) -> list[Probe]:
    reference = Reference(mechanism.theta)
    return [probe for point in settings
            for probe in _probe("rao_dp_theta", _arguments(positional, point),
                                _keywords(keywords, point), reference(point))]


def _calibration_probes(spec, mechanism, keywords, settings) -> list[Probe]:
    if mechanism.calibration is None:
        return []
    reference = Reference(mechanism.calibration)
    probes = []
    if mechanism.kind == "additive":
        name = "rao_dp_scale"
        delta = spec.mechanism.sensitivity
        keyword_points = [settings[0]] + settings[len(ADDITIVE):]
        for point, theta, sensitivity in itertools.product(keyword_points, BUDGETS,
                                                           (1e-6, 1.0, 1e6)):
            values = {**point, THETA: theta, delta: sensitivity}
            probes += _probe(name, (sensitivity, theta), _keywords(keywords, point),
                                 reference(values))
        return probes
    for theta in NEIGHBOUR_BUDGETS:
        values = {**settings[0], THETA: theta}
        probes += _probe("rao_dp_parameter", (theta,), _keywords(keywords, settings[0]),
                             reference(values))
    return probes


def _closed_curve_probes(mechanism, positional, keywords, settings) -> list[Probe]:
    curve = mechanism.renyi
    renyi, kl = Reference(curve.textbook), Reference(curve.kl)
    probes = []
    for point in settings:
        args, kwargs = _arguments(positional, point), _keywords(keywords, point)
        probes += _probe("kl_divergence", args, kwargs, kl(point))
        for alpha in ORDERS:
            probes += _probe("rdp_epsilon", (alpha, *args), kwargs,
                                 renyi({**point, ALPHA: alpha}))
    return probes


def _numeric_curve_probes(derivation, positional, keywords, base) -> list[Probe]:
    """References by mpmath quadrature at the float inputs (:class:`CurveReference`)."""
    delta, scale = positional[:2]
    reference = CurveReference(derivation)
    probes = []
    for sensitivity, noise in NUMERIC_ADDITIVE:
        point = {**base, delta: sensitivity, scale: noise}
        args, kwargs = _arguments(positional, point), _keywords(keywords, point)
        probes += _probe("kl_divergence", args, kwargs, reference.kl(point),
                         NUMERIC_CURVE_TOLERANCE)
        for alpha in NUMERIC_ORDERS:
            probes += _probe("rdp_epsilon", (alpha, *args), kwargs,
                             reference.renyi(point, alpha), NUMERIC_CURVE_TOLERANCE)
    return probes


def _output_probes(derivation, positional, keywords, settings, base) -> list[Probe]:
    """``log_output_density`` and ``privacy_loss`` against the verified log-densities."""
    from raosym.derive.divergence import log_density

    spec, mechanism = derivation.spec, derivation.mechanism
    first = Reference(log_density(mechanism.renyi.first))
    second = Reference(log_density(mechanism.renyi.second))
    probes = []
    for point, outputs in _output_points(spec, mechanism, positional, settings, base):
        args, kwargs = _arguments(positional, point), _keywords(keywords, point)
        for output in outputs:
            values = {**point, spec.variable: output}
            log_first, log_second = first(values), second(values)
            if log_first is None:
                continue
            probes.append(Probe("log_output_density", (output, *args), kwargs, (log_first,),
                                (max(abs(log_first), 1),), CLOSED_TOLERANCE))
            if log_second is not None:
                probes.append(Probe("privacy_loss", (output, *args), kwargs,
                                    (log_first - log_second,),
                                    (abs(log_first) + abs(log_second),), CLOSED_TOLERANCE))
    return probes


def _output_points(spec, mechanism, positional, settings, base) -> list[tuple[dict, list]]:
    """``(parameter point, outputs)`` pairs at which the outputs' functions are probed."""
    if mechanism.kind == "additive":
        delta, scale = positional[:2]
        pairs = []
        for sensitivity, noise in OUTPUT_ADDITIVE:
            outputs = sorted({offset * noise + centre for offset in OUTPUT_OFFSETS
                              for centre in (0.0, sensitivity)} | {sensitivity / 2})
            pairs.append(({**base, delta: sensitivity, scale: noise}, outputs))
        return pairs
    support = spec.support
    if support.kind == "finite" and all(getattr(p, "is_number", False) for p in support.points):
        outputs = [float(p) for p in support.points]
    else:
        outputs = [float(n) for n in OUTPUT_INTEGERS]
    return [(point, outputs) for point in settings]


class CurveReference:
    """The Rényi divergence and KL of a mechanism without closed curve, by mpmath quadrature
    at the float inputs.

    The verify stage's quadrature (:func:`raosym.verify.divergence._numeric_renyi`) cuts at
    the kinks (0 and the sensitivity) and maps algebraic tails (Student-t, Cauchy), and is
    used wherever the integrand peaks near those cuts. Far from privacy a light-tailed
    integrand peaks far from them (a generalized Gaussian of shape 4.9 at order 5: twelve
    scales out, sharper than anything near the cuts) and that quadrature misses the peak
    (1.7e-6 relative); there the integral is cut at the peak and its width on either side
    (found on a grid, then by mpmath's root-finder on the exponent's derivative)."""

    def __init__(self, derivation):
        from raosym.derive.divergence import log_density

        spec, mechanism = derivation.spec, derivation.mechanism
        curve = mechanism.renyi
        self.derivation = derivation
        self.variable = spec.variable
        self.delta, self.scale = mechanism.arguments[:2]
        self.first = Reference(log_density(curve.first))
        self.second = Reference(log_density(curve.second))

    def _logs(self, point, x):
        values = {**point, self.variable: x}
        return self.first.direct(values), self.second.direct(values)

    def renyi(self, point, alpha) -> mpmath.mpf | None:
        from raosym.verify.divergence import _numeric_renyi

        alpha = mpmath.mpf(alpha)
        with mpmath.workdps(NUMERIC_REFERENCE_DIGITS):
            exact = {s: mpmath.mpf(v) for s, v in point.items()}

            def exponent(x):
                first, second = self._logs(exact, x)
                return alpha * first + (1 - alpha) * second

            scale, delta = exact[self.scale], exact[self.delta]
            grid = [delta * i + sign * scale * mpmath.mpf(10) ** (k / 4)
                    for sign in (-1, 1) for k in range(-8, 17) for i in (0, 1)]
            peak = max([0, delta, delta / 2, *grid], key=exponent)
            if min(abs(peak), abs(peak - delta)) <= 3 * scale:
                return _finite(_numeric_renyi(self.derivation, {**exact, ALPHA: alpha}))
            try:
                peak = mpmath.findroot(lambda x: mpmath.diff(exponent, x), peak)
            except (ValueError, ZeroDivisionError):
                pass
            curvature = -mpmath.diff(exponent, peak, 2)
            width = 1 / mpmath.sqrt(curvature) if curvature > 0 else scale
            cuts = sorted({0, delta, peak} | {peak + k * width for k in (-10, -1, 1, 10)})
            top = exponent(peak)
            integral = mpmath.quad(lambda x: mpmath.exp(exponent(x) - top),
                                   [-mpmath.inf, *cuts, mpmath.inf])
            return +((top + mpmath.log(integral)) / (alpha - 1))

    def kl(self, point) -> mpmath.mpf | None:
        from raosym.verify.divergence import _numeric_kl

        with mpmath.workdps(NUMERIC_REFERENCE_DIGITS):
            return _finite(_numeric_kl(self.derivation,
                                       {s: mpmath.mpf(v) for s, v in point.items()}))


def _finite(value):
    """A quadrature reference, or None when it is not finite (the verify stage's mpmath
    caps exp's argument at 1e7): that point is then not judged."""
    return value if mpmath.isfinite(value) else None


__all__ = ["mechanism_probes", "signature"]
