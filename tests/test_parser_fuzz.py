"""Fuzz tests of the spec stage: hostile and random text must only ever raise SpecError.

Random text and strings built from a grammar of names, operators, calls, dunder attributes
and string payloads go to ``parse_expression`` and, inside a TOML file, to ``load_spec``. The
only exception allowed is SpecError; a successful parse gives a SymPy expression; and no
payload may run (no file named PWNED appears).
"""

from __future__ import annotations

import itertools
import os
import pathlib
import tomllib

import pytest
import sympy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from raosym.errors import SpecError
from raosym.spec import load_spec, parse_expression
from raosym.spec.parser import FUNCTIONS

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_parser_fuzz")

SYMBOLS = {
    "x": sympy.Symbol("x", real=True),
    "mu": sympy.Symbol("mu", real=True),
    "b": sympy.Symbol("b", positive=True),
}


def fuzz(examples: int) -> settings:
    # No deadline: SymPy's first calls fill caches. The function-scoped autouse fixture only
    # checks for PWNED around the whole test, so sharing it between examples is intended.
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


NAMES = st.sampled_from([
    "x", "mu", "b", "y", "os", "sys", "eval", "exec", "open", "getattr", "sympify", "S",
    "__import__", "__builtins__", "__class__", "_", "I", "lambda", "None", "True",
    "exp", "log", "sqrt", "gamma", "factorial", "binomial", "polygamma", "zeta", "Max",
    "Abs", "besselk", "pi", "E", "oo",
])
NUMBERS = st.one_of(
    st.sampled_from([
        "0", "1", "2", "0.5", "1e308", "1e-400", "9", "10**9", "3/2", "2j", "0x10", "1_0",
        "123456789012345678", ".5", "5.", "1E3",
    ]),
    st.integers(-10**6, 10**6).map(str),
)
PAYLOADS = st.sampled_from(["'touch PWNED'", '"os"', "b'x'", "f'{x}'", "..."])
ATTRIBUTES = st.sampled_from(["__class__", "__bases__", "__subclasses__", "__globals__",
                              "system", "real", "func", "args", "evalf"])
OPERATORS = st.sampled_from([" + ", " - ", "*", "/", "**", " ^ ", " % ", "//", " @ ", " < ",
                             " and ", " | ", ", "])


def _grow(children):
    return st.one_of(
        st.tuples(children, OPERATORS, children).map("".join),
        st.tuples(NAMES, st.lists(children, max_size=3)).map(
            lambda call: f"{call[0]}({', '.join(call[1])})"),
        st.tuples(children, ATTRIBUTES).map(lambda pair: f"({pair[0]}).{pair[1]}"),
        st.tuples(NAMES, NAMES, children).map(lambda t: f"{t[0]}({t[1]}={t[2]})"),
        children.map(lambda child: f"{child}[0]"),
        children.map(lambda child: f"({child})"),
        children.map(lambda child: f"-{child}"),
        children.map(lambda child: f"(lambda: {child})()"),
        children.map(lambda child: f"[{child} for _ in ()]"),
    )


HOSTILE = st.recursive(st.one_of(NAMES, NUMBERS, PAYLOADS), _grow, max_leaves=10)

# Token soup: cheap to generate, and it reaches the tokenizer's and parser's odd corners.
TOKENS = st.lists(
    st.one_of(NAMES, NUMBERS, PAYLOADS, OPERATORS, ATTRIBUTES.map(lambda name: "." + name),
              st.sampled_from(["(", ")", "[", "]", "{", "}", ":", "=", "lambda ", "\n", " "])),
    max_size=25,
).map("".join)


def _well_formed_call(children):
    """Calls of whitelisted functions with the right number of arguments."""
    calls = [(name, function.min_args) for name, function in FUNCTIONS.items()]
    return st.sampled_from(calls).flatmap(
        lambda call: st.lists(children, min_size=call[1], max_size=call[1]).map(
            lambda arguments: f"{call[0]}({', '.join(arguments)})"))


# Mostly valid expressions: they reach SymPy, its eager evaluation and the number guards.
WELL_FORMED = st.recursive(
    st.one_of(st.sampled_from(["x", "mu", "b", "pi", "E", "oo", "0", "1", "2", "1/2", "0.25"]),
              st.integers(-10**4, 10**4).map(str)),
    lambda children: st.one_of(
        st.tuples(children, st.sampled_from([" + ", " - ", "*", "/", "**"]), children).map(
            lambda parts: f"({parts[0]}){parts[1]}({parts[2]})"),
        children.map(lambda child: f"-({child})"),
        _well_formed_call(children),
    ),
    max_leaves=12,
)

KNOWN_ATTACKS = [
    "__import__('os').system('touch PWNED')",
    "().__class__.__bases__[0].__subclasses__()",
    "(lambda: __import__('os').system('touch PWNED'))()",
    "exp.__globals__['__builtins__']['eval']('1')",
    "getattr(x, '__class__')",
    "9**9**9",
    "factorial(10**9)",
    "exp(10**6*log(2))",
    "x ^ 2",
    "-" * 5000 + "x",
    "(" * 300 + "x" + ")" * 300,
]


@pytest.fixture(autouse=True)
def no_pwned_file_before_or_after():
    """The payload 'touch PWNED' must never run; check the working directory around tests."""
    assert not os.path.exists("PWNED"), "remove a stale PWNED file before running the tests"
    yield
    assert not os.path.exists("PWNED")


def check_parse(text: str) -> None:
    try:
        result = parse_expression(text, SYMBOLS, variable="x")
    except SpecError as error:
        assert error.message  # every refusal says why
    else:
        assert isinstance(result, sympy.Expr)
    assert not os.path.exists("PWNED")


@fuzz(500)
@given(st.text(max_size=120))
def test_random_text_only_raises_spec_error(text):
    check_parse(text)


@fuzz(400)
@given(HOSTILE)
@example("__import__('os').system('touch PWNED')")
@example("().__class__.__bases__[0].__subclasses__()")
def test_hostile_grammar_only_raises_spec_error(text):
    check_parse(text)


@fuzz(400)
@given(TOKENS)
def test_token_soup_only_raises_spec_error(text):
    check_parse(text)


@fuzz(600)
@given(WELL_FORMED)
def test_well_formed_expressions_build_or_raise_spec_error(text):
    check_parse(text)


@fuzz(60)
@given(st.lists(st.sampled_from(["-", "exp(", "(", "x**", "log(x, ", "Max(1, ", "+"]),
                min_size=90, max_size=110))
def test_nesting_near_the_depth_limit_only_raises_spec_error(openers):
    closing = "".join(")" for opener in openers if opener.endswith("("))
    check_parse("".join(openers) + "x" + closing)


@pytest.mark.parametrize("text", KNOWN_ATTACKS)
def test_known_attacks_are_refused(text):
    with pytest.raises(SpecError):
        parse_expression(text, SYMBOLS)
    assert not os.path.exists("PWNED")


# -- through load_spec ----------------------------------------------------------------------

_file_numbers = itertools.count()


@pytest.fixture(scope="module")
def toml_directory(tmp_path_factory) -> pathlib.Path:
    # Module scope: hypothesis reruns the test body, a function-scoped tmp_path would not reset.
    return tmp_path_factory.mktemp("fuzz_specs")


def toml_string(text: str) -> str:
    """A TOML basic string holding ``text`` exactly (escapes quotes and control characters)."""
    escaped = []
    for character in text:
        if character in '"\\':
            escaped.append("\\" + character)
        elif ord(character) < 0x20 or ord(character) == 0x7F:
            escaped.append(f"\\u{ord(character):04x}")
        else:
            escaped.append(character)
    return '"' + "".join(escaped) + '"'


def family_file(directory: pathlib.Path, *, density: str, support: str = "real",
                domain: str = "positive") -> pathlib.Path:
    path = directory / f"family_{next(_file_numbers)}.toml"
    path.write_text(
        'name = "fuzzed"\n'
        'variable = "x"\n'
        f"support = {toml_string(support)}\n"
        f"density = {toml_string(density)}\n"
        "\n[coordinates]\n"
        'mu = "real"\n'
        f"b = {toml_string(domain)}\n",
        encoding="utf-8",
    )
    return path


def check_load(path: pathlib.Path) -> None:
    try:
        spec = load_spec(path)
    except SpecError as error:
        assert error.message
        assert error.path == str(path)
    else:
        assert isinstance(spec.density, sympy.Expr)
    assert not os.path.exists("PWNED")


def test_toml_string_round_trips():
    text = 'a"b\\c\n\t\x00\x7f é'
    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text


@fuzz(300)
@given(st.one_of(HOSTILE, WELL_FORMED, st.text(max_size=80)))
@example("exp(-Abs(x - mu)/b) / (2*b)")
@example("__import__('os').system('touch PWNED')")
def test_load_spec_with_hostile_density_only_raises_spec_error(toml_directory, density):
    check_load(family_file(toml_directory, density=density))


def _bounded_forms(bound):
    """Domain and support forms whose bounds are (mostly valid) expressions."""
    pair = st.tuples(bound, bound)
    return st.one_of(
        pair.map(lambda p: f"({p[0]}, {p[1]})"),
        pair.map(lambda p: f"[{p[0]}, {p[1]}]"),
        bound.map(lambda a: f"[{a}, oo)"),
        bound.map(lambda a: f"> {a}"),
        bound.map(lambda a: f"integers >= {a}"),
        pair.map(lambda p: f"{{{p[0]}, {p[1]}}}"),
        pair.map(lambda p: f"range({p[0]}, {p[1]})"),
    )


@fuzz(300)
@given(st.one_of(HOSTILE, TOKENS, st.text(max_size=40), _bounded_forms(WELL_FORMED),
                 _bounded_forms(HOSTILE)),
       st.sampled_from(["support", "domain"]))
@example("range(0, __import__('os').system('touch PWNED'))", "support")
@example("> ().__class__", "domain")
def test_load_spec_with_hostile_support_or_domain_only_raises_spec_error(
        toml_directory, text, where):
    density = "exp(-Abs(x - mu)/b) / (2*b)"
    if where == "support":
        path = family_file(toml_directory, density=density, support=text)
    else:
        path = family_file(toml_directory, density=density, domain=text)
    check_load(path)
