"""Parsing of domain and support strings (spec stage: text → Domain / Support).

``spec.schema`` calls :func:`parse_domain` for each entry of ``[coordinates]`` and
``[constants]`` (``"positive"``, ``"(0, 1)"``, ``"> 1/2"``, ``"integer >= 1"``) and
:func:`parse_support` for the ``support`` key (``"real"``, ``"[0, n]"``, ``"integers >= 0"``,
``"{0, 1}"``, ``"range(0, n + 1)"``). Every bound is an expression parsed by
:func:`raosym.spec.parser.parse_expression`, so bounds obey the same whitelist as densities.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping

import sympy

from raosym.errors import SpecError
from raosym.spec.model import Domain, Support
from raosym.spec.parser import parse_expression

_oo = sympy.oo

#: Named sets, as (lower, upper, lower_open, upper_open).
_NAMED_INTERVALS: dict[str, tuple[sympy.Expr, sympy.Expr, bool, bool]] = {
    "real": (-_oo, _oo, True, True),
    "positive": (sympy.S.Zero, _oo, True, True),
    "nonnegative": (sympy.S.Zero, _oo, False, True),
    "negative": (-_oo, sympy.S.Zero, True, True),
    "nonpositive": (-_oo, sympy.S.Zero, True, False),
}

_DOMAIN_FORMS = (
    "real, positive, nonnegative, negative, nonpositive; an interval such as (0, 1), [0, 1) "
    "or (1/2, oo); a comparison such as > 0, >= 1/2, < 1 or <= pi; or an integer domain "
    "such as integer >= 1 or integers in [0, 10]"
)
_SUPPORT_FORMS = (
    "real, positive, nonnegative, negative, nonpositive; an interval such as (0, 1), "
    "[0, n] or [2, oo); integers such as integers >= 0 or integers in [0, n]; a finite set "
    "such as {0, 1}; or range(0, n + 1) for the integers 0 to n"
)

_INTEGER_PREFIX = re.compile(r"(integers?)(?![A-Za-z0-9_])\s*(in(?![A-Za-z0-9_]))?")
_COMPARISON = re.compile(r"(>=|<=|>|<)")


class _Text:
    """A piece of the original string with its position, so errors point at the right column."""

    def __init__(self, text: str, start: int = 0) -> None:
        stripped = text.lstrip()
        self.start = start + len(text) - len(stripped)
        self.text = stripped.rstrip()

    def after(self, count: int) -> _Text:
        return _Text(self.text[count:], self.start + count)


class _Context:
    """Where the string comes from, and the names its bounds may use."""

    def __init__(self, symbols, path, key, line, column_offset, what) -> None:
        self.symbols = dict(symbols)
        self.path, self.key, self.line = path, key, line
        self.column_offset = column_offset
        self.what = what  # "domain" or "support"

    def error(self, message: str, piece: _Text | None = None) -> SpecError:
        start = piece.start if piece is not None else 0
        return SpecError(message, path=self.path, key=self.key, line=self.line,
                         column=self.column_offset + start + 1)

    @contextlib.contextmanager
    def sympy_failures_as_spec_errors(self):
        """Comparisons of bounds run SymPy's evalf, which may raise on odd numbers."""
        try:
            yield
        except (SpecError, RecursionError, MemoryError):
            raise
        except Exception as error:  # noqa: BLE001 - bad input must end as a SpecError
            raise self.error(f"SymPy cannot evaluate the {self.what} "
                             f"({type(error).__name__}: {str(error)[:120]})") from None

    def expression(self, piece: _Text) -> sympy.Expr:
        if not piece.text:
            raise self.error(f"a bound of the {self.what} is empty", piece)
        return parse_expression(piece.text, self.symbols, path=self.path, key=self.key,
                                line=self.line, column_offset=self.column_offset + piece.start)


def parse_domain(
    text: str,
    symbols: Mapping[str, sympy.Expr],
    *,
    path: str | None = None,
    key: str | None = None,
    line: int | None = None,
    column_offset: int = 0,
    earlier: Mapping[str, sympy.Symbol] | None = None,
) -> Domain:
    """Parse the domain of a coordinate or constant.

    Bounds are numbers and ``pi``/``E``/``oo``, and the names in ``earlier`` (the coordinates
    declared before this one, in a family of several variables: ``p2 = "(0, 1 - p1)"``); any
    other parameter is an error. ``symbols`` are the other parameters, passed only so that
    using one is reported as such rather than as an unknown name.
    """
    earlier = dict(earlier or {})
    context = _Context({**symbols, **earlier}, path, key, line, column_offset, "domain")
    with context.sympy_failures_as_spec_errors():
        return _domain(text, context, set(earlier.values()))


def _domain(text: str, context: _Context, earlier: set = frozenset()) -> Domain:
    piece = _Text(text)
    integer, piece = _strip_integer_prefix(piece)
    if integer and not piece.text:
        bounds = (-_oo, _oo, True, True)
    else:
        bounds = _parse_interval_form(piece, context, _DOMAIN_FORMS, text)
    lower, upper, lower_open, upper_open = bounds
    for bound in (lower, upper):
        _require_numeric_bound(bound, context, piece, earlier)
    _require_nonempty(lower, upper, context, piece)
    if integer:
        _require_an_integer(lower, upper, lower_open, upper_open, context, piece, text.strip())
    return Domain(text=text.strip(), lower=lower, upper=upper, lower_open=lower_open,
                  upper_open=upper_open, integer=integer)


def _require_an_integer(lower, upper, lower_open, upper_open, context, piece, text) -> None:
    """An integer domain must hold an integer: ``integer in (0, 1)`` is not an interval that
    is empty, but it leaves the parameter no value."""
    first, last = _closed_integer_bounds(lower, upper, lower_open, upper_open)
    if _decide(sympy.Le, first, last) is False:
        raise context.error(
            f"the {context.what} {text!r} holds no integer (the integers inside its "
            f"bounds would run from {first} to {last})", piece)


def parse_support(
    text: str,
    symbols: Mapping[str, sympy.Expr],
    *,
    path: str | None = None,
    key: str | None = None,
    line: int | None = None,
    column_offset: int = 0,
) -> Support:
    """Parse the support of the variable; bounds may use the names in ``symbols``.

    Integer supports are normalized to closed bounds (``integers > 0`` has lower bound 1),
    so later stages sum from ``lower`` to ``upper`` inclusive.
    """
    context = _Context(symbols, path, key, line, column_offset, "support")
    with context.sympy_failures_as_spec_errors():
        return _support(text, context)


def _support(text: str, context: _Context) -> Support:
    piece = _Text(text)
    if piece.text.startswith("{"):
        return _parse_finite_set(text, piece, context)
    if re.match(r"range\s*\(", piece.text):
        return _parse_range(text, piece, context)
    integer, rest = _strip_integer_prefix(piece)
    if integer and not rest.text:
        bounds = (-_oo, _oo, True, True)
    else:
        bounds = _parse_interval_form(rest, context, _SUPPORT_FORMS, text)
    lower, upper, lower_open, upper_open = bounds
    _require_nonempty(lower, upper, context, rest)
    if not integer:
        return Support(text=text.strip(), kind="interval", lower=lower, upper=upper,
                       lower_open=lower_open, upper_open=upper_open)
    lower, upper = _closed_integer_bounds(lower, upper, lower_open, upper_open)
    return Support(text=text.strip(), kind="integers", lower=lower, upper=upper,
                   lower_open=lower.is_infinite is True, upper_open=upper.is_infinite is True)


# -- shared forms ---------------------------------------------------------------------------


def _strip_integer_prefix(piece: _Text) -> tuple[bool, _Text]:
    match = _INTEGER_PREFIX.match(piece.text)
    if not match:
        return False, piece
    return True, piece.after(match.end())


def _parse_interval_form(piece: _Text, context: _Context, forms: str, whole: str):
    """A named set, a comparison with one bound, or a bracket interval."""
    word = piece.text.lower()
    if word in _NAMED_INTERVALS:
        return _NAMED_INTERVALS[word]
    comparison = _COMPARISON.match(piece.text)
    if comparison:
        return _parse_comparison(comparison.group(1), piece.after(comparison.end()), context)
    if piece.text[:1] in "([" and piece.text[-1:] in ")]" and len(piece.text) >= 2:
        return _parse_bracket_interval(piece, context)
    raise context.error(f"cannot read the {context.what} {whole.strip()!r}; accepted forms "
                        f"are: {forms}", piece)


def _parse_comparison(operator: str, bound_text: _Text, context: _Context):
    bound = context.expression(bound_text)
    strict = operator in (">", "<")
    if operator.startswith(">"):
        return bound, _oo, strict, True
    return -_oo, bound, True, strict


def _parse_bracket_interval(piece: _Text, context: _Context):
    inner = _Text(piece.text[1:-1], piece.start + 1)
    parts = _split_top_level(inner)
    if len(parts) != 2:
        raise context.error(
            f"an interval needs exactly two bounds separated by one comma, as in (0, 1); "
            f"found {len(parts)} part{'s' if len(parts) != 1 else ''} in {piece.text!r}", piece)
    lower, upper = (context.expression(part) for part in parts)
    lower_open, upper_open = piece.text[0] == "(", piece.text[-1] == ")"
    for bound, is_open, side in ((lower, lower_open, "lower"), (upper, upper_open, "upper")):
        if bound.is_infinite and not is_open:
            raise context.error(
                f"the {side} bound {bound} is infinite, so its side of the interval must be "
                f"open: write {'(' if side == 'lower' else ')'} there", piece)
    return lower, upper, lower_open, upper_open


def _split_top_level(piece: _Text) -> list[_Text]:
    """Split at commas that are not inside parentheses, brackets or braces."""
    parts, depth, start = [], 0, 0
    for index, character in enumerate(piece.text):
        if character in "([{":
            depth += 1
        elif character in ")]}":
            depth -= 1
        elif character == "," and depth == 0:
            parts.append(_Text(piece.text[start:index], piece.start + start))
            start = index + 1
    parts.append(_Text(piece.text[start:], piece.start + start))
    return parts


def _require_numeric_bound(bound: sympy.Expr, context: _Context, piece: _Text,
                           earlier: set = frozenset()) -> None:
    others = bound.free_symbols - earlier
    if others:
        names = ", ".join(sorted(f"'{symbol}'" for symbol in others))
        allowed = (" or earlier coordinates (" + ", ".join(sorted(s.name for s in earlier))
                   + ")") if earlier else ""
        raise context.error(
            f"a domain may not depend on other parameters (found {names}); its bounds must "
            f"be numbers, pi, E or oo{allowed}", piece)
    if bound.free_symbols:
        return  # a bound in earlier coordinates: real wherever they are in their domains
    if bound.is_extended_real is not True:
        raise context.error(f"the bound {bound} is not a real number", piece)


def _require_nonempty(lower, upper, context: _Context, piece: _Text) -> None:
    for bound in (lower, upper):
        if bound.is_extended_real is False:
            raise context.error(f"the bound {bound} is not a real number", piece)
    if _decide(sympy.Lt, lower, upper) is False:
        raise context.error(
            f"the {context.what} {piece.text!r} is empty: its lower bound {lower} is not "
            f"below its upper bound {upper}", piece)


def _decide(relation, left, right) -> bool | None:
    """True or False when SymPy can decide ``relation(left, right)``, else None."""
    try:
        decided = relation(left, right)
    except (TypeError, ArithmeticError):  # not provably real, or evalf ran out of precision
        return None
    return {sympy.true: True, sympy.false: False}.get(decided)


# -- supports of discrete variables ---------------------------------------------------------


def _closed_integer_bounds(lower, upper, lower_open, upper_open):
    """The smallest and largest integers inside the bounds (symbolic bounds too)."""
    if lower.is_finite:
        lower = sympy.floor(lower) + 1 if lower_open else sympy.ceiling(lower)
    if upper.is_finite:
        upper = sympy.ceiling(upper) - 1 if upper_open else sympy.floor(upper)
    return lower, upper


def _parse_finite_set(text: str, piece: _Text, context: _Context) -> Support:
    if not piece.text.endswith("}"):
        raise context.error(f"a finite set must end with '}}', as in {{0, 1}}; "
                            f"found {piece.text!r}", piece)
    inner = _Text(piece.text[1:-1], piece.start + 1)
    if not inner.text:
        raise context.error("a finite support needs at least one point, as in {0, 1}", piece)
    points = [context.expression(part) for part in _split_top_level(inner)]
    if len(set(points)) != len(points):
        raise context.error(f"the points of the finite support {piece.text!r} must be "
                            "distinct", piece)
    for point in points:
        if point.is_extended_real is False or point.is_infinite:
            raise context.error(f"the point {point} of a finite support must be a finite "
                                "real number", piece)
    if not all(point.is_number for point in points):
        return Support(text=text.strip(), kind="finite", points=tuple(points))
    try:
        points.sort(key=lambda point: float(sympy.N(point, 30)))
    except (TypeError, ValueError):
        raise context.error(f"cannot order the points of {piece.text!r}", piece) from None
    return Support(text=text.strip(), kind="finite", lower=points[0], upper=points[-1],
                   lower_open=False, upper_open=False, points=tuple(points))


def _parse_range(text: str, piece: _Text, context: _Context) -> Support:
    opening = piece.text.index("(")
    if not piece.text.endswith(")"):
        raise context.error(f"write range(start, stop), as in range(0, n + 1); "
                            f"found {piece.text!r}", piece)
    inner = _Text(piece.text[opening + 1:-1], piece.start + opening + 1)
    parts = _split_top_level(inner)
    if len(parts) not in (1, 2) or not all(part.text for part in parts):
        raise context.error(
            "range takes one or two arguments, range(stop) or range(start, stop), "
            f"as in range(0, n + 1); found {piece.text!r}", piece)
    bounds = [context.expression(part) for part in parts]
    start, stop = bounds if len(bounds) == 2 else (sympy.S.Zero, bounds[0])
    for bound in (start, stop):
        if bound.is_integer is False or bound.is_infinite:
            raise context.error(f"the bounds of range must be integers (found {bound})", piece)
    if _decide(sympy.Lt, start, stop) is False:
        raise context.error(f"{piece.text} is empty: its start {start} is not below its "
                            f"stop {stop}", piece)
    upper = stop - 1
    return Support(text=text.strip(), kind="integers", lower=start, upper=upper,
                   lower_open=False, upper_open=False)
