"""The verify stage: every derived quantity against an independent mpmath computation.

Input: a :class:`Derivation`. Output: a :class:`Verified` (the derivation plus one
:class:`Check` per quantity and point), or :class:`VerificationError` when any check falls short
of :data:`REQUIRED_DIGITS`. ``Verified`` is the only thing the emit stage accepts.

- Fisher entries: ``E[s_i s_j]`` by quadrature (or summation) at seeded points, compared with
  the closed form; off-diagonal zeros are measured against ``sqrt(g_ii g_jj)``.
- Gaussian curvature (two coordinates): the Brioschi formula with mpmath's numerical
  derivatives of the metric, an independent route from the Christoffel symbols.
- Rao distance (at most two coordinates), against the numeric geodesic of
  :mod:`raosym.verify.geodesic` at pairs of points from :func:`distance_pairs` (ordinary,
  nearby, far apart). A closed form is checked in both its forms to :data:`DISTANCE_DIGITS`
  (quantities ``rao_distance`` for the stable form and ``rao_distance_textbook``); at nearby
  pairs only the stable form is compared, because the textbook form cancels there (its
  ``acosh(1 + tiny)`` loses half the working digits even in mpmath). Without a closed form the
  distance from p to q and the one from q to p, solved at two working precisions, must agree to
  :data:`NUMERIC_DISTANCE_DIGITS` (symmetry and solver settings at once), and the geodesic may
  not be longer than the straight coordinate segment.

Alongside the checks, :mod:`raosym.verify.comparison` evaluates a mechanism's privacy
definitions at one calibration (``Verified.comparison``, the LaTeX section's table), so that
the emit stage prints numbers it did not compute.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import mpmath
import sympy

from raosym.derive.fisher import scores
from raosym.derive.steps import Derivation, Unavailable
from raosym.errors import DerivationError, VerificationError
from raosym.spec.points import (
    describe_point,
    distance_pairs,
    nearest_representative,
    sample_points,
)
from raosym.verify.comparison import PrivacyComparison, privacy_comparison
from raosym.verify.density import probe_values
from raosym.verify.divergence import divergence_checks
from raosym.verify.evaluate import evaluate, evaluate_to_precision, mpmath_function
from raosym.verify.geodesic import (
    GEODESIC_DIGITS,
    MetricModel,
    domain_bounds,
    geodesic_distance,
    metric_model,
    straight_segment_length,
)
from raosym.verify import multivariate
from raosym.verify.quadrature import PrecisionUnreachable, expectation

#: Working precision of every numeric check, in decimal digits.
WORKING_DIGITS = 40
#: Digits of agreement a check needs to pass.
REQUIRED_DIGITS = 30
#: Extra digits of the repeated quadrature of a closed Fisher entry that missed
#: REQUIRED_DIGITS at the working precision.
ESCALATION_DIGITS = 20
#: Digits two independent numeric computations of a numeric Fisher entry must share.
NUMERIC_FISHER_DIGITS = 25
#: Digits a closed-form Rao distance must share with the numeric geodesic.
DISTANCE_DIGITS = 20
#: Digits two numeric geodesic solves (p to q, q to p, two precisions) must share.
NUMERIC_DISTANCE_DIGITS = 10
#: Working precisions of those two solves (polygamma metrics make each evaluation costly).
_NUMERIC_ONLY_SETTINGS = (20, 26)
#: The same for a one-coordinate metric known only numerically (an integral of quadratures:
#: every digit costs nodes of both).
_NUMERIC_METRIC_SETTINGS = (11, 12)


@dataclass(frozen=True)
class Check:
    """One comparison of a symbolic value with its numeric counterpart."""

    quantity: str
    point: dict
    symbolic: str
    numeric: str
    digits: float
    required: float = REQUIRED_DIGITS
    #: False when the numeric side could not be carried to the required precision (a sum whose
    #: tail falls too slowly to bound): the check says so, and ``numeric`` why, instead of
    #: reporting a disagreement. It neither passes nor fails.
    reached: bool = True

    @property
    def passed(self) -> bool:
        return self.reached and self.digits >= self.required


@dataclass(frozen=True)
class Verified:
    """A derivation whose every check passed."""

    derivation: Derivation
    checks: tuple[Check, ...]
    #: A mechanism's privacy definitions at one calibration (the LaTeX section's table).
    comparison: PrivacyComparison | None = None

    #: The working and required digits of the iterated quadrature over several continuous
    #: variables (the appendix states them once).
    quadrature_digits = (multivariate.QUADRATURE_WORKING_DIGITS,
                         multivariate.QUADRATURE_REQUIRED_DIGITS)

    @property
    def working_digits(self) -> int:
        """The precision of the Fisher checks (printed in the generated files' verification
        records): the iterated quadrature over several continuous variables works at fewer
        digits than everything else."""
        spec = self.derivation.spec
        return multivariate.fisher_precision(spec)[0] if spec.multivariate else WORKING_DIGITS

    @property
    def required_digits(self) -> int:
        """The digits each closed Fisher entry and the curvature must reach."""
        spec = self.derivation.spec
        return multivariate.fisher_precision(spec)[1] if spec.multivariate else REQUIRED_DIGITS

    @property
    def unavailable(self):
        """What the family does not deliver, with the reasons (derive and verify stages)."""
        return self.derivation.unavailable

    @property
    def min_digits(self) -> float:
        """The worst agreement among the checks of the Fisher entries (closed ones held to
        :data:`REQUIRED_DIGITS`, numeric ones to :data:`NUMERIC_FISHER_DIGITS`) and the
        curvature; distance checks have their own, listed requirements."""
        return min(check.digits for check in self.checks if check.reached and (
            check.required == REQUIRED_DIGITS
            or (check.required == NUMERIC_FISHER_DIGITS and check.quantity.startswith("g_"))))


def digits_of_agreement(symbolic, numeric, scale=None) -> float:
    """``-log10`` of the error relative to ``scale`` (default: the value), capped at the
    working precision."""
    if mpmath.isinf(symbolic) and symbolic == numeric:
        return float(WORKING_DIGITS)  # both sides found the same divergence (D_alpha = +oo)
    scale = scale if scale is not None else max(abs(symbolic), abs(numeric))
    error = abs(symbolic - numeric)
    if error == 0 or scale == 0:
        return float(WORKING_DIGITS) if error == 0 else 0.0
    return float(min(WORKING_DIGITS, max(0, -mpmath.log10(error / scale))))


def _check(quantity, point, symbolic, numeric, scale=None, required=REQUIRED_DIGITS,
           precision=WORKING_DIGITS) -> Check:
    """A comparison; ``precision`` caps the digits claimed (two sides computed at 20 digits
    that agree exactly agree to 20 digits, not to the working precision)."""
    return Check(
        quantity,
        describe_point(point),
        mpmath.nstr(symbolic, 35),
        mpmath.nstr(numeric, 35),
        round(min(digits_of_agreement(symbolic, numeric, scale), precision), 1),
        required,
    )


def fisher_checks(derivation: Derivation, points) -> list[Check]:
    """Closed entries against quadrature; numeric entries by two independent methods."""
    spec = derivation.spec
    if spec.multivariate:  # nested sums and iterated quadrature over several variables
        return multivariate.fisher_checks(derivation, points, _check, _not_reached)
    score = scores(spec)
    integrands = {entry: score[entry.row] * score[entry.column] * spec.density
                  for entry in derivation.entries}
    checks = []
    for point in points:
        try:
            checks += _fisher_checks_at(spec, derivation.entries, score, integrands, point)
        except PrecisionUnreachable as error:
            checks += [_not_reached(_entry_name(spec, entry), point, str(error),
                                    _required(entry)) for entry in derivation.entries]
    return checks


def _not_reached(quantity, point, reason, required=REQUIRED_DIGITS) -> Check:
    """A check whose numeric side could not be carried to its precision at ``point``."""
    return Check(quantity, describe_point(point), "", f"not reached: {reason}", 0.0, required,
                 reached=False)


def _required(entry) -> float:
    """The digits a Fisher entry's check requires: closed forms and numeric entries differ."""
    return REQUIRED_DIGITS if entry.value is not None else NUMERIC_FISHER_DIGITS


def _entry_name(spec, entry) -> str:
    return f"g_{spec.coordinates[entry.row].name}_{spec.coordinates[entry.column].name}"


def _fisher_checks_at(spec, entries, score, integrands, point) -> list[Check]:
    """The checks of every entry at one point (raises PrecisionUnreachable when a numeric
    side cannot be carried to the working precision there)."""
    checks, values = [], {}
    for entry in entries:
        values[entry] = _fisher_pair(spec, entry, score, integrands[entry], point)
    diagonal = {entry.row: value[0] for entry, value in values.items()
                if entry.row == entry.column}
    for entry in entries:
        i, j = entry.row, entry.column
        scale = mpmath.sqrt(abs(diagonal[i] * diagonal[j]))
        if (entry.value is not None
                and digits_of_agreement(*values[entry], scale) < REQUIRED_DIGITS):
            # The quadrature may be what fell short (a kink with |x - mu|**(N - 1) next
            # to it loses 14 of 40 digits): it is repeated at a higher precision, and the
            # check is the comparison there, never a disagreement of the coarse one.
            with mpmath.workdps(mpmath.mp.dps + ESCALATION_DIGITS):
                values[entry] = _fisher_pair(spec, entry, score, integrands[entry], point)
    for entry, (first, second) in values.items():
        i, j = entry.row, entry.column
        scale = mpmath.sqrt(abs(diagonal[i] * diagonal[j]))
        checks.append(_check(_entry_name(spec, entry), point, first, second, scale,
                             required=_required(entry)))
    return checks


def _fisher_pair(spec, entry, score, integrand, point) -> tuple:
    """``(derived value, quadrature)`` of an entry at the working precision (for a numeric
    entry, the second method against the quadrature)."""
    numeric = expectation(spec, integrand, point)
    if entry.value is None:
        return second_method(spec, entry, score, point), numeric
    return evaluate(entry.value, point), numeric


def second_method(spec, entry, score, point) -> mpmath.mpf:
    """A numeric entry computed a second, independent way: minus the expected Hessian of the
    log-density (a different integrand, equal by the information identity) when the
    log-density is smooth in the coordinates; else the score product by Gauss-Legendre
    quadrature instead of tanh-sinh."""
    row, column = spec.coordinate_symbols[entry.row], spec.coordinate_symbols[entry.column]
    hessian = sympy.diff(score[entry.row], column)
    if not hessian.has(sympy.Abs, sympy.sign, sympy.Heaviside, sympy.DiracDelta):
        return -expectation(spec, hessian * spec.density, point)
    integrand = score[entry.row] * score[entry.column] * spec.density
    return expectation(spec, integrand, point, method="gauss-legendre")


def brioschi_curvature(metric_functions, u, v) -> mpmath.mpf:
    """Gaussian curvature of ``E du^2 + 2F du dv + G dv^2`` by the Brioschi formula."""
    e_, f_, g_ = metric_functions

    def d(function, du, dv):
        return mpmath.diff(function, (u, v), (du, dv))

    E, F, G = e_(u, v), f_(u, v), g_(u, v)
    first = mpmath.matrix([
        [-d(e_, 0, 2) / 2 + d(f_, 1, 1) - d(g_, 2, 0) / 2, d(e_, 1, 0) / 2, d(f_, 1, 0) - d(e_, 0, 1) / 2],
        [d(f_, 0, 1) - d(g_, 1, 0) / 2, E, F],
        [d(g_, 0, 1) / 2, F, G],
    ])
    second = mpmath.matrix([
        [0, d(e_, 0, 1) / 2, d(g_, 1, 0) / 2],
        [d(e_, 0, 1) / 2, E, F],
        [d(g_, 1, 0) / 2, F, G],
    ])
    return (mpmath.det(first) - mpmath.det(second)) / (E * G - F**2) ** 2


#: The most digits the Brioschi value is carried to before its check is reported unreached.
_BRIOSCHI_MAX_DIGITS = 320


def settled_brioschi_curvature(metric_functions, u, v) -> mpmath.mpf:
    """The Brioschi value to the working precision's digits: computed at twice the digits,
    and twice again, until two values agree (the point's values are exact binary numbers,
    the same at any precision). Its numerical derivatives and determinants cancel where the
    metric's entries span many scales: the categorical family in log-odds at a1 = 40 kept
    24 of 40 digits of K = 1/4, a true curvature refused. Raises PrecisionUnreachable when
    even :data:`_BRIOSCHI_MAX_DIGITS` do not settle it."""
    target = digits = mpmath.mp.dps
    value = brioschi_curvature(metric_functions, u, v)
    while digits < _BRIOSCHI_MAX_DIGITS:
        digits *= 2
        with mpmath.workdps(digits):
            finer = brioschi_curvature(metric_functions, u, v)
            if abs(finer - value) <= abs(finer) * mpmath.mpf(10) ** (3 - target):
                return +finer
            value = finer
    raise PrecisionUnreachable(f"the Brioschi value of the curvature does not settle at "
                               f"{_BRIOSCHI_MAX_DIGITS} digits here")


def curvature_checks(derivation: Derivation, points) -> list[Check]:
    curvature = derivation.geometry.gaussian_curvature
    if curvature is None:
        return []
    spec, fisher = derivation.spec, derivation.fisher
    u, v = spec.coordinate_symbols
    checks = []
    for point in points:
        rest = {s: value for s, value in point.items() if s not in (u, v)}
        functions = [
            _bind(mpmath_function(fisher[a, b].subs(rest), [u, v]))
            for a, b in ((0, 0), (0, 1), (1, 1))
        ]
        try:
            numeric = settled_brioschi_curvature(functions, point[u], point[v])
        except PrecisionUnreachable as error:
            checks.append(_not_reached("K", point, str(error)))
            continue
        try:
            symbolic = evaluate_to_precision(curvature, point)
        except ZeroDivisionError:
            # The derived form divides by an exact 0 here (a removable singularity of the form,
            # or a pole the Brioschi value would have shown): no verdict at this point, never
            # a false one; the other points decide.
            checks.append(_not_reached("K", point, "the derived curvature divides by zero "
                                       "at this point"))
            continue
        except ArithmeticError as error:  # the form does not settle even at 1280 digits
            checks.append(_not_reached("K", point, f"the derived curvature cannot be "
                                       f"evaluated here: {error}"))
            continue
        checks.append(_check("K", point, symbolic, numeric))
    return checks


def distance_checks(derivation: Derivation) -> list[Check]:
    """The Rao distance against numeric geodesics (no checks beyond two coordinates)."""
    distance = derivation.distance
    if distance is None:
        return []
    premises = period_checks(derivation, sample_points(derivation.spec, 3))
    if distance.closed:
        return premises + _closed_distance_checks(derivation)
    return premises + _numeric_distance_checks(derivation)


def _closed_distance_checks(derivation: Derivation) -> list[Check]:
    spec, distance = derivation.spec, derivation.distance
    first, second = distance.points
    constants = spec.constant_symbols
    symbols = [*first, *second, *constants]
    forms = {"rao_distance": mpmath_function(distance.stable, symbols),
             "rao_distance_textbook": mpmath_function(distance.textbook, symbols)}
    checks = []
    for kind, one, two in distance_pairs(spec):
        two = nearest_representative(distance.periods, one, two)
        point = _pair_point(distance, spec, one, two)
        arguments = [point[s] for s in symbols]
        model = metric_model(derivation, {c: one[c] for c in constants})
        numeric = geodesic_distance(model, [one[c] for c in spec.coordinate_symbols],
                                    [two[c] for c in spec.coordinate_symbols]).distance
        for quantity, form in forms.items():
            if kind == "nearby" and quantity == "rao_distance_textbook":
                continue  # the textbook form cancels here; the stable form is the one checked
            with mpmath.workdps(WORKING_DIGITS):
                value = mpmath.mpf(form(*arguments))
            checks.append(_check(quantity, point, value, numeric, required=DISTANCE_DIGITS))
    return checks


def numeric_distance_pairs(derivation: Derivation) -> list:
    """The pairs at which a distance without closed form is verified (and the emitted code
    judged against the verified values): ordinary, nearby and moderately far pairs, since far
    pairs of these families make long, costly geodesics; for a metric known only numerically,
    where every value of the integrand is itself a quadrature, a nearby pair and a far one
    nearer still (2x and 2 apart), the random ordinary pair left out (it may cross the
    whole sampled range, a minute of nested quadrature)."""
    if derivation.numeric_metric:
        return distance_pairs(derivation.spec, far_ratio=2, far_shift=2, ordinary=0, nearby=1)
    return distance_pairs(derivation.spec, far_ratio=4, far_shift=4, ordinary=1, nearby=1)


def quadrature_metric_model(derivation: Derivation, constants: dict,
                            second: bool = False) -> MetricModel:
    """The metric of a one-coordinate family whose entry is known only numerically, each
    value a quadrature of ``s² f`` at the working precision (``second``: by
    :func:`second_method`, the independent way the entry itself was certified)."""
    spec = derivation.spec
    (entry,) = derivation.entries
    score = scores(spec)
    theta = spec.coordinate_symbols[0]
    integrand = score[0] ** 2 * spec.density

    def metric(value):
        point = {**constants, theta: value}
        if second:
            return [second_method(spec, entry, score, point)]
        return [expectation(spec, integrand, point)]

    bounds = tuple(domain_bounds(p.domain) for p in spec.coordinates)
    return MetricModel(spec.coordinate_symbols, bounds, metric, None, None,
                       length_rule="gauss-legendre")


def _numeric_distance_checks(derivation: Derivation) -> list[Check]:
    """No closed form: d(p, q) at one precision against d(q, p) at another, and the geodesic
    no longer than the straight segment (one coordinate: the segment is the geodesic). A
    one-coordinate metric known only numerically is integrated once through the quadrature
    of the score product and once through minus the expected Hessian of the log-density."""
    spec, distance = derivation.spec, derivation.distance
    coordinates, constants = spec.coordinate_symbols, spec.constant_symbols
    checks = []
    numeric_metric = derivation.numeric_metric
    low, high = _NUMERIC_METRIC_SETTINGS if numeric_metric else _NUMERIC_ONLY_SETTINGS
    for kind, one, two in numeric_distance_pairs(derivation):
        two = nearest_representative(distance.periods, one, two)
        fixed = {c: one[c] for c in constants}
        p, q = [one[c] for c in coordinates], [two[c] for c in coordinates]
        if numeric_metric:
            forward = geodesic_distance(quadrature_metric_model(derivation, fixed), p, q,
                                        digits=low).distance
            backward = geodesic_distance(quadrature_metric_model(derivation, fixed, True), q,
                                         p, digits=high).distance
            point = _pair_point(distance, spec, one, two)
            checks.append(_check("rao_distance", point, forward, backward,
                                 required=NUMERIC_DISTANCE_DIGITS, precision=low))
            continue
        model = metric_model(derivation, fixed)
        forward = geodesic_distance(model, p, q, digits=low).distance
        backward = geodesic_distance(model, q, p, digits=high).distance
        straight = straight_segment_length(model, p, q, digits=low)
        # The straight segment may itself be (nearly) a geodesic: only a geodesic longer by
        # more than the solves' agreement is a failure.
        if forward > straight * (1 + mpmath.mpf(10) ** -NUMERIC_DISTANCE_DIGITS):
            raise VerificationError(
                f"{spec.path}: the numeric geodesic from {p} to {q} is longer "
                f"({mpmath.nstr(forward, 15)}) than the straight segment "
                f"({mpmath.nstr(straight, 15)}): it is not the shortest curve")
        point = _pair_point(distance, spec, one, two)
        checks.append(_check("rao_distance", point, forward, backward,
                             required=NUMERIC_DISTANCE_DIGITS, precision=low))
    return checks


def period_checks(derivation: Derivation, points) -> list[Check]:
    """The density at ``c + P`` against the density at ``c`` for each periodic coordinate
    ``c`` of the distance (period ``P``), at the sampled points and across the support."""
    distance, spec = derivation.distance, derivation.spec
    if distance is None:
        return []
    checks = []
    density = spec.density
    for c, period in distance.periods:
        for point in points:
            shifted = {**point, c: point[c] + evaluate(period, {})}
            for x in probe_values(spec, point)[::8]:
                value = evaluate(density, {**shifted, spec.variable: x})
                reference = evaluate(density, {**point, spec.variable: x})
                checks.append(_check("periodicity", {**point, spec.variable: x},
                                     value, reference))
    return checks


def _pair_point(distance, spec, one, two) -> dict:
    """The two points as one dictionary ``mu_1, sigma_1, mu_2, sigma_2, constants``."""
    first, second = distance.points
    point = {s: one[c] for s, c in zip(first, spec.coordinate_symbols)}
    point.update({s: two[c] for s, c in zip(second, spec.coordinate_symbols)})
    point.update({c: one[c] for c in spec.constant_symbols})
    return point


def _bind(function):
    # lambdify of a constant ignores its arguments' types; make every entry return an mpf.
    return lambda a, b: mpmath.mpf(function(a, b))


def verify(derivation: Derivation, *, count: int = 5) -> Verified:
    """Check every derived quantity.

    The Fisher matrix and the curvature must pass (else VerificationError: nothing of the
    family is delivered). The Rao distance and the privacy accounting that fail, or whose check
    cannot be carried out, are dropped from the result and recorded as unavailable with the
    reason, so that the family still delivers every quantity that verified."""
    with mpmath.workdps(WORKING_DIGITS):
        points = sample_points(derivation.spec, count)
        checks = fisher_checks(derivation, points) + curvature_checks(derivation, points)
    _raise_on_failure(derivation, checks)
    # The geodesics use the Christoffel symbols of a metric that has just passed its checks.
    with mpmath.workdps(GEODESIC_DIGITS):
        derivation, distance = _optional_checks(
            derivation, "Rao distance", lambda: distance_checks(derivation), distance=None)
    derivation, divergences = _optional_checks(  # mechanisms: Rao-DP, RDP, KL
        derivation, "privacy accounting", lambda: divergence_checks(derivation, _check),
        mechanism=None)
    return Verified(derivation, tuple(checks + distance + divergences),
                    privacy_comparison(derivation))


#: What a check of an optional quantity may raise when it cannot be carried out.
_CHECK_FAILURES = (VerificationError, DerivationError, ArithmeticError, ValueError, mpmath.libmp.NoConvergence)


def _optional_checks(derivation: Derivation, quantity: str, run, **dropped):
    """``(derivation, checks)``: the checks of an optional quantity when they all pass; else
    the derivation without it (``dropped`` says which fields to clear) and no checks."""
    try:
        checks = run()
        failure = _failure_message(derivation, checks)
    except _CHECK_FAILURES as error:
        failure = f"its check could not be carried out: {str(error) or type(error).__name__}"
    if failure is None:
        return derivation, checks
    unavailable = Unavailable(quantity, f"derived but not verified: {failure}")
    return dataclasses.replace(derivation, unavailable=(*derivation.unavailable, unavailable),
                               **dropped), []


def _failure_message(derivation: Derivation, checks: list[Check]) -> str | None:
    failed = [check for check in checks if check.reached and not check.passed]
    if failed:
        first = failed[0]
        return (f"{len(failed)} of {len(checks)} checks failed; first: {first.quantity} at "
                f"{first.point}: symbolic {first.symbolic} vs numeric {first.numeric} "
                f"({first.digits} digits agree, {first.required:g} required)")
    # A quantity whose every check fell short of its precision is not verified.
    reached = {check.quantity for check in checks if check.reached}
    unchecked = [check for check in checks if check.quantity not in reached]
    if unchecked:
        first = unchecked[0]
        return (f"{first.quantity} could not be checked to {first.required:g} digits at any "
                f"point; at {first.point}: {first.numeric}")
    return None


def _raise_on_failure(derivation: Derivation, checks: list[Check]) -> None:
    failure = _failure_message(derivation, checks)
    if failure is not None:
        raise VerificationError(f"{derivation.spec.path}: {failure}")


__all__ = ["DISTANCE_DIGITS", "REQUIRED_DIGITS", "Check", "Verified", "verify"]
