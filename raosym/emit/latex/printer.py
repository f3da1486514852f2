"""The SymPy printer of the LaTeX backend, and the escaping of plain text for TeX.

Emit stage, LaTeX backend. :class:`ProofPrinter` is SymPy's ``LatexPrinter`` with the names a
proof needs (``\\lambda`` for ``lam``, ``g_{\\mu\\sigma}`` for Fisher entries, ``\\mathrm{d}\\mu``
for differentials) and ``\\psi^{(n)}`` for ``polygamma``, which SymPy 1.14 prints as an
operator name. Everything else is SymPy's own output. :func:`tex_text` makes a plain string
(claims, justifications, titles: they contain ``_``, ``^``, ``<``, ``{``) safe for TeX.
"""

from __future__ import annotations

import unicodedata

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


#: Letters and punctuation of Latin scripts that TeX prints with a macro in its default (OT1)
#: encoding; accented letters are decomposed instead (see ACCENTS).
LATIN_TEXT = {
    "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}", "œ": r"\oe{}", "Œ": r"\OE{}", "ø": r"\o{}",
    "Ø": r"\O{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}", "ȷ": r"\j{}",
    "–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\ldots{}",
    "¡": "!`", "¿": "?`", "§": r"\S{}", "¶": r"\P{}", "©": r"\copyright{}",
    "°": r"\ensuremath{^\circ}", "±": r"\ensuremath{\pm}", "\u00a0": "~",
}
#: Combining accents (after NFD decomposition) and the OT1 accent macros that set them.
ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=",
    "\u0306": "u", "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H",
    "\u030c": "v", "\u0327": "c", "\u0323": "d", "\u0331": "b",
}


def tex_text(text: str) -> str:
    """Plain text as ASCII TeX source that prints that text, in any font encoding.

    TeX's specials are escaped; known symbols, Latin letters and accented letters become
    macros; whitespace and control characters (a newline would end a ``%`` comment or, twice,
    a paragraph inside ``\\section{}``) become spaces; any other character is shown by its
    code point, ``<U+4E2D>`` in typewriter type, so nothing is lost and nothing can fail to
    compile (``tests/test_escaping.py`` compiles arbitrary text)."""
    return "".join(_tex_character(character) for character in text)


def _tex_character(character: str) -> str:
    if " " <= character <= "~":
        return TEX_SPECIALS.get(character, character)
    known = UNICODE_TEXT.get(character) or LATIN_TEXT.get(character)
    if known:
        return known
    if character.isspace() or unicodedata.category(character) == "Cc":
        return " "
    accented = _accented(character)
    return accented if accented is not None else rf"\texttt{{<U+{ord(character):04X}>}}"


def _accented(character: str) -> str | None:
    """``é`` as ``\\'{e}``: a letter of ASCII with accents of ACCENTS, else None."""
    base, *marks = unicodedata.normalize("NFD", character)
    if not marks or not ("a" <= base.lower() <= "z") or not all(m in ACCENTS for m in marks):
        return None
    text = r"\i" if base == "i" and marks[0] in ("\u0300", "\u0301", "\u0302", "\u0308") else base
    for mark in marks:
        text = rf"\{ACCENTS[mark]}{{{text}}}"
    return text


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
