"""Reading and validating a derivation file (spec stage: ``derivations/NAME.toml`` → FamilySpec).

:func:`load_spec` is the entry point of the pipeline. It reads the TOML, checks keys and
types, builds the SymPy symbols from the declared domains, parses support and density through
the whitelist of :mod:`raosym.spec.parser`, and checks that the family is one Fisher
information applies to. Every error is a :class:`~raosym.errors.SpecError` naming the file,
the key (``density``, ``coordinates.mu``, ...) and, when it can be found, the line and column.

tomllib does not report where keys are, so :class:`_KeyLocator` finds them in the raw text;
that is what lets a bad character in the density be reported at its column in the file.
"""

from __future__ import annotations

import datetime
import hashlib
import keyword
import os
import re
import tomllib
from collections.abc import Mapping

import sympy

from raosym.errors import SpecError
from raosym.spec.names import (constant_name_problem, mechanism_name_problem,
                                point_name_problem)
from raosym.spec.domains import parse_domain, parse_support
from raosym.spec.model import Domain, FamilySpec, Mechanism, Parameter, Support
from raosym.spec.parser import RESERVED_NAMES, parse_expression

REQUIRED_KEYS = ("name", "variable", "support", "density", "coordinates")
OPTIONAL_KEYS = ("title", "reference", "constants", "mechanism", "variables")
ALLOWED_KEYS = REQUIRED_KEYS + OPTIONAL_KEYS
MECHANISM_KEYS = ("location", "scale", "sensitivity", "neighbour")
#: The norms a vector mechanism's sensitivity may be measured in (``sensitivity = "l2"``).
SENSITIVITY_NORMS = ("l2", "l1")
#: The symbol of a mechanism's sensitivity (|h(D) - h(D')| for adjacent datasets).
SENSITIVITY_NAME = "Delta"

_FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]*")
# ASCII only: Python normalizes Unicode identifiers (NFKC), so 'ﬁ' would silently become 'fi'.
_PARAMETER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def load_spec(path: str | os.PathLike) -> FamilySpec:
    """Read, parse and validate a derivation file."""
    path_text = os.fspath(path)
    raw = _read_bytes(path_text)
    text = _decode(raw, path_text)
    data = _parse_toml(text, path_text)
    builder = _SpecBuilder(data, path_text, _KeyLocator(text))
    return builder.build(sha256=hashlib.sha256(raw).hexdigest())


# -- reading --------------------------------------------------------------------------------


#: The largest derivation file read (the catalog's are about 1 kB): anything bigger is refused
#: before it is read, let alone parsed.
MAX_FILE_BYTES = 1 << 20


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            raw = file.read(MAX_FILE_BYTES + 1)  # a pipe or /proc file may report size 0
    except OSError as error:
        raise SpecError(f"cannot read the derivation file: {error.strerror or error}",
                        path=path) from None
    if max(size, len(raw)) > MAX_FILE_BYTES:
        raise SpecError(f"the file is {max(size, len(raw))} bytes long; a derivation file may "
                        f"have at most {MAX_FILE_BYTES} bytes", path=path)
    return raw


def _decode(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise SpecError(f"the file is not valid UTF-8 (byte {error.start})", path=path,
                        line=line) from None


def _parse_toml(text: str, path: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        line, column = _toml_error_position(message, text)
        message = re.sub(r"\s*\((at line \d+, column \d+|at end of document)\)$", "", message)
        raise SpecError(f"malformed TOML: {message}", path=path, line=line,
                        column=column) from None


def _toml_error_position(message: str, text: str) -> tuple[int | None, int | None]:
    """tomllib puts the position only in its message: '... (at line 3, column 9)'."""
    match = re.search(r"\(at line (\d+), column (\d+)\)$", message)
    if match:
        return int(match.group(1)), int(match.group(2))
    if message.endswith("(at end of document)"):
        lines = text.split("\n")
        return len(lines), len(lines[-1]) + 1
    return None, None


class _KeyLocator:
    """Finds the line of ``key = ...`` inside ``[table]`` and where its string value starts."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]#]+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, text: str) -> None:
        self.lines = [line.rstrip("\r") for line in text.split("\n")]

    def find(self, table: str | None, key: str) -> tuple[int | None, int | None]:
        """(1-based line, number of characters before the string's content) or (None, None)."""
        key_pattern = rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')"""
        places = [(table, key_pattern)]
        if table is not None:  # also a dotted key at top level: coordinates.mu = "real"
            places.append((None, rf"{re.escape(table)}\s*\.\s*{key_pattern}"))
        for section, pattern in places:
            found = self._search(section, re.compile(rf"^\s*{pattern}\s*=\s*"))
            if found is not None:
                return found
        if table is None:  # a whole table, such as [coordinates]
            return self._header_line(key), None
        return None, None

    def _header_line(self, table: str) -> int | None:
        for index, line in enumerate(self.lines):
            header = self._HEADER.match(line)
            if header and self._table_name(header) == table:
                return index + 1
        return None

    @staticmethod
    def _table_name(header: re.Match) -> str:
        return header.group(1).replace('"', "").replace("'", "").replace(" ", "")

    def _search(self, section: str | None, assignment: re.Pattern) -> tuple[int, int] | None:
        current = None
        for index, line in enumerate(self.lines):
            header = self._HEADER.match(line)
            if header:
                current = self._table_name(header)
                continue
            match = assignment.match(line) if current == section else None
            if match:
                return self._value_start(index, match.end())
        return None

    def _value_start(self, index: int, value_column: int) -> tuple[int, int]:
        rest = self.lines[index][value_column:]
        for quotes in ('"""', "'''"):
            if rest.startswith(quotes):
                if not rest[3:].strip():  # TOML drops a newline right after the quotes
                    return index + 2, 0
                return index + 1, value_column + 3
        if rest[:1] in ('"', "'"):
            return index + 1, value_column + 1
        return index + 1, value_column


# -- validation -----------------------------------------------------------------------------


class _SpecBuilder:
    """Turns the TOML tables of one file into a FamilySpec, checking as it goes."""

    def __init__(self, data: dict, path: str, locator: _KeyLocator) -> None:
        self.data = data
        self.path = path
        self.locator = locator

    def build(self, sha256: str) -> FamilySpec:
        self._check_top_level_keys()
        name = self._family_name()
        title = self._string("title", default=name)
        reference = self._string("reference", default="")
        variable_names = self._variable_names()
        several = "variables" in self.data
        coordinate_texts = self._parameter_table("coordinates", required=True)
        constant_texts = self._parameter_table("constants", required=False)
        for variable_name in variable_names:
            self._check_collisions(variable_name, coordinate_texts, constant_texts)

        all_names = [*coordinate_texts, *constant_texts]
        coordinates: list[Parameter] = []
        for parameter_name, text in coordinate_texts.items():
            # With several variables, a coordinate's domain may use the coordinates before
            # it (the free probabilities of a categorical: p2 in (0, 1 - p1)).
            earlier = {p.name: p.symbol for p in coordinates} if several else None
            coordinates.append(self._parameter("coordinates", parameter_name, text, all_names,
                                               earlier))
        coordinates = tuple(coordinates)
        constants = tuple(
            self._parameter("constants", parameter_name, text, all_names)
            for parameter_name, text in constant_texts.items())

        if several:
            variables, supports = self._supports(variable_names, coordinates, constants)
            variable, support = variables[0], supports[0]
        else:
            support = self._support(coordinates, constants)
            variable = _variable_symbol(variable_names[0], support)
            variables, supports = (variable,), (support,)
        density = self._density(variables, coordinates, constants, supports)
        self._check_constants_used(constants, supports, density)
        mechanism = self._mechanism(coordinates, constants, variable)
        multivariate = {"variables": variables, "supports": supports} if len(variables) > 1 \
            else {}
        return FamilySpec(
            name=name,
            title=title,
            reference=reference,
            path=self.path,
            sha256=sha256,
            variable=variable,
            support=support,
            density=density,
            density_text=self._string("density"),
            coordinates=coordinates,
            constants=constants,
            mechanism=mechanism,
            **multivariate,
        )

    # -- errors and locations -------------------------------------------------------------

    def _where(self, key: str) -> dict:
        """path/key/line of a dotted key such as 'coordinates.mu' (for SpecError)."""
        table, _, leaf = key.rpartition(".")
        line, _ = self.locator.find(table or None, leaf)
        return {"path": self.path, "key": key, "line": line}

    def _error(self, message: str, key: str) -> SpecError:
        return SpecError(message, **self._where(key))

    def _expression_location(self, key: str) -> dict:
        """Where a string value's content starts, for the parser's column arithmetic."""
        table, _, leaf = key.rpartition(".")
        line, column_offset = self.locator.find(table or None, leaf)
        if line is None:
            return {"path": self.path, "key": key, "line": None, "column_offset": 0}
        return {"path": self.path, "key": key, "line": line, "column_offset": column_offset}

    # -- keys and types -------------------------------------------------------------------

    def _check_top_level_keys(self) -> None:
        allowed = ", ".join(ALLOWED_KEYS)
        for key in self.data:
            if key not in ALLOWED_KEYS:
                raise self._error(f"unknown top-level key '{key}'; the allowed keys are: "
                                  f"{allowed}", key)
        required = REQUIRED_KEYS
        if "variables" in self.data:  # several variables: 'variables' in place of 'variable'
            if "variable" in self.data:
                raise self._error("give either 'variable' (one sample variable) or "
                                  "'variables' (several), not both", "variables")
            required = tuple("variables" if key == "variable" else key for key in REQUIRED_KEYS)
        for key in required:
            if key not in self.data:
                raise SpecError(f"missing required key '{key}' (required keys: "
                                f"{', '.join(required)})", path=self.path, key=key)

    def _string(self, key: str, *, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self._error(f"expected a string, found {_describe_value(value)}", key)
        return value

    def _table(self, key: str, *, required: bool) -> dict:
        value = self.data.get(key, None if required else {})
        if not isinstance(value, dict):
            raise self._error(f"expected a table ([{key}]), found {_describe_value(value)}",
                              key)
        return value

    def _family_name(self) -> str:
        name = self._string("name")
        if not _FAMILY_NAME.fullmatch(name):
            raise self._error(
                f"the family name {name!r} must be lowercase letters, digits and '_', "
                "starting with a letter (it names the generated module)", "name")
        return name

    def _variable_names(self) -> list[str]:
        """``[variable]``, or the names of ``variables = [...]`` in order."""
        if "variables" not in self.data:
            name = self._string("variable")
            self._check_parameter_name(name, "variable", "the variable")
            return [name]
        names = self.data["variables"]
        if not isinstance(names, list) or not names:
            raise self._error('expected a non-empty array of variable names, such as '
                              f'["x1", "x2"], found {_describe_value(names)}', "variables")
        for position, name in enumerate(names, start=1):
            if not isinstance(name, str):
                raise self._error(f"expected a variable name as a string, found "
                                  f"{_describe_value(name)} (entry {position} of variables)",
                                  "variables")
            self._check_parameter_name(name, "variables", f"the variable (entry {position})")
        if len(set(names)) != len(names):
            twice = next(name for name in names if names.count(name) > 1)
            raise self._error(f"the variable '{twice}' is listed twice", "variables")
        return names

    def _parameter_table(self, table: str, *, required: bool) -> dict[str, str]:
        entries = self._table(table, required=required)
        if required and not entries:
            raise self._error(f"[{table}] is empty; declare at least one coordinate, as in "
                              'mu = "real"', table)
        for name, value in entries.items():
            key = f"{table}.{name}"
            self._check_parameter_name(name, key, f"the {table[:-1]}")
            if table == "constants" and (problem := constant_name_problem(name)):
                raise self._error(problem, key)
            if not isinstance(value, str):
                raise self._error(f"expected a domain string such as \"real\" or "
                                  f"\"positive\", found {_describe_value(value)}", key)
        return entries

    def _check_parameter_name(self, name: str, key: str, role: str) -> None:
        if name.startswith("_"):
            raise self._error(f"{role} name '{name}' may not start with '_'", key)
        if not _PARAMETER_NAME.fullmatch(name) or keyword.iskeyword(name):
            # The rate λ is the literature's name and a Python keyword: 'lam' prints as λ.
            hint = "; write 'lam', which the proofs typeset as λ" if name == "lambda" else ""
            raise self._error(
                f"{role} name {name!r} is not a valid identifier (ASCII letters, digits and "
                f"'_', starting with a letter, not a Python keyword){hint}", key)
        if name in RESERVED_NAMES:
            raise self._error(
                f"{role} name '{name}' shadows the constant '{name}' of the expression "
                "language; choose another name", key)

    def _check_collisions(self, variable: str, coordinates: Mapping, constants: Mapping):
        key = "variables" if "variables" in self.data else "variable"
        for table, names in (("coordinates", coordinates), ("constants", constants)):
            if variable in names:
                raise self._error(
                    f"the variable '{variable}' is also declared as a {table[:-1]}", key)
        for name in coordinates:
            if name in constants:
                raise self._error(
                    f"'{name}' is declared both as a coordinate and as a constant; a "
                    "parameter is either varied (coordinate) or held fixed (constant)",
                    f"constants.{name}")
        for table, names in (("coordinates", coordinates), ("constants", constants)):
            for name in names:
                if problem := point_name_problem(name, coordinates):
                    raise self._error(problem, f"{table}.{name}")

    # -- parsing --------------------------------------------------------------------------

    def _parameter(self, table: str, name: str, text: str, all_names,
                   earlier: Mapping[str, sympy.Symbol] | None = None) -> Parameter:
        key = f"{table}.{name}"
        # Other parameters are in scope only so that using one gets a precise message.
        others = {other: sympy.Symbol(other) for other in all_names}
        domain: Domain = parse_domain(text, others, earlier=earlier,
                                      **self._expression_location(key))
        try:
            assumptions = domain.symbol_assumptions()
        except (TypeError, ArithmeticError) as error:  # evalf could not place a bound
            raise self._error(f"cannot compare the bounds of the domain with 0 "
                              f"({type(error).__name__})", key) from None
        symbol = sympy.Symbol(name, **assumptions)
        return Parameter(name=name, symbol=symbol, domain=domain, role=table[:-1])

    def _support(self, coordinates, constants) -> Support:
        text = self._string("support")
        symbols = {parameter.name: parameter.symbol for parameter in (*coordinates, *constants)}
        support = parse_support(text, symbols, **self._expression_location("support"))
        self._check_support_symbols(support, coordinates, "support")
        return support

    def _supports(self, names, coordinates, constants):
        """``[support]`` of a family of several variables: one entry per variable, in the
        order of ``variables``; a bound may use the constants and the earlier variables."""
        table = self._table("support", required=True)
        for key, value in table.items():
            if key not in names:
                raise self._error(f"'{key}' is not a variable; [support] has one entry per "
                                  f"variable: {', '.join(names)}", f"support.{key}")
            if not isinstance(value, str):
                raise self._error(f"expected a support string such as \"(0, 1)\" or "
                                  f"\"range(0, n + 1)\", found {_describe_value(value)}",
                                  f"support.{key}")
        symbols = {parameter.name: parameter.symbol for parameter in (*coordinates, *constants)}
        variables, supports = [], []
        for name in names:
            key = f"support.{name}"
            if name not in table:
                raise self._error(f"missing the support of the variable '{name}': [support] "
                                  f"needs one entry per variable ({', '.join(names)})",
                                  "support")
            # The variable itself and the later ones are in scope only so that using one
            # gets a precise message (their symbols are made from their own supports).
            later = {n: sympy.Symbol(n) for n in names[len(variables):]}
            scope = {**symbols, **later, **{v.name: v for v in variables}}
            support = parse_support(table[name], scope, **self._expression_location(key))
            self._check_support_symbols(support, coordinates, key)
            for symbol in sorted(support.free_symbols() & set(later.values()), key=str):
                raise self._error(f"the support of '{name}' uses the variable '{symbol}'; a "
                                  "bound may use only the variables listed before it", key)
            supports.append(support)
            variables.append(_variable_symbol(name, support))
        # Continuous and discrete variables may be mixed; the derive stage refuses a density
        # that couples the two kinds (it handles them only in independent factors).
        return tuple(variables), tuple(supports)

    def _check_support_symbols(self, support, coordinates, key) -> None:
        used = support.free_symbols()
        for coordinate in coordinates:
            if coordinate.symbol in used:
                raise self._error(
                    f"the support depends on the coordinate '{coordinate.name}': this is a "
                    "non-regular family (like uniform(0, theta)) and Fisher information does "
                    "not apply", key)

    def _density(self, variables, coordinates, constants, supports=()) -> sympy.Expr:
        text = self._string("density")
        symbols = {parameter.name: parameter.symbol for parameter in (*coordinates, *constants)}
        symbols.update({variable.name: variable for variable in variables})
        density = parse_expression(text, symbols, variable=variables[0].name,
                                   **self._expression_location("density"))
        used = density.free_symbols
        # With several variables one may enter only through the supports: in a later bound,
        # or with bounds in the earlier ones (x2 uniform on (0, x1): f = lam**2*exp(-lam*x1)).
        bounds = set().union(*(support.free_symbols() for support in supports))
        coupled = {variable for variable, support in zip(variables, supports)
                   if support.free_symbols() & set(variables)}
        for variable in variables:
            if variable not in used | bounds | coupled:
                raise self._error(f"the density does not depend on the variable "
                                  f"'{variable.name}'", "density")
        for coordinate in coordinates:
            if coordinate.symbol not in used:
                raise self._error(
                    f"the density does not depend on the coordinate '{coordinate.name}'; "
                    "declare it under [constants] or remove it", "density")
        return density

    def _check_constants_used(self, constants, supports, density) -> None:
        """A constant that neither the density nor the support uses is a mistake (a typo, or
        a leftover): it would become a required argument that changes nothing."""
        used = density.free_symbols.union(*(support.free_symbols() for support in supports))
        for constant in constants:
            if constant.symbol not in used:
                raise self._error(
                    f"the constant '{constant.name}' is used neither in the density nor in the "
                    "support; remove it, or use it", f"constants.{constant.name}")

    # -- the [mechanism] table ------------------------------------------------------------

    def _mechanism(self, coordinates, constants, variable) -> Mechanism | None:
        """``[mechanism]``: ``location``/``scale`` (additive) or ``neighbour`` (a map)."""
        table = self._table("mechanism", required=False)
        if not table:
            return None
        for key in table:
            if key not in MECHANISM_KEYS:
                raise self._error(f"unknown key '{key}' in [mechanism]; the allowed keys are: "
                                  f"{', '.join(MECHANISM_KEYS)}", f"mechanism.{key}")
        parameters = {p.name: p for p in (*coordinates, *constants)}
        if SENSITIVITY_NAME in parameters or SENSITIVITY_NAME == variable.name:
            raise self._error(f"'{SENSITIVITY_NAME}' names the sensitivity of a mechanism; "
                              "rename the parameter", "mechanism")
        for parameter in parameters.values():
            if problem := mechanism_name_problem(parameter.name):
                raise self._error(problem, f"{parameter.role}s.{parameter.name}")
        additive = "location" in table or "scale" in table
        if additive and "neighbour" in table:
            raise self._error("give either location and scale (an additive mechanism) or "
                              "neighbour (a map of the coordinates), not both",
                              "mechanism.neighbour")
        if additive:
            return self._additive_mechanism(table, coordinates, parameters)
        if "neighbour" not in table:
            raise self._error("[mechanism] needs location and scale (additive noise, e.g. "
                              'location = "mu", scale = "b") or a neighbour map (e.g. '
                              'neighbour = { p = "1 - p" })', "mechanism")
        return self._neighbour_mechanism(table["neighbour"], coordinates, parameters)

    def _mechanism_name(self, table: dict, key: str, candidates: Mapping, role: str) -> Parameter:
        if key not in table:
            raise self._error(f"an additive mechanism needs '{key}': the name of {role}",
                              "mechanism")
        name = table[key]
        if not isinstance(name, str):
            raise self._error(f"expected the name of a parameter, found "
                              f"{_describe_value(name)}", f"mechanism.{key}")
        if name not in candidates:
            raise self._error(f"'{name}' is not {role}; expected one of: "
                              f"{', '.join(candidates) or 'none declared'}", f"mechanism.{key}")
        return candidates[name]

    def _additive_mechanism(self, table, coordinates, parameters) -> Mechanism:
        locations = {p.name: p for p in coordinates
                     if p.domain.lower == -sympy.oo and p.domain.upper == sympy.oo}
        if isinstance(table.get("location"), list):
            return self._vector_mechanism(table, locations, parameters)
        if "sensitivity" in table:
            raise self._error("'sensitivity' names the norm of a vector location (location = "
                              '["m1", "m2"]); a scalar location has no norm to choose: remove '
                              "it", "mechanism.sensitivity")
        location = self._mechanism_name(table, "location", locations,
                                        "a coordinate over the whole real line")
        scale = self._mechanism_scale(table, parameters, {location.name})
        return Mechanism(kind="additive", location=location, scale=scale)

    def _mechanism_scale(self, table, parameters, locations) -> Parameter:
        """The fixed noise scale: a positive parameter that is not a location."""
        scales = {p.name: p for p in parameters.values()
                  if p.name not in locations and p.symbol.is_positive}
        return self._mechanism_name(table, "scale", scales, "a positive parameter")

    def _vector_mechanism(self, table, candidates, parameters) -> Mechanism:
        """``location = ["m1", "m2", ...]`` with ``sensitivity = "l2"`` or ``"l1"``: the
        query value is a vector and the sensitivity bounds its shift in that norm."""
        names = table["location"]
        if len(names) < 2:
            raise self._error("a vector location lists two or more coordinates; for one, write "
                              'location = "mu"', "mechanism.location")
        for name in names:
            if not isinstance(name, str):
                raise self._error("expected the names of coordinates, found "
                                  f"{_describe_value(name)} in the list", "mechanism.location")
            if name not in candidates:
                raise self._error(f"'{name}' is not a coordinate over the whole real line; "
                                  f"expected some of: {', '.join(candidates) or 'none declared'}",
                                  "mechanism.location")
        if len(set(names)) != len(names):
            raise self._error("a coordinate is listed twice in the vector location",
                              "mechanism.location")
        norm = self._sensitivity_norm(table)
        locations = tuple(candidates[name] for name in names)
        scale = self._mechanism_scale(table, parameters, set(names))
        return Mechanism(kind="additive", location=locations[0], scale=scale,
                         locations=locations, norm=norm)

    def _sensitivity_norm(self, table) -> str:
        """``sensitivity``: the norm of the shift between adjacent datasets, a required choice
        (the supremum over the ball, and so the budget, depends on it)."""
        if "sensitivity" not in table:
            raise self._error("a vector location needs 'sensitivity', the norm its shift "
                              f"between adjacent datasets is bounded in: one of "
                              f"{', '.join(map(repr, SENSITIVITY_NORMS))}", "mechanism")
        norm = table["sensitivity"]
        if not isinstance(norm, str) or norm not in SENSITIVITY_NORMS:
            expected = " or ".join(map(repr, SENSITIVITY_NORMS))
            raise self._error(f"expected the sensitivity norm {expected}, found "
                              f"{_describe_value(norm)}", "mechanism.sensitivity")
        return norm

    def _neighbour_mechanism(self, value, coordinates, parameters) -> Mechanism:
        if not isinstance(value, dict) or not value:
            raise self._error("expected a table mapping coordinates to their values on the "
                              'adjacent dataset, e.g. neighbour = { p = "1 - p" }, found '
                              f"{_describe_value(value)}", "mechanism.neighbour")
        names = {p.name: p for p in coordinates}
        symbols = {name: p.symbol for name, p in parameters.items()}
        moved = []
        for name, text in value.items():
            where = self._neighbour_location(name)

            def error(message, where=where):
                return SpecError(message, path=where["path"], key=where["key"],
                                 line=where["line"])

            if name not in names:
                raise error(f"'{name}' is not a coordinate; the neighbour map moves "
                            f"coordinates: {', '.join(names)}")
            if not isinstance(text, str):
                raise error(f"expected an expression as a string, such as \"1 - {name}\", "
                            f"found {_describe_value(text)}")
            image = parse_expression(text, symbols, **where)
            if image == names[name].symbol:
                raise error(f"the neighbour map leaves '{name}' unchanged")
            moved.append((names[name].symbol, image))
        return Mechanism(kind="neighbour", neighbour=tuple(moved))

    def _neighbour_location(self, name: str) -> dict:
        """Where ``name = "..."`` of the neighbour map starts: in a ``[mechanism.neighbour]``
        table, or inline in ``neighbour = { ... }``."""
        key = f"mechanism.neighbour.{name}"
        line, offset = self.locator.find("mechanism.neighbour", name)
        if line is None:
            line, _ = self.locator.find("mechanism", "neighbour")
            if line is not None:
                match = re.search(rf"""(?:\b{re.escape(name)}|"{re.escape(name)}")\s*=\s*["']""",
                                  self.locator.lines[line - 1])
                offset = match.end() if match else 0
        return {"path": self.path, "key": key, "line": line, "column_offset": offset or 0}


def _variable_symbol(name: str, support: Support) -> sympy.Symbol:
    """The variable's symbol, with the assumptions its support implies (they help integrate)."""
    nonnegative = _is_nonnegative(support.lower) or (
        bool(support.points) and all(_is_nonnegative(point) for point in support.points))
    if support.kind == "interval":
        return sympy.Symbol(name, real=True, **({"positive": True} if nonnegative else {}))
    integral = support.kind == "integers" or all(
        point.is_integer for point in support.points)
    assumptions = {"integer": True} if integral else {"real": True}
    if nonnegative:
        assumptions["nonnegative"] = True
    return sympy.Symbol(name, **assumptions)


def _is_nonnegative(value: sympy.Expr) -> bool:
    try:
        return sympy.Ge(value, 0) is sympy.true
    except (TypeError, ArithmeticError):  # not provably real, or evalf ran out of precision
        return False


def _describe_value(value) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a float ({value})"
    if isinstance(value, str):
        return f"a string ({value!r:.40})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (datetime.date, datetime.time)):
        return f"a date/time ({value})"
    return type(value).__name__
