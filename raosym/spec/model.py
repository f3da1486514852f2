"""The output of the spec stage: a validated, immutable description of a noise family.

``spec.schema.load_spec`` turns ``derivations/NAME.toml`` into a :class:`FamilySpec`; every
later stage (derive, verify, emit) reads only these objects, never the TOML.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy


@dataclass(frozen=True)
class Domain:
    """The set of values a coordinate or constant may take: an interval, possibly of integers.

    ``lower``/``upper`` are SymPy numbers (``-oo``/``oo`` when unbounded); ``text`` is what the
    derivation file said, used in messages and generated docstrings.
    """

    text: str
    lower: sympy.Expr
    upper: sympy.Expr
    lower_open: bool = True
    upper_open: bool = True
    integer: bool = False

    def symbol_assumptions(self) -> dict[str, bool]:
        """SymPy assumptions implied by the domain (what SymPy can use while integrating)."""
        assumptions: dict[str, bool] = {"integer": True} if self.integer else {"real": True}
        if self.lower.is_finite and (self.lower > 0 or (self.lower == 0 and self.lower_open)):
            assumptions["positive"] = True
        elif self.lower.is_finite and self.lower >= 0:
            assumptions["nonnegative"] = True
        return assumptions

    @property
    def dependent(self) -> bool:
        """Whether an end uses earlier coordinates (``p2 in (0, 1 - p1)``, families of several
        variables): then it is evaluated at a point before use (``spec.points.domain_at``)."""
        return bool(self.lower.free_symbols or self.upper.free_symbols)

    def interior_point(self) -> sympy.Expr:
        """A value well inside the domain: the midpoint of a bounded interval, one inside a
        half-line's end, 0 on the whole line."""
        lower, upper = self.lower, self.upper
        if lower.is_finite and upper.is_finite:
            return (lower + upper) / 2
        if lower.is_finite:
            return lower + 1
        if upper.is_finite:
            return upper - 1
        return sympy.S.Zero

    def contains(self, value) -> bool:
        """Whether a number lies in the domain (nan never does)."""
        value = sympy.sympify(value)
        if value.is_real is not True and value.is_infinite is not True:
            return False
        if self.integer and not value.is_integer:
            return False
        above = value > self.lower if self.lower_open else value >= self.lower
        below = value < self.upper if self.upper_open else value <= self.upper
        return bool(above) and bool(below)

    def describe(self) -> str:
        """The domain in interval notation, e.g. ``(0, oo)`` or ``integers in [1, oo)``."""
        left = "(" if self.lower_open else "["
        right = ")" if self.upper_open else "]"
        interval = f"{left}{sympy.sstr(self.lower)}, {sympy.sstr(self.upper)}{right}"
        return f"integers in {interval}" if self.integer else interval


@dataclass(frozen=True)
class Support:
    """Where the variable lives.

    ``kind`` is ``"interval"`` (a density), ``"integers"`` (a pmf on the integers between
    ``lower`` and ``upper``) or ``"finite"`` (a pmf on ``points``). Bounds may contain
    constants (``[0, n]``) but never coordinates.
    """

    text: str
    kind: str
    lower: sympy.Expr = sympy.S.NegativeInfinity
    upper: sympy.Expr = sympy.S.Infinity
    lower_open: bool = True
    upper_open: bool = True
    points: tuple[sympy.Expr, ...] = ()

    @property
    def discrete(self) -> bool:
        return self.kind != "interval"

    def free_symbols(self) -> set[sympy.Symbol]:
        symbols: set[sympy.Symbol] = set()
        for bound in (self.lower, self.upper, *self.points):
            symbols |= bound.free_symbols
        return symbols


@dataclass(frozen=True)
class Parameter:
    """A coordinate of the manifold or a constant of the family."""

    name: str
    symbol: sympy.Symbol
    domain: Domain
    role: str  # "coordinate" or "constant"


#: The sensitivity norms of a vector mechanism (``sensitivity = "l2"``), in prose.
NORM_NAMES = {"l2": "Euclidean (l2)", "l1": "l1"}


@dataclass(frozen=True)
class Mechanism:
    """How a family's parameters move between adjacent datasets (the ``[mechanism]`` table).

    ``kind`` is ``"additive"`` (the coordinate ``location`` carries the query value, moved by
    the sensitivity ``sensitivity`` between neighbours; ``scale`` is the fixed noise scale) or
    ``"neighbour"`` (``neighbour`` maps each moved coordinate to its value on the adjacent
    dataset, e.g. ``p -> 1 - p`` for randomized response). Either way the Rao distance is taken
    in the family whose only coordinates are the data-dependent ones; every other parameter,
    the scale included, is held fixed.
    """

    kind: str
    location: Parameter | None = None
    scale: Parameter | None = None
    neighbour: tuple[tuple[sympy.Symbol, sympy.Expr], ...] = ()
    sensitivity: sympy.Symbol = sympy.Symbol("Delta", positive=True)
    #: A vector additive mechanism (``location = ["m1", "m2", "m3"]``): every location
    #: coordinate in order, and the norm (``"l2"`` or ``"l1"``) in which ``sensitivity``
    #: bounds the shift ``h(D) - h(D')``. ``location`` is then the first of them, the one
    #: the worst-case pair ``h = Delta e_1`` moves. Empty and None for a scalar mechanism.
    locations: tuple[Parameter, ...] = ()
    norm: str | None = None

    @property
    def vector(self) -> bool:
        """Whether the query value is a vector (several location coordinates and a norm)."""
        return self.norm is not None

    @property
    def moved(self) -> tuple[sympy.Symbol, ...]:
        """The data-dependent coordinates (the coordinates of the mechanism's manifold)."""
        if self.vector:
            return tuple(p.symbol for p in self.locations)
        if self.kind == "additive":
            return (self.location.symbol,)
        return tuple(symbol for symbol, _ in self.neighbour)


@dataclass(frozen=True)
class FamilySpec:
    """Everything a derivation file says, parsed into SymPy objects and validated."""

    name: str
    title: str
    reference: str
    path: str
    sha256: str
    variable: sympy.Symbol
    support: Support
    density: sympy.Expr
    coordinates: tuple[Parameter, ...]
    constants: tuple[Parameter, ...] = ()
    mechanism: Mechanism | None = field(default=None, compare=False, hash=False)
    #: The density as the file writes it (the appendix displays it so, not in SymPy's
    #: normal form); "" for a spec built in code.
    density_text: str = field(default="", compare=False, hash=False)
    #: A family of several sample variables (``variables = [...]`` with a ``[support]``
    #: table): the variables in order and one support each, whose bounds may use the earlier
    #: variables. Empty for a file with one ``variable``; otherwise ``variable`` and
    #: ``support`` are the first variable's, and the stages that only know one variable
    #: refuse the family (see :attr:`multivariate`).
    variables: tuple[sympy.Symbol, ...] = ()
    supports: tuple[Support, ...] = ()

    @property
    def multivariate(self) -> bool:
        return len(self.variables) > 1

    @property
    def sample_variables(self) -> tuple[sympy.Symbol, ...]:
        """Every sample variable in order: ``variable``, or those of ``variables = [...]``."""
        return self.variables or (self.variable,)

    @property
    def sample_supports(self) -> tuple[tuple[sympy.Symbol, Support], ...]:
        """``(variable, support)`` of each sample variable, in order."""
        return tuple(zip(self.sample_variables, self.supports or (self.support,), strict=True))

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return self.coordinates + self.constants

    @property
    def coordinate_symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(parameter.symbol for parameter in self.coordinates)

    @property
    def constant_symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(parameter.symbol for parameter in self.constants)
