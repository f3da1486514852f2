"""The privacy-accounting functions of a mechanism's generated module (Python backend).

Emit stage. Input: a :class:`Verified` whose derivation has a mechanism. Output: the context
of ``templates/accounting.py.j2``, included at the end of ``module.py.j2``:

- ``rao_dp_theta(sensitivity, scale)`` (additive) or ``rao_dp_theta(p)`` (neighbour map);
- ``rao_dp_scale(sensitivity, theta)`` (additive: the calibration) or
  ``rao_dp_parameter(theta)`` (neighbour map: the parameter that reaches the budget);
- ``rdp_epsilon(alpha, ...)``: the RDP curve, vectorized over alpha (and broadcasting with the
  other arguments), printed from the *stable* form that :mod:`raosym.derive.divergence`
  derived (every rewrite proved equal to the textbook curve);
- ``kl_divergence(...)``;
- ``log_output_density(x, ...)`` and ``privacy_loss(x, ...)``: log f_D(x) and the privacy
  loss L(x) = log f_D(x) - log f_D'(x) of the outputs on adjacent datasets, from the same
  log-densities as the quadrature of a curve without closed form (the input of the tight
  accounting in :mod:`raosym.privacy_loss`).

Arguments are named as in the derivation file (``b``, ``sigma``, ``p``); the sensitivity
``Delta`` is ``sensitivity``. Other constants of the family (a shape ``N``) are keyword-only.
"""

from __future__ import annotations

import math
from pathlib import Path

import sympy
from sympy.codegen.cfunctions import log1p
from sympy.printing.pycode import PythonCodePrinter

from raosym.emit.python.printer import ModulePrinter, RangeSafeProducts, stable_forms
from raosym.errors import EmitError
from raosym.functions import expm1mx, log_ratio
from raosym.spec.model import NORM_NAMES
from raosym.verify.checks import Verified

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: The name of the sensitivity argument in generated code.
SENSITIVITY = "sensitivity"
#: Relative tolerance asked of scipy.integrate.quad for a curve without closed form.
QUADRATURE_TOLERANCE = 1e-13
#: Terms of the Taylor series of exp(x) - 1 - x the helper sums for |x| < 1: the first term
#: left out is below 1/20! ~ 4e-19 relative to the sum there.
_SERIES_TERMS = 20


class AccountingPrinter(ModulePrinter):
    """The module printer plus ``expm1mx`` (a helper) and ``Max`` as ``np.maximum``."""

    def _print_expm1mx(self, expr):
        return self._helper("expm1mx", *expr.args)

    def _print_expm1mx_over_x(self, expr):
        return self._helper("expm1mx_over_x", *expr.args)

    def _print_log1p_over_x(self, expr):
        return self._helper("log1p_over_x", *expr.args)

    def _print_log_ratio(self, expr):
        raise EmitError(f"{expr} must be printed through with_wide_forms")

    def _print_log_ratio_wide(self, expr):
        self.helpers.add("log_ratio")
        return f"_log_ratio({', '.join(self._print(a) for a in expr.args)})"

    def _print_softplus(self, expr):
        return f"np.logaddexp(0, {self._print(expr.args[0])})"

    def _print_Piecewise(self, expr):
        # np.where of the two forms (the stable curve's only shape): both are computed, the
        # unselected one may overflow, and the caller silences that under np.errstate.
        (first, condition), (second, otherwise) = expr.args
        if otherwise is not sympy.true:
            raise EmitError(f"cannot print {expr}: expected two pieces, the last unconditional")
        return (f"np.where({self._print(condition)}, {self._print(first)}, "
                f"{self._print(second)})")

    def _print_Max(self, expr):
        printed = [self._print(arg) for arg in expr.args]
        result = printed[0]
        for other in printed[1:]:
            result = f"np.maximum({result}, {other})"
        return result


class ScalarPrinter(RangeSafeProducts, PythonCodePrinter):
    """The scalar fast path: ``math`` functions on Python floats, ``Piecewise`` as a
    conditional expression (only the selected form is evaluated), helpers ``_..._scalar``."""

    def __init__(self) -> None:
        super().__init__({"strict": True, "fully_qualified_modules": True})

    def _print_expm1mx(self, expr):
        return f"_expm1mx_scalar({self._print(expr.args[0])})"

    def _print_log1pmx(self, expr):
        return f"_log1pmx_scalar({self._print(expr.args[0])})"

    def _print_expm1mx_over_x(self, expr):
        return f"_expm1mx_over_x_scalar({self._print(expr.args[0])})"

    def _print_log1p_over_x(self, expr):
        return f"_log1p_over_x_scalar({self._print(expr.args[0])})"

    def _print_log_ratio_wide(self, expr):
        return f"_log_ratio_scalar({', '.join(self._print(a) for a in expr.args)})"

    def _print_hypot(self, expr):
        return f"math.hypot({', '.join(self._print(a) for a in expr.args)})"


class log_ratio_wide(sympy.Function):
    """``log_ratio(d, e)`` with a third argument ``wide``, the same logarithm as
    ``log(numerator) - log(denominator)`` of ``1 + d`` over one denominator. The generated
    helper falls back on it where ``d`` or ``e`` overflows (randomized response at
    p = 5e-324, where ``(1 - 2p)/p`` is inf although ``log((1 - p)/p)`` = 744.44 is not);
    only there, where the two logarithms differ by more than 709, so their difference keeps
    its digits. Never evaluated symbolically."""

    nargs = 3


class expm1mx_over_x(sympy.Function):
    """``(exp(x) - 1 - x)/x`` (0 at x = 0): ``phi(a*u)/a = u*expm1mx_over_x(a*u)`` keeps its
    digits where ``phi(a*u)`` is subnormal (see :func:`with_divided_second_order`). Never
    evaluated symbolically."""

    nargs = 1

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return (sympy.exp(x) - 1 - x) / x


class log1p_over_x(sympy.Function):
    """``log(1 + u)/u`` (1 at u = 0). Never evaluated symbolically."""

    nargs = 1

    def _eval_rewrite_as_log(self, u, **kwargs):
        return sympy.log(1 + u) / u


def with_divided_second_order(expr: sympy.Expr) -> sympy.Expr:
    """Every ``c*log1p(S)/a``, ``S = sum w_i phi(y_i)`` the second-order sum of a stable curve
    near privacy (``a = alpha - 1``), as ``c*Q*log1p_over_x(a*Q)`` with ``Q = S/a`` divided
    term by term: ``(w_i/a)*phi(y_i)`` where ``a`` divides ``w_i``, ``w_i*u_i*expm1mx_over_x(y_i)``
    where ``y_i = a*u_i`` (``phi`` as ``y*expm1mx_over_x(y)`` throughout, one helper).

    The same value, but ``S`` is no longer divided by ``a`` after it was rounded: at a tiny
    shift ``phi(y_i)`` is subnormal though the curve ``S/a`` is a normal float (Laplace at
    alpha = 1 + 1e-5, Delta/b = 1e-153 lost 3 digits to the 1e-5 division of a 5e-317 value).
    Left as it is where a term is neither (nothing is gained there)."""
    def divided(mul):
        logarithm, = [f for f in mul.args if isinstance(f, log1p)]
        coefficient, a = sympy.fraction(mul / logarithm)
        quotient = _divided_terms(logarithm.args[0], a)
        if quotient is None:
            return mul
        return coefficient * quotient * log1p_over_x(a * quotient)

    return expr.replace(
        lambda e: (e.is_Mul and sum(isinstance(f, log1p) for f in e.args) == 1
                   and not sympy.fraction(e)[1].is_Number),
        divided)


def _divided_terms(total: sympy.Expr, a: sympy.Expr) -> sympy.Expr | None:
    """``total/a`` term by term as in :func:`with_divided_second_order`, or None."""
    quotient = []
    for term in sympy.Add.make_args(total):
        calls = [f for f in sympy.Mul.make_args(term) if isinstance(f, expm1mx)]
        if len(calls) != 1:
            return None
        (y,), weight = calls[0].args, term / calls[0]
        weight_over_a, y_over_a = sympy.cancel(weight / a), sympy.cancel(y / a)
        if _free_of_factor(weight_over_a, a):
            quotient.append(weight_over_a * y * expm1mx_over_x(y))
        elif _free_of_factor(y_over_a, a):
            # y/a kept whole (sensitivity/b, not 1/b times a product ending in sensitivity,
            # which left the float range where the term does not: b = 1e308, Delta = 1.5e308).
            quotient.append(weight * sympy.UnevaluatedExpr(y_over_a) * expm1mx_over_x(y))
        else:
            return None
    return sympy.Add(*quotient)


def _free_of_factor(expr: sympy.Expr, a: sympy.Expr) -> bool:
    """Whether the denominator of ``expr`` (cancelled) has no factor in common with ``a``."""
    try:
        return sympy.gcd(sympy.fraction(expr)[1], a).is_Number
    except sympy.PolynomialError:
        return False


def with_wide_forms(expr: sympy.Expr) -> sympy.Expr:
    """Every :class:`log_ratio` of ``expr`` as a :class:`log_ratio_wide` (before CSE, which
    would hide the fraction ``1 + d``)."""
    def wide(function):
        d, e = function.args
        numerator, denominator = sympy.fraction(sympy.cancel(sympy.together(1 + d)))
        # 1 + d > 0: the two have the same sign, whichever it is.
        return log_ratio_wide(d, e, sympy.log(abs(numerator)) - sympy.log(abs(denominator)))

    return expr.replace(lambda e: isinstance(e, log_ratio), wide)


def accounting_context(verified: Verified) -> dict | None:
    """What ``accounting.py.j2`` lays out, or None for a family without a mechanism."""
    mechanism = verified.derivation.mechanism
    if mechanism is None:
        return None
    spec = verified.derivation.spec
    names = _argument_names(spec, mechanism)
    rename = {symbol: sympy.Symbol(name, **symbol.assumptions0) for symbol, name in names.items()}
    keywords = [p for p in spec.constants if p.symbol in mechanism.arguments
                and p.symbol != getattr(spec.mechanism.scale, "symbol", None)]
    positional = [s for s in mechanism.arguments if s not in {p.symbol for p in keywords}]
    domains = _domains(spec, mechanism)
    scalars = {rename.get(p.symbol, p.symbol) for p in keywords}
    curve = mechanism.renyi
    context = {
        "kind": mechanism.kind,
        "manifold": mechanism.manifold,
        "arguments": ", ".join(names[s] for s in positional),
        "keywords": "".join(f", {p.name}" for p in keywords),
        "keyword_pass": "".join(f", {p.name}={p.name}" for p in keywords),
        "keyword_signature": ("".join([", *", *(f", {p.name}" for p in keywords)])
                              if keywords else ""),
        "requirements": [domains[s] for s in positional],
        "keyword_requirements": [domains[p.symbol] for p in keywords],
        "theta": _function(mechanism.theta_stable, rename, scalars),
        "theta_formula": sympy.sstr(mechanism.theta.xreplace(rename)),
        "calibration": None,
        "rdp": None,
        "kl": None,
        "closed": curve.closed,
        "reason": curve.reason,
        "series": _series_coefficients(),
        "numeric": None,
        "outputs": _outputs_context(spec, mechanism, rename, scalars, names),
        "tolerance": repr(QUADRATURE_TOLERANCE),
    }
    context["vector"] = _vector_context(mechanism)
    if mechanism.calibration is not None:
        context["calibration"] = {
            "name": "rao_dp_scale" if mechanism.kind == "additive" else "rao_dp_parameter",
            "solves_for": mechanism.calibrated.name,
            "arguments": (f"{SENSITIVITY}, theta" if mechanism.kind == "additive" else "theta"),
            "formula": sympy.sstr(mechanism.calibration.xreplace(rename)),
            **_function(mechanism.calibration, rename, scalars),
        }
    if curve.closed:
        # Without a stable rewrite (the directions differ), the closed form itself: the gate
        # measures how well it does.
        printed = curve.stable if curve.stable is not None else curve.textbook
        context["rdp"] = {
            "scalar": _scalar_function(printed, rename),
            "textbook": sympy.sstr(curve.textbook.xreplace(rename)),
            "rho": None if curve.rho is None else sympy.sstr(curve.rho.xreplace(rename)),
            # A linear curve is alpha*rho (derived, with its proof step): rho of the single
            # numbers, then one product with the orders.
            "linear": None if curve.rho is None else _scalar_function(curve.rho, rename),
            **_function(printed, rename, scalars, name="rdp_epsilon"),
        }
        context["kl"] = {
            "textbook": sympy.sstr(curve.kl.xreplace(rename)),
            **_function(curve.kl_stable if curve.kl_stable is not None else curve.kl, rename,
                        scalars, name="kl_divergence"),
        }
    if not curve.closed:
        context["numeric"] = context["outputs"]
    context["uses_math"] = _uses_math(context)
    return context


def _vector_context(mechanism) -> dict | None:
    """The docstrings' paragraphs of a vector mechanism: which ball the sensitivity bounds,
    where each supremum is attained and why (as derived), and what the outputs' functions of
    one coordinate stand for; None for a scalar mechanism."""
    lift = mechanism.vector
    if lift is None:
        return None
    ball = (f"Vector mechanism: sensitivity bounds the {NORM_NAMES[lift.norm]} norm of the "
            "shift h(D) - h(D') "
            f"of the {lift.dimension}-dimensional query, and the value is the supremum over "
            "that ball")
    x1 = lift.variables[0]
    return {
        "norm": lift.norm,
        "rao": (f"{ball}: the metric is constant, so d_R = sqrt(g) |h|_2, and |h|_2 <= "
                "sensitivity on the ball (l2), or |h|_2 <= |h|_1 <= sensitivity (l1), with "
                "equality on the sphere or at a vertex."),
        "curve": f"{ball}, attained at {lift.attained}: {lift.justification}.",
        "outputs": (f"Vector mechanism: {x1} is the first coordinate of the "
                    f"{lift.dimension}-dimensional output at the locations m (dataset D) and "
                    f"m + sensitivity e_1 (D'), a shift where the RDP supremum is attained; the "
                    "other coordinates have one law on both datasets and cancel in the loss. "
                    "That this pair's loss distribution dominates every other shift in the ball "
                    "is not derived."),
    }


def _uses_math(context: dict) -> bool:
    """Whether the printed code or a helper calls ``math`` (a scalar gamma in a shape
    constant's calibration, the scalar fast path, the scalar helpers)."""
    functions = [context["theta"]] + [context[key] for key in ("calibration", "rdp", "kl")
                                      if context[key] is not None]
    functions += [context["outputs"]["log_first"], context["outputs"]["log_second"]]
    if context["rdp"] is not None:
        functions.append(context["rdp"]["scalar"])
        if context["rdp"]["linear"] is not None:
            return True
    helpers = {h for f in functions for h in f.get("helpers", [])}
    scalar_helpers = {"expm1mx", "log1pmx", "log_ratio", "log1p_over_x"}
    return bool(context["numeric"]) or bool(helpers & scalar_helpers) or any(
        "math." in code for f in functions
        for code in [f["code"], *dict(f["assignments"]).values()])


def _outputs_context(spec, mechanism, rename, scalars, names) -> dict:
    """Log-densities of the two adjacent outputs, as functions of the variable (the local
    ``_x``) as derived (:mod:`raosym.derive.outputs`): for ``log_output_density`` and
    ``privacy_loss``, and for the quadrature of a curve without closed form (whose breaks are
    the kinks, 0 and Delta). The public functions take the variable by its name in the
    derivation file, checked against the support. Without a closed curve, also the
    small-shift form of the quadrature."""
    curve, forms = mechanism.renyi, mechanism.outputs
    argument = spec.variable.name
    if argument in set(names.values()):
        raise EmitError(f"{spec.path}: the variable '{argument}' has the name of an argument "
                        "of the accounting functions; rename it")
    return {
        "log_first": _function(forms.log_first, rename, scalars),
        "log_second": _function(forms.log_second, rename, scalars),
        "variable": forms.variable.name,
        "argument": argument,
        "support": _support_requirement(spec.support),
        "first": sympy.sstr(curve.first.xreplace(rename)),
        "second": sympy.sstr(curve.second.xreplace(rename)),
        "small": (None if forms.small_shift is None
                  else _small_distance_context(forms.small_shift, rename, scalars)),
    }


def _support_requirement(support) -> dict:
    """``(domain text, lower, upper, closed, integer)`` of the variable for ``_require``: the
    support's numeric bounds (the least and greatest point of a finite set), else the real
    line (a bound that depends on a parameter is not checked)."""
    lower, upper = support.lower, support.upper
    closed = (not support.lower_open, not support.upper_open)
    if support.kind == "finite" and support.points and all(
            sympy.sympify(point).is_number for point in support.points):
        values = [sympy.sympify(point) for point in support.points]
        lower, upper, closed = min(values), max(values), (True, True)
    if not (lower.is_number and upper.is_number):
        lower, upper, closed = sympy.S.NegativeInfinity, sympy.S.Infinity, (False, False)

    def bound(value):
        return repr(float(value)) if value.is_finite else ("-np.inf" if value < 0 else "np.inf")

    closed = (closed[0] and bool(lower.is_finite), closed[1] and bool(upper.is_finite))
    domain = (support.text if support.kind == "finite" else
              f"{'[' if closed[0] else '('}{lower}, {upper}{']' if closed[1] else ')'}"
              + (" (integers)" if support.discrete else ""))
    return {"domain": domain, "lower": bound(lower), "upper": bound(upper),
            "closed": f"({closed[0]}, {closed[1]})", "integer": str(bool(support.discrete))}


#: Nodes of the Gauss–Legendre rule on [0, 1] for the remainder of a small shift.
GAUSS_NODES = 12


def _small_distance_context(small, rename, scalars) -> dict:
    """The printed pieces of the small-shift form of an additive curve without closed form
    (derived in :func:`raosym.derive.outputs._small_shift`, which says why it is stable)."""
    return {
        # A kink at the location: the derivatives differ on its two sides.
        "kinked": small.kinked,
        "log_ratio": _function(small.log_ratio, rename, scalars),
        "score": _function(small.score, rename, scalars),
        "slope": _function(small.slope, rename, scalars),
        "nodes": _gauss_legendre(GAUSS_NODES),
    }


def _gauss_legendre(count: int) -> list[tuple[str, str]]:
    """(node, weight) of the Gauss–Legendre rule on [0, 1], printed to 17 digits (from
    numpy's rule on [-1, 1])."""
    import numpy as np

    nodes, weights = np.polynomial.legendre.leggauss(count)
    return [(repr(float((node + 1) / 2)), repr(float(weight / 2)))
            for node, weight in zip(nodes, weights)]


def _argument_names(spec, mechanism) -> dict:
    names = {symbol: symbol.name for symbol in mechanism.arguments}
    if mechanism.kind == "additive":
        names[spec.mechanism.sensitivity] = SENSITIVITY
    names[mechanism.renyi.order] = "alpha"
    names[mechanism.budget] = "theta"
    return names


def _domains(spec, mechanism) -> dict:
    """``(local name, domain text, lower, upper)`` of each argument, for ``_require``."""
    found = {}
    parameters = {p.symbol: p for p in spec.parameters}
    for symbol in mechanism.arguments:
        if symbol in parameters:
            domain = parameters[symbol].domain
            lower = repr(float(domain.lower)) if domain.lower.is_finite else "-np.inf"
            upper = repr(float(domain.upper)) if domain.upper.is_finite else "np.inf"
            found[symbol] = {"name": symbol.name, "label": f"'{symbol.name}'",
                             "domain": domain.describe(), "lower": lower, "upper": upper}
        else:  # the sensitivity
            found[symbol] = {"name": SENSITIVITY, "label": SENSITIVITY, "domain": "(0, oo)",
                             "lower": "0.0", "upper": "np.inf"}
    return found


def _function(expr: sympy.Expr, rename: dict, scalars: set, name: str | None = None) -> dict:
    """Assignments (CSE) and the result of one printed expression, and the helpers used
    (the printer's stable forms applied first, as for the geometry).

    With a ``name`` (the public function's), an expression that is a Piecewise of two forms
    is also split (``pieces``): its condition printed alone, and each form as the body of a
    function ``_NAME_first`` / ``_NAME_otherwise`` that the template calls through
    ``_on_subsets`` on the points where that form is selected only."""
    expr = _float_forms(expr).xreplace(rename)
    printed, reduced, printer, lines = _printed(expr, scalars)
    printed["pieces"] = None
    if name is not None and _two_forms(reduced):
        # One CSE for the whole Piecewise (the same printed operations, so the same values,
        # as np.where of the two forms); each part then takes the assignments it needs.
        (first, condition), (otherwise, _) = reduced.args
        printed["pieces"] = {
            "condition": _part(condition, lines, printer),
            "forms": [(f"_{name}_first", _part(first, lines, printer)),
                      (f"_{name}_otherwise", _part(otherwise, lines, printer))],
            # Every argument the forms may use, in a fixed order (the public function's
            # locals of the same names).
            "arguments": ", ".join(sorted(str(s) for s in expr.free_symbols)),
            "public": name,
        }
        printed["helpers"] = sorted({*printed["helpers"], "on_subsets"})
    return printed


def _two_forms(expr: sympy.Expr) -> bool:
    """Whether ``expr`` is a Piecewise of two forms, the last unconditional (the stable
    curve's only shape)."""
    return (isinstance(expr, sympy.Piecewise) and len(expr.args) == 2
            and expr.args[1].cond is sympy.true)


def _part(expr: sympy.Expr, lines: list, printer) -> dict:
    """The assignments among ``lines`` that ``expr`` needs (directly or through another), in
    their order, and ``expr`` printed."""
    needed, kept = set(expr.free_symbols), []
    for targets, code, depends, text in reversed(lines):
        if needed & targets:
            kept.append((text, code))
            needed |= depends
    return {"assignments": kept[::-1], "code": printer.doprint(expr)}


def _printed(expr: sympy.Expr, scalars: set) -> tuple:
    """_function's printing of an expression already in its float forms: the printed dict,
    CSE's reduced expression, the printer, and each assignment as (the symbols it assigns,
    code, the symbols it uses, the assigned names as printed)."""
    named, batches = _batched_calls(expr)
    arguments = [argument for _, _, batch in batches for argument in batch]
    replacements, (reduced, *arguments) = sympy.cse(
        [named, *arguments], symbols=sympy.numbered_symbols("_t"), order="canonical")
    scalars = set(scalars)
    for symbol, value in replacements:  # subexpressions of constants are scalars too
        if value.free_symbols <= scalars:
            scalars.add(symbol)
    printer = AccountingPrinter(scalars)
    # The assignments that need a batch's values come after it; CSE's order keeps the rest valid.
    later = {name for names, _, _ in batches for name in names}
    before, after = [], []
    for symbol, value in replacements:
        needs_batch = bool(value.free_symbols & later)
        if needs_batch:
            later.add(symbol)
        (after if needs_batch else before).append(
            ({symbol}, printer.doprint(value), value.free_symbols, str(symbol)))
    batch_lines = []
    for names, function, batch in batches:
        printer.helpers |= {"expm1mx", function.__name__}
        batch_arguments, arguments = arguments[:len(batch)], arguments[len(batch):]
        batch_lines.append((set(names), f"_expm1mx_batch(_{function.__name__}, "
                            + ", ".join(printer.doprint(a) for a in batch_arguments) + ")",
                            set().union(*(a.free_symbols for a in batch_arguments)),
                            ", ".join(str(name) for name in names)))
    code = printer.doprint(reduced)
    if "# Not supported" in code:
        raise EmitError(f"cannot print {expr}")
    lines = before + batch_lines + after
    assignments = [(text, code) for _, code, _, text in lines]
    return ({"assignments": assignments, "code": code, "helpers": sorted(printer.helpers),
             "piecewise": expr.has(sympy.Piecewise)}, reduced, printer, lines)


def _float_forms(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` in the forms the float code is printed from (equal values, fewer digits lost)."""
    return with_divided_second_order(with_wide_forms(stable_forms(expr)))


def _batched_calls(expr: sympy.Expr) -> tuple:
    """``(expr, batches)``: the calls of :class:`expm1mx` and of :class:`expm1mx_over_x` in
    ``expr`` replaced by names (``_e0``, ``_e1``, ... and ``_r0``, ...), each batch
    ``(names, function, arguments)`` to be computed by one ``_expm1mx_batch``: the helper's
    dozen NumPy calls are then paid once, not once a call (the Laplace curve's two calls
    were half its time). A function is batched where it has two calls or more, none inside
    another."""
    batches = []
    for function, prefix in ((expm1mx, "_e"), (expm1mx_over_x, "_r")):
        calls = sorted(expr.atoms(function), key=sympy.default_sort_key)
        if len(calls) < 2 or any(call.args[0].has(function) for call in calls):
            continue
        names = [sympy.Symbol(f"{prefix}{index}", real=True) for index in range(len(calls))]
        batches.append((names, function, [call.args[0] for call in calls]))
        expr = expr.xreplace(dict(zip(calls, names)))
    return expr, batches


def _scalar_function(expr: sympy.Expr, rename: dict) -> dict:
    """The same expression for Python floats (CSE, ScalarPrinter)."""
    replacements, (reduced,) = sympy.cse([_float_forms(expr).xreplace(rename)],
                                         symbols=sympy.numbered_symbols("_t"), order="canonical")
    printer = ScalarPrinter()
    return {"assignments": [(str(symbol), printer.doprint(value)) for symbol, value in replacements],
            "code": printer.doprint(reduced)}


def _series_coefficients() -> list[str]:
    """1/k! for k = 2 .. _SERIES_TERMS + 1, the Taylor coefficients of exp(x) - 1 - x (Horner
    order: highest first; an int quotient is correctly rounded, as float(Rational) is)."""
    return [repr(1 / math.factorial(k)) for k in range(_SERIES_TERMS + 1, 1, -1)]
