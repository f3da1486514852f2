"""The Python backend: one standalone NumPy module per verified family.

Emit stage. Input: a :class:`Verified`. Output: ``{"python/NAME.py": text}``. The backend is
this configuration (what the module holds and how names are made safe), the printer
(:mod:`raosym.emit.python.printer`) and the templates in ``templates/`` (``module.py.j2``, with
the numeric helpers in ``helpers.py.j2``), which only lay out the strings built here.

The module contract (see DESIGN.md): it imports only ``math`` and ``numpy`` (SciPy inside the
functions that use it, :func:`with_local_scipy_imports`); functions take
the coordinates as a sequence or an array of shape ``(..., k)`` and broadcast; constants are
keyword-only scalars; a value outside its declared domain, or nan, raises ``ValueError``
naming the parameter and the domain; the module docstring states the formulas, the
hypotheses and the verification record.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import sympy
from sympy.printing.codeprinter import PrintMethodNotImplementedError

from raosym.emit.escape import docstring_literal
from raosym.emit.provenance import derivation_file, header_lines, verification_record
from raosym.emit.python.accounting import accounting_context
from raosym.emit.python.distance import distance_context, distance_docstring
from raosym.emit.python.exact import (absolute_size, cancelling_sums, exact_function,
                                      needs_guard)
from raosym.emit.python.numeric import (numeric_contexts, numeric_fisher_entry,
                                        numerically_evaluated, with_numeric_calls)
from raosym.emit.python.printer import (ModulePrinter, assumed_domains, check_printable,
                                        log1pmx_coefficients, printing_failure, stable_forms)
from raosym.emit.render import environment
from raosym.errors import EmitError
from raosym.spec.names import constant_name_problem, local_name
from raosym.spec.model import Domain, FamilySpec, Parameter, Support
from raosym.verify.checks import Verified

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: Width of docstring text.
WIDTH = 92


@dataclass(frozen=True)
class Variable:
    """A coordinate or constant as the generated code sees it."""

    name: str        # the declared name (keyword argument of a constant)
    local: str       # its local variable in the generated functions
    role: str        # "coordinate" or "constant"
    bounds: str      # the arguments of the generated _require after the domain's text
    domain: str      # Domain.describe(), used in error messages


def render(verified: Verified) -> dict[str, str]:
    """``{"python/NAME.py": module text}`` for one verified family."""
    spec = verified.derivation.spec
    text = environment(TEMPLATES).get_template("module.py.j2").render(module_context(verified))
    return {f"python/{spec.name}.py": with_local_scipy_imports(text)}


def with_local_scipy_imports(source: str) -> str:
    """``source`` with ``import scipy.X`` as the first statement (after the docstring) of each
    module-level function that uses ``scipy.X`` and does not import it yet.

    The module contract: SciPy is imported inside the functions that need it, so that
    importing a generated module costs no more than importing NumPy (once imported, the
    statement is a dictionary look-up). Printed code names ``scipy.special.zeta`` and the like
    anywhere in a function; the functions are found with ``ast``, as in :func:`with_accuracy`."""
    lines = source.split("\n")
    insertions = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        used, imported = set(), set()
        for inner in ast.walk(node):
            if (isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
                    and inner.value.id == "scipy"):
                used.add(inner.attr)
            elif isinstance(inner, ast.Import):
                imported |= {alias.name for alias in inner.names}
        missing = sorted(name for name in used if f"scipy.{name}" not in imported)
        if not missing:
            continue
        first = node.body[0]
        has_docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                         and isinstance(first.value.value, str))
        after = first.end_lineno if has_docstring else first.lineno - 1
        indent = " " * node.body[0].col_offset
        insertions.append((after, [f"{indent}import scipy.{name}" for name in missing] + [""]))
    for after, added in sorted(insertions, reverse=True):
        lines[after:after] = added
    return "\n".join(lines)


def with_accuracy(source: str, accuracy: dict) -> str:
    """``source`` with the float accuracy each function met (an :class:`Accuracy` of the
    emitted-code gate) as the last paragraph of its docstring.

    The gate measures the rendered module, so the figures are added to its text afterwards;
    only docstrings change, never code. Functions are found with ``ast``: the closing quotes
    of a docstring are on a line of their own."""
    lines = source.split("\n")
    insertions = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in accuracy:
            docstring = node.body[0]
            closing = docstring.end_lineno - 1
            if lines[closing].strip() != '"""':
                raise EmitError(f"the docstring of {node.name} does not end on a line of its own")
            text = textwrap.wrap(accuracy[node.name].text(), WIDTH - 4)
            insertions.append((closing, ["", *("    " + line for line in text)]))
    for closing, added in sorted(insertions, reverse=True):
        if lines[closing - 1].strip():
            lines[closing:closing] = added
        else:  # the docstring already ends with an empty line
            lines[closing - 1:closing - 1] = added[1:] + [""]
    return "\n".join(lines)


#: Helpers of helpers.py.j2 that do not call ``math``.
MATH_FREE_HELPERS = frozenset({"ive", "log1p_quotient", "asinh_quotient", "hypot"})


def _shared_helpers(accounting: dict | None) -> set[str]:
    """The helpers of helpers.py.j2 that the accounting's functions use too (``_log1pmx``,
    which a Fisher entry may also need): printed once, among the module's helpers."""
    if accounting is None:
        return set()
    functions = [accounting[key] for key in ("rdp", "kl") if accounting[key] is not None]
    used = {helper for function in [*functions, accounting["theta"]]
            for helper in function["helpers"]}
    return used & {"log1pmx"}


def module_context(verified: Verified) -> dict:
    """Everything the module template lays out, as strings."""
    spec = verified.derivation.spec
    token = assumed_domains.set({p.symbol: p.domain for p in spec.parameters})
    try:
        return _module_context(verified)
    finally:
        assumed_domains.reset(token)


def _module_context(verified: Verified) -> dict:
    derivation = verified.derivation
    spec = derivation.spec
    taken = {p.name for p in spec.parameters}
    coordinates = [_variable(p, taken) for p in spec.coordinates]
    constants = [_variable(p, taken) for p in spec.constants]
    variables = coordinates + constants
    rename = {p.symbol: sympy.Symbol(v.local, **p.symbol.assumptions0)
              for p, v in zip(spec.parameters, variables, strict=True) if p.name != v.local}
    scalars = {rename.get(s, s) for s in spec.constant_symbols}
    numeric = numerically_evaluated(derivation)
    fisher, fisher_printer = _fisher_context(
        spec, with_numeric_calls(derivation, derivation.fisher, numeric), variables, rename,
        scalars)
    numeric_entries = numeric_contexts(derivation, rename, numeric)
    curvature, curvature_printer = _curvature_context(
        spec, derivation.geometry.gaussian_curvature, variables, rename, scalars)
    try:
        distance = distance_context(derivation, rename, scalars, _printed)
    except (EmitError, PrintMethodNotImplementedError) as error:
        # The family keeps its metric (raosym.gate.render_family renders it again without the
        # distance, reported unavailable with this reason).
        raise EmitError(f"the python backend cannot print the Rao distance's code: "
                        f"{printing_failure(error)}", quantity="Rao distance") from None
    if distance is not None:
        distance["docstring"] = docstring_literal(distance_docstring(verified))
    helpers = fisher_printer.helpers | (curvature_printer.helpers if curvature_printer else set())
    helpers |= {name for entry in numeric_entries for name in entry.get("helpers", ())}
    helpers |= distance["helpers"] if distance and distance["closed"] else set()
    # SciPy's special functions are imported (see with_local_scipy_imports), not a helper
    # printed into the module.
    helpers.discard("scipy.special")
    accounting = accounting_context(verified)  # mechanisms only
    printed = fisher["printed"] + (curvature["printed"] if curvature else [])
    printed += distance["printed"] if distance and distance["closed"] else []
    return {
        "header": header_lines(verified, TEMPLATES),
        "docstring": docstring_literal(module_docstring(verified)),
        "coordinates": coordinates,
        "constants": constants,
        "coordinate_names": _tuple_literal([p.name for p in spec.coordinates]),
        "constant_names": _tuple_literal([p.name for p in spec.constants]),
        "coordinate_list": ", ".join(p.name for p in spec.coordinates),
        "keyword_arguments": "".join([", *", *(f", {c.name}" for c in constants)])
        if constants else "",
        "point_values": _unpacking(variables, {v.local for v in variables}),
        # Which infinite ends of the coordinates' domains _point checks on the whole array.
        "ends": {"max": any(p.domain.upper == sympy.oo for p in spec.coordinates),
                 "min": any(p.domain.lower == -sympy.oo for p in spec.coordinates)},
        "k": len(coordinates),
        "dependent": _dependent_bounds(spec, coordinates, rename, fisher_printer),
        "fisher": fisher,
        "numeric_entries": numeric_entries,
        "numeric_integrals": any(e["kind"] == "integral" for e in numeric_entries),
        "numeric_series": any(e["kind"] == "series" for e in numeric_entries),
        "exact_functions": fisher["exact"] + (curvature["exact"] if curvature else [])
        + ([distance["exact_metric"]] if distance and "exact_metric" in distance else []),
        "line_element": {"docstring": docstring_literal(
            line_element_docstring(spec, derivation.geometry.line_element))},
        "curvature": curvature,
        "distance": distance,
        "helpers": sorted(helpers | _shared_helpers(accounting)),
        "log1pmx_series": log1pmx_coefficients(),
        "accounting": accounting,
        # math is imported only when used: by a helper (factorials), a scalar gamma or the
        # distance (math.prod of its shape, the numeric geodesic solver).
        "uses_math": bool(helpers - MATH_FREE_HELPERS) or bool(numeric_entries)
        or any("math." in code for code in printed)
        or bool(distance)
        or bool(accounting and accounting["uses_math"]),
    }


def _fisher_context(spec, fisher, variables, rename, scalars) -> tuple[dict, ModulePrinter]:
    """The lower triangle of g printed (each off-diagonal entry fills both of its places)."""
    pairs = [(i, j) for i in range(fisher.rows) for j in range(i + 1)]
    coordinates = {rename.get(p.symbol, p.symbol) for p in spec.coordinates}
    code, printer = _printed([fisher[i, j] for i, j in pairs], rename, scalars,
                             exact=[f"_exact_fisher_{i}_{j}" for i, j in pairs],
                             coordinates=coordinates)
    return {
        "docstring": docstring_literal(fisher_docstring(spec, fisher)),
        "unpack": _unpacking(variables, code["uses"]),
        "assignments": code["assignments"],
        "zeros": "0" in code["results"],  # np.zeros, and the zero entries are not assigned
        "entries": [{"row": i, "column": j, "code": result}
                    for (i, j), result in zip(pairs, code["results"], strict=True)],
        "printed": code["printed"],
        "exact": code["exact"],
    }, printer


def _curvature_context(spec, curvature, variables, rename, scalars):
    """The Gaussian curvature printed, or ``(None, None)`` when it was not derived."""
    if curvature is None:
        return None, None
    # Factored, the determinant of g is computed then squared, instead of expanded into terms
    # that cancel each other (about twice the digits survive for Beta and Gamma).
    coordinates = {rename.get(p.symbol, p.symbol) for p in spec.coordinates}
    code, printer = _printed([sympy.factor(curvature)], rename, scalars,
                             exact=["_exact_curvature"], coordinates=coordinates)
    return {
        "docstring": docstring_literal(curvature_docstring(spec, curvature)),
        "unpack": _unpacking(variables, code["uses"]),
        "assignments": code["assignments"],
        "code": code["results"][0],
        "printed": code["printed"],
        "exact": code["exact"],
    }, printer


# ----------------------------------------------------------------------------- code


def _printed(exprs: list[sympy.Expr], rename: dict, scalars: set, *,
             exact: list[str] | None = None,
             coordinates: set[sympy.Symbol] = frozenset(),
             printer_class: type[ModulePrinter] = ModulePrinter) -> tuple[dict, ModulePrinter]:
    """Stable forms, common subexpressions shared (``_t0 = ...``), then printed (by
    ``printer_class``: :class:`FloatPrinter` prints the same operations for Python floats).

    With ``exact`` (a function name per expression), an expression whose float form can
    cancel is printed as ``_recompute_where(value, sums, name, arguments)``, and ``name`` is
    defined as the expression in mpmath (see :mod:`raosym.emit.python.exact`)."""
    stable = [stable_forms(expr) for expr in exprs]
    for expr in stable:
        check_printable(expr)
    stable = [expr.xreplace(rename) for expr in stable]
    guarded = [exact is not None and not expr.has(numeric_fisher_entry)
               and needs_guard(expr, coordinates) for expr in stable]
    guards = [cancelling_sums(expr, coordinates) if guard else []
              for expr, guard in zip(stable, guarded, strict=True)]
    # The sums and their absolute sizes are printed with the values, sharing their CSE.
    watched = [quantity for sums in guards for total in sums
               for quantity in (absolute_size(total), total)]
    replacements, reduced = _without_shared_powers(*sympy.cse(
        stable + watched, symbols=sympy.numbered_symbols("_t"), order="canonical"))
    scalars = set(scalars)
    for symbol, value in replacements:
        if value.free_symbols <= scalars:
            scalars.add(symbol)
    printer = printer_class(scalars)
    assignments = [(str(symbol), printer.doprint(value)) for symbol, value in replacements]
    printed_watched = iter(printer.doprint(expr) for expr in reduced[len(stable):])
    results, exact_functions = [], []
    for index, (expr, sums) in enumerate(zip(reduced[:len(stable)], guards, strict=True)):
        result = printer.doprint(expr)
        if guarded[index]:
            function = exact_function(exact[index], exprs[index].xreplace(rename), coordinates)
            pairs = "".join(f"({next(printed_watched)}, {next(printed_watched)}), "
                            for _ in sums)
            result = (f"_recompute_where({result}, ({pairs}), {function['name']}, "
                      f"{function['arguments']})")
            exact_functions.append(function)
            printer.helpers.add("recompute")
        results.append(result)
    uses = {symbol.name for expr in stable for symbol in expr.free_symbols}
    printed = [code for _, code in assignments] + results
    return {"assignments": assignments, "results": results, "uses": uses,
            "printed": printed, "exact": exact_functions}, printer


def _without_shared_powers(replacements, reduced):
    """The common subexpressions without the powers ``x**n`` of a symbol that some product
    divides by another power ``y**n`` (``_t0 = k**2`` in ``_t0/lam**2``): put back where they
    were used, so that ``k**2/lam**2`` reaches the printer whole and is printed as
    ``(k/lam)*(k/lam)`` (``k**2`` alone overflows at k = 1.3e202, where the ratio's square is
    7.7e-172). Other shared powers stay shared."""
    powers = {symbol: value for symbol, value in replacements
              if value.is_Pow and value.base.is_Symbol and value.exp.is_Integer}
    exponents = {symbol: value.exp for symbol, value in powers.items()}

    def exponent(factor):
        return exponents.get(factor, factor.exp if factor.is_Pow and factor.exp.is_Integer
                             else None)

    paired = set()
    for expr in [value for _, value in replacements] + list(reduced):
        for product in expr.atoms(sympy.Mul):
            factors = sympy.Mul.make_args(product)
            for factor in factors:
                if factor in powers and any(exponent(other) == -exponents[factor]
                                            for other in factors if other is not factor):
                    paired.add(factor)
    if not paired:
        return replacements, reduced
    inlined, kept = {}, []
    for symbol, value in replacements:  # in the order of their use: resolved as they come
        value = value.xreplace(inlined)
        if symbol in paired:
            inlined[symbol] = value
        else:
            kept.append((symbol, value))
    return kept, [expr.xreplace(inlined) for expr in reduced]


def _unpacking(variables: list[Variable], used: set[str]) -> str:
    """``mu, _, nu``: the target of ``_point``'s values, ``_`` for those a function does not
    use. The first coordinate is always kept: its shape is the shape of the result."""
    names = [v.local if v.local in used or i == 0 else "_" for i, v in enumerate(variables)]
    return ", ".join(names) if len(names) > 1 else f"({names[0]},)"


def _variable(parameter: Parameter, taken: set[str]) -> Variable:
    """The parameter's keyword argument (its own name) and its local variable, which
    :func:`raosym.spec.names.local_name` keeps clear of every name the generated code uses."""
    name = parameter.name
    if not name.isidentifier():
        raise EmitError(f"{parameter.role} {name!r} is not a Python identifier")
    if parameter.role == "constant" and (problem := constant_name_problem(name)):
        raise EmitError(problem)  # the spec stage refuses these already
    return Variable(name, local_name(name, taken), parameter.role, _bounds(parameter.domain),
                    parameter.domain.describe())


def _fixed(bound: sympy.Expr) -> bool:
    """Whether a domain's end is a number (not an expression in earlier coordinates)."""
    return not bound.free_symbols


def _dependent_bounds(spec, coordinates, rename, printer) -> list[dict]:
    """The coordinates whose domain uses earlier coordinates (``p2 in (0, 1 - p1)``): each
    such end printed as code in the earlier coordinates' locals, for _point's
    _require_within (the fixed ends are _require's, as for every other domain)."""
    found = []
    for parameter, variable in zip(spec.coordinates, coordinates, strict=True):
        domain = parameter.domain
        if not domain.dependent:
            continue
        # In stable form: p3 < 1 - p1 - p2 as written rounds 1 - p1 to the bound's own size
        # at p1 = 1 - 2**-53 (the bound 0 rejected a valid point); the complement keeps it.
        ends = [None if _fixed(end) else printer.doprint(stable_forms(end).xreplace(rename))
                for end in (domain.lower, domain.upper)]
        closed = (not domain.lower_open and ends[0] is not None,
                  not domain.upper_open and ends[1] is not None)
        found.append({"name": variable.name, "local": variable.local, "domain": variable.domain,
                      "lower": ends[0] or "None", "upper": ends[1] or "None",
                      "closed": repr(closed) if any(closed) else ""})
    return found


def _bounds(domain: Domain) -> str:
    """``lower, upper[, closed=(...)][, integer=True]`` for the generated ``_require``.

    An infinite end is always open, so infinities (and nan) are outside every domain. An end
    that uses earlier coordinates is checked by _require_within (see _dependent_bounds):
    here it is the infinite end of its side."""
    lower = (repr(float(domain.lower)) if _fixed(domain.lower) and domain.lower.is_finite
             else "-np.inf")
    upper = (repr(float(domain.upper)) if _fixed(domain.upper) and domain.upper.is_finite
             else "np.inf")
    text = f"{lower}, {upper}"
    closed = (not domain.lower_open and _fixed(domain.lower) and domain.lower.is_finite,
              not domain.upper_open and _fixed(domain.upper) and domain.upper.is_finite)
    if any(closed):
        text += f", closed={closed!r}"
    return text + (", integer=True" if domain.integer else "")


def _tuple_literal(names: list[str]) -> str:
    quoted = [f'"{name}"' for name in names]
    return "(" + ", ".join(quoted) + ("," if len(quoted) == 1 else "") + ")"


# ----------------------------------------------------------------------------- docstrings


def _formula(expr: sympy.Expr) -> str:
    return sympy.sstr(expr)  # escaped with the rest of its docstring (docstring_literal)


def _wrapped(text: str, indent: str = "    ") -> list[str]:
    """A formula (or text) in lines of at most WIDTH characters where it can be broken: before
    the ``+``/``-`` between top-level terms, else before any ``+``/``-``. Continuation lines
    are indented twice."""
    lines = [indent]
    for piece in _terms(text, top_level=True):
        parts = [piece] if len(piece) <= WIDTH else _terms(piece, top_level=False)
        for part in parts:
            if len(lines[-1]) + len(part) > WIDTH and lines[-1].strip():
                lines.append(indent * 2 + part.lstrip())
            else:
                lines[-1] += part if lines[-1].strip() else part.lstrip()
    return lines


def _terms(text: str, *, top_level: bool) -> list[str]:
    """``text`` cut before each `` + ``/`` - `` (outside brackets only, if ``top_level``)."""
    pieces, depth, start = [], 0, 0
    for position, character in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(character, 0)
        operator = text[position + 1:position + 3] in ("+ ", "- ")
        if character == " " and operator and (depth == 0 or not top_level):
            pieces.append(text[start:position])
            start = position
    return [*pieces, text[start:]]


def support_text(support: Support) -> str:
    """The support in interval notation (``(0, oo)``, ``integers in [0, n]``, ``{0, 1}``)."""
    if support.kind == "finite":
        return "{" + ", ".join(sympy.sstr(point) for point in support.points) + "}"
    left = "(" if support.lower_open else "["
    right = ")" if support.upper_open else "]"
    interval = f"{left}{sympy.sstr(support.lower)}, {sympy.sstr(support.upper)}{right}"
    return f"integers in {interval}" if support.kind == "integers" else interval


def _entry_label(spec: FamilySpec, row: int, column: int) -> str:
    return f"g[{spec.coordinates[row].name}, {spec.coordinates[column].name}]"


def _hypotheses(verified: Verified) -> list[str]:
    derivation = verified.derivation
    found = list(derivation.hypotheses)
    for entry in derivation.entries:
        found += [h for h in entry.hypotheses if h not in found]
    return found


def module_docstring(verified: Verified) -> str:
    derivation = verified.derivation
    spec, geometry = derivation.spec, derivation.geometry
    lines = [f"{spec.title}: Fisher information and Riemannian geometry.", ""]
    if spec.reference:
        lines += [f"Reference: {spec.reference}.", ""]
    lines += [f"Density ({derivation_file(verified)})"]
    variables = ", ".join(v.name for v in spec.sample_variables)
    lines += _wrapped(f"f({variables}) = {_formula(spec.density)}")
    lines += [(f"    for {variable} in {support_text(support)} (declared: {support.text})")
              for variable, support in spec.sample_supports] + [""]
    lines += ["Coordinates, in the order of theta"]
    lines += [f"    {p.name} in {p.domain.describe()} (declared: {p.domain.text})"
              for p in spec.coordinates]
    lines += ["", "Constants (keyword-only arguments, single numbers)"]
    lines += [f"    {p.name} in {p.domain.describe()} (declared: {p.domain.text})"
              for p in spec.constants] or ["    none"]
    lines += ["", "Hypotheses"]
    lines += [line for h in _hypotheses(verified) for line in _wrapped(h)] or [
        "    none beyond the declared domains"]
    lines += ["", "Fisher information g_ij = E[s_i s_j], s_i = d log f / d theta_i"]
    for entry in derivation.entries:
        value = (numerically(spec) if entry.value is None else _formula(entry.value))
        lines += _wrapped(f"{_entry_label(spec, entry.row, entry.column)} = "
                          f"{value}    ({entry.strategy})")
    lines += ["", "Line element"]
    lines += _wrapped(f"ds^2 = {_formula(geometry.line_element)}")
    if geometry.gaussian_curvature is not None:
        lines += ["", "Gaussian curvature"]
        lines += _wrapped(f"K = {_formula(geometry.gaussian_curvature)}")
    elif geometry.scalar_curvature is not None:
        lines += ["", "Scalar curvature", f"    R = {_formula(geometry.scalar_curvature)}"]
    if verified.unavailable:
        lines += ["", "Not delivered (not derived, or not verified)"]
        for item in verified.unavailable:
            lines += _wrapped(f"{item.quantity}: {item.reason}")
    lines += ["", *verification_lines(verified)]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def verification_lines(verified: Verified) -> list[str]:
    record = verification_record(verified)
    lines = textwrap.wrap(f"Verification (mpmath at {record.working_digits} digits: "
                          "quadrature or summation of E[s_i s_j]; Brioschi formula for K; "
                          "numeric geodesics for the Rao distance)", WIDTH)
    lines += textwrap.wrap(f"{record.checks} checks at {record.points} seeded points; every "
                           "Fisher and curvature check agreed to at least "
                           f"{record.min_digits:g} digits ({record.required_digits} required).",
                           WIDTH, initial_indent="    ", subsequent_indent="    ")
    if record.not_reached:
        lines += textwrap.wrap(f"{record.not_reached} checks could not be carried to their "
                               "precision: not reached (neither passed nor failed).", WIDTH,
                               initial_indent="    ", subsequent_indent="    ")
    width = max(len(q.quantity) for q in record.quantities)
    lines += [f"    {q.quantity:<{width}}  {q.points} points, min {q.min_digits:g} digits "
              f"({q.required_digits:g} required)"
              + (f", {q.not_reached} not reached" if q.not_reached else "")
              for q in record.quantities]
    return lines


def fisher_docstring(spec: FamilySpec, fisher: sympy.Matrix) -> str:
    k = fisher.rows
    lines = [
        f"Fisher information matrix g(theta), an array of shape (..., {k}, {k}).",
        "",
        (f"theta holds ({', '.join(p.name for p in spec.coordinates)}): a sequence, or an "
         f"array of shape (..., {k})."),
    ]
    lines += _constant_lines(spec)
    lines += [""]
    for i in range(k):
        for j in range(i + 1):
            value = fisher[i, j]
            text = (numerically(spec) if value.has(numeric_fisher_entry) else _formula(value))
            lines += _wrapped(f"{_entry_label(spec, i, j)} = {text}")
    lines += ["", _raises()]
    if fisher.has(numeric_fisher_entry) and spec.support.discrete \
            and not spec.support.upper.is_finite:
        lines += textwrap.wrap("Raises ArithmeticError where a summed entry's series falls "
                               "too slowly to be summed in floating point (its terms near "
                               "k = 1e300 still adding to it).", WIDTH)
    return _docstring(lines)


def numerically(spec: FamilySpec) -> str:
    """How the module computes an entry known only numerically."""
    method = "summation of its series" if spec.support.discrete else "quadrature"
    return f"computed numerically by {method}"


def line_element_docstring(spec: FamilySpec, line_element: sympy.Expr) -> str:
    lines = [
        "Squared length ds^2 = sum_ij g_ij dtheta_i dtheta_j of a displacement dtheta at theta.",
        "",
        (f"theta and dtheta: sequences, or arrays of shape (..., {len(spec.coordinates)}) "
         "that broadcast together."),
    ]
    lines += _constant_lines(spec)
    lines += [""]
    differentials = ", ".join(f"d{p.name}" for p in spec.coordinates)
    lines += _wrapped(f"ds^2 = {_formula(line_element)}  with dtheta = ({differentials})")
    lines += ["", _raises()]
    return _docstring(lines)


def curvature_docstring(spec: FamilySpec, curvature: sympy.Expr) -> str:
    lines = ["Gaussian curvature K(theta) of the Fisher metric, shape (...).", ""]
    lines += _wrapped(f"K = {_formula(curvature)}")
    lines += ["", _raises()]
    return _docstring(lines)


def _constant_lines(spec: FamilySpec) -> list[str]:
    return [f"{p.name}: constant, a single number in {p.domain.describe()}." for p in spec.constants]


def _raises() -> str:
    return "Raises ValueError, naming the parameter and its domain, for a value outside it or nan."


def _docstring(lines: list[str]) -> str:
    """Indented for a function body; the closing quotes go on their own line."""
    body = [lines[0]] + [("    " + line if line else "") for line in lines[1:]]
    return "\n".join(line.rstrip() for line in body) + "\n    "
