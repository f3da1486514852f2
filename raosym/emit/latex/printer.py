"""The SymPy printer of the LaTeX backend, and the escaping of plain text for TeX.

Emit stage, LaTeX backend. :class:`ProofPrinter` is SymPy's ``LatexPrinter`` with the names a
proof needs (``\\lambda`` for ``lam``, ``g_{\\mu\\sigma}`` for Fisher entries, ``\\mathrm{d}\\mu``
for differentials) and ``\\psi^{(n)}`` for ``polygamma``, which SymPy 1.14 prints as an
operator name. Everything else is SymPy's own output. :func:`tex_text` makes a plain string
(claims, justifications, titles: they contain ``_``, ``^``, ``<``, ``{``) safe for TeX.
"""

from __future__ import annotations

import sympy
from sympy.printing.latex import LatexPrinter

from raosym.derive.expectation import fisher_symbol
from raosym.spec.model import FamilySpec

#: Parameter names that abbreviate a Greek letter SymPy does not recognize.
ABBREVIATIONS = {"lam": r"\lambda", "lamda": r"\lambda"}

#: Plain-text characters with a meaning in TeX, and what prints them (in any font encoding).
TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


#: Characters of the proof steps' plain text that pdflatex's UTF-8 input does not set up
#: (mathematical symbols, Greek letters, sub- and superscript digits), and what prints them.
UNICODE_TEXT = {
    "√": r"\ensuremath{\surd}",
    "−": "-",
    "·": r"\ensuremath{\cdot}",
    "×": r"\ensuremath{\times}",
    "≥": r"\ensuremath{\geq}",
    "≤": r"\ensuremath{\leq}",
    "∫": r"\ensuremath{\int}",
    "∞": r"\ensuremath{\infty}",
    "²": r"\textsuperscript{2}",
    "³": r"\textsuperscript{3}",
    "⁴": r"\textsuperscript{4}",
    "ᵀ": r"\textsuperscript{T}",
    "₀": r"\textsubscript{0}",
    "₁": r"\textsubscript{1}",
    "₂": r"\textsubscript{2}",
    "φ": r"\ensuremath{\varphi}",
    "π": r"\ensuremath{\pi}",
    "θ": r"\ensuremath{\theta}",
    "μ": r"\ensuremath{\mu}",
    "σ": r"\ensuremath{\sigma}",
    "λ": r"\ensuremath{\lambda}",
    "Γ": r"\ensuremath{\Gamma}",
    "Δ": r"\ensuremath{\Delta}",
}


def tex_text(text: str) -> str:
    """Plain text as TeX source that prints exactly that text."""
    return "".join(TEX_SPECIALS.get(character) or UNICODE_TEXT.get(character, character)
                   for character in text)


def symbol_latex(name: str) -> str:
    """How a parameter name prints: ``sigma`` -> ``\\sigma``, ``lam`` -> ``\\lambda``."""
    return ABBREVIATIONS.get(name) or sympy.latex(sympy.Symbol(name))


def symbol_names(spec: FamilySpec) -> dict[sympy.Symbol, str]:
    """The LaTeX names of the symbols a family's proofs use, beyond SymPy's defaults."""
    names: dict[sympy.Symbol, str] = {}
    for parameter in spec.parameters:
        if parameter.name in ABBREVIATIONS:
            names[parameter.symbol] = ABBREVIATIONS[parameter.name]
    for row in spec.coordinates:
        names[sympy.Symbol(f"d{row.name}")] = r"\mathrm{d}" + symbol_latex(row.name)
        for column in spec.coordinates:
            names[fisher_symbol(row.name, column.name)] = fisher_latex(row.name, column.name)
    return names


def fisher_latex(row: str, column: str) -> str:
    return f"g_{{{symbol_latex(row)} {symbol_latex(column)}}}"


class ProofPrinter(LatexPrinter):
    """``LatexPrinter`` with a family's symbol names and ``\\psi^{(n)}`` for polygamma."""

    def __init__(self, spec: FamilySpec, extra_names: dict[sympy.Symbol, str] | None = None):
        names = symbol_names(spec) | (extra_names or {})
        # Symbols are matched by name: proof steps may carry symbols with other assumptions.
        self._names_by_name = {symbol.name: text for symbol, text in names.items()}
        super().__init__({"symbol_names": names})

    def _print_Symbol(self, expr: sympy.Symbol, style: str = "plain") -> str:
        if expr.name in self._names_by_name:
            return self._names_by_name[expr.name]
        return super()._print_Symbol(expr, style=style)

    def _print_polygamma(self, expr: sympy.polygamma, exp: str | None = None) -> str:
        order, argument = expr.args
        head = r"\psi" if order == 0 else rf"\psi^{{({self._print(order)})}}"
        text = rf"{head}\left({self._print(argument)}\right)"
        return rf"\left({text}\right)^{{{exp}}}" if exp else text

    def signed_terms(self, expr: sympy.Add) -> list[str]:
        """The terms of a sum as ``_print_Add`` prints them, the first bare and the others
        with their sign (``+ x``, ``- y``), so that a long sum can be set on several lines."""
        printed = []
        for index, term in enumerate(self._as_ordered_terms(expr)):
            sign = ""
            if index and term.could_extract_minus_sign():
                sign, term = "- ", -term
            elif index:
                sign = "+ "
            text = self._print(term)
            if self._needs_add_brackets(term):
                text = rf"\left({text}\right)"
            printed.append(sign + text)
        return printed
