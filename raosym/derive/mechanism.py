"""A family as a noise mechanism: Rao-DP budget, calibration, conversions, composition, RDP.

Derive stage, called by :func:`raosym.derive.derive` when the derivation file has a
``[mechanism]`` table (``spec.mechanism``). Input: the spec and its derived Fisher matrix and
Rao distance. Output: a :class:`MechanismDerivation`.

*Which manifold.* A mechanism's data-dependent parameters are its coordinates here (the
location of an additive mechanism, ``p`` of randomized response); every other parameter, the
noise scale included, is held fixed. The Fisher metric of that sub-family is the restriction
of the family's metric (its ``g_mumu`` entry for an additive mechanism), and the Rao-DP budget
is the Rao distance *in that sub-family*: the two-parameter (location, scale) manifold has
shorter curves between the same two densities (Soto 2025; MATH.md §2).

- Additive (``location``, ``scale``): the metric ``g_mumu`` does not depend on the location
  (checked), so the distance between outputs at ``h(D)`` and ``h(D')`` is
  ``|h(D) - h(D')| sqrt(g_mumu)``, the budget at sensitivity ``Delta`` is
  ``theta = Delta sqrt(g_mumu)``, and ``k = scale * sqrt(g_mumu)`` is a dimensionless constant
  (checked free of the scale), whence the calibration ``scale >= Delta k / theta``.
- Neighbour map (``p -> 1 - p``): the budget is the family's Rao distance between ``p`` and its
  image, put in a cancellation-free form (``asin`` differences, below).
- Composition: the joint release of two independent mechanisms is the product family, whose
  Fisher metric is block-diagonal (the cross expectation factors into ``E[s_1] E[s_2] = 0``);
  in its constant metric the budget is ``sqrt(theta_1**2 + theta_2**2)``.
- Conversions of the literature's calibrations into Rao-DP budgets, each a derived statement,
  applied when the family's density *is* that mechanism's density (checked symbolically).
- The RDP curve and KL divergence between the adjacent outputs (:mod:`raosym.derive.divergence`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from raosym.derive.budget import DEFAULT_BUDGET
from raosym.derive.divergence import RenyiCurve, derive_renyi
from raosym.derive.integrals import absorb_into_gamma
from raosym.derive.outputs import OutputForms, output_forms
from raosym.derive.steps import ProofStep
from raosym.errors import DerivationError
from raosym.spec.model import FamilySpec

#: The Rao-DP budget, as the argument of the calibration.
THETA = sympy.Symbol("theta", positive=True)


@dataclass(frozen=True)
class Conversion:
    """A literature calibration and the Rao-DP budget it gives (a derived statement)."""

    name: str            # e.g. "epsilon-DP Laplace"
    source: str          # where the calibration comes from
    scale: sympy.Expr    # the scale as the calibration sets it
    theta: sympy.Expr    # the Rao-DP budget at that scale
    parameters: tuple[sympy.Symbol, ...]  # epsilon, delta, mu


@dataclass(frozen=True)
class MechanismDerivation:
    """Everything derived for a mechanism (not yet checked numerically)."""

    kind: str                            # "additive" or "neighbour"
    manifold: str                        # which family the distances are taken in
    arguments: tuple[sympy.Symbol, ...]  # of the accounting functions (sensitivity, scale, ...)
    theta: sympy.Expr                    # Rao-DP budget (textbook form)
    theta_stable: sympy.Expr             # the same, cancellation-free
    metric: sympy.Expr | None            # g_mumu at fixed scale (additive)
    constant: sympy.Expr | None          # k (additive)
    calibration: sympy.Expr | None       # the scale (or parameter) for a budget THETA
    calibrated: sympy.Symbol | None      # the symbol the calibration solves for
    conversions: tuple[Conversion, ...]
    composition: sympy.Expr | None       # budget of two copies with scales s1, s2
    renyi: RenyiCurve
    outputs: OutputForms                 # log f_D, log f_D' in the forms the code evaluates
    steps: tuple[ProofStep, ...]
    #: The symbol of the Rao-DP budget in the calibration.
    budget: sympy.Symbol = THETA
    #: A vector mechanism's lift of its factor's accounting to the sensitivity ball
    #: (:class:`raosym.derive.vector_mechanism.VectorLift`); None for a scalar mechanism.
    vector: object | None = None


def derive_mechanism(spec: FamilySpec, fisher: sympy.Matrix, distance,
                     *, budget: float = DEFAULT_BUDGET) -> MechanismDerivation | None:
    """The mechanism's accounting, or None when the file has no ``[mechanism]`` table."""
    mechanism = spec.mechanism
    if mechanism is None:
        return None
    if mechanism.vector:
        from raosym.derive.vector_mechanism import derive_vector_mechanism

        return derive_vector_mechanism(spec, fisher, budget)
    if mechanism.kind == "additive":
        return additive_mechanism(spec, fisher, budget)
    return _neighbour(spec, distance, budget)


# ----------------------------------------------------------------------------- additive


def additive_mechanism(spec: FamilySpec, fisher: sympy.Matrix,
                       budget: float) -> MechanismDerivation:
    """A scalar additive mechanism (also the factor of a vector one, whose lift is in
    :mod:`raosym.derive.vector_mechanism`)."""
    mechanism = spec.mechanism
    mu, scale, delta = mechanism.location.symbol, mechanism.scale.symbol, mechanism.sensitivity
    x = spec.variable
    others = [p.name for p in spec.parameters if p.symbol not in (mu,)]
    manifold = (f"the location family in {mu} alone ({', '.join(others)} held fixed): the "
                "mechanism's data-dependent parameter is its location; the noise scale is not "
                "a coordinate")
    steps = []
    shifted = sympy.simplify(spec.density.subs(x, x + mu) - spec.density.subs(mu, 0))
    if shifted != 0:
        raise DerivationError(f"{spec.path}: [mechanism] location '{mu}' is not a location "
                              "parameter: f(x + mu; mu) depends on mu")
    steps.append(ProofStep(f"{mu} is a location parameter: f(x + {mu}; {mu}) = f(x; 0).",
                           spec.density.subs(x, x + mu), spec.density.subs(mu, 0),
                           f"substituting x + {mu} for x, every {mu} cancels", "location family"))
    index = spec.coordinate_symbols.index(mu)
    metric = fisher[index, index]  # as the Fisher ladder tidied it
    if metric.has(mu):
        raise DerivationError(f"{spec.path}: g_{mu}{mu} depends on {mu}")
    steps.append(ProofStep(
        f"Fisher metric of the fixed-scale family: the restriction of g to the {mu} line.",
        sympy.Symbol(f"g_{mu}{mu}"), metric,
        "the induced metric of a coordinate line is its diagonal entry", "fixed-scale metric"))
    first = spec.density.subs(mu, 0)
    second = spec.density.subs(mu, delta)
    mu_1, mu_2 = sympy.symbols(f"{mu}_1 {mu}_2", real=True)
    distance = sympy.Abs(mu_1 - mu_2) * sympy.sqrt(metric)
    steps.append(ProofStep(
        "Rao distance between two outputs of the mechanism (one coordinate, constant metric).",
        sympy.Symbol("d_R"), distance,
        "the length of the segment: sqrt(g) times the distance between the two locations",
        "rao distance"))
    # Not simplified: SymPy would trade N*gamma(2 - 1/N) for (N - 1)*gamma(1 - 1/N), which is
    # 0*oo at N = 1 (the metric's form, from the Fisher ladder, has no removable singularity).
    theta = delta * sympy.sqrt(metric)
    steps.append(ProofStep(
        f"Rao-DP budget at sensitivity {delta} = sup |h(D) - h(D')|.", THETA, theta,
        "Soto (2025): the mechanism is theta-Rao-DP with theta the supremum of the Rao "
        "distance d_R(f_D, f_D') over adjacent datasets D, D'",
        "rao-dp"))
    constant = sympy.powsimp(scale * sympy.sqrt(metric), force=True)  # scale > 0
    if constant.has(scale, mu):
        constant = absorb_into_gamma(sympy.simplify(constant))
    if constant.has(scale, mu):
        raise DerivationError(f"{spec.path}: {scale}*sqrt(g) depends on {constant.free_symbols}:"
                              f" '{scale}' is not the scale of the location family")
    steps.append(ProofStep("The calibration constant is dimensionless.", sympy.Symbol("k"),
                           constant, f"k = {scale} sqrt(g_{mu}{mu}), in which {scale} cancels",
                           "calibration"))
    calibration = delta * constant / THETA
    steps.append(ProofStep(f"Calibration: theta-Rao-DP for {scale} >= {delta} k / theta.",
                           scale, calibration, "theta decreases in the scale", "calibration"))
    composition = _composition(spec, mu, metric, theta, scale, delta, steps)
    conversions = _conversions(spec, theta, scale, delta, mu, steps)
    arguments = (delta, scale, *[p.symbol for p in spec.parameters
                                 if p.symbol not in (mu, scale)])
    renyi = derive_renyi(spec, first, second, arguments, budget=budget)
    return MechanismDerivation(
        kind="additive", manifold=manifold, arguments=arguments, theta=theta,
        theta_stable=theta, metric=metric, constant=constant, calibration=calibration,
        calibrated=scale, conversions=conversions, composition=composition, renyi=renyi,
        outputs=output_forms(spec, renyi), steps=tuple(steps) + renyi.steps)


def _composition(spec, mu, metric, theta, scale, delta, steps) -> sympy.Expr:
    """Two independent copies (scales s_1, s_2, sensitivities Delta_1, Delta_2): the product
    family's metric is diag(g_1, g_2), so the budget is sqrt(theta_1**2 + theta_2**2).

    Checked from the product density, not from the rule: the joint log-density's score in
    each location must depend on that release alone (then the cross term is E[s_1] E[s_2] = 0
    and each diagonal entry is the single release's Fisher entry at its own scale), and the
    distance of the resulting constant metric must equal sqrt(theta_1**2 + theta_2**2)."""
    x = spec.variable
    s1, s2 = sympy.symbols(f"{scale}_1 {scale}_2", positive=True)
    d1, d2 = sympy.symbols(f"{delta}_1 {delta}_2", positive=True)
    x1, x2 = sympy.symbols(f"{x}_1 {x}_2", real=True)
    mu1, mu2 = sympy.symbols(f"{mu}_1 {mu}_2", real=True)
    releases = [spec.density.subs({x: xk, mu: muk, scale: sk}, simultaneous=True)
                for xk, muk, sk in ((x1, mu1, s1), (x2, mu2, s2))]
    joint_log = sympy.expand_log(sympy.log(releases[0] * releases[1]), force=True)
    joint_scores = [sympy.diff(joint_log, muk) for muk in (mu1, mu2)]
    for score, other in zip(joint_scores, ({x2, mu2, s2}, {x1, mu1, s1})):
        if score.free_symbols & other:
            raise DerivationError(f"composition: the joint score {score} depends on both "
                                  "releases")
    theta_1 = theta.subs({scale: s1, delta: d1})
    theta_2 = theta.subs({scale: s2, delta: d2})
    g1, g2 = (theta_1 / d1) ** 2, (theta_2 / d2) ** 2
    joint = sympy.sqrt(sympy.expand(d1**2 * g1 + d2**2 * g2))
    # The product family's metric from the Fisher entry of one release at each scale.
    product_metric = [metric.subs(scale, s1), metric.subs(scale, s2)]
    segment = sympy.sqrt(d1**2 * product_metric[0] + d2**2 * product_metric[1])
    rule = sympy.sqrt(theta_1**2 + theta_2**2)
    for form in (segment, rule):
        if sympy.cancel(sympy.together(joint**2 - form**2)) != 0:  # both sides are >= 0
            raise DerivationError(f"composition: {joint} differs from {form}")
    joint_density = sympy.Function("f")(x1, x2)
    steps.append(ProofStep(
        "Composition: the joint release of two independent copies (locations mu_1, mu_2, "
        f"scales {s1}, {s2}) has the product density; its scores in the two locations are:",
        sympy.Derivative(sympy.log(joint_density), mu1), joint_scores[0],
        f"differentiate log f(x_1; mu_1, {s1}) + log f(x_2; mu_2, {s2}): each score depends on "
        "its own release alone",
        "composition",
        also=((sympy.Derivative(sympy.log(joint_density), mu2), joint_scores[1]),),
    ))
    steps.append(ProofStep(
        "The product metric diag(g_1, g_2) is constant in the locations, so the distance between "
        f"the outputs on adjacent datasets (locations moved by {d1} and {d2}) is the Euclidean "
        "one in sqrt(g)-scaled coordinates:",
        sympy.Symbol("theta_joint"), joint,
        f"the length of the segment from (mu_1, mu_2) to (mu_1 + {d1}, mu_2 + {d2}), "
        "with theta_1, theta_2 the budgets of the single releases",
        "composition",
        chain=(sympy.Pow(sympy.Add(*(sympy.Mul(d**2, m, evaluate=False)
                                     for d, m in zip((d1, d2), product_metric)), evaluate=False),
                         sympy.Rational(1, 2), evaluate=False),),
        also=((sympy.Symbol("theta_joint"), sympy.sqrt(sympy.Symbol("theta_1")**2
                                                       + sympy.Symbol("theta_2")**2)),)))
    return joint


#: Literature calibrations: (name, source, reference density builder, scale, parameters).
def _reference_mechanisms(x, mu, scale, delta):
    epsilon, delta_dp, mu_gdp = sympy.symbols("epsilon delta mu_GDP", positive=True)
    laplace = sympy.exp(-sympy.Abs(x - mu) / scale) / (2 * scale)
    gaussian = sympy.exp(-(x - mu) ** 2 / (2 * scale**2)) / sympy.sqrt(2 * sympy.pi * scale**2)
    return [
        ("epsilon-DP Laplace", "Dwork, McSherry, Nissim and Smith (2006): b = Delta/epsilon",
         laplace, delta / epsilon, (epsilon,), None),
        ("(epsilon, delta)-DP Gaussian",
         "Dwork and Roth (2014), Theorem A.1: sigma = Delta sqrt(2 log(1.25/delta))/epsilon",
         gaussian, delta * sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / delta_dp)) / epsilon,
         (epsilon, delta_dp), _as_written(epsilon, delta_dp)),
        ("mu-GDP Gaussian", "Dong, Roth and Su (2022): sigma = Delta/mu", gaussian,
         delta / mu_gdp, (mu_gdp,), None),
    ]


def _as_written(epsilon, delta_dp) -> sympy.Expr:
    """The Gaussian mechanism's budget epsilon/sqrt(2 log(1.25/delta)) as Dwork and Roth write
    it (SymPy would print sqrt(2)*epsilon/(2*sqrt(log(5/(4*delta))))); for display only:
    :func:`_conversions` uses it after checking it equal to the budget it derived."""
    with sympy.evaluate(False):
        ratio = sympy.Mul(sympy.Float("1.25", 3), sympy.Pow(delta_dp, -1))
        return sympy.Mul(epsilon, sympy.Pow(sympy.sqrt(2 * sympy.log(ratio)), -1))


def _conversions(spec, theta, scale, delta, mu, steps) -> tuple[Conversion, ...]:
    found = []
    for name, source, density, calibrated, parameters, written in _reference_mechanisms(
            spec.variable, mu, scale, delta):
        if sympy.simplify(spec.density - density) != 0:
            continue
        budget = sympy.simplify(theta.subs(scale, calibrated))
        found.append(Conversion(name, source, calibrated, budget, parameters))
        shown = budget
        if written is not None and sympy.simplify(
                sympy.nsimplify(written.doit()) - budget) == 0:
            shown = written
        steps.append(ProofStep(
            f"Conversion: at the scale of its calibration, the {name} mechanism has the "
            "Rao-DP budget:", THETA, shown,
            f"{source}; the budget above at that scale", "conversion"))
    return tuple(found)


# ----------------------------------------------------------------------------- neighbour map


def _neighbour(spec: FamilySpec, distance, budget: float) -> MechanismDerivation:
    mechanism = spec.mechanism
    moved = dict(mechanism.neighbour)
    steps = []
    fixed = [p.name for p in spec.parameters if p.symbol not in moved]
    manifold = (f"the family in {', '.join(s.name for s in moved)}"
                + (f" ({', '.join(fixed)} held fixed)" if fixed else "")
                + ": the neighbour map moves these coordinates only")
    arguments = tuple(p.symbol for p in spec.parameters)
    first, second = spec.density, spec.density.subs(moved)
    if distance is None or not distance.closed or len(spec.coordinates) != len(moved):
        raise DerivationError(f"{spec.path}: a neighbour mechanism needs the closed Rao distance "
                              "of its family in the moved coordinates")
    one, two = distance.points
    images = {**{p: c for p, c in zip(one, spec.coordinate_symbols)},
              **{p: moved.get(c, c) for p, c in zip(two, spec.coordinate_symbols)}}
    theta = sympy.simplify(distance.textbook.subs(images))
    steps.append(ProofStep("Rao-DP budget: the Rao distance between the outputs on adjacent "
                           "datasets (the neighbour map applied to the second point).",
                           THETA, theta, "the family's Rao distance", "rao-dp"))
    theta_stable = asin_difference_form(theta, steps)
    renyi = derive_renyi(spec, first, second, arguments, budget=budget)
    calibration, calibrated = _solve_calibration(theta_stable, moved, spec, steps)
    return MechanismDerivation(
        kind="neighbour", manifold=manifold, arguments=arguments, theta=theta,
        theta_stable=theta_stable, metric=None, constant=None, calibration=calibration,
        calibrated=calibrated, conversions=(), composition=None, renyi=renyi,
        outputs=output_forms(spec, renyi), steps=tuple(steps) + renyi.steps)


def asin_difference_form(expr: sympy.Expr, steps: list) -> sympy.Expr:
    """``asin(u) - asin(v)`` with ``u**2 + v**2 = 1`` becomes ``asin(u**2 - v**2)``.

    With ``u = sin(phi)``, ``v = cos(phi)`` for phi in [0, pi/2], the difference is
    ``2 phi - pi/2`` and ``u**2 - v**2 = -cos(2 phi) = sin(2 phi - pi/2)``; randomized
    response's ``asin(sqrt p) - asin(sqrt(1 - p))`` becomes ``asin(2p - 1)``, whose argument
    is exact where the difference of two ``asin`` near pi/4 loses every digit.
    """

    def rewrite(add):
        terms = list(add.args)
        if len(terms) != 2:
            return add
        (c1, f1), (c2, f2) = (t.as_coeff_Mul() for t in terms)
        if not (isinstance(f1, sympy.asin) and isinstance(f2, sympy.asin) and c1 == -c2):
            return add
        u, v = f1.args[0], f2.args[0]
        # Principal square roots (of pmf values here) are non-negative.
        if not all(w.is_nonnegative or (w.is_Pow and w.exp == sympy.S.Half) for w in (u, v)):
            return add
        if sympy.simplify(u**2 + v**2 - 1) != 0:
            return add
        return c1 * sympy.asin(sympy.expand(u**2 - v**2))

    stable = expr.replace(lambda e: e.is_Add, rewrite)
    if stable != expr:
        check = sympy.simplify(sympy.sin(_difference_inside(expr)) -
                               sympy.sin(_difference_inside(stable)))
        steps.append(ProofStep(
            "Cancellation-free budget: asin(u) - asin(v) = asin(u^2 - v^2) when u^2 + v^2 = 1 "
            "and u, v >= 0.", expr, stable,
            "u = sin(phi), v = cos(phi): both sides are 2 phi - pi/2 in [-pi/2, pi/2]"
            + ("; the sines of the two sides agree" if check == 0 else ""), "stable form"))
    return stable


def _difference_inside(expr: sympy.Expr) -> sympy.Expr:
    """The argument of the outer Abs (the difference of the two angles), for the check."""
    inner = [node for node in sympy.preorder_traversal(expr) if isinstance(node, sympy.Abs)]
    return sympy.expand_trig(inner[0].args[0]) if inner else expr


def _solve_calibration(theta, moved, spec, steps):
    """The moved coordinate as a function of the budget (one coordinate; the branch above
    its fixed point), or (None, None)."""
    if len(moved) != 1:
        return None, None
    (symbol, image), = moved.items()
    fixed_points = sympy.solve(sympy.Eq(symbol, image), symbol)
    if len(fixed_points) != 1:
        return None, None
    branch = sympy.Symbol(symbol.name, **symbol.assumptions0)
    unsigned = theta.replace(lambda e: isinstance(e, sympy.Abs), lambda e: e.args[0])
    try:
        solutions = [s for s in sympy.solve(sympy.Eq(unsigned, THETA), branch)
                     if s.subs(THETA, sympy.Rational(1, 10)).is_real]
    except NotImplementedError:
        return None, None
    above = [s for s in solutions
             if (s.subs(THETA, sympy.Rational(1, 10)) - fixed_points[0]).is_positive]
    if len(above) != 1:
        return None, None
    solution = sympy.simplify(above[0])
    steps.append(ProofStep(f"Calibration: the budget theta is reached at {symbol} = "
                           f"{sympy.sstr(solution)} (the branch {symbol} > "
                           f"{sympy.sstr(fixed_points[0])}).", symbol, solution,
                           f"solving theta({symbol}) = theta for {symbol} on that branch",
                           "calibration"))
    return solution, symbol
