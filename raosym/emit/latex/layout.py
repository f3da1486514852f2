r"""Line breaking of displayed expressions: long expressions set on several lines.

Emit stage, LaTeX backend. Input: a SymPy expression and the printer of the family. Output:
:class:`Line` s, each narrow enough for the page (by :func:`visible_width`, an estimate of
the typeset width from the LaTeX source), which :func:`display_rows` lays out as the rows of
an ``align*``.

Only the layout changes, never the expression. A sum is cut between its terms (in SymPy's own
order), a product between its factors (a line that continues a product starts with
``\times``), a quotient is shown as ``\frac{c}{D}`` times its numerator, and the argument of an
integral, a derivative, a substitution, a power or a function is broken inside sized
delimiters (``\biggl( ... \biggr)``), which, unlike ``\left ... \right``, may end on another
line. What cannot be broken (a long subscript, say) is kept whole. Short equations of one
display (a family's statistics and their derivatives) share rows (:func:`side_by_side`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy
from sympy.codegen.cfunctions import expm1, log1p

from raosym.emit.latex.printer import chosen_form

#: Widths are in units of about one math character of 10 pt type (see visible_width).
#: The widest line of a display inside a proof's enumerate (the appendix's text width less
#: the list indentation), with a margin for the estimate's error.
DISPLAY_WIDTH = 66.0
#: A left-hand side at most this wide keeps its own alignment column (``lhs &= rhs``).
ALIGNED_LHS = 20.0
#: Extra width of one level of continuation indentation (``\quad``).
INDENT = 2.0


@dataclass(frozen=True)
class Line:
    """One line of a broken expression; ``indent`` counts continuation levels."""

    text: str
    indent: int = 0


# ----------------------------------------------------------------------------- widths

_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
#: Commands that take no room (sizing, spacing hints, font switches of one group).
_ZERO = {"left", "right", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr",
         "limits", "displaystyle", "textstyle", "!", "nolimits", "middle"}
_SPACES = {",": 0.3, ":": 0.4, ";": 0.5, " ": 0.4, "quad": 2.0, "qquad": 4.0}
_TEXT_ARGUMENT = {"operatorname", "mathrm", "text", "mathit", "mathbf", "textrm", "mathsf"}
_BINARY = {"+": 1.8, "-": 1.8, "=": 2.2, "<": 2.2, ">": 2.2, ",": 0.8, ";": 0.8}
_WIDE = {"int": 1.4, "sum": 1.8, "prod": 1.8, "cdot": 1.4, "times": 1.8, "infty": 1.3,
         "leq": 2.2, "geq": 2.2, "le": 2.2, "ge": 2.2, "to": 2.4, "mapsto": 2.4, "ldots": 2.0,
         "cdots": 2.0, "sqrt": 1.0, "log": 2.2, "exp": 2.4, "sin": 2.0, "cos": 2.2,
         "tan": 2.2, "sinh": 3.0, "cosh": 3.0, "tanh": 3.0, "lim": 2.2, "max": 2.4,
         "min": 2.4, "sup": 2.2, "inf": 2.0, "det": 2.2, "quad": 2.0, "qquad": 4.0}


def _group(text: str, start: int) -> tuple[str, int]:
    """The braced group at ``text[start]`` (or the single token there) and the index after."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text):
        return "", start
    if text[start] == "{":
        depth = 0
        for index in range(start, len(text)):
            if text[index] == "{" and (index == 0 or text[index - 1] != "\\"):
                depth += 1
            elif text[index] == "}" and text[index - 1] != "\\":
                depth -= 1
                if depth == 0:
                    return text[start + 1:index], index + 1
        return text[start + 1:], len(text)
    if text[start] == "\\":
        match = _COMMAND.match(text, start)
        return match.group(0), match.end()
    return text[start], start + 1


def visible_width(text: str) -> float:
    """An estimate of the typeset width of math-mode LaTeX ``text``, in units of about one
    character of 10 pt math type (a fraction is as wide as its wider part, a script 0.7 of
    its text, spacing and sizing commands take their room or none)."""
    width, index = 0.0, 0
    while index < len(text):
        character = text[index]
        if character == "\\":
            match = _COMMAND.match(text, index)
            name, index = match.group(1), match.end()
            if name in ("frac", "dfrac", "tfrac", "binom"):
                top, index = _group(text, index)
                bottom, index = _group(text, index)
                scale = 0.75 if name == "tfrac" else 1.0
                width += scale * max(visible_width(top), visible_width(bottom)) + 0.6
            elif name == "sqrt":
                if index < len(text) and text[index] == "[":
                    end = text.index("]", index)
                    width += 0.6 * visible_width(text[index + 1:end])
                    index = end + 1
                argument, index = _group(text, index)
                width += visible_width(argument) + 1.0
            elif name in _TEXT_ARGUMENT:
                argument, index = _group(text, index)
                width += 0.9 * len(re.sub(r"\\.|[{} ]", "", argument)) + 0.3
            elif name in ("mathbb", "mathcal", "mathfrak", "boldsymbol"):
                argument, index = _group(text, index)
                width += visible_width(argument)
            elif name == "substack":
                argument, index = _group(text, index)
                width += 0.7 * visible_width(argument)
            elif name in ("begin", "end"):
                environment, index = _group(text, index)
                if name == "begin" and environment in ("matrix", "pmatrix", "bmatrix",
                                                       "cases", "array"):
                    body, index = _environment_body(text, index, environment)
                    width += _table_width(body) + (2.0 if environment != "matrix" else 0.0)
            elif name in _ZERO:
                pass
            elif name in _SPACES:
                width += _SPACES[name]
            elif name in _WIDE:
                width += _WIDE[name]
            elif len(name) == 1 and not name.isalpha():
                width += 0.8  # \{ \} \| \$ \%
            else:
                width += 1.0  # a Greek letter or another symbol
        elif character in "^_":
            argument, index = _group(text, index + 1)
            width += 0.7 * visible_width(argument)
        elif character in "{} &":
            index += 1
        elif character in _BINARY:
            width += _BINARY[character]
            index += 1
        elif character in "()[]|":
            width += 1.0
            index += 1
        else:
            width += 1.0
            index += 1
    return width


def _environment_body(text: str, start: int, environment: str) -> tuple[str, int]:
    end_marker = rf"\end{{{environment}}}"
    end = text.find(end_marker, start)
    if end < 0:
        return text[start:], len(text)
    return text[start:end], end + len(end_marker)


def _table_width(body: str) -> float:
    rows = [row.split("&") for row in body.split(r"\\")]
    columns = max((len(row) for row in rows), default=0)
    widths = [max((visible_width(row[c]) for row in rows if c < len(row)), default=0.0)
              for c in range(columns)]
    return sum(widths) + 2.0 * max(columns - 1, 0)


def line_width(line: Line) -> float:
    return visible_width(line.text) + INDENT * line.indent


# ----------------------------------------------------------------------------- breaking


def _balanced(text: str) -> bool:
    depth = 0
    for index, character in enumerate(text):
        if character in "{}" and index and text[index - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(character, 0)
        if depth < 0:
            return False
    return depth == 0


def _has_tall(lines: list[Line]) -> bool:
    return any(r"\frac" in line.text or r"\int" in line.text or r"\sum" in line.text
               or r"\begin" in line.text for line in lines)


def _open_delimiters(prefix: str) -> str:
    """``prefix`` with every ``\\left`` that it does not close made a fixed-size
    ``\\biggl`` (its ``\\right`` lies on another line)."""
    return _unmatched(prefix, r"\left", r"\right", r"\biggl", opening=True)


def _close_delimiters(suffix: str) -> str:
    return _unmatched(suffix, r"\left", r"\right", r"\biggr", opening=False)


def _unmatched(text: str, left: str, right: str, replacement: str, *, opening: bool) -> str:
    tokens = list(re.finditer(r"\\left(?![a-zA-Z])|\\right(?![a-zA-Z])", text))
    stack, unmatched = [], []
    for token in tokens:
        if token.group(0) == left:
            stack.append(token)
        elif stack:
            stack.pop()
        else:
            unmatched.append(token)
    targets = stack if opening else unmatched
    pieces, last = [], 0
    for token in sorted(targets, key=lambda t: t.start()):
        pieces += [text[last:token.start()], replacement]
        last = token.end()
    return "".join(pieces) + text[last:]


class LineBreaker:
    """Breaks printed SymPy expressions into :class:`Line` s no wider than a width."""

    def __init__(self, printer):
        self.printer = printer

    def text(self, expr: sympy.Basic) -> str:
        return self.printer.doprint(expr)

    def lines(self, expr: sympy.Basic, width: float = DISPLAY_WIDTH) -> list[Line]:
        if isinstance(expr, sympy.Piecewise) and len(expr.args) > 1:
            # case by case in display style, even where a cases environment would fit (its
            # fractions would be set in text style)
            return self._piecewise(expr, width)
        text = self.text(expr)
        if visible_width(text) <= width:
            return [Line(text)]
        broken = self._break(expr, width)
        return broken if broken is not None else [Line(text)]

    # -- by head

    def _break(self, expr, width) -> list[Line] | None:
        chosen = chosen_form(expr)
        if chosen is not None:  # the form that is printed (p/(1 - p) for -p/(p - 1))
            expr = chosen
        if isinstance(expr, sympy.Add):
            return self._sum(expr, width)
        if isinstance(expr, sympy.Mul):
            return self._product(expr, width)
        if isinstance(expr, sympy.exp):
            return self._wrap(r"\exp", expr.args[0], "", width, force_delimiters=True)
        if isinstance(expr, log1p):  # printed log(1 + u)
            inner = self.lines(expr.args[0], width - 8.0)
            first = inner[0].text
            inner[0] = Line(("1 " if first.lstrip().startswith("-") else "1 + ") + first,
                            inner[0].indent)
            inner = _delimited(inner, "(", ")")
            inner[0] = Line(r"\log" + inner[0].text, inner[0].indent)
            return [inner[0]] + [Line(line.text, line.indent + 1) for line in inner[1:]]
        if isinstance(expr, expm1):  # printed (e^u - 1): broken as (exp(u) - 1)
            lines = self._wrap(r"\exp", expr.args[0], "", width - 4.0, force_delimiters=True)
            if lines is None:
                return None
            lines[-1] = Line(lines[-1].text + " - 1", lines[-1].indent)
            return _delimited(lines, "(", ")")
        if isinstance(expr, sympy.Pow):
            if expr.exp == sympy.S.Half:
                return self._wrap("", expr.base, "^{1/2}", width, force_delimiters=True)
            if expr.exp.is_negative and not expr.exp.is_Integer:
                return None
            return self._around(expr, expr.base, width)
        if isinstance(expr, (sympy.Integral, sympy.Sum, sympy.Derivative, sympy.Subs,
                             sympy.Limit)):
            return self._around(expr, expr.args[0], width)
        if isinstance(expr, sympy.Function) and len(expr.args) == 1:
            return self._around(expr, expr.args[0], width)
        if isinstance(expr, sympy.Piecewise):
            return self._piecewise(expr, width)
        return None

    def _sum(self, expr: sympy.Add, width: float) -> list[Line]:
        printer = self.printer
        pieces: list[list[Line]] = []
        for sign, term in printer.signed_parts(expr):
            text = printer._print(term)
            bracket = printer.needs_term_brackets(term)
            if bracket:
                text = rf"\left({text}\right)"
            if visible_width(sign + text) <= width:
                pieces.append([Line(sign + text)])
                continue
            inner = self.lines(term, width - 3.0)
            if bracket:
                inner = _delimited(inner, "(", ")")
            pieces.append(_prefixed(sign, inner))
        return _pack(pieces, width)

    def _product(self, expr: sympy.Mul, width: float) -> list[Line] | None:
        coefficient, factors = expr.as_coeff_mul()
        above = [f for f in factors if not (f.is_Pow and f.exp.is_negative)]
        below = [sympy.Pow(f.base, -f.exp) for f in factors if f.is_Pow and f.exp.is_negative]
        head = ""
        if coefficient.is_Rational and coefficient != 1:
            numerator, denominator = abs(coefficient.p), coefficient.q
            if coefficient.is_negative:
                head = "-"
            if denominator != 1 or below:
                below = [sympy.Integer(denominator)] * (denominator != 1) + below
            if numerator != 1 or not above:
                above = [sympy.Integer(numerator)] + above
        elif coefficient != 1:
            above = [coefficient] + above
        reciprocal = None
        if below:
            denominator = sympy.Mul(*below, evaluate=False) if len(below) > 1 else below[0]
            denominator_text = self.text(denominator)
            numbers = [f for f in above if f.is_Number]
            if visible_width(denominator_text) <= width / 2:
                above = [f for f in above if not f.is_Number]
                number = self.text(numbers[0]) if numbers else "1"
                head += rf"\frac{{{number}}}{{{denominator_text}}} "
            else:
                # Too wide to stand under a fraction bar: a reciprocal factor, broken.
                inner = _delimited(self.lines(denominator, width - 8.0), "(", ")")
                reciprocal = inner[:-1] + [Line(inner[-1].text + "^{-1}", inner[-1].indent)]
        if not above and reciprocal is None:
            return None
        pieces = []
        # The head (a sign, 1/denominator) starts the first line: a factor broken after it
        # has that much less room (the bivariate normal's 1/(s1**2 s2**2 (...)) times a sum
        # of nine terms ran 22 pt into the margin).
        room = width - visible_width(head) - 4.0
        for factor in above:
            text = self.text(factor)
            bracket = self.printer._needs_mul_brackets(factor, first=not pieces)
            if bracket or (head and factor.is_Add):
                text = rf"\left({text}\right)"
                bracket = True
            if visible_width(text) <= room:
                pieces.append([Line(text)])
                continue
            inner = self.lines(factor, room)
            pieces.append(_delimited(inner, "(", ")") if bracket else inner)
        # Short factors first, then the broken ones (the product is commutative).
        pieces = [p for p in pieces if len(p) == 1] + [p for p in pieces if len(p) > 1]
        if reciprocal is not None:
            pieces.append(reciprocal)
        lines = _pack(pieces, width - visible_width(head), joiner=r"\times ")
        return _prefixed(head, lines)

    def _around(self, expr, child, width) -> list[Line] | None:
        """Break ``child`` inside the printed ``expr``: the text before and after it become
        the first and last line's ends, its \\left/\\right sized delimiters."""
        full, inner = self.text(expr), self.text(child)
        if full.count(inner) != 1:
            return None
        prefix, suffix = full.split(inner)
        prefix, suffix = _open_delimiters(prefix), _close_delimiters(suffix)
        if not (_balanced(prefix) and _balanced(suffix)):
            if isinstance(expr, sympy.Function) and len(expr.args) == 1:
                return self._wrap(self._function_head(expr), child, "", width,
                                  force_delimiters=True)
            return None
        needs_delimiters = isinstance(child, sympy.Add) and not prefix.rstrip().endswith(
            ("(", "[", "|", ".", "+"))
        return self._wrap(prefix, child, suffix, width, force_delimiters=needs_delimiters)

    def _function_head(self, expr: sympy.Function) -> str:
        """How the printer names ``expr``'s function (``\\log``, ``\\operatorname{log1p}``,
        ``\\psi``): the printed ``f(hole)`` up to its argument's parenthesis."""
        hole = sympy.Symbol("raosymhole")
        text = self.text(expr.func(hole))
        head = text[:text.find("raosymhole")] if "raosymhole" in text else ""
        for tail in ("{\\left(", "\\left(", "{", "("):
            if head.endswith(tail):
                head = head[:-len(tail)]
                break
        if not head or not _balanced(head):
            head = rf"\operatorname{{{expr.func.__name__}}}"
        return head

    def _wrap(self, prefix: str, child, suffix: str, width: float, *,
              force_delimiters: bool) -> list[Line] | None:
        budget = width - max(visible_width(prefix), 0.0) - 3.0
        if budget < width / 3:
            return None
        inner = self.lines(child, budget)
        if force_delimiters:
            inner = _delimited(inner, "(", ")")
        if len(inner) == 1 and not force_delimiters:
            return None
        lines = [Line(prefix + inner[0].text, 0)]
        lines += [Line(line.text, line.indent + 1) for line in inner[1:]]
        lines[-1] = Line(lines[-1].text + suffix, lines[-1].indent)
        return lines

    def _piecewise(self, expr: sympy.Piecewise, width: float) -> list[Line] | None:
        r"""A piecewise expression case by case, as a paper sets cases too long for a
        ``cases`` environment (which cannot be broken across lines): each value on its lines,
        followed by its condition (``\qquad \text{if } c_k,``; ``\text{otherwise}`` for the
        last), each case starting a line and its continuation lines indented once more."""
        lines: list[Line] = []
        cases = list(expr.args)
        for index, (value, condition) in enumerate(cases):
            if condition == sympy.true:
                tag = r"\text{otherwise}"
            else:
                tag = (rf"\text{{if }} {self.text(condition)}"
                       + ("," if index < len(cases) - 1 else ""))
            value_lines = self.lines(value, width - INDENT)
            value_lines = [value_lines[0]] + [Line(line.text, line.indent + 1)
                                              for line in value_lines[1:]]
            last = value_lines[-1]
            joined = Line(rf"{last.text} \qquad {tag}", last.indent)
            if line_width(joined) <= width:
                value_lines[-1] = joined
            else:
                value_lines.append(Line(rf"\qquad {tag}", last.indent + 1))
            lines += value_lines
        return lines


def _delimited(lines: list[Line], opening: str, closing: str) -> list[Line]:
    """``lines`` inside a pair of delimiters sized for their contents."""
    size = "bigg" if _has_tall(lines) else "Big"
    text = [line.text for line in lines]
    first = text[0]
    # A line already opened by \left( of the same pair (from a bracketed term) is resized.
    if first.startswith(r"\left(") and text[-1].endswith(r"\right)") and len(lines) == 1:
        return lines
    lines = list(lines)
    lines[0] = Line(rf"\{size}l{opening}" + lines[0].text, lines[0].indent)
    lines[-1] = Line(lines[-1].text + rf"\{size}r{closing}", lines[-1].indent)
    return lines


def _prefixed(prefix: str, lines: list[Line]) -> list[Line]:
    if not prefix:
        return lines
    return [Line(prefix + lines[0].text, lines[0].indent)] + list(lines[1:])


def _pack(pieces: list[list[Line]], width: float, *, joiner: str = "") -> list[Line]:
    """Set pieces (each one or more lines) one after another, starting a new line when the
    next piece does not fit; a piece of several lines always starts and ends a line."""
    lines: list[Line] = []
    current = ""
    for piece in pieces:
        if len(piece) == 1:
            text = piece[0].text
            if not current:
                current = (joiner if lines else "") + text
            elif visible_width(current) + visible_width(text) + 0.5 <= width:
                current = f"{current} {text}"
            else:
                lines.append(Line(current))
                current = joiner + text
            continue
        if current:
            lines.append(Line(current))
            current = ""
        first = piece[0]
        lines.append(Line((joiner if lines else "") + first.text, first.indent))
        lines += piece[1:]
    if current:
        lines.append(Line(current))
    return lines


# ----------------------------------------------------------------------------- rows


def display_rows(lhs: sympy.Basic | str | None, rhs: sympy.Basic, printer,
                 *, width: float = DISPLAY_WIDTH) -> list[str]:
    """The displayed equation ``lhs = rhs`` as rows of an ``align*``.

    A short left side keeps its alignment column (``lhs &= r_1``, continuation rows
    ``&\\quad r_2``). A long one is set on rows of its own, every row starting at the left
    (``& l_1``, ``&\\quad l_2``, ``&= r_1``, ...), so it never pushes the right side off the
    page."""
    breaker = LineBreaker(printer)
    if lhs is None or lhs == "":
        return _rows("&", breaker.lines(rhs, width))
    lhs_text = lhs if isinstance(lhs, str) else breaker.text(lhs)
    lhs_width = visible_width(lhs_text)
    if lhs_width <= ALIGNED_LHS:
        right = breaker.lines(rhs, width - lhs_width - 2.5)
        return _rows(f"{lhs_text} &=", right)
    left = [Line(lhs_text)] if isinstance(lhs, str) else breaker.lines(lhs, width)
    return _rows("&", left) + _rows("&=", breaker.lines(rhs, width - 2.5))


#: Width kept free on the continuation rows of a chain (see continued_rows).
CHAIN_MARGIN = 4.0


def continued_rows(rhs: sympy.Basic, printer, *, width: float = DISPLAY_WIDTH) -> list[str]:
    """``rhs`` as rows that continue a chain of equalities (``&= r_1``, ``&\\quad r_2``):
    the width ``=`` takes is left for it, as :func:`display_rows` leaves it, and a margin
    for the estimate (a chain's later forms are the long, factored ones)."""
    lines = LineBreaker(printer).lines(rhs, width - 2.5 - CHAIN_MARGIN)
    return _rows("&=", lines)


def _rows(lead: str, lines: list[Line]) -> list[str]:
    """``lead`` before the first line; each continuation line one ``\\quad`` per level more."""
    rows = [f"{lead} {lines[0].text}"]
    for line in lines[1:]:
        rows.append("&" + r"\quad" * (line.indent + 1) + " " + line.text)
    return rows


#: Room between two equations set side by side on one row of an ``align*`` (its column gap).
EQUATION_GAP = 4.0


def side_by_side(equations: list[list[str]], *, width: float = DISPLAY_WIDTH) -> list[str]:
    """The rows of several displayed equations, each given as its own rows, with runs of
    short one-row equations (``lhs &= rhs``) set side by side: ``T_1 &= x & T_2 &= x^2``. An
    equation of several rows keeps its rows.

    The rows share one ``align*``, which aligns its columns across rows: a column is as wide
    as its widest entry in any row. So every run is cut into rows of the same number of
    equations, the largest number whose columns' widths (the widest entry of each, the
    rows of the tall equations in the first) fit in ``width`` together."""
    for columns in range(len(equations), 1, -1):
        rows, column_widths = _in_columns(equations, columns)
        if sum(column_widths) + EQUATION_GAP * (len(column_widths) - 1) <= width:
            return rows
    return _in_columns(equations, 1)[0]


def _in_columns(equations: list[list[str]], columns: int) -> tuple[list[str], list[float]]:
    """The rows of :func:`side_by_side` with at most ``columns`` equations to a row, and the
    width of each column (the widest of its entries)."""
    rows: list[str] = []
    widths: list[float] = []
    current: list[str] = []

    def flush():
        if current:
            rows.append(" & ".join(current))
            current.clear()

    def occupy(column: int, text: str):
        needed = visible_width(text.replace("&", ""))
        if column == len(widths):
            widths.append(needed)
        widths[column] = max(widths[column], needed)

    for equation in equations:
        if len(equation) == 1 and not equation[0].lstrip().startswith("&"):
            occupy(len(current), equation[0])
            current.append(equation[0])
            if len(current) == columns:
                flush()
            continue
        flush()
        for row in equation:
            occupy(0, row)
        rows += equation
    flush()
    return rows, widths
