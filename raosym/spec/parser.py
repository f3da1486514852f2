"""Safe parsing of the expressions in a derivation file (spec stage: text → SymPy).

``spec.schema`` hands every expression string of a derivation file (the density, the bounds of
supports and domains) to :func:`parse_expression`, which returns a SymPy expression or raises
:class:`~raosym.errors.SpecError` pointing at the offending column of the file.

Nothing here evaluates user text: no ``eval``, ``sympify`` or ``parse_expr``. The text is
parsed by Python's :mod:`ast` into a tree, and the tree is walked against a whitelist: numbers,
names in scope, ``+ - * / **``, unary minus, and calls of the functions in :data:`FUNCTIONS`.
Every other node is refused with a message saying what was found and what is allowed.

Numbers stay exact (``3/2`` is ``Rational(3, 2)``, ``0.5`` is ``Rational(1, 2)``). Because
SymPy evaluates numeric subexpressions eagerly, a short text such as ``9**9**9`` or
``exp(10**6*log(2))`` could otherwise ask for a number with millions of digits; the guards
below refuse such inputs before SymPy starts computing.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

import sympy
from sympy.simplify.simplify import logcombine

from raosym.errors import SpecError

#: Longest expression text accepted, in characters.
MAX_EXPRESSION_LENGTH = 2000
#: Deepest nesting of parentheses, calls and powers (a flat ``a + b + c`` chain counts once).
MAX_NESTING_DEPTH = 100
#: Most digits of an integer literal, and most significant digits of a decimal literal.
MAX_LITERAL_DIGITS = 15
#: Largest power of ten a decimal literal may carry (``1e300`` is fine, ``1e999`` is not).
MAX_DECIMAL_EXPONENT = 300
#: A numeric power ``b**e`` may produce at most about this many bits.
MAX_POWER_BITS = 4096
#: No exact number in an expression may exceed this many bits (about 79 000 digits).
MAX_NUMBER_BITS = 2**18
#: Numeric arguments of factorial-like functions are bounded: SymPy evaluates them exactly.
FACTORIAL_ARGUMENT_LIMIT = 10_000
#: polygamma and zeta evaluate to sums with one term per unit of their arguments.
SERIES_ARGUMENT_LIMIT = 50
#: binomial(n, k) with a fractional n is a product of k fractions.
BINOMIAL_PRODUCT_LIMIT = 1000
#: SymPy decides signs of numeric Bessel values by mpmath, which crawls for large orders.
BESSEL_ARGUMENT_LIMIT = 100

_MANY = 10**6  # "any number of arguments" for Max and Min


class WhitelistedFunction(NamedTuple):
    """A whitelisted function: the SymPy callable, its arities and its argument guard."""

    sympy_function: Callable[..., sympy.Expr]
    min_args: int = 1
    max_args: int = 1
    numeric_argument_limit: int | None = None


#: The only functions an expression may call (the single lookup table of the whitelist).
FUNCTIONS: dict[str, WhitelistedFunction] = {
    "exp": WhitelistedFunction(sympy.exp),
    "log": WhitelistedFunction(sympy.log, 1, 2),
    "sqrt": WhitelistedFunction(sympy.sqrt),
    "Abs": WhitelistedFunction(sympy.Abs),
    "sign": WhitelistedFunction(sympy.sign),
    "Heaviside": WhitelistedFunction(sympy.Heaviside),
    "Max": WhitelistedFunction(sympy.Max, 2, _MANY),
    "Min": WhitelistedFunction(sympy.Min, 2, _MANY),
    "gamma": WhitelistedFunction(sympy.gamma, 1, 1, FACTORIAL_ARGUMENT_LIMIT),
    "loggamma": WhitelistedFunction(sympy.loggamma, 1, 1, FACTORIAL_ARGUMENT_LIMIT),
    "factorial": WhitelistedFunction(sympy.factorial, 1, 1, FACTORIAL_ARGUMENT_LIMIT),
    "beta": WhitelistedFunction(sympy.beta, 2, 2, FACTORIAL_ARGUMENT_LIMIT),
    "binomial": WhitelistedFunction(sympy.binomial, 2, 2, FACTORIAL_ARGUMENT_LIMIT),
    "polygamma": WhitelistedFunction(sympy.polygamma, 2, 2, SERIES_ARGUMENT_LIMIT),
    "digamma": WhitelistedFunction(sympy.digamma, 1, 1, SERIES_ARGUMENT_LIMIT),
    "trigamma": WhitelistedFunction(sympy.trigamma, 1, 1, SERIES_ARGUMENT_LIMIT),
    "zeta": WhitelistedFunction(sympy.zeta, 1, 2, SERIES_ARGUMENT_LIMIT),
    "erf": WhitelistedFunction(sympy.erf),
    "erfc": WhitelistedFunction(sympy.erfc),
    "besseli": WhitelistedFunction(sympy.besseli, 2, 2, BESSEL_ARGUMENT_LIMIT),
    "besselk": WhitelistedFunction(sympy.besselk, 2, 2, BESSEL_ARGUMENT_LIMIT),
    "sin": WhitelistedFunction(sympy.sin),
    "cos": WhitelistedFunction(sympy.cos),
    "tan": WhitelistedFunction(sympy.tan),
    "asin": WhitelistedFunction(sympy.asin),
    "acos": WhitelistedFunction(sympy.acos),
    "atan": WhitelistedFunction(sympy.atan),
    "sinh": WhitelistedFunction(sympy.sinh),
    "cosh": WhitelistedFunction(sympy.cosh),
    "tanh": WhitelistedFunction(sympy.tanh),
    "asinh": WhitelistedFunction(sympy.asinh),
    "acosh": WhitelistedFunction(sympy.acosh),
    "atanh": WhitelistedFunction(sympy.atanh),
}

#: The only constants; ``I`` is deliberately absent (expressions are real).
CONSTANTS: dict[str, sympy.Expr] = {"E": sympy.E, "pi": sympy.pi, "oo": sympy.oo}

#: Names a parameter or variable may not take, because a bare name in an expression already
#: means them. Function names stay free (the rate ``beta`` of a gamma family is common): a call
#: ``beta(a, b)`` is the function and a bare ``beta`` the parameter, and every printer qualifies
#: its functions (``math.gamma``, ``mpmath.beta``, ``\Gamma``), so the two never meet.
RESERVED_NAMES: frozenset[str] = frozenset(CONSTANTS)

_BINARY_OPERATORS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
}
_REFUSED_OPERATORS: dict[type, str] = {
    ast.BitXor: "^", ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&",
}
_ALLOWED_SUMMARY = (
    "an expression may use numbers, names in scope, the operators + - * / ** and unary -, "
    "and calls of the whitelisted functions"
)
_NODE_DESCRIPTIONS: dict[type, str] = {
    ast.Subscript: "a subscript (indexing with [...])",
    ast.Lambda: "a lambda",
    ast.Compare: "a comparison",
    ast.BoolOp: "'and'/'or'",
    ast.IfExp: "a conditional expression (... if ... else ...)",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Tuple: "a tuple (a comma outside a function call)",
    ast.List: "a list",
    ast.Set: "a set",
    ast.Dict: "a dict",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment expression (:=)",
    ast.Starred: "a starred argument",
    ast.Await: "'await'",
    ast.Yield: "'yield'",
    ast.YieldFrom: "'yield from'",
    ast.Slice: "a slice",
}


def parse_expression(
    text: str,
    symbols: Mapping[str, sympy.Expr],
    *,
    path: str | None = None,
    key: str | None = None,
    line: int | None = None,
    column_offset: int = 0,
    variable: str | None = None,
) -> sympy.Expr:
    """Parse ``text`` into an exact SymPy expression over ``symbols`` and the constants.

    ``path``, ``key`` and ``line`` locate the text in its file for error messages;
    ``column_offset`` is the number of characters before the text on that line, so that
    reported columns are columns of the file (1-based). ``variable`` names the entry of
    ``symbols`` that is the family's variable, only to label it in messages.
    """
    if not isinstance(text, str):
        raise SpecError(
            f"expected an expression as a string, found {type(text).__name__}",
            path=path, key=key, line=line,
        )
    builder = _ExpressionBuilder(text, symbols, path, key, line, column_offset, variable)
    return builder.parse()


class _ExpressionBuilder:
    """Walks the AST of one expression, building SymPy objects for whitelisted nodes only."""

    def __init__(self, text, symbols, path, key, line, column_offset, variable) -> None:
        # Python refuses an indented first line in eval mode; strip it and shift columns.
        self.source = text.lstrip(" \t")
        self.first_line_shift = column_offset + len(text) - len(self.source)
        self.source_lines = re.split(r"\r\n|\r|\n", self.source)
        self.symbols = dict(symbols)
        self.variable = variable
        self.path, self.key, self.line = path, key, line

    # -- entry point --------------------------------------------------------------------

    def parse(self) -> sympy.Expr:
        if len(self.source) > MAX_EXPRESSION_LENGTH:
            raise self._error(
                f"expression too long ({len(self.source)} characters; "
                f"at most {MAX_EXPRESSION_LENGTH} are accepted)", None)
        if not self.source.strip():
            raise self._error("empty expression", None)
        tree = self._parse_tree()
        self._check_nesting(tree)
        try:
            return self._build(tree.body)
        except (RecursionError, MemoryError):
            raise self._error("expression too complex to build", tree.body) from None

    def _parse_tree(self) -> ast.Expression:
        try:
            return ast.parse(self.source, mode="eval")
        except SyntaxError as error:
            raise self._syntax_error(error) from None
        except ValueError as error:  # e.g. a NUL character, on some Python versions
            raise self._error(f"cannot parse the expression: {error}", None) from None
        except (RecursionError, MemoryError):
            raise self._error(
                f"expression nested too deeply (at most {MAX_NESTING_DEPTH} levels)", None
            ) from None

    def _syntax_error(self, error: SyntaxError) -> SpecError:
        if error.msg == "source code string cannot contain null bytes":
            return self._error("the expression contains a NUL character", None)
        lineno = error.lineno or 1
        offset = max(error.offset or 1, 1)  # SyntaxError.offset counts characters, from 1
        shift = self.first_line_shift if lineno == 1 else 0
        return SpecError(
            f"invalid expression syntax: {error.msg}",
            path=self.path, key=self.key, line=self._file_line(lineno), column=shift + offset,
        )

    def _check_nesting(self, tree: ast.Expression) -> None:
        """Refuse deep trees up front, so that building never recurses without bound."""
        stack = [(tree.body, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_NESTING_DEPTH:
                raise self._error(
                    f"expression nested too deeply (at most {MAX_NESTING_DEPTH} levels)", node)
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, (ast.expr, ast.keyword)):
                    continue  # operators and contexts (Load) carry no position and no depth
                # The left operand of a chain a + b + c is built iteratively: no extra level.
                same_chain = isinstance(node, ast.BinOp) and child is node.left
                stack.append((child, depth if same_chain else depth + 1))

    # -- dispatch -----------------------------------------------------------------------

    def _build(self, node: ast.AST) -> sympy.Expr:
        try:
            return self._build_node(node)
        except (SpecError, RecursionError, MemoryError):
            raise
        except Exception as error:  # noqa: BLE001
            # SymPy evaluates eagerly and may raise anything on odd input (mpmath's
            # NoConvergence, OverflowError, TypeError); bad input must still be a SpecError.
            raise self._error(
                f"SymPy cannot evaluate this ({type(error).__name__}: {str(error)[:120]})",
                node) from None

    def _build_node(self, node: ast.AST) -> sympy.Expr:
        if isinstance(node, ast.Constant):
            return self._build_constant(node)
        if isinstance(node, ast.Name):
            return self._build_name(node)
        if isinstance(node, ast.BinOp):
            return self._build_binary_chain(node)
        if isinstance(node, ast.UnaryOp):
            return self._build_unary(node)
        if isinstance(node, ast.Call):
            return self._build_call(node)
        raise self._error(f"{self._describe(node)} is not allowed; {_ALLOWED_SUMMARY}", node)

    @staticmethod
    def _describe(node: ast.AST) -> str:
        if isinstance(node, ast.Attribute):
            return f"attribute access '.{node.attr}'"
        return _NODE_DESCRIPTIONS.get(type(node), f"a {type(node).__name__} node")

    # -- leaves -------------------------------------------------------------------------

    def _build_constant(self, node: ast.Constant) -> sympy.Expr:
        value = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            raise self._error(f"the constant {value!r} is not a number; {_ALLOWED_SUMMARY}", node)
        if isinstance(value, int):
            return self._build_integer(value, node)
        if isinstance(value, float):
            return self._build_decimal(node)
        if isinstance(value, complex):
            raise self._error(
                "complex numbers are not allowed: expressions are real", node)
        if isinstance(value, (str, bytes)):
            raise self._error(
                f"strings are not allowed (found {value!r:.40}); {_ALLOWED_SUMMARY}", node)
        raise self._error(f"the literal {value!r:.40} is not allowed", node)

    def _build_integer(self, value: int, node: ast.AST) -> sympy.Integer:
        if abs(value) >= 10**MAX_LITERAL_DIGITS:
            raise self._error(
                f"integer literal too long (at most {MAX_LITERAL_DIGITS} digits)", node)
        return sympy.Integer(value)

    def _build_decimal(self, node: ast.Constant) -> sympy.Rational:
        """A decimal literal becomes the exact rational its source text denotes (0.1 → 1/10)."""
        literal = ast.get_source_segment(self.source, node) or repr(node.value)
        try:
            decimal = Decimal(literal.replace("_", ""))
        except InvalidOperation:
            raise self._error(f"cannot read the number {literal!r}", node) from None
        digits = decimal.as_tuple().digits
        significant = len("".join(map(str, digits)).strip("0")) or 1
        if significant > MAX_LITERAL_DIGITS:
            raise self._error(
                f"number {literal!r} has too many digits "
                f"(at most {MAX_LITERAL_DIGITS} significant digits)", node)
        if abs(decimal.adjusted()) > MAX_DECIMAL_EXPONENT:
            raise self._error(
                f"number too large or too small: {literal!r} "
                f"(at most 1e{MAX_DECIMAL_EXPONENT} in magnitude)", node)
        numerator, denominator = decimal.as_integer_ratio()
        return sympy.Rational(numerator, denominator)

    def _build_name(self, node: ast.Name) -> sympy.Expr:
        name = node.id
        self._refuse_private_name(name, node)
        if name in self.symbols:
            return self.symbols[name]
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in FUNCTIONS:
            raise self._error(f"'{name}' is a function; call it, as in {name}(...)", node)
        raise self._error(self._unknown_name_message(name), node)

    def _refuse_private_name(self, name: str, node: ast.AST) -> None:
        if name.startswith("_"):
            raise self._error(
                f"names starting with '_' are not allowed (found '{name}')", node)

    def _unknown_name_message(self, name: str) -> str:
        constants = ", ".join(CONSTANTS)
        if not self.symbols:
            return f"unknown name '{name}'; only the constants {constants} are allowed here"
        labelled = [
            f"{symbol} (variable)" if symbol == self.variable else symbol
            for symbol in sorted(self.symbols, key=str.lower)
        ]
        return (
            f"unknown name '{name}'; the names in scope are: {', '.join(labelled)} "
            f"and the constants {constants}"
        )

    # -- operators ----------------------------------------------------------------------

    def _build_binary_chain(self, node: ast.BinOp) -> sympy.Expr:
        """Build ``a + b - c * d ...`` along its left spine without recursing per operator."""
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        result = self._build(node)
        for operation in reversed(chain):
            result = self._build_binary(operation, result)
        return result

    def _build_binary(self, node: ast.BinOp, left: sympy.Expr) -> sympy.Expr:
        operator = type(node.op)
        if operator in _REFUSED_OPERATORS:
            raise self._operator_error(node)
        if operator not in _BINARY_OPERATORS:
            raise self._error(f"the operator {type(node.op).__name__} is not allowed", node)
        right = self._build(node.right)
        if operator is ast.Add:
            result = sympy.Add(left, right)
        elif operator is ast.Sub:
            result = sympy.Add(left, sympy.Mul(sympy.S.NegativeOne, right))
        elif operator is ast.Mult:
            result = sympy.Mul(left, right)
        elif operator is ast.Div:
            result = sympy.Mul(left, self._power(right, sympy.S.NegativeOne, node))
        else:
            result = self._power(left, right, node)
        return self._checked(result, node)

    def _operator_error(self, node: ast.BinOp) -> SpecError:
        symbol = _REFUSED_OPERATORS[type(node.op)]
        hint = "; use ** for powers" if symbol == "^" else ""
        return self._error(
            f"the operator '{symbol}' is not allowed{hint}; "
            "the operators allowed are + - * / ** and unary -", node, operator=True)

    def _build_unary(self, node: ast.UnaryOp) -> sympy.Expr:
        if isinstance(node.op, ast.USub):
            return self._checked(sympy.Mul(sympy.S.NegativeOne, self._build(node.operand)), node)
        if isinstance(node.op, ast.UAdd):
            return self._build(node.operand)
        symbol = {ast.Not: "not", ast.Invert: "~"}.get(type(node.op), type(node.op).__name__)
        raise self._error(
            f"the unary operator '{symbol}' is not allowed; only unary - and + are", node)

    def _power(self, base: sympy.Expr, exponent: sympy.Expr, node: ast.AST) -> sympy.Expr:
        if base == sympy.E:
            self._check_exponential(exponent, node)
        # (2*b)**n becomes 2**n * b**n, so the numeric factors of a product count too.
        numeric_part = base if base.is_number else sympy.Mul(
            *[factor for factor in sympy.Mul.make_args(base) if factor.is_number])
        if numeric_part != 1:
            self._check_numeric_power(numeric_part, exponent, node)
        return sympy.Pow(base, exponent)

    # -- calls --------------------------------------------------------------------------

    def _build_call(self, node: ast.Call) -> sympy.Expr:
        name = self._called_name(node)
        function = FUNCTIONS[name]
        if node.keywords:
            keyword = node.keywords[0]
            found = f"'{keyword.arg}='" if keyword.arg else "'**'"
            raise self._error(
                f"keyword arguments are not allowed (found {found} in a call of {name}); "
                "pass arguments by position", keyword)
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                raise self._error(f"starred arguments are not allowed in a call of {name}",
                                  argument)
        self._check_arity(name, function, node)
        arguments = [self._build(argument) for argument in node.args]
        self._check_function_arguments(name, function, arguments, node)
        if name == "exp":
            self._check_exponential(arguments[0], node)
        if name == "sqrt":
            return self._checked(self._power(arguments[0], sympy.S.Half, node), node)
        return self._checked(function.sympy_function(*arguments), node)

    def _called_name(self, node: ast.Call) -> str:
        if not isinstance(node.func, ast.Name):
            raise self._error(
                f"only whitelisted functions may be called, by name; found a call of "
                f"{self._describe(node.func)}", node.func)
        name = node.func.id
        self._refuse_private_name(name, node.func)
        if name in FUNCTIONS:
            return name
        if name in self.symbols:
            raise self._error(f"'{name}' is a name in scope, not a function", node.func)
        if name in CONSTANTS:
            raise self._error(f"'{name}' is a constant, not a function", node.func)
        allowed = ", ".join(sorted(FUNCTIONS, key=str.lower))
        raise self._error(
            f"unknown function '{name}'; the functions allowed are: {allowed}", node.func)

    def _check_arity(self, name: str, function: WhitelistedFunction, node: ast.Call) -> None:
        count = len(node.args)
        if function.min_args <= count <= function.max_args:
            return
        if function.max_args == _MANY:
            expected = f"at least {function.min_args} arguments"
        elif function.min_args == function.max_args:
            plural = "" if function.min_args == 1 else "s"
            expected = f"{function.min_args} argument{plural}"
        else:
            expected = f"{function.min_args} or {function.max_args} arguments"
        raise self._error(f"{name} takes {expected}, found {count}", node)

    # -- guards -------------------------------------------------------------------------

    def _check_function_arguments(self, name, function, arguments, node) -> None:
        limit = function.numeric_argument_limit
        if limit is None:
            return
        for argument in arguments:
            if argument.is_number and not _numeric_magnitude(argument) <= limit:
                raise self._error(
                    f"number too large: {name} is only evaluated for numeric arguments up to "
                    f"{limit} in absolute value (found {_short(argument)})", node)
        if name == "binomial":
            self._check_binomial(arguments, node)

    def _check_binomial(self, arguments, node) -> None:
        """binomial(n, k) with a non-integer number n multiplies out k factors."""
        upper, lower = arguments
        if not (lower.is_number and upper.is_number) or upper.is_Integer:
            return
        if not upper.is_Rational:
            raise self._error(
                "binomial(n, k) with a numeric k needs n to be rational or symbolic "
                f"(found n = {_short(upper)})", node)
        if _numeric_magnitude(lower) > BINOMIAL_PRODUCT_LIMIT:
            raise self._error(
                f"number too large: binomial(n, k) with a fractional n is only evaluated for "
                f"k up to {BINOMIAL_PRODUCT_LIMIT} (found k = {_short(lower)})", node)

    def _check_numeric_power(self, base, exponent, node) -> None:
        """Refuse b**e with b and e numbers when the result would exceed MAX_POWER_BITS."""
        if not (exponent.is_Rational and base.is_number):
            return
        magnitude = abs(exponent)
        if magnitude <= MAX_POWER_BITS and magnitude * _size_in_bits(base) <= MAX_POWER_BITS:
            return
        raise self._error(
            f"number too large: {_short(base)} ** {_short(exponent)} would have more than "
            f"{MAX_POWER_BITS} bits", node, operator=isinstance(node, ast.BinOp))

    def _check_exponential(self, argument, node) -> None:
        """exp(k*log(b)) evaluates to b**k, so bound it like a power."""
        for term in sympy.Add.make_args(argument):
            if term.free_symbols or not term.has(sympy.log):
                continue
            factors = sympy.Mul.make_args(term)
            logs = [factor for factor in factors if isinstance(logcombine(factor), sympy.log)]
            coefficient = sympy.Mul(*[factor for factor in factors if factor not in logs])
            magnitude = _numeric_magnitude(coefficient)
            for factor in logs:
                base = logcombine(factor).args[0]
                if magnitude > MAX_POWER_BITS or magnitude * _size_in_bits(base) > MAX_POWER_BITS:
                    raise self._error(
                        f"number too large: exp({_short(term)}) would have more than "
                        f"{MAX_POWER_BITS} bits", node, operator=isinstance(node, ast.BinOp))

    def _checked(self, result: sympy.Expr, node: ast.AST) -> sympy.Expr:
        """Refuse results that are undefined, complex or hold an oversized exact number."""
        is_binary = isinstance(node, ast.BinOp)
        if result.has(sympy.zoo, sympy.nan):
            raise self._error(
                "the expression is undefined here (a division by zero, a pole such as "
                "log(0) or gamma(0), or a form such as oo - oo)", node, operator=is_binary)
        # Only the explicit I: asking SymPy whether a number is real may run mpmath for ages.
        if result.has(sympy.I):
            raise self._error(
                "the expression is not real (it evaluates to a multiple of I, as sqrt(-1) or "
                "log(-1) do); expressions must be real", node, operator=is_binary)
        for number in result.atoms(sympy.Rational):
            if _rational_bits(number) > MAX_NUMBER_BITS:
                raise self._error(
                    f"number too large (more than {MAX_NUMBER_BITS} bits)", node,
                    operator=is_binary)
        return result

    # -- locations ----------------------------------------------------------------------

    def _error(self, message: str, node: ast.AST | None, *, operator: bool = False) -> SpecError:
        if node is None:
            return SpecError(message, path=self.path, key=self.key, line=self.line,
                             column=self.first_line_shift + 1)
        if operator:
            lineno, byte_offset = self._operator_position(node)
        elif isinstance(node, ast.Attribute):  # point at the dot, not at the object
            lineno, byte_offset = node.end_lineno, node.end_col_offset - len(node.attr) - 1
        else:
            lineno, byte_offset = node.lineno, node.col_offset
        return SpecError(message, path=self.path, key=self.key, line=self._file_line(lineno),
                         column=self._column(lineno, byte_offset))

    def _file_line(self, lineno: int) -> int | None:
        return None if self.line is None else self.line + lineno - 1

    def _column(self, lineno: int, byte_offset: int) -> int:
        """1-based column in the file; the AST counts UTF-8 bytes, the file characters."""
        text = self.source_lines[lineno - 1] if lineno <= len(self.source_lines) else ""
        characters = len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
        shift = self.first_line_shift if lineno == 1 else 0
        return shift + characters + 1

    def _operator_position(self, node: ast.BinOp) -> tuple[int, int]:
        """Where the operator symbol of a binary operation sits (the AST only knows operands)."""
        left, right = node.left, node.right
        symbol = {**_BINARY_OPERATORS, **_REFUSED_OPERATORS}.get(type(node.op))
        if symbol and left.end_lineno == right.lineno:
            line = self.source_lines[right.lineno - 1].encode("utf-8")
            between = line[left.end_col_offset:right.col_offset]
            index = between.find(symbol.encode())
            if index >= 0:
                return right.lineno, left.end_col_offset + index
        return node.lineno, node.col_offset


def _rational_bits(number: sympy.Rational) -> int:
    return max(abs(number.p).bit_length(), number.q.bit_length())


def _size_in_bits(number: sympy.Expr) -> float:
    """log2 of the largest numerator or denominator inside a numeric expression (at least 1)."""
    sizes = (math.log2(max(abs(r.p), r.q, 2)) for r in number.atoms(sympy.Rational))
    return max(sizes, default=1.0)


def _numeric_magnitude(number: sympy.Expr) -> float:
    """|number| as a float; inf when it cannot be evaluated (nan compares false too)."""
    if number.is_Rational:
        return math.inf if _rational_bits(number) > 1000 else float(abs(number))
    try:
        return float(abs(number.evalf(15)))
    except Exception:  # noqa: BLE001 - mpmath and SymPy raise many types here
        return math.inf


def _short(expression: sympy.Expr, limit: int = 60) -> str:
    # order="none": sorting the terms of a sum would evaluate them numerically.
    text = (sympy.sstr(expression, order="none") if _is_small(expression)
            else "a very large number")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_small(expression: sympy.Expr) -> bool:
    # Printing a huge integer in decimal is itself slow (and refused by Python >= 3.11).
    return all(_rational_bits(r) <= 4000 for r in expression.atoms(sympy.Rational))
