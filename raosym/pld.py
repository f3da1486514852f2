"""Tight (ε, δ)-DP of composed releases through privacy-loss distributions (PLDs).

Where it sits: the applications layer, after emit, beside :mod:`raosym.accounting` (which calls
it for ``raosym account ... --accountant pld``). Nothing is derived here. The composition is
Google's ``dp_accounting`` (an optional dependency: ``pip install 'raosym[dp]'``), used through
its public API, ``dp_accounting.pld.privacy_loss_distribution``; this module only decides, per
release, which PLD to hand it:

- a mechanism whose derivation file's density *is* (SymPy proves the standardized densities
  equal, with the other parameters at their values) Gaussian or Laplace noise in its location
  and scale: dp_accounting's own ``from_gaussian_mechanism`` / ``from_laplace_mechanism``;
- a mechanism with a finite discrete support (randomized response): the exact masses of the
  two adjacent outputs at every support point (the generated ``log_output_density`` and
  ``privacy_loss``), through ``from_two_probability_mass_functions``;
- any other mechanism: the PLD of its privacy-loss random variable ``L = log f_D(X)/f_D'(X)``
  discretized from the generated functions (:mod:`raosym.privacy_loss`), handed to
  ``PrivacyLossDistribution.create_from_rounded_probability``.

Every PLD is built twice: *pessimistic* (losses rounded up to the grid of spacing ``interval``,
truncated tails counted as infinite loss: its ε is an upper bound) and *optimistic* (rounded
down, tails dropped: a lower bound), so the exact ε of the composition lies in the reported
bracket. A priori, rounding each of n losses up by less than ``interval`` moves ε by less than
n·interval (Meiser and Mohammadi 2018; Koskela, Jälkö and Honkela 2020).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raosym.accounting import Release, describe_values
from raosym.errors import AccountingError

#: dp_accounting's default spacing of the privacy-loss grid.
INTERVAL = 1e-4
#: Probability mass a composition may truncate from the tails of a PLD (dp_accounting's
#: default; pessimistically it is counted in δ).
TAIL_MASS = 1e-15
#: Cited for the accountant in outputs.
REFERENCE = ("dp_accounting privacy-loss distributions (Meiser and Mohammadi 2018; Koskela, "
             "Jälkö and Honkela 2020; Doroshenko et al. 2022)")

INSTALL_HINT = ("the PLD accountant needs Google's dp_accounting, an optional dependency: "
                "pip install 'raosym[dp]' (or pip install dp_accounting)")


def privacy_loss_distribution_module():
    """``dp_accounting.pld.privacy_loss_distribution``, or a clear error saying how to get it."""
    try:
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError:
        raise AccountingError(INSTALL_HINT) from None
    return privacy_loss_distribution


@dataclass(frozen=True)
class PldModel:
    """How one release's PLD is built: ``build(pessimistic)`` returns a dp_accounting
    ``PrivacyLossDistribution`` on the grid of spacing ``interval``; ``description`` says
    which model it is."""

    description: str
    build: Callable[[bool], object]


# ---------------------------------------------------------------------------------------------
# Which PLD a release gets


def release_model(release: Release, interval: float = INTERVAL, *,
                  derivations: str | Path | None = None) -> PldModel:
    """The PLD model of one release of ``release.mechanism`` with its parameter values."""
    from raosym import privacy_loss

    mechanism = release.mechanism
    values = mechanism.check(release.values)
    spec = _spec(mechanism.name, derivations)
    if spec is not None and spec.mechanism.kind == "additive":
        known = recognise_noise(spec, values)
        if known is not None:
            return _known_model(known, values, spec, interval)
    if spec is not None and spec.support.discrete:
        return _discrete_model(spec, mechanism, values, interval)
    loss = privacy_loss.load_loss(mechanism, values, spec)
    return PldModel(f"{mechanism.name}({describe_values(values)}): {loss.description}",
                    lambda pessimistic: _from_loss(loss, interval, pessimistic))


def _spec(name: str, derivations):
    """The mechanism's derivation file through the spec stage, or None when there is none."""
    from raosym.pipeline import derivations_folder
    from raosym.spec import load_spec

    path = Path(derivations or derivations_folder()) / f"{name}.toml"
    return load_spec(path) if path.is_file() else None


@dataclass(frozen=True)
class KnownNoise:
    """Noise dp_accounting has a model for: ``kind`` (gaussian, laplace) and its parameter
    (the standard deviation, the Laplace scale) as a multiple ``width`` of the mechanism's
    scale."""

    kind: str
    width: float


def recognise_noise(spec, values: dict) -> KnownNoise | None:
    """Whether the additive mechanism's noise is Gaussian or Laplace, proved by SymPy.

    The density standardized in its location μ and scale s, ``g(t) = s·f(μ + s·t)`` at μ = 0
    with the other parameters at their values (so a generalized Gaussian of shape 2 is
    Gaussian), is compared with each standard shape of width c fixed by g(0); the shape is
    taken only when SymPy simplifies the difference to 0. Decided by the density, never by
    the family's name.
    """
    import sympy

    mechanism = spec.mechanism
    mu, scale, x = mechanism.location.symbol, mechanism.scale.symbol, spec.variable
    t = sympy.Symbol("t", real=True)
    width = sympy.Symbol("c", positive=True)
    fixed = {p.symbol: sympy.Rational(repr(float(values[p.name])))
             for p in spec.parameters if p.symbol not in (mu, scale) and p.name in values}
    standard = sympy.simplify((spec.density.subs(x, mu + scale * t) * scale).subs(mu, 0)
                              .subs(fixed))
    if standard.free_symbols - {t}:
        return None
    shapes = {
        "gaussian": sympy.exp(-t**2 / (2 * width**2)) / (sympy.sqrt(2 * sympy.pi) * width),
        "laplace": sympy.exp(-sympy.Abs(t) / width) / (2 * width),
    }
    for kind, shape in shapes.items():
        solutions = sympy.solve(sympy.Eq(shape.subs(t, 0), standard.subs(t, 0)), width)
        if len(solutions) == 1 and sympy.simplify(standard - shape.subs(width, solutions[0])) == 0:
            return KnownNoise(kind, float(solutions[0]))
    return None


def _known_model(known: KnownNoise, values: dict, spec, interval: float) -> PldModel:
    pld = privacy_loss_distribution_module()
    parameter = known.width * values[spec.mechanism.scale.name]
    sensitivity = values["sensitivity"]
    if known.kind == "gaussian":
        def build(pessimistic):
            return pld.from_gaussian_mechanism(
                parameter, sensitivity=sensitivity, pessimistic_estimate=pessimistic,
                value_discretization_interval=interval, use_connect_dots=pessimistic)
        name = f"from_gaussian_mechanism(standard_deviation={parameter:g}, " \
               f"sensitivity={sensitivity:g})"
    else:
        def build(pessimistic):
            return pld.from_laplace_mechanism(
                parameter, sensitivity=sensitivity, pessimistic_estimate=pessimistic,
                value_discretization_interval=interval, use_connect_dots=pessimistic)
        name = f"from_laplace_mechanism(parameter={parameter:g}, sensitivity={sensitivity:g})"
    return PldModel(f"{spec.name}({describe_values(values)}): {known.kind} noise, dp_accounting "
                    f"{name}", build)


def _discrete_model(spec, mechanism, values: dict, interval: float) -> PldModel:
    from raosym import privacy_loss

    first, second = privacy_loss.discrete_log_masses(mechanism, values, spec)
    pld = privacy_loss_distribution_module()

    def build(pessimistic):
        # Not symmetric: the PLD of (D', D) is built as well and the worse of the two counts.
        return pld.from_two_probability_mass_functions(
            second, first, pessimistic_estimate=pessimistic,
            value_discretization_interval=interval, symmetric=False)

    return PldModel(f"{spec.name}({describe_values(values)}): exact masses of the {len(first)} "
                    "outputs, dp_accounting from_two_probability_mass_functions", build)


def _from_loss(loss, interval: float, pessimistic: bool):
    """A dp_accounting PLD from a discretized privacy loss (:mod:`raosym.privacy_loss`)."""
    pld = privacy_loss_distribution_module()
    remove = loss.rounded(interval, pessimistic=pessimistic, tail_mass=TAIL_MASS)
    add = loss.reversed().rounded(interval, pessimistic=pessimistic, tail_mass=TAIL_MASS)
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        remove.masses, remove.infinity_mass, interval, pessimistic_estimate=pessimistic,
        rounded_probability_mass_function_add=add.masses, infinity_mass_add=add.infinity_mass,
        symmetric=False)


# ---------------------------------------------------------------------------------------------
# Composition and conversion


@dataclass(frozen=True)
class PldGuarantee:
    """ε of (ε, δ)-DP from the pessimistic PLD (an upper bound) and from the optimistic one (a
    lower bound): the exact ε of the composition lies in [epsilon_optimistic, epsilon]."""

    epsilon: float
    epsilon_optimistic: float
    delta: float
    interval: float
    releases: int
    models: tuple[str, ...]

    @property
    def error_bound(self) -> float:
        """The a-priori bound on ε(pessimistic) - ε(exact): n releases times the interval."""
        return self.releases * self.interval

    def as_json(self) -> dict:
        return {
            "epsilon": self.epsilon, "delta": self.delta,
            "epsilon_optimistic": self.epsilon_optimistic,
            "discretization": {
                "interval": self.interval, "estimate": "pessimistic",
                "epsilon_bracket": [self.epsilon_optimistic, self.epsilon],
                "bracket_width": self.epsilon - self.epsilon_optimistic,
                "error_bound": self.error_bound, "releases": self.releases,
                "tail_mass_truncation": TAIL_MASS},
            "models": list(self.models), "reference": REFERENCE}


def pld_epsilon(releases, delta: float, interval: float = INTERVAL, *,
                derivations: str | Path | None = None) -> PldGuarantee:
    """The tight ε at ``delta`` of the independent ``releases`` (each repeated), composed by
    dp_accounting's PLD accountant."""
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise AccountingError(f"delta must lie in (0, 1); got {delta!r}")
    interval = float(interval)
    if not (math.isfinite(interval) and 0.0 < interval <= 1.0):
        raise AccountingError(f"the PLD discretization interval must lie in (0, 1]; got "
                              f"{interval!r}")
    releases = list(releases)
    if not releases:
        raise AccountingError("nothing to account: no release")
    models = [(release_model(r, interval, derivations=derivations), r.repeat) for r in releases]
    epsilons = [_composed(models, pessimistic).get_epsilon_for_delta(delta)
                for pessimistic in (True, False)]
    return PldGuarantee(epsilon=float(epsilons[0]), epsilon_optimistic=float(epsilons[1]),
                        delta=delta, interval=interval,
                        releases=sum(repeat for _, repeat in models),
                        models=tuple(f"{model.description} × {repeat}"
                                     for model, repeat in models))


def _composed(models, pessimistic: bool):
    composed = None
    for model, repeat in models:
        pld = model.build(pessimistic)
        if repeat > 1:
            pld = pld.self_compose(repeat, tail_mass_truncation=TAIL_MASS)
        composed = pld if composed is None else composed.compose(
            pld, tail_mass_truncation=TAIL_MASS)
    return composed


def guarantee_text(guarantee: dict) -> str:
    """The line ``raosym account`` prints for ``dp.pld``."""
    d = guarantee["discretization"]
    return (f"  (ε, δ)   ε = {guarantee['epsilon']:.10f} at δ = {guarantee['delta']:g}  [PLD, "
            f"{REFERENCE.split(' (')[0]}; pessimistic, loss grid {d['interval']:g}: the exact ε "
            f"lies in [{d['epsilon_bracket'][0]:.8f}, {d['epsilon_bracket'][1]:.8f}]]")
