"""Fisher entries known only numerically, evaluated by quadrature in the generated module.

Emit stage, Python backend. An entry no rung of the Fisher ladder closed (strategy
``numeric``, ``value`` None, :func:`raosym.derive.fisher.numeric_entries`) stands in the derived matrix as its
symbol ``g_a_b``. Here it is replaced by a call of a generated function
``_fisher_entry_ROW_COLUMN(parameters)``, which integrates ``s_i s_j f`` over the support with
SciPy's adaptive quadrature (``scipy.integrate.quad``, relative tolerance 1e-12) at every
point of its broadcast arguments. The emitted-code gate measures the float accuracy against
the verify stage's mpmath quadrature, and the docstring states it.
"""

from __future__ import annotations

import sympy

from raosym.emit.python.distance import ScalarPrinter
from raosym.errors import EmitError
from raosym.functions import with_complementary_erf

#: Relative tolerance asked of scipy.integrate.quad, and the accuracy the docstrings promise.
QUADRATURE_TOLERANCE = 1e-12
PROMISED_TOLERANCE = 1e-10


class numeric_fisher_entry(sympy.Function):
    """A call ``_fisher_entry_ROW_COLUMN(*parameters)`` (printed, never evaluated)."""


class IntegrandPrinter(ScalarPrinter):
    """The integrand's ``math`` code; modified Bessel functions through SciPy."""

    def _print_besseli(self, expr) -> str:
        return f"scipy.special.iv({self._print(expr.args[0])}, {self._print(expr.args[1])})"


def with_numeric_calls(derivation, fisher: sympy.Matrix) -> sympy.Matrix:
    """The matrix with each numeric entry's symbol replaced by its generated call."""
    spec = derivation.spec
    calls = {}
    for entry in derivation.entries:
        if entry.value is None:
            calls[fisher[entry.row, entry.column]] = numeric_fisher_entry(
                entry.row, entry.column, *spec.coordinate_symbols, *spec.constant_symbols)
    return fisher.xreplace(calls)


def numeric_contexts(derivation, rename: dict) -> list[dict]:
    """The generated quadrature functions, one per numeric entry."""
    spec = derivation.spec
    entries = [entry for entry in derivation.entries if entry.value is None]
    if not entries:
        return []
    if spec.support.discrete:
        raise EmitError("numeric Fisher entries of a discrete family are not emitted yet (the "
                        "generated module would need a certified series); the entry verified, "
                        "but no module can evaluate it")
    printer = IntegrandPrinter()
    x = spec.variable
    variable = sympy.Symbol("_x", real=True)

    def code(expr):
        expr = with_complementary_erf(expr).xreplace(rename).xreplace({x: variable})
        return printer.doprint(expr)

    parameters = [rename.get(s, s).name for s in (*spec.coordinate_symbols,
                                                  *spec.constant_symbols)]
    locations = [rename.get(p.symbol, p.symbol).name for p in spec.coordinates
                 if p.domain.lower == -sympy.oo]
    contexts = []
    for entry in entries:
        row, column = spec.coordinates[entry.row].name, spec.coordinates[entry.column].name
        contexts.append({
            "name": f"_fisher_entry_{entry.row}_{entry.column}",
            "label": f"g[{row}, {column}]",
            "arguments": ", ".join(parameters),
            "density": code(spec.density),
            "scores": tuple(code(score) for score in entry.scores),
            "lower": code(spec.support.lower) if spec.support.lower.is_finite else "-math.inf",
            "upper": code(spec.support.upper) if spec.support.upper.is_finite else "math.inf",
            "breaks": "(" + "".join(f"{name}, " for name in [*locations, "0.0"]) + ")",
            "tolerance": f"{QUADRATURE_TOLERANCE:g}",
            "promised": f"{PROMISED_TOLERANCE:g}",
        })
    return contexts
