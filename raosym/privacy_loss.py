"""The privacy-loss random variable of one release, L = log f_D(X)/f_D'(X) with X ~ f_D.

Where it sits: the applications layer, after emit, beside :mod:`raosym.account`; used by
:mod:`raosym.pld` (PLDs for dp_accounting). Nothing is derived here.

- :func:`discrete_log_masses`: for a finite discrete support, the exact log-masses of the two
  adjacent outputs at every support point.
"""

from __future__ import annotations

import math

from raosym.account import AccountingError


def discrete_log_masses(mechanism, values: dict, spec) -> tuple[dict, dict]:
    """``({x: log f_D(x)}, {x: log f_D'(x)})`` over the finite support of ``spec``.

    The masses are the derivation file's probability mass function, evaluated by SymPy at 30
    digits with the parameter values (D) and with the mechanism's neighbour map or location
    shift applied (D'). Raises when the support is infinite, or when f_D' does not sum to 1
    over it (its mass would lie outside the support).
    """
    import sympy

    support = spec.support
    numbers = {p.symbol: sympy.Rational(repr(float(values[p.name])))
               for p in spec.parameters if p.name in values}
    if support.kind != "finite" or not support.points:
        raise AccountingError(
            f"mechanism {spec.name}: its support '{support.text}' is discrete but not a finite "
            "set of points, so its privacy-loss distribution cannot be enumerated")
    first, second = _adjacent_densities(spec, values)
    x = spec.variable
    log_first, log_second = {}, {}
    for point in support.points:
        point = sympy.sympify(point).subs(numbers)
        key = float(point)
        log_first[key] = _log_mass(first.subs(numbers).subs(x, point))
        log_second[key] = _log_mass(second.subs(numbers).subs(x, point))
    for name, masses in (("D", log_first), ("D'", log_second)):
        total = math.fsum(math.exp(v) for v in masses.values())
        if abs(total - 1.0) > 1e-12:
            raise AccountingError(
                f"mechanism {spec.name}: the output on {name} puts mass {total:.15g} on the "
                f"support {support.text}, not 1")
    return log_first, log_second


def _adjacent_densities(spec, values: dict):
    """The density of the outputs on D and on D' (as SymPy expressions in the variable)."""
    mechanism = spec.mechanism
    if mechanism.kind == "additive":
        mu = mechanism.location.symbol
        import sympy

        delta = sympy.Rational(repr(float(values["sensitivity"])))
        return spec.density.subs(mu, 0), spec.density.subs(mu, delta)
    return spec.density, spec.density.subs(dict(mechanism.neighbour))


def _log_mass(expr) -> float:
    import sympy

    value = sympy.N(expr, 30)
    if value == 0:
        return -math.inf
    return float(sympy.N(sympy.log(value), 30))


def load_loss(mechanism, values: dict, spec):
    """The discretizable privacy loss of a continuous mechanism (not available yet)."""
    raise AccountingError(
        f"mechanism {mechanism.name}: no PLD model yet for noise that is neither Gaussian nor "
        "Laplace nor discrete")
