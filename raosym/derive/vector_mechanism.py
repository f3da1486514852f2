"""A vector additive mechanism: the accounting of ``location = ["m1", ..., "md"]`` under an
ℓ2 or ℓ1 sensitivity bound.

Derive stage, called by :func:`raosym.derive.derive` when the ``[mechanism]`` table names a
vector location (``spec.mechanism.vector``). Input: the family of several sample variables and
its Fisher matrix. Output: a :class:`~raosym.derive.mechanism.MechanismDerivation` whose
budget, calibration and curves are functions of the sensitivity ``Delta`` (the bound on the
norm of the shift ``h = h(D) - h(D')``), with the proof of the supremum over the ball, and a
:class:`VectorLift` saying which norm, which factor, and where the supremum is attained.

The reduction, each step proved here or refused:

1. *Product of identical factors.* ``f(x; m) = prod_i phi(x_i; m_i)`` with one ``phi``. The
   factor needs no integral: setting ``x_j = m_j = 0`` for ``j != 1`` leaves
   ``phi(x_1; m_1) phi(0; 0)**(d-1)``, and ``f(0; 0) = phi(0; 0)**d``. The product is then
   checked symbolically; ``phi`` integrates to 1 because ``f`` does (``(∫phi)**d = 1``).
2. *The scalar mechanism of the factor* is derived as any scalar additive mechanism
   (:func:`raosym.derive.mechanism.additive_mechanism`): ``theta_1 = Delta sqrt(g)``, the
   curve ``eps(alpha, Delta)`` of a shift ``Delta`` (the larger direction), the KL.
3. *Rao-DP.* The metric of the locations is ``g I`` (checked constant), so
   ``d_R = sqrt(g) |h|_2``; its supremum over the ℓ2 ball is ``sqrt(g) Delta`` (on the
   sphere), and over the ℓ1 ball the same (``|h|_2 <= |h|_1``, equality at a vertex).
4. *RDP and KL.* The integrand factorizes, so ``D_alpha(h) = sum_i D_alpha(h_i) <=
   sum_i eps(|h_i|)``. Under ℓ2 the supremum is derived when ``eps(t) = c t**2`` (then the sum
   is ``c |h|_2**2 <= c Delta**2``, attained on the sphere); under ℓ1 when ``eps`` is convex in
   ``t >= 0`` with ``eps(0) = 0`` (proved by SymPy from the sign of the second derivative):
   a convex function vanishing at 0 is superadditive and nondecreasing on ``t >= 0``, so
   ``sum_i eps(|h_i|) <= eps(|h|_1) <= eps(Delta)``, attained at the vertex ``Delta e_1``
   (Mironov 2017, Table II, gives the Laplace curve for the ℓ1 vector Laplace mechanism).
   Any other combination (a non-quadratic curve under ℓ2, a curve without closed form) is
   refused with the reason: its supremum is not derived.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sympy

from raosym.derive.divergence import ALPHA
from raosym.derive.mechanism import THETA, MechanismDerivation, additive_mechanism
from raosym.derive.steps import ProofStep
from raosym.errors import DerivationError
from raosym.spec.model import NORM_NAMES, FamilySpec, Mechanism


@dataclass(frozen=True)
class VectorLift:
    """What the vector mechanism adds to the scalar accounting of its factor."""

    norm: str                                   # "l2" or "l1"
    locations: tuple[sympy.Symbol, ...]         # m_1, ..., m_d
    variables: tuple[sympy.Symbol, ...]         # x_1, ..., x_d
    factor: FamilySpec                          # phi(x_1; m_1), a scalar additive mechanism
    attained: str                               # where the supremum over the ball is reached
    justification: str                          # why the supremum is the scalar curve at Delta

    @property
    def dimension(self) -> int:
        return len(self.locations)


def derive_vector_mechanism(spec: FamilySpec, fisher: sympy.Matrix,
                            budget: float) -> MechanismDerivation:
    """The accounting of a vector additive mechanism (see the module docstring), or
    DerivationError saying which step does not hold."""
    mechanism = spec.mechanism
    locations = tuple(p.symbol for p in mechanism.locations)
    variables = _paired_variables(spec, locations)
    steps: list[ProofStep] = []
    factor = _factor_spec(spec, mechanism, variables, steps)
    metric = _location_metric(spec, fisher, locations, steps)
    scalar = additive_mechanism(factor, sympy.Matrix([[metric]]), budget)
    delta = mechanism.sensitivity
    _rao_supremum(mechanism.norm, scalar.theta, metric, delta, steps)
    attained, justification = _curve_supremum(mechanism.norm, scalar.renyi, delta, steps)
    others = [p.name for p in spec.parameters if p.symbol not in locations]
    manifold = (f"the location family in {', '.join(map(str, locations))} "
                f"({', '.join(others)} held fixed): the mechanism's data-dependent parameters "
                f"are its locations, moved by a shift of {NORM_NAMES[mechanism.norm]} norm at "
                f"most {delta}")
    lift = VectorLift(mechanism.norm, locations, variables, factor, attained, justification)
    return dataclasses.replace(scalar, manifold=manifold, steps=tuple(steps) + scalar.steps,
                               vector=lift)


def _paired_variables(spec: FamilySpec, locations) -> tuple[sympy.Symbol, ...]:
    """The sample variable of each location, by position: ``x_i`` carries ``m_i``."""
    if len(spec.sample_variables) != len(locations):
        raise DerivationError(f"{spec.path}: the vector location has {len(locations)} "
                              f"coordinates but the family {len(spec.sample_variables)} sample "
                              "variables; each location moves the variable in its position")
    supports = {support for _, support in spec.sample_supports}
    if len(supports) != 1 or any(s.free_symbols() & set(spec.sample_variables)
                                 for s in supports):
        raise DerivationError(f"{spec.path}: the sample variables of a vector mechanism need "
                              "one support, the same for every variable")
    return spec.sample_variables


def _factor_spec(spec: FamilySpec, mechanism: Mechanism, variables, steps) -> FamilySpec:
    """The scalar family ``phi(x_1; m_1)`` of which the density is the d-fold product."""
    density = spec.density
    locations = [p.symbol for p in mechanism.locations]
    origin = {s: 0 for s in (*variables, *locations)}
    at_origin = density.subs(origin)
    if not at_origin.is_positive:
        raise DerivationError(f"{spec.path}: the density at x = m = 0 is not provably positive "
                              "(the factor of the product is read there)")
    d = len(variables)
    rest = {s: 0 for s in (*variables[1:], *locations[1:])}
    # f(0; 0) > 0, so its (d-1)/d-th power may be taken termwise (force=True).
    factor = sympy.powsimp(sympy.powdenest(
        density.subs(rest) / at_origin ** sympy.Rational(d - 1, d), force=True), force=True)
    copies = [factor.subs({variables[0]: x, locations[0]: m}, simultaneous=True)
              for x, m in zip(variables, locations)]
    difference = sympy.expand_log(sympy.log(density), force=True) - sum(
        sympy.expand_log(sympy.log(c), force=True) for c in copies)
    if sympy.simplify(sympy.expand(difference)) != 0:
        raise DerivationError(f"{spec.path}: the density is not the product of one factor "
                              f"phi(x_i; m_i) per coordinate (the factor read at the origin, "
                              f"{sympy.sstr(factor)}, does not reproduce it): the supremum over "
                              "the sensitivity ball is derived for independent, identically "
                              "distributed coordinates only")
    steps.append(ProofStep(
        "The density is the product of one factor per coordinate:",
        sympy.Function("f")(*variables), sympy.Mul(*copies, evaluate=False),
        # psi, not phi: the LaTeX backend writes phi as varphi, the name of e^y - 1 - y in
        # the accounting that follows.
        "psi is f with every other variable and location set to 0, divided by f at the "
        "origin to the power (d - 1)/d; the logarithms of the two sides agree term by term, "
        "and psi integrates to 1 since f does", "product density",
        chain=(), also=((sympy.Function("psi")(variables[0], locations[0]), factor),)))
    location = mechanism.locations[0]
    used = factor.free_symbols
    return FamilySpec(
        name=f"{spec.name}_factor", title=f"one coordinate of {spec.title}",
        reference=spec.reference, path=spec.path, sha256=spec.sha256, variable=variables[0],
        support=spec.supports[0], density=factor, coordinates=(location,),
        # Every other parameter the factor uses (a coordinate too) is held fixed in it.
        constants=tuple(dataclasses.replace(p, role="constant") for p in spec.parameters
                        if p.symbol in used and p.symbol != location.symbol),
        mechanism=Mechanism(kind="additive", location=location, scale=mechanism.scale,
                            sensitivity=mechanism.sensitivity))


def _location_metric(spec: FamilySpec, fisher: sympy.Matrix, locations, steps) -> sympy.Expr:
    """``g`` of the locations' block ``g I`` (checked diagonal, equal and location-free)."""
    indices = [spec.coordinate_symbols.index(m) for m in locations]
    block = fisher.extract(indices, indices)
    metric = block[0, 0]
    expected = metric * sympy.eye(len(indices))
    if any(sympy.simplify(a - b) != 0 for a, b in zip(block, expected)) or metric.has(*locations):
        raise DerivationError(f"{spec.path}: the metric of the locations is not a constant "
                              f"multiple of the identity: {sympy.sstr(block)}")
    steps.append(ProofStep(
        "The Fisher metric of the locations (the other parameters fixed) is constant and "
        "isotropic:", sympy.Symbol("g_mm"), metric,
        "the block of the locations in the Fisher matrix is g times the identity, free of the "
        "locations", "fixed-scale metric"))
    return metric


def _rao_supremum(norm: str, theta, metric, delta, steps) -> None:
    """``sup d_R = sqrt(g) Delta`` over the ball of either norm."""
    if sympy.simplify(theta - delta * sympy.sqrt(metric)) != 0:
        raise DerivationError(f"the factor's budget {theta} is not Delta sqrt(g)")
    h = sympy.Symbol("r", nonnegative=True)
    reason = ("the metric is constant, so the geodesics are segments and d_R = sqrt(g) r, with "
              "r the Euclidean length of the shift h; "
              + ("on the l2 ball r <= Delta, with equality on the sphere"
                 if norm == "l2" else
                 "on the l1 ball r is at most the l1 norm of h, at most Delta, with equality "
                 "at the vertices h = Delta e_i and h = -Delta e_i"))
    steps.append(ProofStep(
        f"Rao-DP budget: the supremum of the Rao distance over shifts h of {NORM_NAMES[norm]} "
        f"norm at most {delta}.", sympy.Symbol("d_R"), h * sympy.sqrt(metric), reason,
        "rao-dp", also=((THETA, theta),)))


def _curve_supremum(norm: str, curve, delta, steps) -> tuple[str, str]:
    """``(where attained, why)``: the supremum of ``sum_i eps(|h_i|)`` over the ball is
    ``eps(Delta)``, proved for the RDP curve and the KL alike, or DerivationError."""
    if not curve.closed:
        raise DerivationError("the factor's RDP curve has no closed form, so its supremum over "
                              "the sensitivity ball is not derived")
    steps.append(ProofStep(
        "The Rényi divergence of a shift h adds over the coordinates:",
        sympy.Function("D_alpha")(sympy.Symbol("h")),
        sympy.Sum(sympy.Function("D_alpha")(sympy.Symbol("h_i")), (sympy.Symbol("i"), 1,
                                                                     sympy.Symbol("d"))),
        "the integrand f_D^alpha f_D'^(1-alpha) is a product of one factor per coordinate, so "
        "its integral is the product of the coordinates' integrals (Fubini), and the logarithm "
        "a sum; the same holds for the KL divergence; each term is at most the factor's curve "
        "at the shift |h_i| (the larger direction)", "product density"))
    if norm == "l2":
        return _quadratic_supremum(curve, delta, steps)
    return _convex_supremum(curve, delta, steps)


def _quadratic_supremum(curve, delta, steps) -> tuple[str, str]:
    """Under ℓ2: ``eps(t) = c t**2`` sums to ``c |h|_2**2 <= c Delta**2``."""
    for name, form in (("RDP curve", curve.textbook), ("KL divergence", curve.kl)):
        if sympy.simplify(form / delta**2).has(delta):
            raise DerivationError(f"the factor's {name} {sympy.sstr(form)} is not quadratic in "
                                  f"{delta}, so its supremum over the l2 ball is not derived")
    why = ("each coordinate's curve is c(alpha) t**2 in its shift t, so the sum is c(alpha) "
           "times the squared Euclidean length of h, at most c(alpha) Delta**2 on the l2 ball "
           "and equal to it everywhere on the sphere")
    steps.append(ProofStep(
        f"The supremum over the l2 ball of radius {delta} (every shift on the sphere attains "
        "it):", sympy.Function("epsilon")(ALPHA), curve.textbook, why, "rdp supremum",
        chain=(sympy.Function("c")(ALPHA) * delta**2,)))
    return "every shift on the sphere |h|_2 = Delta", why


def _convex_supremum(curve, delta, steps) -> tuple[str, str]:
    """Under ℓ1: ``eps`` convex on ``t >= 0`` with ``eps(0) = 0`` is superadditive and
    nondecreasing, so the sum is at most ``eps(|h|_1) <= eps(Delta)``."""
    u = sympy.Symbol("u", positive=True)  # alpha = 1 + u > 1
    for name, form in (("RDP curve", curve.textbook), ("KL divergence", curve.kl)):
        if sympy.simplify(form.subs(delta, 0).subs(ALPHA, 1 + u)) != 0:
            raise DerivationError(f"the factor's {name} does not vanish at {delta} = 0")
        second = sympy.factor(sympy.simplify(sympy.diff(form, delta, 2).subs(ALPHA, 1 + u)))
        if second.is_nonnegative is not True:
            raise DerivationError(f"the convexity of the factor's {name} in {delta} is not "
                                  f"proved (its second derivative {sympy.sstr(second)}), so "
                                  "its supremum over the l1 ball is not derived")
        steps.append(ProofStep(
            f"The factor's {name} is convex in the shift (alpha = 1 + u, u > 0):",
            sympy.Derivative(sympy.Function("epsilon")(delta), delta, 2), second,
            "every factor of the second derivative is non-negative", "rdp supremum"))
    why = ("each coordinate's curve epsilon(t) is convex in t >= 0 and vanishes at 0, hence "
           "superadditive (epsilon(a) + epsilon(b) <= epsilon(a + b)) and nondecreasing, so "
           "the sum over the coordinates is at most epsilon at the l1 norm of h, at most "
           "epsilon(Delta), with equality at the vertices h = Delta e_i and h = -Delta e_i; "
           "Mironov (2017), Table II, states the Laplace curve for l1 sensitivity")
    steps.append(ProofStep(
        f"The supremum over the l1 ball of radius {delta} sits at a vertex h = {delta} e_1:",
        sympy.Function("epsilon")(ALPHA), curve.textbook, why, "rdp supremum"))
    return "the vertices h = Delta e_i and h = -Delta e_i of the l1 ball", why


__all__ = ["VectorLift", "derive_vector_mechanism"]
