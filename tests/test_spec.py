"""Tests of the spec stage: the expression whitelist, domains and supports, and load_spec.

Bad input is checked by its message and position, not only by the exception type.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import textwrap

import pytest
import sympy

from raosym.errors import SpecError
from raosym.spec import load_spec, parse_expression
from raosym.spec.domains import parse_domain, parse_support

x = sympy.Symbol("x", real=True)
mu = sympy.Symbol("mu", real=True)
b = sympy.Symbol("b", positive=True)
SYMBOLS = {"x": x, "mu": mu, "b": b}


def parse(text: str, **where) -> sympy.Expr:
    return parse_expression(text, SYMBOLS, variable="x", **where)


def parse_error(text: str, **where) -> SpecError:
    with pytest.raises(SpecError) as caught:
        parse(text, **where)
    return caught.value


# -- exactness ------------------------------------------------------------------------------


def test_integer_division_is_an_exact_rational():
    result = parse("3/2")
    assert result == sympy.Rational(3, 2)
    assert isinstance(result, sympy.Rational)


@pytest.mark.parametrize(
    "text, expected",
    [("0.5", sympy.Rational(1, 2)), ("0.1", sympy.Rational(1, 10)), ("1e3", sympy.Integer(1000)),
     ("2.5e-1", sympy.Rational(1, 4)), ("0.1 + 0.2", sympy.Rational(3, 10)),
     ("1_000.5", sympy.Rational(2001, 2)), ("1.000000000000000000000", sympy.Integer(1))],
)
def test_decimal_literals_are_the_rationals_their_text_denotes(text, expected):
    result = parse(text)
    assert result == expected
    assert isinstance(result, sympy.Rational)


def test_half_x_squared_has_the_expected_structure():
    result = parse("x**2/2")
    assert isinstance(result, sympy.Mul)
    assert set(result.args) == {sympy.Rational(1, 2), sympy.Pow(x, 2)}
    assert sympy.srepr(result) == sympy.srepr(sympy.Rational(1, 2) * x**2)


def test_laplace_density_is_built_from_the_given_symbols():
    result = parse("exp(-Abs(x - mu)/b) / (2*b)")
    expected = sympy.exp(-sympy.Abs(x - mu) / b) / (2 * b)
    assert result == expected
    assert result.free_symbols == {x, mu, b}


def test_functions_and_constants_are_the_sympy_ones():
    assert parse("log(x, 2)") == sympy.log(x) / sympy.log(2)
    assert parse("gamma(3/2)") == sympy.sqrt(sympy.pi) / 2
    assert parse("Max(x, mu, 0)") == sympy.Max(x, mu, 0)
    assert parse("pi + E") == sympy.pi + sympy.E
    assert parse("-oo") == -sympy.oo


def test_a_long_flat_sum_is_not_mistaken_for_deep_nesting():
    assert parse("+".join(["x"] * 600)) == 600 * x


def test_leading_spaces_are_allowed_and_counted_in_columns():
    assert parse("   x + 1") == x + 1
    assert parse_error("   x + y").column == 8


# -- rejections -----------------------------------------------------------------------------

ALLOWED = "an expression may use numbers, names in scope, the operators + - * / ** and unary -"


@pytest.mark.parametrize(
    "text, fragment, column",
    [
        ("().__class__", "attribute access '.__class__' is not allowed; " + ALLOWED, 3),
        ("x.real", "attribute access '.real' is not allowed", 2),
        ("__import__('os').system('touch PWNED')",
         ("only whitelisted functions may be called, by name; found a call of attribute "
         "access '.system'"), 17),
        ("__import__('os')", "names starting with '_' are not allowed (found '__import__')", 1),
        ("__builtins__", "names starting with '_' are not allowed (found '__builtins__')", 1),
        ("_x + 1", "names starting with '_' are not allowed (found '_x')", 1),
        ("lambda: x", "a lambda is not allowed; " + ALLOWED, 1),
        ("(lambda: 0)()", "found a call of a lambda", 2),
        ("x[0]", "a subscript (indexing with [...]) is not allowed", 1),
        ("'rm -rf'", "strings are not allowed (found 'rm -rf')", 1),
        ("log(x, base=2)", "keyword arguments are not allowed (found 'base=' in a call of log)",
         8),
        ("exp(*[x])", "starred arguments are not allowed in a call of exp", 5),
        ("x < 2", "a comparison is not allowed", 1),
        ("x if mu else b", "a conditional expression (... if ... else ...) is not allowed", 1),
        ("[t for t in ()]", "a comprehension is not allowed", 1),
        ("x and mu", "'and'/'or' is not allowed", 1),
        ("x, mu", "a tuple (a comma outside a function call) is not allowed", 1),
        ("f'{x}'", "an f-string is not allowed", 1),
        ("(y := 2)", "an assignment expression (:=) is not allowed", 2),
        ("x % 2", ("the operator '%' is not allowed; the operators allowed are + - * / ** "
         "and unary -"), 3),
        ("not x", "the unary operator 'not' is not allowed", 1),
        ("True + x", "the constant True is not a number", 1),
        ("2j * x", "complex numbers are not allowed: expressions are real", 1),
        ("sqrt(-1) * x", "the expression is not real (it evaluates to a multiple of I", 1),
        ("log(-2)", "expressions must be real", 1),
        ("x / 0", "the expression is undefined here (a division by zero", 3),
        ("oo - oo", "the expression is undefined here", 4),
        ("exp", "'exp' is a function; call it, as in exp(...)", 1),
        ("mu(x)", "'mu' is a name in scope, not a function", 1),
        ("pi(2)", "'pi' is a constant, not a function", 1),
        ("log(x, 2, 3)", "log takes 1 or 2 arguments, found 3", 1),
        ("exp()", "exp takes 1 argument, found 0", 1),
        ("Max(x)", "Max takes at least 2 arguments, found 1", 1),
        ("I * x", "unknown name 'I'", 1),
    ],
)
def test_forbidden_constructs_are_named_with_their_column(text, fragment, column):
    error = parse_error(text)
    assert fragment in error.message
    assert error.column == column


def test_hostile_text_is_refused_without_running_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    error = parse_error("__import__('os').system('touch PWNED')")
    assert "is not allowed" in error.message or "only whitelisted functions" in error.message
    assert not (tmp_path / "PWNED").exists()


def test_unknown_name_lists_the_names_in_scope_and_the_constants():
    error = parse_error("x + y")
    assert error.message == (
        "unknown name 'y'; the names in scope are: b, mu, x (variable) and the constants "
        "E, pi, oo")
    assert error.column == 5


def test_unknown_name_with_nothing_in_scope():
    with pytest.raises(SpecError) as caught:
        parse_expression("n + 1", {})
    assert caught.value.message == (
        "unknown name 'n'; only the constants E, pi, oo are allowed here")


def test_unknown_function_lists_the_allowed_functions_sorted():
    error = parse_error("2 * foo(x)")
    assert error.message.startswith("unknown function 'foo'; the functions allowed are: ")
    listed = error.message.split(": ", 1)[1].split(", ")
    assert listed == sorted(listed, key=str.lower)
    assert {"exp", "log", "gamma", "Abs", "besselk", "zeta"} <= set(listed)
    assert error.column == 5


def test_caret_is_refused_with_a_hint_and_the_column_of_the_caret():
    error = parse_error("x ^ 2")
    assert "the operator '^' is not allowed; use ** for powers" in error.message
    assert error.column == 3


@pytest.mark.parametrize(
    "text, fragment, column",
    [
        ("9**9**9", "number too large: 9 ** 387420489 would have more than 4096 bits", 2),
        ("2**5000", "number too large: 2 ** 5000 would have more than 4096 bits", 2),
        ("(1/3)**3000", "number too large", 6),
        ("sqrt(2)**(10**5)", "number too large: sqrt(2) ** 100000", 8),
        ("factorial(10**9)",
         ("number too large: factorial is only evaluated for numeric arguments up to 10000 in "
         "absolute value (found 1000000000)"), 1),
        ("gamma(20001/2)", "gamma is only evaluated for numeric arguments up to 10000", 1),
        ("binomial(10**5, 3)", "binomial is only evaluated for numeric arguments up to 10000",
         1),
        ("polygamma(3, 1000)", "polygamma is only evaluated for numeric arguments up to 50", 1),
        ("binomial(pi, 100)", "binomial(n, k) with a numeric k needs n to be rational", 1),
        ("binomial(1/2, 5000)", ("binomial(n, k) with a fractional n is only evaluated for k "
         "up to 1000"), 1),
        ("(2*b)**(232**232)", "number too large: 2 ** ", 6),
        ("exp(10**5*log(2))",
         "number too large: exp(100000*log(2)) would have more than 4096 bits", 1),
        ("x + E**(10**5*log(3))", "number too large: exp(100000*log(3))", 6),
        ("exp(x + 10**5*log(2))", "number too large: exp(100000*log(2))", 1),
        ("1234567890123456", "integer literal too long (at most 15 digits)", 1),
        ("0.12345678901234567", "has too many digits (at most 15 significant digits)", 1),
        ("1e999", "number too large or too small: '1e999'", 1),
    ],
)
def test_numbers_too_large_to_compute_are_refused(text, fragment, column):
    error = parse_error(text)
    assert fragment in error.message
    assert error.column == column


def test_large_but_reasonable_numbers_are_accepted():
    assert parse("2**4096") == sympy.Integer(2) ** 4096
    assert parse("factorial(10000)") == sympy.factorial(10000)
    assert parse("exp(100*log(2))") == sympy.Integer(2) ** 100


def test_overlong_text_is_refused():
    error = parse_error("x + " * 600 + "x")
    assert error.message == "expression too long (2401 characters; at most 2000 are accepted)"


@pytest.mark.parametrize("depth", [98, 99, 100, 101])
def test_nesting_limit_boundary(depth):
    text = "-" * depth + "x"
    if depth < 100:
        assert parse(text) == (-1) ** depth * x
    else:
        assert "nested too deeply" in parse_error(text).message


def test_deep_nesting_is_refused_not_a_recursion_error():
    error = parse_error("-" * 300 + "x")
    assert "expression nested too deeply (at most 100 levels)" in error.message
    error = parse_error("exp(" * 150 + "x" + ")" * 150)
    assert "nested too deeply" in error.message


def test_syntax_error_reports_the_column():
    error = parse_error("x +* 2")
    assert error.message == "invalid expression syntax: invalid syntax"
    assert error.column == 4


def test_syntax_error_column_is_shifted_to_the_file():
    error = parse_error("exp(x", path="f.toml", key="density", line=6, column_offset=11)
    assert error.message == "invalid expression syntax: '(' was never closed"
    assert (error.path, error.key, error.line, error.column) == ("f.toml", "density", 6, 15)
    assert str(error).startswith("f.toml:6:15: key 'density': invalid expression syntax")


def test_empty_expression_is_refused():
    assert parse_error("   ").message == "empty expression"


def test_columns_count_characters_not_bytes():
    error = parse_error("é + ü")
    assert error.message.startswith("unknown name 'é'")
    with pytest.raises(SpecError) as caught:
        parse_expression("éé + ü", {"éé": x})
    assert caught.value.message.startswith("unknown name 'ü'")
    assert caught.value.column == 6  # the UTF-8 byte offset would give 8


def test_errors_inside_a_second_line_point_at_that_line():
    error = parse_error("(x +\n  y)", path="f.toml", key="density", line=7, column_offset=3)
    assert (error.line, error.column) == (8, 3)


# -- domains and supports -------------------------------------------------------------------


def domain(text: str, symbols=None):
    return parse_domain(text, symbols or {}, path="f.toml", key="coordinates.a", line=9)


@pytest.mark.parametrize(
    "text, lower, upper, lower_open, upper_open, integer",
    [
        ("real", -sympy.oo, sympy.oo, True, True, False),
        ("positive", 0, sympy.oo, True, True, False),
        ("nonnegative", 0, sympy.oo, False, True, False),
        ("negative", -sympy.oo, 0, True, True, False),
        ("(0, 1)", 0, 1, True, True, False),
        ("[0, 1)", 0, 1, False, True, False),
        ("(1/2, oo)", sympy.Rational(1, 2), sympy.oo, True, True, False),
        ("> 1/2", sympy.Rational(1, 2), sympy.oo, True, True, False),
        (">= 0", 0, sympy.oo, False, True, False),
        ("< pi", -sympy.oo, sympy.pi, True, True, False),
        ("<= 2", -sympy.oo, 2, True, False, False),
        ("integer >= 1", 1, sympy.oo, False, True, True),
        ("integer > 0", 0, sympy.oo, True, True, True),
        ("integers >= 0", 0, sympy.oo, False, True, True),
    ],
)
def test_domains(text, lower, upper, lower_open, upper_open, integer):
    parsed = domain(text)
    assert (parsed.lower, parsed.upper) == (lower, upper)
    assert (parsed.lower_open, parsed.upper_open, parsed.integer) == (
        lower_open, upper_open, integer)
    assert parsed.text == text


def test_integer_domain_gives_integer_positive_symbols():
    assert domain("integer >= 1").symbol_assumptions() == {"integer": True, "positive": True}
    assert domain("> 1/2").symbol_assumptions() == {"real": True, "positive": True}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("between 0 and 1", ("cannot read the domain 'between 0 and 1'; accepted forms are: "
         "real, positive, nonnegative, negative, nonpositive; an interval such as (0, 1)")),
        ("[0, oo]", "the upper bound oo is infinite, so its side of the interval must be open"),
        ("(1, 0)", "the domain '(1, 0)' is empty"),
        ("(0, 1, 2)", "an interval needs exactly two bounds separated by one comma"),
        ("> n", ("a domain may not depend on other parameters (found 'n'); its bounds must be "
         "numbers, pi, E or oo")),
        ("> y", "unknown name 'y'"),
    ],
)
def test_bad_domains(text, fragment):
    with pytest.raises(SpecError) as caught:
        domain(text, {"n": sympy.Symbol("n")})
    assert fragment in caught.value.message
    assert (caught.value.key, caught.value.line) == ("coordinates.a", 9)


n = sympy.Symbol("n", integer=True, positive=True)


def support(text: str):
    return parse_support(text, {"n": n}, path="f.toml", key="support", line=5)


@pytest.mark.parametrize(
    "text, kind, lower, upper, lower_open, upper_open",
    [
        ("real", "interval", -sympy.oo, sympy.oo, True, True),
        ("positive", "interval", 0, sympy.oo, True, True),
        ("(0, 1)", "interval", 0, 1, True, True),
        ("[0, n]", "interval", 0, n, False, False),
        ("[2, oo)", "interval", 2, sympy.oo, False, True),
        ("(0, pi)", "interval", 0, sympy.pi, True, True),
        ("integers >= 0", "integers", 0, sympy.oo, False, True),
        ("integers >= 1", "integers", 1, sympy.oo, False, True),
        ("integers > 0", "integers", 1, sympy.oo, False, True),
        ("range(0, n + 1)", "integers", 0, n, False, False),
        ("{0, 1}", "finite", 0, 1, False, False),
    ],
)
def test_supports(text, kind, lower, upper, lower_open, upper_open):
    parsed = support(text)
    assert parsed.kind == kind
    assert (parsed.lower, parsed.upper) == (lower, upper)
    assert (parsed.lower_open, parsed.upper_open) == (lower_open, upper_open)


def test_finite_support_keeps_its_points_in_order():
    assert support("{1, 0, -1}").points == (-1, 0, 1)
    assert support("{0, 1}").discrete


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("somewhere", "cannot read the support 'somewhere'; accepted forms are:"),
        ("{0, 0}", "the points of the finite support '{0, 0}' must be distinct"),
        ("{0, 1", "a finite set must end with '}'"),
        ("range(0, 1, 2)", "range takes one or two arguments"),
        ("range(1/2, 3)", "the bounds of range must be integers (found 1/2)"),
        ("range(3, 1)", "range(3, 1) is empty: its start 3 is not below its stop 1"),
        ("[0, x]", "unknown name 'x'; the names in scope are: n and the constants E, pi, oo"),
    ],
)
def test_bad_supports(text, fragment):
    with pytest.raises(SpecError) as caught:
        support(text)
    assert fragment in caught.value.message
    assert caught.value.key == "support"


# -- load_spec ------------------------------------------------------------------------------

LAPLACE = textwrap.dedent('''\
    name = "laplace"
    title = "Laplace location-scale family"
    reference = "Soto (2025), Example 2"
    variable = "x"
    support = "real"
    density = "exp(-Abs(x - mu)/b) / (2*b)"

    [coordinates]      # the manifold's parameters, in this order
    mu = "real"
    b = "positive"

    [constants]        # parameters held fixed (optional)
    # N = "> 1/2"
    ''')


def write(tmp_path: pathlib.Path, text: str, name: str = "family.toml") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path, text: str) -> SpecError:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.path == str(path)
    return caught.value


def test_load_laplace(tmp_path):
    path = write(tmp_path, LAPLACE, "laplace.toml")
    spec = load_spec(path)
    assert (spec.name, spec.title, spec.reference) == (
        "laplace", "Laplace location-scale family", "Soto (2025), Example 2")
    assert spec.path == str(path)
    assert spec.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [parameter.name for parameter in spec.coordinates] == ["mu", "b"]
    assert [parameter.role for parameter in spec.coordinates] == ["coordinate", "coordinate"]
    assert spec.constants == ()
    mu_symbol, b_symbol = spec.coordinate_symbols
    assert mu_symbol.is_real and mu_symbol.is_positive is None
    assert b_symbol.is_positive
    assert spec.variable.name == "x" and spec.variable.is_real
    assert spec.variable.is_positive is None
    assert spec.support.kind == "interval"
    expected = sympy.exp(-sympy.Abs(spec.variable - mu_symbol) / b_symbol) / (2 * b_symbol)
    assert spec.density == expected
    assert spec.mechanism is None


def test_load_spec_accepts_a_string_path_and_defaults(tmp_path):
    text = LAPLACE.replace('title = "Laplace location-scale family"\n', "").replace(
        'reference = "Soto (2025), Example 2"\n', "")
    spec = load_spec(os.fspath(write(tmp_path, text)))
    assert (spec.title, spec.reference) == ("laplace", "")


def test_load_binomial_with_a_constant_in_the_support(tmp_path):
    text = textwrap.dedent('''\
        name = "binomial"
        variable = "k"
        support = "range(0, n + 1)"
        density = "binomial(n, k) * p**k * (1 - p)**(n - k)"

        [coordinates]
        p = "(0, 1)"

        [constants]
        n = "integer >= 1"

        [mechanism]
        neighbour = { p = "1 - p" }
        ''')
    spec = load_spec(write(tmp_path, text))
    (n_symbol,) = spec.constant_symbols
    assert n_symbol.is_integer and n_symbol.is_positive
    assert spec.support.kind == "integers"
    assert (spec.support.lower, spec.support.upper) == (0, n_symbol)
    assert spec.variable.is_integer and spec.variable.is_nonnegative
    assert spec.mechanism.kind == "neighbour"


def test_variable_of_a_positive_support_is_positive(tmp_path):
    text = LAPLACE.replace('support = "real"', 'support = "positive"').replace(
        "exp(-Abs(x - mu)/b) / (2*b)", "exp(-x/b - mu)/b")
    spec = load_spec(write(tmp_path, text))
    assert spec.variable.is_positive


def test_malformed_toml_reports_line_and_column(tmp_path):
    error = load_error(tmp_path, 'name = "laplace"\nvariable = x\n')
    assert error.message == "malformed TOML: Invalid value"
    assert (error.line, error.column) == (2, 12)


def test_missing_key(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('density = "exp(-Abs(x - mu)/b) / (2*b)"\n', ""))
    assert error.message == ("missing required key 'density' (required keys: name, variable, "
                             "support, density, coordinates)")
    assert error.key == "density"


def test_wrong_type(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('support = "real"', "support = 3"))
    assert error.message == "expected a string, found an integer (3)"
    assert (error.key, error.line) == ("support", 5)


def test_wrong_type_of_a_domain(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('b = "positive"', "b = true"))
    assert error.message == ('expected a domain string such as "real" or "positive", found a '
                             "boolean (true)")
    assert (error.key, error.line) == ("coordinates.b", 10)


def test_unknown_top_level_key(tmp_path):
    error = load_error(tmp_path, 'titel = "oops"\n' + LAPLACE)
    assert error.message == ("unknown top-level key 'titel'; the allowed keys are: name, "
                             "variable, support, density, coordinates, title, reference, "
                             "constants, mechanism, variables")
    assert (error.key, error.line) == ("titel", 1)


def test_bad_family_name(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('name = "laplace"', 'name = "Laplace-2"'))
    assert "the family name 'Laplace-2' must be lowercase letters" in error.message


def test_variable_declared_as_a_coordinate(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('mu = "real"', 'mu = "real"\nx = "real"'))
    assert error.message == "the variable 'x' is also declared as a coordinate"
    assert error.key == "variable"


def test_variable_declared_as_a_constant(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('# N = "> 1/2"', 'x = "> 1/2"'))
    assert error.message == "the variable 'x' is also declared as a constant"


def test_name_declared_as_coordinate_and_constant(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('# N = "> 1/2"', 'b = "positive"'))
    assert error.message.startswith("'b' is declared both as a coordinate and as a constant")
    assert (error.key, error.line) == ("constants.b", 13)


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("pi", ("the coordinate name 'pi' shadows the constant 'pi' of the expression "
                "language; choose another name")),
        ("E", "shadows the constant 'E'"),
        ("_b", "the coordinate name '_b' may not start with '_'"),
        ("lambda", "the coordinate name 'lambda' is not a valid identifier"),
        ("lambda", "write 'lam', which the proofs typeset as λ"),  # the spelling that works
        ('"b c"', "the coordinate name 'b c' is not a valid identifier"),
    ],
)
def test_bad_parameter_names(tmp_path, name, fragment):
    error = load_error(tmp_path, LAPLACE.replace('b = "positive"', f'{name} = "positive"'))
    assert fragment in error.message


def test_support_depending_on_a_coordinate_is_non_regular(tmp_path):
    uniform = textwrap.dedent('''\
        name = "uniform"
        variable = "x"
        support = "(0, theta)"
        density = "1/theta + 0*x"

        [coordinates]
        theta = "positive"
        ''')
    error = load_error(tmp_path, uniform)
    assert error.message == (
        "the support depends on the coordinate 'theta': this is a non-regular family (like "
        "uniform(0, theta)) and Fisher information does not apply")
    assert (error.key, error.line) == ("support", 3)


def test_density_without_the_variable(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace("exp(-Abs(x - mu)/b) / (2*b)",
                                                 "exp(-Abs(mu)/b) / (2*b)"))
    assert error.message == "the density does not depend on the variable 'x'"
    assert (error.key, error.line) == ("density", 6)


def test_density_without_a_coordinate(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace("exp(-Abs(x - mu)/b) / (2*b)",
                                                 "exp(-Abs(x)/b) / (2*b)"))
    assert error.message.startswith("the density does not depend on the coordinate 'mu'")


def test_density_errors_point_at_the_file_column(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace("/ (2*b)", "/ (2*b) + y"))
    assert error.message.startswith("unknown name 'y'; the names in scope are: b, mu, x "
                                    "(variable) and the constants E, pi, oo")
    # density = "exp(-Abs(x - mu)/b) / (2*b) + y": y is the 42nd character of line 6
    assert (error.key, error.line, error.column) == ("density", 6, 42)
    assert str(error).startswith(f"{error.path}:6:42: key 'density': unknown name 'y'")


def test_density_errors_in_a_multiline_string_point_at_their_line(tmp_path):
    text = LAPLACE.replace('density = "exp(-Abs(x - mu)/b) / (2*b)"',
                           'density = """\nexp(-Abs(x - mu)/b) / (2*b) ^ 2"""')
    error = load_error(tmp_path, text)
    assert "use ** for powers" in error.message
    assert (error.line, error.column) == (7, 29)


def test_domain_errors_point_at_the_coordinate_line(tmp_path):
    error = load_error(tmp_path, LAPLACE.replace('b = "positive"', 'b = "> q"'))
    assert error.message.startswith("unknown name 'q'")
    assert (error.key, error.line, error.column) == ("coordinates.b", 10, 8)


def test_missing_file():
    with pytest.raises(SpecError) as caught:
        load_spec("/nonexistent/raosym/family.toml")
    assert caught.value.message.startswith("cannot read the derivation file")
