"""The derive stage for families of several sample variables (``variables = [...]``).

Called by :func:`raosym.derive.fisher.fisher_entries` when the exponential-family rung (which
needs no integral, whatever the number of variables) does not close the matrix (the factors
first, then the iterated expectations), and by
:func:`raosym.derive.derive` for the Rao distance. Input: a :class:`FamilySpec` whose
``variables`` and ``supports`` are set. Output: :class:`FisherEntry` records and a
:class:`RaoDistance`, with their proof steps.

- **Independent factors** (:func:`factor_entries`): a density whose ``log f`` splits into
  terms over groups of variables no term couples (:func:`variable_groups`) is the product of
  its factors, each normalized by its mass; the Fisher information of independent parts adds
  up, so each entry is a sum of the factors' entries, each factor a family of fewer
  variables (one variable: the whole one-variable ladder, so a Gumbel beside a normal closes
  by location-scale reduction where SymPy's integral over both variables ran out of time).
  Variables of both kinds, discrete and continuous, are allowed in separate factors only
  (:func:`coupled_kinds`).
- **Iterated integrals and nested sums** (:func:`iterated_entries`): ``E[s_i s_j]`` is taken
  over the last variable first, its bounds in the earlier ones (Fubini/Tonelli: the integrand
  ``s_i s_j f`` is integrable, which the verify stage confirms numerically). A discrete
  support with numeric bounds is enumerated exactly, point by point; symbolic bounds go to
  SymPy's ``summation``/``integrate`` under the time budget. An entry that does not close is
  an error of the family: there is no numeric path for several variables yet.
- **Distances** (:func:`multivariate_distance`): a family on a finite set of outcomes whose
  coordinates are as many as the outcomes less one is an open piece of the round sphere of
  radius 2 (``θ ↦ 2√f(x; θ)``, Čencov), so ``d = 2 arccos Σ_x √(f(x; θ₁) f(x; θ₂))``,
  emitted as ``4 asin(‖√f₁ − √f₂‖/2)``; a metric ``c`` times the categorical one on the open
  simplex of its coordinates (the multinomial, ``c = n``) is the sphere of radius ``2√c``; a
  constant metric gives the Mahalanobis distance
  (the recognizer of :mod:`raosym.derive.distance`, for any number of coordinates).
"""

from __future__ import annotations

import dataclasses

import sympy

from raosym.derive.budget import run_with_budget
from raosym.derive.distance import derive_distance, point_symbols
from raosym.derive.integrals import is_closed, tidy
from raosym.derive.steps import FisherEntry, ProofStep, RaoDistance, fisher_symbol
from raosym.errors import DerivationError
from raosym.spec.model import FamilySpec

#: Enumerate a finite discrete support point by point up to this many outcomes.
_ENUMERATION_LIMIT = 10_000

SPHERE = "round sphere (finite outcomes)"
SIMPLEX_SPHERE = "sphere (a multiple of the categorical metric)"


# ----------------------------------------------------------------------------- the support


def outcomes(spec: FamilySpec) -> list[dict[sympy.Symbol, sympy.Integer]] | None:
    """Every outcome of a discrete support whose bounds are numbers once the earlier
    variables are fixed (``x2 in range(0, 2 - x1)``), in order; None when a bound holds a
    constant or is infinite, or there are more than :data:`_ENUMERATION_LIMIT` outcomes."""
    if not all(support.discrete for support in spec.supports):
        return None
    found: list[dict] = [{}]
    for variable, support in zip(spec.variables, spec.supports):
        extended = []
        for outcome in found:
            if support.kind == "finite":
                values = [point.subs(outcome) for point in support.points]
            else:
                lower, upper = support.lower.subs(outcome), support.upper.subs(outcome)
                if not (lower.is_Integer and upper.is_Integer):
                    return None
                values = [sympy.Integer(k) for k in range(int(lower), int(upper) + 1)]
            if not all(value.is_number for value in values):
                return None
            extended += [{**outcome, variable: value} for value in values]
            if len(extended) > _ENUMERATION_LIMIT:
                return None
        found = extended
    return found


def expectation_form(spec: FamilySpec, integrand: sympy.Expr) -> sympy.Expr:
    """``integrand`` under its nested integral or sum, the last variable innermost."""
    form = integrand
    for variable, support in reversed(tuple(zip(spec.variables, spec.supports))):
        if support.kind == "finite" or support.discrete:
            form = sympy.Sum(form, (variable, support.lower, support.upper))
        else:
            form = sympy.Integral(form, (variable, support.lower, support.upper))
    return form


def variable_groups(spec: FamilySpec) -> tuple[sympy.Expr, list[tuple[tuple, tuple, sympy.Expr]]]:
    """``(constant, [(variables, supports, log factor), ...])``: ``log f`` split into a part
    free of the variables and sums of terms over groups of variables no term couples
    (connected components of "appear in one term together"); a group's supports may use
    only its own variables. One group when nothing splits (the Dirichlet's
    ``log(1 - x1 - x2)``)."""
    from raosym.derive.fisher import log_density

    variables = spec.variables
    terms = sympy.Add.make_args(sympy.expand(log_density(spec)))
    group_of = {v: index for index, v in enumerate(variables)}  # union of linked variables

    def link(linked):
        labels = {group_of[v] for v in linked}
        for v in variables:
            if group_of[v] in labels:
                group_of[v] = min(labels)

    for term in terms:
        link([v for v in variables if term.has(v)])
    for v, support in zip(variables, spec.supports):
        link([v, *(w for w in variables if w in support.free_symbols())])
    groups = [[v for v in variables if group_of[v] == label]
              for label in sorted(set(group_of.values()))]
    constant = sympy.Add(*(t for t in terms if not t.has(*variables)))
    split = []
    for group in groups:
        log_factor = sympy.Add(*(t for t in terms if t.has(*group)))
        supports = tuple(spec.supports[variables.index(v)] for v in group)
        split.append((tuple(group), supports, log_factor))
    return constant, split


def coupled_kinds(spec: FamilySpec) -> str | None:
    """Why a density is refused when it couples a discrete and a continuous variable (None
    when it does not): such a family is handled only as a product of independent factors,
    each of one kind (a count beside a measurement), whose expectations split factor by
    factor."""
    if len({support.discrete for support in spec.supports}) < 2:
        return None
    for variables, supports, _ in variable_groups(spec)[1]:
        if len({support.discrete for support in supports}) > 1:
            counted = [v.name for v, s in zip(variables, supports) if s.discrete]
            measured = [v.name for v, s in zip(variables, supports) if not s.discrete]
            return (f"the density couples the discrete variable(s) {', '.join(counted)} with "
                    f"the continuous variable(s) {', '.join(measured)} (a term of log f, or a "
                    "bound of a support, holds both); raosym handles variables of both kinds "
                    "only in a product of independent factors, each all discrete or all "
                    "continuous")
    return None


# ----------------------------------------------------------------------------- Fisher entries


#: The strategy of an entry that the factors of a product density give.
FACTORS = "independent factors"


def factor_entries(spec: FamilySpec, *, budget: float) -> tuple[FisherEntry, ...] | None:
    """Every entry of a density that factors over independent groups of variables, from the
    Fisher information of each factor; None when the density does not factor, or a factor's
    mass or one of its entries has no closed form (then the entries are taken over every
    variable at once).

    With ``f = e^c ∏_g φ_g`` (:func:`variable_groups`) and ``M_g = ∫ φ_g`` over the group's
    variables, ``f = ∏_g f_g`` with the normalized factors ``f_g = φ_g/M_g`` (the mass of
    ``f`` is 1), the groups are independent under ``f``, and the Fisher information of
    independent parts adds up: ``g_ij = Σ_g E_{f_g}[∂_i log f_g ∂_j log f_g]``, each term
    the Fisher information of a family of fewer variables (a one-variable factor goes down
    the whole one-variable ladder: location-scale reduction, kinks, Euler integrals)."""
    constant, groups = variable_groups(spec)
    if len(groups) < 2:
        return None
    coordinates = spec.coordinate_symbols
    written = _written_factors(spec, [variables for variables, _, _ in groups])
    factors = []
    for index, (variables, supports, log_factor) in enumerate(groups):
        if written is not None:
            unnormalized = written[index]
        else:
            unnormalized = _readable(
                log_factor + _share(constant, log_factor, [g for _, _, g in groups]))
        factor = _factor(spec, variables, supports, unnormalized, budget)
        if factor is None:
            return None
        factors.append(factor)
    if set(coordinates) - set().union(*(f.coordinate_symbols for f, _, _ in factors)):
        return None  # a coordinate no factor depends on: no entry of it closes here
    contributions = {}
    for factor_spec, mass, entries in factors:
        for entry in entries:
            if entry.value is None:
                return None
        own = [coordinates.index(c) for c in factor_spec.coordinate_symbols]
        for entry in entries:
            row, column = sorted((own[entry.row], own[entry.column]), reverse=True)
            contributions.setdefault((row, column), []).append((factor_spec, mass, entry))
    derived = []
    masses_shown: set[tuple] = set()  # the factors whose mass a proof has shown
    for i in range(len(coordinates)):
        for j in range(i + 1):
            derived.append(_summed_entry(spec, i, j, contributions.get((i, j), []),
                                         masses_shown))
    return tuple(derived)


def _written_factors(spec, groups) -> list[sympy.Expr] | None:
    """The factor of each group of variables as the file writes it: the factors of the
    density's product (an exponential of a sum split into a product) that hold the group's
    variables, times those free of every variable whose coordinates only this group's
    factors hold (the Gumbel's ``1/b``); None when a factor of the product holds variables
    of two groups (then the factors are read off ``log f`` instead). Kept as written, a
    factor ``exp(-(x - m)/s)/(1 + exp(-(x - m)/s))**2`` is still a function of ``(x - m)/s``,
    which the location-scale rung recognizes; rebuilt from the expanded logarithm it is
    ``exp(-x/s)/(exp(m/s)*exp(-x/s) + 1)**2``, which it does not."""
    parts = sympy.Mul.make_args(sympy.expand_power_exp(spec.density))
    products = [sympy.S.One for _ in groups]
    free = []
    for part in parts:
        holders = [n for n, group in enumerate(groups) if part.has(*group)]
        if len(holders) > 1:
            return None
        if holders:
            products[holders[0]] *= part
        else:
            free.append(part)
    for part in free:
        owners = [n for n, product in enumerate(products)
                  if part.free_symbols and part.free_symbols <= product.free_symbols]
        others = [n for n, product in enumerate(products)
                  if part.free_symbols & product.free_symbols]
        if len(owners) == 1 and others == owners:
            products[owners[0]] *= part
    return products


def _share(constant, log_factor, log_factors) -> sympy.Expr:
    """The terms of the variable-free part of ``log f`` whose coordinates only this factor
    holds (its ``-log b``): the factor then reads as the density the file multiplied in. Any
    other term is left out; the factor's mass normalizes it whatever is left out."""
    own = log_factor.free_symbols
    others = set().union(*(g.free_symbols for g in log_factors if g != log_factor))
    return sympy.Add(*(t for t in sympy.Add.make_args(constant)
                       if t.free_symbols and t.free_symbols <= own - others))


def _readable(exponent: sympy.Expr) -> sympy.Expr:
    """``exp(exponent)``, a factor's log, as a reader writes the factor: the exponent's
    rational terms factored (``-(y - n)**2/(2*s**2)``), exponentials of sums joined
    (``exp((m - x)/b)``), logarithms combined into powers (``p**k``, not
    ``exp(k*log(p))``, which SymPy's summation does not recognize as geometric; only where
    the assumptions make it an identity)."""
    exponent = sympy.powsimp(exponent)
    terms = sympy.Add.make_args(exponent)
    rational = sympy.Add(*(t for t in terms if t.is_rational_function()))
    rest = sympy.Add(*(t for t in terms if not t.is_rational_function()))
    return sympy.exp(sympy.logcombine(sympy.factor(rational) + rest))


def _factor(spec, variables, supports, unnormalized, budget):
    """``(family of the factor, (its mass, the steps that closed it), its Fisher entries)`` for
    the factor ``φ_g`` of a group of variables, normalized by its mass; None when the mass
    has no closed form."""
    from raosym.derive.fisher import closed_by_rungs, fisher_entries

    own = tuple(p for p in spec.coordinates if unnormalized.has(p.symbol))
    if not own:
        return None  # a factor free of the coordinates: it changes no score
    one = len(variables) == 1
    shape = {"variable": variables[0], "support": supports[0],
             "variables": () if one else variables, "supports": () if one else supports}
    unnormalized_spec = dataclasses.replace(spec, density=unnormalized, coordinates=own,
                                            mechanism=None, density_text="", **shape)
    what = f"the mass of the factor of {', '.join(v.name for v in variables)}"
    if one:
        found = closed_by_rungs(unnormalized_spec, unnormalized, what, budget=budget)
        if found is None:
            return None
        mass, steps = tidy(found[1].value), found[1].steps
    else:
        try:
            mass, _, justification = _iterated(unnormalized_spec, unnormalized, what, budget)
        except DerivationError:
            return None
        steps = (ProofStep(f"The mass of the factor of {', '.join(v.name for v in variables)}.",
                           expectation_form(unnormalized_spec, unnormalized), mass,
                           justification, "iterated integrals"),)
    if not is_closed(mass) or mass.has(*spec.sample_variables) or mass == 0:
        return None
    factor_spec = dataclasses.replace(unnormalized_spec, density=unnormalized / mass)
    return factor_spec, (mass, steps), fisher_entries(factor_spec, budget=budget)


def _summed_entry(spec, i, j, parts, masses_shown) -> FisherEntry:
    """The entry ``g_ij``: the sum of the factors' entries that hold both coordinates (0
    when none does: the scores of independent factors are uncorrelated, each of mean 0).
    A factor and its mass are shown in the first entry that uses it (``masses_shown`` records
    the factors shown)."""
    coordinates = spec.coordinate_symbols
    name = fisher_symbol(coordinates[i].name, coordinates[j].name)
    definition = ProofStep(
        "Definition: the Fisher information is the expected product of the scores.",
        name, expectation_form(spec, _score_product(spec, i, j)),
        "the score-product form, over every sample variable", "definition")
    if not parts:
        return FisherEntry(i, j, sympy.S.Zero, FACTORS, (definition, ProofStep(
            "No factor of the density depends on both coordinates.", definition.rhs,
            sympy.S.Zero,
            "the density is the product of independent factors; the two scores are functions "
            "of different factors, so their product has the expectation E[s_i] E[s_j] = 0",
            FACTORS)))
    steps, reduced, value = [], [], sympy.S.Zero
    for factor_spec, (mass, mass_steps), entry in parts:
        variables = factor_spec.sample_variables
        key = (variables, factor_spec.density)
        if key not in masses_shown:
            # The factor and its mass first, where a reader meets the factor: the definition
            # then opens the chain of the entry's own computation.
            masses_shown.add(key)
            normalized = ("is a density of its own (its mass is 1)" if mass == 1 else
                          f"divided by its mass {sympy.sstr(mass)}, is a density of its own")
            steps.append(ProofStep(
                f"The density is the product of independent factors, one for each group of "
                f"variables that no term of log f couples; the factor of "
                f"{', '.join(v.name for v in variables)}, {normalized}.",
                sympy.Function(f"f_{_group_number(spec, variables)}")(*variables),
                factor_spec.density, "its mass, by the steps that follow", FACTORS))
            steps += mass_steps
        opened = entry.steps and entry.steps[0].strategy == "definition"
        reduced.append((variables, _factor_form(factor_spec, entry),
                        entry.steps[1:] if opened else entry.steps))
        value += entry.value
    steps.append(definition)
    factors = ", ".join(f"f_{_group_number(spec, variables)}" for variables, _, _ in reduced)
    several = len(reduced) > 1
    steps.append(ProofStep(
        f"Only the factor{'s' if several else ''} {factors} depend{'' if several else 's'} on "
        "both coordinates.",
        definition.rhs, sympy.Add(*(form for _, form, _ in reduced), evaluate=False),
        "under f the groups of variables are independent and each factor is a density of "
        "its own (defined above); the Fisher information of independent parts adds up, the "
        "other factors integrating to 1 and their scores having mean 0", FACTORS))
    for _, _, rest in reduced:
        steps += rest
    strategy = parts[0][2].strategy if len(parts) == 1 else FACTORS
    hypotheses = tuple(h for _, _, entry in parts for h in entry.hypotheses)
    if len(parts) > 1:
        steps.append(ProofStep(
            "The Fisher information of independent factors adds up.", name, value,
            "the entries of the factors above, summed", FACTORS))
    return FisherEntry(i, j, tidy(value), strategy, tuple(steps), hypotheses)


def _factor_form(factor_spec, entry) -> sympy.Expr:
    """The entry of a factor as the expectation over the factor's own variables."""
    from raosym.derive.fisher import expectation_over_support, scores

    score = scores(factor_spec)
    integrand = score[entry.row] * score[entry.column] * factor_spec.density
    if factor_spec.multivariate:
        return expectation_form(factor_spec, integrand)
    return expectation_over_support(factor_spec, integrand)


def _group_number(spec, variables) -> int:
    """The factor's number in the proofs: 1 for the group of the first variable, and so on."""
    groups = variable_groups(spec)[1]
    return next(n for n, group in enumerate(groups, 1) if group[0] == variables)


def _score_product(spec, i, j):
    from raosym.derive.fisher import scores

    score = scores(spec)
    return score[i] * score[j] * spec.density




def iterated_entries(spec: FamilySpec, score, *, budget: float) -> tuple[FisherEntry, ...]:
    """Every entry ``g_ij = E[s_i s_j]`` (``j <= i``) by nested sums or iterated integrals."""
    coordinates = spec.coordinate_symbols
    entries = []
    for i in range(len(coordinates)):
        for j in range(i + 1):
            name = fisher_symbol(coordinates[i].name, coordinates[j].name)
            integrand = score[i] * score[j] * spec.density
            form = expectation_form(spec, integrand)
            definition = ProofStep(
                "Definition: the Fisher information is the expected product of the scores.",
                name, form, "the score-product form, over every sample variable", "definition")
            value, strategy, justification = _iterated(spec, integrand, name, budget)
            # From the nested expectation the definition displays: the LaTeX backend shows
            # the two as one chain g = E[...] = value, as it does a scalar entry's.
            closing = ProofStep("Evaluate the nested expectation.", form, value, justification,
                                strategy)
            entries.append(FisherEntry(i, j, value, strategy, (definition, closing)))
    return tuple(entries)


def _iterated(spec, integrand, name, budget) -> tuple[sympy.Expr, str, str]:
    points = outcomes(spec)
    if points is not None:
        total = sympy.Add(*(integrand.subs(point) for point in points))
        return tidy(total), "finite sum", (
            f"the sum over the {len(points)} outcomes of the support, term by term")
    value = integrand
    for variable, support in reversed(tuple(zip(spec.variables, spec.supports))):
        if support.discrete:
            operation = (sympy.summation, (value, (variable, support.lower, support.upper)))
        else:
            operation = (sympy.integrate, (value, (variable, support.lower, support.upper)))
        value = run_with_budget(operation[0], *operation[1], seconds=budget,
                                what=f"the expectation of {name} over {variable}")
        if not is_closed(value):
            raise DerivationError(
                f"{spec.path}: could not close the Fisher entry {name}: SymPy left the "
                f"{'sum' if support.discrete else 'integral'} over {variable} unevaluated "
                "(raosym has no numeric path for families of several variables yet)")
    kind = "iterated sums" if spec.supports[0].discrete else "iterated integrals"
    return tidy(value), kind, (
        "by Fubini's theorem: the last variable first, its bounds in the earlier ones, then "
        "outwards")


# ----------------------------------------------------------------------------- distances


def sphere_distance(spec: FamilySpec) -> RaoDistance | None:
    """``2 arccos Σ √(f₁ f₂)`` when the support is finite and the coordinates are as many as
    the outcomes less one (the whole open orthant of the sphere, which is geodesically
    convex: the great circle between two of its points stays in it); else None."""
    points = outcomes(spec)
    if points is None or len(points) != len(spec.coordinates) + 1:
        return None
    # g_ij = 4 Σ_k ∂_i √f_k ∂_j √f_k, f_k the probability of the k-th outcome.
    k, theta_i, theta_j = sympy.symbols("k theta_i theta_j")
    root = sympy.sqrt(sympy.Function("f")(k))
    sphere_metric = 4 * sympy.Sum(sympy.Derivative(root, theta_i) * sympy.Derivative(root, theta_j),
                                  (k, 1, len(points)))
    metric_step = ProofStep(
        "On a finite set of outcomes the Fisher metric is that of the round sphere of "
        "radius 2.", sympy.Symbol("g_ij"), sphere_metric,
        "`E[s_i s_j] = Σ_x ∂_i f ∂_j f / f = 4 Σ_x ∂_i √f ∂_j √f`: the map that takes θ to "
        "the vector of twice the square roots of the outcomes' probabilities is an "
        f"isometry onto an open part of the sphere of radius 2 in the space of dimension "
        f"{len(points)}; "
        f"with {len(spec.coordinates)} coordinates for {len(points)} outcomes that part is "
        "open in the positive orthant, which contains the great-circle arc between any two "
        "of its points", "distance")
    probabilities = [spec.density.subs(point) for point in points]
    return _great_circle(spec, probabilities, sympy.S.One, (metric_step,), SPHERE)


def simplex_sphere_distance(spec: FamilySpec, fisher) -> RaoDistance | None:
    """``2√c arccos Σ √(p_i q_i)`` when the coordinates are the free probabilities of the open
    simplex (``p1 in (0, 1)``, ``p2 in (0, 1 - p1)``, ...) and the metric is ``c`` times the
    categorical family's there, ``c`` free of the coordinates: the multinomial of ``n``
    trials (``c = n``), whose support has no fixed number of outcomes; else None."""
    coordinates = spec.coordinate_symbols
    remaining = sympy.S.One
    for parameter, symbol in zip(spec.coordinates, coordinates):
        domain = parameter.domain
        if not (domain.lower == 0 and domain.lower_open and domain.upper_open
                and sympy.simplify(domain.upper - remaining) == 0):
            return None
        remaining -= symbol
    count = len(coordinates)
    categorical = sympy.Matrix(count, count, lambda i, j: (1 / coordinates[i] if i == j else 0)
                               + 1 / remaining)
    metric = sympy.Matrix(fisher)
    scale = sympy.simplify(metric[0, 0] / categorical[0, 0])
    if scale.has(*coordinates) or not scale.is_positive:
        return None
    if not (metric - scale * categorical).applyfunc(sympy.simplify).is_zero_matrix:
        return None
    p_i, p_k = sympy.Symbol("p_i", positive=True), sympy.Symbol(f"p_{count + 1}", positive=True)
    metric_step = ProofStep(
        "The metric is a constant multiple of the Fisher metric of the categorical family on "
        "the simplex.", sympy.Symbol("g_ij"),
        scale * (sympy.KroneckerDelta(sympy.Symbol("i"), sympy.Symbol("j")) / p_i + 1 / p_k),
        f"with p_{count + 1} equal to 1 minus the sum of the coordinates, g minus this "
        "multiple of the categorical metric simplifies to zero entry by entry; the "
        "categorical metric is that of the sphere of radius 2 (the map that takes the "
        "probabilities p to 2√p is an isometry, as for any finite set of outcomes), so this one is that of the sphere whose radius is 2 times the "
        "square root of the multiple, and the coordinates range over the open simplex, "
        "whose image in the positive orthant contains the great-circle arc between any two "
        "of its points", "distance")
    return _great_circle(spec, [*coordinates, remaining], scale, (metric_step,), SIMPLEX_SPHERE)


def _great_circle(spec, probabilities, scale, metric_steps, structure) -> RaoDistance:
    """The distance on the sphere of radius 2√scale through θ ↦ (√q(θ)) for the outcome
    probabilities q: textbook ``2√scale·arccos Σ √(q₁ q₂)``, stable ``4√scale·asin(chord/2)``."""
    first, second = point_symbols(spec)
    coordinates = spec.coordinate_symbols
    radius_over_2 = sympy.sqrt(scale)
    at_first = [sympy.powsimp(sympy.expand_power_base(q.subs(dict(zip(coordinates, first))),
                                                      force=True)) for q in probabilities]
    at_second = [sympy.powsimp(sympy.expand_power_base(q.subs(dict(zip(coordinates, second))),
                                                       force=True)) for q in probabilities]
    affinity = sympy.Add(*(sympy.sqrt(a * b) for a, b in zip(at_first, at_second)))
    textbook = 2 * radius_over_2 * sympy.acos(affinity)
    # ‖√f₁ − √f₂‖ with each difference as (f₁ − f₂)/(√f₁ + √f₂): no cancellation for nearby
    # points, where acos(1 - tiny) loses half the digits.
    differences = [_telescoped(q, coordinates, first, second) for q in probabilities]
    chord = sympy.sqrt(sympy.Add(*((d / (sympy.sqrt(a) + sympy.sqrt(b))) ** 2
                                   for d, a, b in zip(differences, at_first, at_second))))
    stable = 4 * radius_over_2 * sympy.asin(chord / 2)
    steps = (
        *metric_steps,
        ProofStep("The Rao distance is the great-circle distance (Bhattacharyya angle).",
                  sympy.Symbol("d"), textbook,
                  "the radius times the angle between the unit vectors (√f₁) and (√f₂), whose "
                  "inner product is Σ_x √(f₁ f₂)", "distance"),
        ProofStep("The same distance from the chord, without cancellation.", sympy.Symbol("d"),
                  stable,
                  "the chord of an angle φ on the unit sphere is 2 sin(φ/2); each "
                  "√f₁ − √f₂ is written (f₁ − f₂)/(√f₁ + √f₂)", "stable form"),
    )
    return RaoDistance(structure, textbook, stable, (first, second), steps)


def _telescoped(probability, coordinates, first, second) -> sympy.Expr:
    """``f(θ₁) − f(θ₂)`` as a sum of differences in one coordinate at a time, each factored
    (``1 − p1 − p2`` gives ``(p1_2 − p1_1) + (p2_2 − p2_1)``) and kept unevaluated: summed
    flat, ``−p1_1 + p1_2 − p2_1 + p2_2`` rounds ``p1_2 − p1_1 − p2_1`` before the last term
    cancels it, and lost 5 of 16 digits at points 1e-12 apart."""
    terms = []
    for index in range(len(coordinates)):
        before = dict(zip(coordinates, (*second[:index], *first[index:])))
        after = dict(zip(coordinates, (*second[:index + 1], *first[index + 1:])))
        term = sympy.factor(probability.subs(before) - probability.subs(after))
        if term != 0:
            terms.append(term)
    if not terms:
        return sympy.S.Zero
    return sympy.Add(*terms, evaluate=False) if len(terms) > 1 else terms[0]


def multivariate_distance(spec: FamilySpec, fisher, geometry, *, budget: float) -> RaoDistance:
    """The sphere, else the recognizers of :func:`derive_distance` (the constant metric's
    straight line among them), else the numeric geodesic."""
    sphere = sphere_distance(spec) or simplex_sphere_distance(spec, fisher)
    if sphere is not None:
        return sphere
    # The recognizers read only the metric (and the density's periods, a symbolic identity in
    # the coordinates), so they apply over several variables; what none recognizes is left to
    # the numeric geodesic, as for one variable.
    return derive_distance(spec, fisher, geometry, budget=budget)
