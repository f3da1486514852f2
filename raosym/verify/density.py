"""Validation of a density before anything is derived from it (between spec and derive).

A derivation file can parse and still not describe a family of probability distributions. At
seeded points of the declared domains this checks, with mpmath, that the density is real and
non-negative on the support and that it integrates (sums) to 1 to ``NORMALIZATION_DIGITS``
digits. Failures are :class:`SpecError` (bad input, exit status 2) and show what was found.
"""

from __future__ import annotations

import mpmath

from raosym.errors import SpecError
from raosym.spec.model import FamilySpec
from raosym.spec.points import describe_point, sample_points
from raosym.verify.evaluate import evaluate, mpmath_function
from raosym.verify.quadrature import PrecisionUnreachable, expectation

NORMALIZATION_DIGITS = 20
_WORKING_DIGITS = 30


def probe_values(spec: FamilySpec, point) -> list:
    """Values of the variable at which the density's sign is probed."""
    support = spec.support
    if support.kind == "finite":
        return [evaluate(p, point) for p in support.points]
    lower, upper = evaluate(support.lower, point), evaluate(support.upper, point)
    if support.kind == "integers":
        # 61 integers from the lower end, or ending at the upper one, or around 0 (all of them)
        start = lower if lower > -mpmath.inf else (upper - 60 if upper < mpmath.inf else -30)
        top = min(upper, start + 60)
        return [mpmath.mpf(k) for k in range(int(start), int(top) + 1)]
    values = [lower + (upper - lower) * k / 64 for k in range(1, 64)] if upper < mpmath.inf \
        else []
    origin = lower if lower > -mpmath.inf else mpmath.mpf(0)
    if upper == mpmath.inf:
        values += [origin + mpmath.mpf(10) ** e for e in range(-3, 4)]
        values += [origin + k / mpmath.mpf(4) for k in range(1, 40)]
    if lower == -mpmath.inf:
        values += [-(mpmath.mpf(10) ** e) for e in range(-3, 4)]
        values += [-k / mpmath.mpf(4) for k in range(0, 40)]
    return [value for value in values if lower < value < upper or value in (lower, upper)]


def check_density(spec: FamilySpec, *, count: int = 3) -> None:
    """Raise SpecError unless the density is a normalized, non-negative density (or pmf)."""
    if spec.multivariate:
        return _check_several_variables(spec, count)
    kind = "sum" if spec.support.discrete else "integral"
    with mpmath.workdps(_WORKING_DIGITS):
        for point in sample_points(spec, count)[:count]:
            _check_sign(spec, point)
            _require_mass_one(spec, point, kind, f"'{spec.support.text}'",
                              lambda point=point: expectation(spec, spec.density, point))


def _require_mass_one(spec: FamilySpec, point, kind: str, support: str, mass) -> None:
    """Raise SpecError unless ``mass()``, the density's sum or integral over ``support`` at
    ``point``, is 1; no verdict where it cannot be carried to its precision."""
    try:
        total = mass()
    except PrecisionUnreachable:
        return  # a tail too slow to bound here: no verdict, never a false one
    except (ValueError, ZeroDivisionError, OverflowError, TypeError) as error:
        raise SpecError(
            f"the density could not be integrated at {describe_point(point)}: {error}",
            path=spec.path, key="density") from None
    if not _is_one(total):
        found = mpmath.nstr(total, 15) if abs(total) < 1e30 else "divergent (above 1e30)"
        raise SpecError(
            f"the density does not {'sum' if kind == 'sum' else 'integrate'} to 1: "
            f"its {kind} over the support {support} is {found} at {describe_point(point)} "
            f"(checked with mpmath to {NORMALIZATION_DIGITS} digits); is a normalizing "
            "constant or a minus sign missing?",
            path=spec.path, key="density")


def _is_one(mass) -> bool:
    if not isinstance(mass, mpmath.mpf) or not mpmath.isfinite(mass):
        return False
    return abs(mass - 1) < mpmath.mpf(10) ** (-NORMALIZATION_DIGITS)


def _check_sign(spec: FamilySpec, point) -> None:
    parameters = sorted(point, key=lambda s: s.name)
    density = mpmath_function(spec.density, [spec.variable, *parameters])
    arguments = [point[s] for s in parameters]
    for value in probe_values(spec, point):
        try:
            density_value = density(value, *arguments)
        except (ValueError, ZeroDivisionError, OverflowError) as error:
            raise SpecError(
                f"the density cannot be evaluated at {spec.variable} = {mpmath.nstr(value, 8)}, "
                f"{describe_point(point)}: {error}", path=spec.path, key="density") from None
        if not isinstance(density_value, mpmath.mpf) or density_value < 0:
            shown = mpmath.nstr(density_value, 8)
            raise SpecError(
                f"the density is {'negative' if isinstance(density_value, mpmath.mpf) else 'not real'}"
                f" ({shown}) at {spec.variable} = {mpmath.nstr(value, 8)}, "
                f"{describe_point(point)}; a density must be real and non-negative on its "
                "support", path=spec.path, key="density")


def _check_several_variables(spec: FamilySpec, count: int) -> None:
    """The same checks over several variables: the sign at every node (outcome) of the
    nested rule, the normalization by that rule (:mod:`raosym.verify.multivariate`); first,
    that no group of variables mixes the two kinds, which no rule here sums and integrates
    at once."""
    from raosym.derive.multivariate import coupled_kinds

    if problem := coupled_kinds(spec):
        raise SpecError(problem, path=spec.path, key="density")
    kind = "sum" if all(s.discrete for s in spec.supports) else "integral"
    supports = ", ".join(f"{v} in {s.text}" for v, s in zip(spec.variables, spec.supports))
    with mpmath.workdps(_WORKING_DIGITS):
        for point in sample_points(spec, count)[:count]:
            _require_mass_one(spec, point, kind, f"({supports})",
                              lambda point=point: _signed_mass(spec, point))


def _signed_mass(spec: FamilySpec, point):
    """The mass of a density of several variables at ``point``, after the sign of the density
    at every node (outcome) of the rule that computes it."""
    from raosym.verify.multivariate import negative_value, score_moments

    negative = negative_value(spec, point)
    if negative is not None:
        value, at = negative
        where = ", ".join(f"{v} = {mpmath.nstr(x, 8)}" for v, x in zip(spec.variables, at))
        raise SpecError(
            f"the density is {'negative' if isinstance(value, mpmath.mpf) else 'not real'}"
            f" ({mpmath.nstr(value, 8)}) at {where}, {describe_point(point)}; a "
            "density must be real and non-negative on its support",
            path=spec.path, key="density")
    return score_moments(spec, point, digits=NORMALIZATION_DIGITS, mass_only=True)[0]


__all__ = ["check_density"]
