"""The verify stage: every derived quantity against an independent mpmath computation.

Input: a :class:`Derivation`. Output: a :class:`Verified` (the derivation plus one
:class:`Check` per quantity and point), or :class:`VerificationError` when any check falls short
of :data:`REQUIRED_DIGITS`. ``Verified`` is the only thing the emit stage accepts.

- Fisher entries: ``E[s_i s_j]`` by quadrature (or summation) at seeded points, compared with
  the closed form; off-diagonal zeros are measured against ``sqrt(g_ii g_jj)``.
- Gaussian curvature (two coordinates): the Brioschi formula with mpmath's numerical
  derivatives of the metric, an independent route from the Christoffel symbols.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath

from raosym.derive.fisher import scores
from raosym.derive.steps import Derivation
from raosym.errors import VerificationError
from raosym.verify.evaluate import evaluate, mpmath_function
from raosym.verify.points import describe_point, sample_points
from raosym.verify.quadrature import expectation

#: Working precision of every numeric check, in decimal digits.
WORKING_DIGITS = 40
#: Digits of agreement a check needs to pass.
REQUIRED_DIGITS = 30


@dataclass(frozen=True)
class Check:
    """One comparison of a symbolic value with its numeric counterpart."""

    quantity: str
    point: dict
    symbolic: str
    numeric: str
    digits: float

    @property
    def passed(self) -> bool:
        return self.digits >= REQUIRED_DIGITS


@dataclass(frozen=True)
class Verified:
    """A derivation whose every check passed."""

    derivation: Derivation
    checks: tuple[Check, ...]

    @property
    def min_digits(self) -> float:
        return min(check.digits for check in self.checks)


def digits_of_agreement(symbolic, numeric, scale=None) -> float:
    """``-log10`` of the error relative to ``scale`` (default: the value), capped at the
    working precision."""
    scale = scale if scale is not None else max(abs(symbolic), abs(numeric))
    error = abs(symbolic - numeric)
    if error == 0 or scale == 0:
        return float(WORKING_DIGITS) if error == 0 else 0.0
    return float(min(WORKING_DIGITS, max(0, -mpmath.log10(error / scale))))


def _check(quantity, point, symbolic, numeric, scale=None) -> Check:
    return Check(
        quantity,
        describe_point(point),
        mpmath.nstr(symbolic, 35),
        mpmath.nstr(numeric, 35),
        round(digits_of_agreement(symbolic, numeric, scale), 1),
    )


def fisher_checks(derivation: Derivation, points) -> list[Check]:
    spec, fisher = derivation.spec, derivation.fisher
    score = scores(spec)
    checks = []
    for point in points:
        diagonal = [evaluate(fisher[i, i], point) for i in range(fisher.rows)]
        for entry in derivation.entries:
            i, j = entry.row, entry.column
            name = f"g_{spec.coordinates[i].name}_{spec.coordinates[j].name}"
            symbolic = evaluate(entry.value, point)
            numeric = expectation(spec, score[i] * score[j] * spec.density, point)
            scale = mpmath.sqrt(abs(diagonal[i] * diagonal[j]))
            checks.append(_check(name, point, symbolic, numeric, scale))
    return checks


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
        numeric = brioschi_curvature(functions, point[u], point[v])
        checks.append(_check("K", point, evaluate(curvature, point), numeric))
    return checks


def _bind(function):
    # lambdify of a constant ignores its arguments' types; make every entry return an mpf.
    return lambda a, b: mpmath.mpf(function(a, b))


def verify(derivation: Derivation, *, count: int = 5) -> Verified:
    """Check every derived quantity; raise VerificationError if any check fails."""
    with mpmath.workdps(WORKING_DIGITS):
        points = sample_points(derivation.spec, count)
        checks = fisher_checks(derivation, points) + curvature_checks(derivation, points)
    failed = [check for check in checks if not check.passed]
    if failed:
        first = failed[0]
        raise VerificationError(
            f"{derivation.spec.path}: {len(failed)} of {len(checks)} checks failed; first: "
            f"{first.quantity} at {first.point}: symbolic {first.symbolic} vs numeric "
            f"{first.numeric} ({first.digits} digits agree, {REQUIRED_DIGITS} required)",
        )
    return Verified(derivation, tuple(checks))


__all__ = ["Check", "Verified", "verify", "REQUIRED_DIGITS"]
