"""SymPy objects that proofs display but SymPy does not have: an expectation ``E[X]``.

Used by the derive stage in proof steps (never evaluated); the LaTeX backend prints it as
``\\mathbb{E}_\\theta[X]``.
"""

from __future__ import annotations

import sympy


class Expectation(sympy.Function):
    """``E[X]`` under the family's own density; stays unevaluated."""

    nargs = 1

    def _latex(self, printer) -> str:
        # The printer may name the point of the manifold otherwise (a parameter called theta).
        point = getattr(printer, "point", r"\theta")
        return rf"\mathbb{{E}}_{{{point}}}\left[" + printer._print(self.args[0]) + r"\right]"

    def _sympystr(self, printer) -> str:
        return "E[" + printer._print(self.args[0]) + "]"
