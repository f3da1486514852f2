r"""Forms as the literature writes them: the signs of a result's factors chosen positive.

Emit stage, LaTeX backend. Input: a closed result (a Fisher entry) and its family. Output: an
equal expression in which every factor ``B**e`` (``e`` an integer) whose base is negative on
the declared domains is written ``(-B)**e`` with the sign taken out, so that
``-1/(p*(p - 1))`` reads ``1/(p*(1 - p))``, or None when nothing changes. The sign of a base
is *proved*, not sampled: each parameter is replaced by a parametrization of its domain by a
free positive symbol (``p = e/(1 + e)`` on ``(0, 1)``, ``lambda = e`` on ``(0, oo)``) and SymPy's
assumptions must find ``-B`` positive; the two forms are then checked equal by SymPy
(``cancel`` of their difference is 0), and a result for which either fails is left alone.
"""

from __future__ import annotations

import ast

import sympy

from raosym.spec.model import FamilySpec
from raosym.spec.parser import CONSTANTS, FUNCTIONS


def _finite_end(end: sympy.Expr) -> bool:
    """A number, or an expression in earlier coordinates (finite wherever they are)."""
    return bool(end.free_symbols) or end.is_finite is True


def _domain_substitution(spec: FamilySpec) -> dict:
    substitution = {}
    for parameter in spec.parameters:
        domain = getattr(parameter, "domain", None)  # (a printer may be given names only)
        if domain is None or domain.integer:
            continue  # left as it is: a base with it is not proved negative
        e = sympy.Symbol(f"raosym_e_{parameter.name}", positive=True)
        # An end in earlier coordinates (p2 in (0, 1 - p1)) through their positive symbols.
        lower, upper = domain.lower.xreplace(substitution), domain.upper.xreplace(substitution)
        if _finite_end(domain.lower) and _finite_end(domain.upper):
            value = lower + (upper - lower) * e / (1 + e)
        elif _finite_end(domain.lower):
            value = lower + e
        elif _finite_end(domain.upper):
            value = upper - e
        else:
            continue
        substitution[parameter.symbol] = value
    return substitution


def negative_on_domain(base: sympy.Expr, spec: FamilySpec) -> bool:
    """Whether ``base`` is negative at every point of the declared domains (proved by SymPy's
    assumptions after the domains are parametrized by positive symbols)."""
    substitution = _domain_substitution(spec)
    if not base.free_symbols <= set(substitution):
        return False
    return bool(sympy.cancel(-base.subs(substitution)).is_positive)


def _over_domains(expr: sympy.Expr, spec: FamilySpec) -> sympy.Expr:
    """``expr`` with each symbol of a bounded parameter written through positive symbols
    that range over its declared domain (see _domain_substitution), a symbol ``p_1`` or
    ``p_2`` (a point of a distance or a composition) as its parameter ``p``, and every other
    symbol real (the proofs' symbols are real numbers: coordinates, points, the variable)."""
    by_name = {symbol.name: value for symbol, value in _domain_substitution(spec).items()}
    replacements = {}
    for symbol in expr.free_symbols:
        head = symbol.name.rsplit("_", 1)[0] if symbol.name[-2:] in ("_1", "_2") else symbol.name
        value = by_name.get(head)
        replacements[symbol] = sympy.Dummy(symbol.name, real=True) if value is None else \
            value.subs({e: e.func(f"{e.name}{symbol.name}", positive=True)
                        for e in value.free_symbols})
    substituted = expr.subs(replacements)
    if sympy.count_ops(expr) > 20 and any(not power.exp.is_Integer
                                           for power in substituted.atoms(sympy.Pow)):
        # cancel() treats each root as a generator and expands the rest over one
        # denominator: seconds or minutes for a sum of square roots of a simplex's
        # coordinates (the categorical distance), where SymPy's assumptions decide alone.
        return substituted
    return sympy.cancel(substituted)


def positive_on_domain(base: sympy.Expr, spec: FamilySpec) -> bool:
    """Whether ``base`` is positive at every point of the declared domains (SymPy's
    assumptions decide, after :func:`_over_domains`)."""
    return bool(base.is_positive or _over_domains(base, spec).is_positive)


def nonnegative_on_domain(base: sympy.Expr, spec: FamilySpec) -> bool:
    """Whether ``base`` is at least 0 at every point of the declared domains (a sum of
    squares with positive coefficients, say)."""
    return bool(base.is_nonnegative or _over_domains(base, spec).is_nonnegative)


def positive_form(expr: sympy.Expr, spec: FamilySpec) -> tuple[sympy.Expr, list] | None:
    """``(form, bases)``: ``expr`` with the factors that are negative on the domain written
    with their sign taken out (see the module docstring), and those negative bases; None when
    there is none."""
    if not isinstance(expr, sympy.Mul):
        return None
    bases = []
    sign, factors, changed = 1, [], False
    for factor in expr.args:
        base, exponent = factor.as_base_exp()
        if isinstance(base, sympy.Add) and exponent.is_integer and negative_on_domain(base, spec):
            sign *= (-1) ** exponent
            factors.append(sympy.Pow(-base, exponent, evaluate=False)
                           if exponent != 1 else -base)
            changed = True
            bases.append(base)
        else:
            factors.append(factor)
    if not changed:
        return None
    coefficient = sign * sympy.Mul(*(f for f in factors if f.is_number))
    rest = [f for f in factors if not f.is_number]
    form = (sympy.Mul(coefficient, *rest, evaluate=False) if coefficient != 1
            else sympy.Mul(*rest, evaluate=False))
    if sympy.cancel(sympy.together(form.doit() - expr)) != 0:
        return None
    return form, bases





def collected_form(expr: sympy.Expr) -> tuple[sympy.Expr, list] | None:
    """``expr`` with the argument of each logarithm of a sum collected by its exponentials,
    each coefficient factored (``e^a/2 + e^a/(4 alpha - 2)`` -> ``alpha e^a/(2 alpha - 1)``),
    when that leaves fewer terms, with the identities of the coefficients (``(sum of the
    old coefficients, factored coefficient, exponential)``); None when nothing changes or SymPy cannot confirm that the
    collected argument equals the original one (``cancel`` of the difference is 0)."""
    changed, identities = {}, []
    for log in sorted(expr.atoms(sympy.log), key=sympy.default_sort_key):
        argument = log.args[0]
        if not isinstance(argument, sympy.Add):
            continue
        exponentials = sorted(argument.atoms(sympy.exp), key=sympy.default_sort_key)
        if not exponentials:
            continue
        groups: dict = {}
        for term in argument.args:
            found = [e for e in exponentials if term.has(e)]
            if len(found) != 1:
                groups = {}
                break
            groups.setdefault(found[0], []).append(term / found[0])
        if not groups or len(groups) >= len(argument.args):
            continue
        factored = {e: sympy.factor(sympy.together(sympy.Add(*c))) for e, c in groups.items()}
        collected = sympy.Add(*(sympy.Mul(factored[e], e, evaluate=False) for e in groups),
                              evaluate=False)
        if sympy.cancel(sympy.together(collected.doit() - argument)) != 0:
            return None
        changed[log] = sympy.log(collected, evaluate=False)
        identities += [(sympy.Add(*c, evaluate=False), factored[e], e)
                       for e, c in groups.items() if len(c) > 1]
    if not changed:
        return None
    return expr.xreplace(changed), identities
__all__ = ["collected_form", "negative_on_domain", "nonnegative_on_domain", "positive_form",
           "positive_on_domain",
           "readable_form"]


def readable_form(expr: sympy.Expr, variables, width) -> sympy.Expr:
    """A score as a reader writes it: ``(x - mu)/sigma^2`` for SymPy's derivative
    ``-(2 mu - 2 x)/(2 sigma^2)``. Where ``expr`` depends on a variable ``x`` only through
    ``x - c`` for a parameter ``c`` (a location), it is written in ``y = x - c``; then the
    candidates (the expression, its terms over one denominator, that fraction factored, its
    common factors taken out) are compared by ``width`` (the printed width) and the narrowest
    is kept, provided SymPy confirms it equals ``expr`` (``cancel`` of the difference is 0)."""
    shifted, back = expr, {}
    for index, variable in enumerate(variables):
        if variable not in shifted.free_symbols:
            continue
        y = sympy.Dummy(f"y{index}", real=True)
        for c in sorted(shifted.free_symbols - set(variables), key=sympy.default_sort_key):
            moved = shifted.subs(variable, c + y)
            if not moved.free_symbols & {c, variable}:
                shifted, back[y] = moved, variable - c
                break
    candidates = [expr]
    for form in (shifted, sympy.cancel(shifted), sympy.factor(sympy.cancel(shifted)),
                 sympy.factor_terms(shifted)):
        candidate = form.xreplace(back)
        if candidate not in candidates:
            candidates.append(candidate)
    best = expr
    for candidate in candidates[1:]:
        if width(candidate) < width(best) and sympy.cancel(
                sympy.together(candidate - expr)) == 0:
            best = candidate
    return best


def literature_form(expr: sympy.Expr, spec: FamilySpec) -> sympy.Expr:
    """``expr`` with the signs of its factors chosen positive (:func:`positive_form`), or
    ``expr`` itself when there is nothing to change: ``dp**2/(p*(1 - p))`` for
    ``-dp**2/(p*(p - 1))``."""
    found = positive_form(expr, spec)
    return expr if found is None else found[0]



def written_form(spec: FamilySpec) -> sympy.Expr:
    """The density as its derivation file writes it (``exp(-(x - mu)**2/(2*sigma**2)) /
    sqrt(2*pi*sigma**2)``), built without SymPy's evaluation so that the display keeps the
    file's order, signs and quotients; the parsed density when that is not possible. The
    text was validated by the spec parser, so only whitelisted names and nodes occur; the
    form is used only if, evaluated, it is the parsed density."""
    if not spec.density_text:
        return spec.density
    symbols = {p.name: p.symbol for p in spec.parameters} | {spec.variable.name: spec.variable}
    try:
        tree = ast.parse(spec.density_text.strip(), mode="eval")
        with sympy.evaluate(False):
            written = _unevaluated(tree.body, symbols)
        same = _unevaluated(tree.body, symbols) == spec.density
    except (KeyError, TypeError, ValueError, SyntaxError):
        return spec.density
    return written if same else spec.density


_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
              ast.Pow: lambda a, b: a ** b}


def _unevaluated(node: ast.AST, symbols: dict) -> sympy.Expr:
    if isinstance(node, ast.BinOp):
        return _OPERATORS[type(node.op)](_unevaluated(node.left, symbols),
                                         _unevaluated(node.right, symbols))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _unevaluated(node.operand, symbols)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Call):
        arguments = [_unevaluated(argument, symbols) for argument in node.args]
        if node.func.id == "sqrt":
            return sympy.Pow(arguments[0], sympy.S.Half)
        return FUNCTIONS[node.func.id].sympy_function(*arguments)
    if isinstance(node, ast.Name):
        return symbols[node.id] if node.id in symbols else CONSTANTS[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return sympy.Integer(node.value)
    raise ValueError("not written with integers, names, operators and calls only")


def line_element_latex(spec: FamilySpec) -> str:
    """The line element's name: ``ds``, or ``d\\ell`` when a coordinate is called s (whose
    differential is ``ds``)."""
    if any(p.name == "s" for p in spec.coordinates):
        return r"\mathrm{d}\ell"
    return r"\mathrm{d}s"


def line_element_form(expr: sympy.Expr, spec: FamilySpec) -> sympy.Expr:
    """The line element as a geometer writes it: each term its coefficient, then its
    differentials (``psi'(k) dk^2 + (2/theta) dk dtheta + (k/theta^2) dtheta^2``, not SymPy's
    ``dk^2 psi'(k) + ... + dtheta^2 k/theta^2``), in the order of the coordinates, the signs
    of the coefficients' factors chosen positive (:func:`literature_form`)."""
    expr = literature_form(expr, spec)
    differentials = [sympy.Symbol(f"d{p.name}") for p in spec.coordinates]
    by_name = {d.name: index for index, d in enumerate(differentials)}
    # One term per product of differentials: expanding splits g_mumu = (nu + 1)/(...) into
    # two terms of dmu^2, which are collected again.
    coefficients: dict[sympy.Expr, sympy.Expr] = {}
    for term in sympy.Add.make_args(sympy.expand(expr)):
        coefficient, part = term.as_independent(*[s for s in term.free_symbols
                                                  if s.name in by_name])
        if not part.free_symbols:
            return expr
        coefficients[part] = coefficients.get(part, sympy.S.Zero) + coefficient
    terms = []
    for part, coefficient in coefficients.items():
        names = sorted((s.name for s in part.free_symbols), key=by_name.get)
        terms.append((names, literature_form(sympy.factor(coefficient), spec), part))
    terms.sort(key=lambda item: [by_name[name] for name in item[0]])
    written = sympy.Add(*(part if coefficient == 1 else
                          sympy.Mul(coefficient, part, evaluate=False)
                          for _, coefficient, part in terms), evaluate=False)
    return written if sympy.simplify(written.doit() - expr) == 0 else expr
