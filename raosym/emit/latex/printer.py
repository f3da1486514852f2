"""The SymPy printer of the LaTeX backend, and the escaping of plain text for TeX.

Emit stage, LaTeX backend. :class:`ProofPrinter` is SymPy's ``LatexPrinter`` with the names a
proof needs (``\\lambda`` for ``lam``, ``g_{\\mu\\sigma}`` for Fisher entries, ``\\mathrm{d}\\mu``
for differentials) and ``\\psi^{(n)}`` for ``polygamma``, which SymPy 1.14 prints as an
operator name. It writes each expression in the form a reader writes it, never another
expression: signs chosen (``p/(1 - p)``, ``x - \\mu``), a sum's rational content taken into
the coefficient (``(\\nu + 1)^2``, not ``4 ((\\nu + 1)/2)^2``), square roots of factors
positive on the declared domains joined (``\\sqrt{p (1 - p)}``), an integral after its
coefficient rather than above a fraction's bar, a line element's coefficient before its
differentials (``\\frac{2}{\\theta} \\mathrm{d}k \\, \\mathrm{d}\\theta``), logarithms of
positive numbers as one (``\\log(2\\pi)``). Everything else is SymPy's own output.
:func:`tex_text` makes a plain string (claims, justifications, titles: they contain ``_``,
``^``, ``<``, ``{``) safe for TeX.
"""

from __future__ import annotations

import unicodedata

import sympy
from sympy.codegen.cfunctions import log1p
from sympy.core.function import AppliedUndef
from sympy.printing.latex import LatexPrinter

from raosym.derive.steps import fisher_symbol
from raosym.emit.latex.forms import nonnegative_on_domain, positive_on_domain
from raosym.functions import log_ratio
from raosym.spec.model import FamilySpec
from raosym.spec.names import EXCESS_NAME, excess_letter

#: Names SymPy prints as Greek letters (as subscripts too: D_alpha).
GREEK_NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
               "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
               "upsilon", "phi", "chi", "psi", "omega", "lam", "lamda"}
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
    "¡": "!`", "¿": "?`",
    # Not \S, \P, \copyright: LaTeX sets those in the TS1 encoding, whose fonts a basic
    # TeX Live has only as bitmaps, which microtype's font expansion refuses (pdflatex stops).
    # The math symbols are Type 1 fonts; the copyright sign goes by its code point.
    "§": r"\ensuremath{\S}", "¶": r"\ensuremath{\P}",
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
    return ABBREVIATIONS.get(name) or _varepsilon(sympy.latex(sympy.Symbol(name)))


def _varepsilon(text: str) -> str:
    r"""``\varepsilon`` for SymPy's ``\epsilon``: the epsilon of (epsilon, delta)-DP as the
    appendix's own text writes it, one letter throughout."""
    return text.replace(r"\epsilon", r"\varepsilon")


def symbol_names(spec: FamilySpec) -> dict[sympy.Symbol, str]:
    """The LaTeX names of the symbols a family's proofs use, beyond SymPy's defaults."""
    names: dict[sympy.Symbol, str] = {sympy.Symbol(EXCESS_NAME): excess_letter(spec)}
    for parameter in spec.parameters:
        if parameter.name in ABBREVIATIONS:
            names[parameter.symbol] = ABBREVIATIONS[parameter.name]
    for row in spec.coordinates:
        names[sympy.Symbol(f"d{row.name}")] = r"\mathrm{d}" + symbol_latex(row.name)
        for column in spec.coordinates:
            names[fisher_symbol(row.name, column.name)] = fisher_latex(row.name, column.name)
    return names


#: How the verification record's quantities are named in the text (others: their name, in
#: typewriter type).
QUANTITY_LABELS = {
    "K": r"Gaussian curvature $K$",
    "rao_distance": r"Rao distance $d$, the form \texttt{rao\_distance} computes",
    "rao_distance_textbook": r"Rao distance $d$, textbook form",
    "periodicity": r"density unchanged by a period of its periodic coordinate",
    "rao_dp_theta": r"Rao-DP budget $\theta$",
    "rao_dp_composition": r"Rao-DP budget of a composition",
    "renyi": r"R\'enyi divergence $D_\alpha$",
    "renyi_stable": r"R\'enyi divergence $D_\alpha$, stable form",
    "renyi_numeric": r"R\'enyi divergence $D_\alpha$, by quadrature",
    "kl": r"KL divergence",
    "kl_stable": r"KL divergence, stable form",
}


def quantity_label(name: str) -> str:
    return QUANTITY_LABELS.get(name) or rf"\texttt{{{tex_text(name)}}}"


def fisher_latex(row: str, column: str) -> str:
    return f"g_{{{symbol_latex(row)} {symbol_latex(column)}}}"


def takes_minus(term: sympy.Expr) -> bool:
    """Whether a term of a sum is printed after a minus sign: a minus sign can be taken out
    of it, or out of the first factor of an unevaluated product (``(-1/theta)*x``)."""
    if isinstance(term, sympy.Mul) and term.args and term.args[0].could_extract_minus_sign():
        return True
    return term.could_extract_minus_sign()


def negated(term: sympy.Expr) -> sympy.Expr:
    """``-term``; an unevaluated product keeps its factors (only its first is negated)."""
    if isinstance(term, sympy.Mul) and term.args and term != sympy.Mul(*term.args):
        first = -term.args[0]
        rest = term.args[1:]
        if first == 1:
            return rest[0] if len(rest) == 1 else sympy.Mul(*rest, evaluate=False)
        return sympy.Mul(first, *rest, evaluate=False)
    return -term


def _unevaluated(expr: sympy.Expr) -> bool:
    """Whether a sum or product was built with ``evaluate=False`` into a form that evaluating
    it would change."""
    try:
        return expr.func(*expr.args) != expr
    except (TypeError, ValueError):
        return False


#: Functions whose argument, a sum holding a fraction, is set after a quotient's bar rather
#: than above it (see ProofPrinter._tall_functions_apart).
TALL_FUNCTIONS = (sympy.log, log1p, sympy.acosh, sympy.asinh, sympy.atan, sympy.asin,
                  sympy.acos)


def ratio_logarithm(expr: log_ratio) -> sympy.Expr:
    """``log_ratio(d, e)``, the logarithm ``log(1 + d)`` of ``A = 1 + d`` that the generated
    code evaluates as ``log1p(d)`` or ``-log1p(e)``, as a proof writes it: ``log(A)`` with
    ``1 + d`` over one denominator (``log(p/(1 - p))`` for ``d = (2p - 1)/(1 - p)``), when that
    is the shorter form."""
    argument = sympy.Add(1, expr.args[0])
    combined = sympy.cancel(sympy.together(argument))
    if sympy.count_ops(combined) < sympy.count_ops(argument):
        argument = combined
    return sympy.log(argument, evaluate=False)


def over_common_denominator(expr: sympy.Add) -> sympy.Expr | None:
    """A short sum whose terms all have rational coefficients of one denominator ``q > 1``
    written over it, as the literature writes it: ``(nu + 1)/2`` for ``nu/2 + 1/2``, and
    ``-(nu + 5)/2`` for ``-nu/2 - 5/2`` (in ``Gamma((nu + 1)/2)``, an exponent); None
    otherwise (and for a sum the engine built unevaluated)."""
    if len(expr.args) > 3 or _unevaluated(expr):
        return None
    denominators = {term.as_coeff_Mul()[0].q if term.as_coeff_Mul()[0].is_Rational else 0
                    for term in expr.args}
    if len(denominators) != 1 or denominators.pop() < 2:
        return None
    common = sympy.factor_terms(expr)
    if not isinstance(common, sympy.Mul) or any(
            _has_denominator(term) for factor in common.args if isinstance(factor, sympy.Add)
            for term in factor.args):
        return None  # (Delta_1^2/s_1^2 + Delta_2^2/s_2^2)/2 would put a fraction in a fraction
    return common


def _minus_terms(expr: sympy.Add) -> int:
    return sum(1 for term in expr.args if takes_minus(term))


def even_power_chosen(expr: sympy.Pow) -> sympy.Expr | None:
    """``(-B)**e`` for ``B**e`` with ``B`` a sum with more minus signs than ``-B`` and ``e`` an
    even integer (the same expression, written with fewer signs); None otherwise."""
    base, exponent = expr.args
    if (isinstance(base, sympy.Add) and exponent.is_Integer and exponent % 2 == 0
            and _minus_terms(-base) < _minus_terms(base)):
        return sympy.Pow(-base, exponent, evaluate=False)
    return None


def content_taken_out(expr: sympy.Mul) -> sympy.Expr | None:
    """A product with a rational coefficient and a power of a sum with a rational content
    written with the content taken into the coefficient, when that shortens the coefficient:
    ``(nu + 1)^2`` for ``4 ((nu + 1)/2)^2``. The same expression; None otherwise."""
    coefficient, rest = expr.as_coeff_Mul()
    if not coefficient.is_Rational or coefficient == 1:
        return None
    factors = list(sympy.Mul.make_args(rest))
    for index, factor in enumerate(factors):
        base, exponent = factor.as_base_exp()
        if not (isinstance(base, sympy.Add) and exponent.is_Integer and exponent > 0):
            continue
        content, primitive = base.primitive()
        taken = coefficient * content**exponent
        if content != 1 and abs(taken.p) + taken.q < abs(coefficient.p) + coefficient.q:
            others = factors[:index] + factors[index + 1:]
            return sympy.Mul(taken, primitive**exponent, *others)
    return None


def _exponent_over_one_denominator(exponent: sympy.Expr) -> sympy.Expr | None:
    """An exponent that is a sum over a denominator with symbols, ``(2N - 1)/N - 1``, over
    that denominator when it is shorter so: ``(N - 1)/N``; None otherwise."""
    if not isinstance(exponent, sympy.Add) or _unevaluated(exponent):
        return None
    combined = sympy.cancel(sympy.together(exponent))
    if not sympy.fraction(combined)[1].free_symbols:
        return None
    return combined if sympy.count_ops(combined) < sympy.count_ops(exponent) else None


def _root_of_number_below(factors: list[sympy.Expr]) -> list[sympy.Expr]:
    """``sqrt(n)/(n q)`` as ``1/(q sqrt(n))`` (SymPy's ``sqrt(2)/2`` for ``1/sqrt(2)``), so that
    the root of ``n`` may join the roots below the bar; else the factors unchanged."""
    numbers = [f for f in factors if f.is_Rational]
    coefficient = numbers[0] if len(numbers) == 1 else None
    for index, factor in enumerate(factors):
        if coefficient is None:
            break
        base, exponent = factor.as_base_exp()
        if base.is_Integer and base > 1 and exponent == sympy.S.Half and \
                coefficient.q % base == 0:
            rest = [f for k, f in enumerate(factors) if k != index and f is not coefficient]
            return [coefficient * base, sympy.Pow(base, -exponent, evaluate=False), *rest]
    return factors


def _root_of_sum_apart(factor: sympy.Expr, spec) -> list[sympy.Expr]:
    """``sqrt(N/D)`` as ``[sqrt(N), 1/sqrt(D)]`` for a sum whose terms have a common
    denominator ``D`` (``sqrt((mu_1 - mu_2)^2/2 + s^2)``: a fraction inside a root), so that
    the root of ``D`` may join the other roots; else ``[factor]``. The same value where
    ``N >= 0`` and ``D > 0`` on the declared domains, which is required."""
    base, exponent = factor.as_base_exp()
    if not (isinstance(base, sympy.Add) and exponent in (sympy.S.Half, -sympy.S.Half)):
        return [factor]
    numerator, denominator = sympy.fraction(sympy.together(base))
    if denominator == 1 or not (positive_on_domain(denominator, spec)
                                and nonnegative_on_domain(numerator, spec)):
        return [factor]
    return [sympy.Pow(numerator, exponent, evaluate=False),
            sympy.Pow(denominator, -exponent, evaluate=False)]


def logarithm_sign_chosen(expr: sympy.Mul, coordinates: set[str]) -> sympy.Expr | None:
    """``(2p - 1) log(p/(1 - p))`` for ``(1 - 2p) log((1 - p)/p)``: a product of a sum that
    starts with a number and has one negative term and the logarithm of a quotient, written
    with both negated (the sum's symbol first, as ``x - mu``, and the quotient inverted).
    Only for a sum of the ``coordinates`` (named), not of alpha: ``(1 - alpha) log(p/(1 - p))``
    keeps the quotient the terms beside it have. The same expression (``(-S) log(1/Q) =
    S log Q``); None otherwise."""
    # (the code's log1p form log_ratio(d, e) is the logarithm log(1 + d) to a reader)
    factors = [ratio_logarithm(f) if isinstance(f, log_ratio) else f
               for f in sympy.Mul.make_args(expr)]
    sums = [f for f in factors if isinstance(f, sympy.Add)]
    logarithms = [f for f in factors if isinstance(f, sympy.log)]
    if len(sums) != 1 or len(logarithms) != 1:
        return None
    (total,), (logarithm,) = sums, logarithms
    if not {symbol.name for symbol in total.free_symbols} <= coordinates:
        return None
    numbers = [term for term in total.args if term.is_Number]
    if len(numbers) != 1 or not numbers[0].is_positive or _minus_terms(total) != 1 \
            or len(total.args) != 2:
        return None
    top, bottom = sympy.fraction(logarithm.args[0])
    if bottom == 1:
        return None
    others = [f for f in factors if f is not total and f is not logarithm]
    return sympy.Mul(*others, -total, sympy.log(bottom / top, evaluate=False), evaluate=False)


def chosen_form(expr: sympy.Basic) -> sympy.Basic | None:
    """The form the printer writes ``expr`` in when it chooses its signs (a product, an even
    power), for the line breaker to break what is printed; None when it prints as it is."""
    if isinstance(expr, sympy.Mul) and not _unevaluated(expr):
        taken = content_taken_out(expr)
        if taken is not None:
            return taken
        cleared = fraction_cleared(expr)
        return cleared if cleared is not None else sign_chosen(expr)
    if isinstance(expr, sympy.Pow):
        return even_power_chosen(expr)
    return None


def _has_denominator(expr: sympy.Expr) -> bool:
    return sympy.fraction(expr, exact=True)[1] != 1


def fraction_cleared(expr: sympy.Mul) -> sympy.Expr | None:
    """A quotient whose numerator is a short sum with a fraction among its terms written over one
    denominator: ``((mu_1 - mu_2)^2 + 2 (sigma_1 - sigma_2)^2)/(4 sigma_1 sigma_2)``, not
    ``((mu_1 - mu_2)^2/2 + (sigma_1 - sigma_2)^2)/(2 sigma_1 sigma_2)`` (a fraction in a
    fraction, set in script size). The same expression (SymPy's ``together``); None when the
    numerator has no such term, or the result would still have one."""
    numerator, denominator = sympy.fraction(expr, exact=True)
    if denominator == 1:
        return None
    sums = [factor for factor in sympy.Mul.make_args(numerator) if isinstance(factor, sympy.Add)]
    if len(sums) != 1 or len(sums[0].args) > 3 or not any(
            _has_denominator(term) for term in sums[0].args):
        return None  # (a long sum over its common denominator would be longer still)
    cleared = sympy.together(expr)
    top = sympy.fraction(cleared, exact=True)[0]
    if cleared == expr or any(_has_denominator(term) for factor in sympy.Mul.make_args(top)
                              if isinstance(factor, sympy.Add) for term in factor.args):
        return None
    return cleared


def sign_chosen(expr: sympy.Mul) -> sympy.Expr | None:
    """A product with a negative coefficient written with the sign taken into one of its
    factors ``B**e`` (``B`` a sum, ``e`` an odd integer) instead, when ``-B`` has no more
    minus signs than ``B``: ``-p/(p - 1)`` as ``p/(1 - p)``, ``-(2 mu - 2 x)/(2 sigma^2)`` as
    ``(2 x - 2 mu)/(2 sigma^2)``. A denominator's sign is taken first. The same expression
    (``(-1)**e = -1``), only the way it is written; None when no factor takes the sign."""
    coefficient, rest = expr.as_coeff_Mul()
    if coefficient.is_Number and coefficient.is_positive:
        # a sum of negative terms over a denominator loses its signs to the quotient:
        # -(nu + 3)/nu, not (-nu - 3)/nu
        factors = list(sympy.Mul.make_args(rest))
        if not any(f.is_Pow and f.exp.is_negative for f in factors):
            return None
        for index, factor in enumerate(factors):
            base, exponent = factor.as_base_exp()
            if (isinstance(base, sympy.Add) and exponent.is_Integer and exponent % 2 == 1
                    and _minus_terms(-base) == 0 < _minus_terms(base)):
                others = factors[:index] + factors[index + 1:]
                return sympy.Mul(-coefficient, *others, sympy.Pow(-base, exponent),
                                 evaluate=False) if others else None
        return None
    if not (coefficient.is_Number and coefficient.is_negative):
        return None
    factors = list(sympy.Mul.make_args(rest))
    order = sorted(range(len(factors)), key=lambda k: not (
        factors[k].is_Pow and factors[k].exp.is_negative))
    for index in order:
        base, exponent = factors[index].as_base_exp()
        if not (isinstance(base, sympy.Add) and exponent.is_Integer and exponent % 2 == 1):
            continue
        if _minus_terms(-base) > _minus_terms(base):
            continue
        others = factors[:index] + factors[index + 1:]
        chosen = sympy.Mul(-coefficient, *others, sympy.Pow(-base, exponent))
        if chosen.as_coeff_Mul()[0].is_positive:
            return chosen
    return None


def point_latex(spec: FamilySpec) -> str:
    r"""The point of the manifold: ``\theta``, or ``\vartheta`` when a parameter is theta."""
    return r"\vartheta" if any(symbol_latex(p.name) == r"\theta"
                               for p in spec.parameters) else r"\theta"


class ProofPrinter(LatexPrinter):
    """``LatexPrinter`` with a family's symbol names and ``\\psi^{(n)}`` for polygamma."""

    def __init__(self, spec: FamilySpec, extra_names: dict[sympy.Symbol, str] | None = None):
        from raosym.emit.latex.prose import Prose  # prose uses this module's escaping

        #: The family's sentences as LaTeX prose (its parameter names set as symbols).
        self.prose = Prose({p.name: symbol_latex(p.name) for p in spec.parameters})
        names = symbol_names(spec) | (extra_names or {})
        # Symbols are matched by name: proof steps may carry symbols with other assumptions.
        self._names_by_name = {symbol.name: text for symbol, text in names.items()}
        self._parameters = sorted((p.name for p in spec.parameters), key=len, reverse=True)
        #: The point of the manifold (``\theta``, unless a parameter is called theta): the
        #: subscript of expectations.
        self.point = point_latex(spec)
        #: Whether an unevaluated product is printed as written (see doprint_written).
        self.written = False
        self._differential_names = {f"d{p.name}" for p in spec.coordinates}
        self._differential_order = [f"d{p.name}" for p in spec.coordinates]
        self._coordinate_names = {p.name for p in spec.coordinates}
        #: The family, whose declared domains decide which square roots may be joined.
        self.spec = spec
        #: The names of the sample variables (x, and x_1, x_2 of a composition).
        variable = getattr(spec, "variable", None)
        self._variables = set() if variable is None else {
            variable.name, f"{variable.name}_1", f"{variable.name}_2"}
        #: Every subexpression printed, by expression and printing state: the layout prints a
        #: long sum's terms again for each way of breaking it, and SymPy's product printer
        #: asks of each negative power whether its exponent is constant, which may simplify.
        self._printed: dict[tuple, str] = {}
        super().__init__({"symbol_names": names})

    def _print(self, expr, **kwargs) -> str:
        if isinstance(expr, log_ratio):
            expr = ratio_logarithm(expr)
        key = (expr, self.written, self._settings["order"], tuple(sorted(kwargs.items())))
        try:
            return self._printed[key]
        except KeyError:
            text = self._printed[key] = super()._print(expr, **kwargs)
            return text
        except TypeError:  # an unhashable argument (a list of rows) is printed every time
            return super()._print(expr, **kwargs)

    def _print_Pow(self, expr: sympy.Pow) -> str:
        """An even power of a sum with more minus signs than its negation as that power of
        the negation: ``((nu + 1)/2)^2``-like ``(nu/2 + 1/2)^2``, not ``(-nu/2 - 1/2)^2``."""
        chosen = even_power_chosen(expr)
        if chosen is not None:
            return self._print(chosen)
        exponent = _exponent_over_one_denominator(expr.exp)
        if exponent is not None:
            return self._print(sympy.Pow(expr.base, exponent, evaluate=False))
        return super()._print_Pow(expr)

    def _print_ExpBase(self, expr, exp=None) -> str:
        """``e^{(x + a Delta)/b}`` for ``e^{(a (Delta - x) + x (a + 1))/b}``: an exponent printed
        multiplied out and collected in the sample variable when that is shorter (a Rényi
        piece's exponent, as the kinks resolved it); else as it is."""
        shorter = self._shorter_exponent(expr.args[0])
        if shorter is not None:
            return self._do_exponent(rf"e^{{{self._print(shorter)}}}", exp)
        return super()._print_ExpBase(expr, exp)

    def _shorter_exponent(self, argument: sympy.Expr) -> sympy.Expr | None:
        if not isinstance(argument, (sympy.Add, sympy.Mul)) or _unevaluated(argument) \
                or argument.has(sympy.Integral, sympy.Sum, AppliedUndef):
            return None
        numerator, denominator = sympy.fraction(sympy.cancel(sympy.together(
            sympy.expand(argument))))
        variables = [symbol for symbol in argument.free_symbols
                     if symbol.name in self._variables]
        collected = sympy.factor_terms(
            sympy.collect(sympy.expand(numerator), variables) / denominator)
        return collected if sympy.count_ops(collected) < sympy.count_ops(argument) else None

    def _print_Function(self, expr, exp: str | None = None) -> str:
        r"""A function the proof names (the scores ``u_\mu(x)`` of an integrand, registered
        with the printer's names) as its name and arguments; any other as SymPy's."""
        name = (self._names_by_name.get(expr.func.__name__)
                if isinstance(expr, AppliedUndef) else None)
        if name is None:
            return super()._print_Function(expr, exp=exp)
        arguments = ", ".join(self._print(argument) for argument in expr.args)
        text = rf"{name}({arguments})"
        return rf"{text}^{{{exp}}}" if exp else text

    def _print_Derivative(self, expr: sympy.Derivative) -> str:
        r"""``\partial^2 A / \partial\mu \partial\sigma`` for a function the proof names
        (``A``, ``\eta_1``): its arguments are the coordinates and go without saying."""
        function = expr.expr
        if not isinstance(function, AppliedUndef):
            return super()._print_Derivative(expr)
        name = self._print(sympy.Symbol(function.func.__name__))
        order = sum(count for _, count in expr.variable_count)
        d = r"\partial" if len(function.args) > 1 else r"\mathrm{d}"
        power = f"^{{{order}}}" if order > 1 else ""
        below = r" \, ".join(f"{d} {self._print(v)}" + (f"^{{{c}}}" if c > 1 else "")
                             for v, c in expr.variable_count)
        return rf"\frac{{{d}{power} {name}}}{{{below}}}"

    def _print_Mul(self, expr: sympy.Mul) -> str:
        r"""An unevaluated product (a combination the engine built factor by factor) keeps its
        factors in order, joined by ``\cdot``; any other product prints as SymPy's, with its
        signs chosen as a reader writes them (:func:`sign_chosen`: ``p/(1 - p)``, not
        ``-p/(p - 1)``)."""
        bases = [factor.as_base_exp()[0] for factor in expr.args]
        if bases and all(isinstance(base, AppliedUndef) for base in bases) and any(
                base.func.__name__ in self._names_by_name for base in bases):
            # named functions side by side, in the order given: u_mu(x)^2 f(x)
            return " ".join(self._print(factor) for factor in expr.args)
        if not _unevaluated(expr):
            if len(expr.args) > 1 and self._differentials(expr):
                return self._differential_product(expr)
            coefficient_first = self._coefficient_before_differentials(expr)
            if coefficient_first is not None:
                return coefficient_first
            chosen = content_taken_out(expr)
            if chosen is None:
                chosen = logarithm_sign_chosen(expr, self._coordinate_names)
            if chosen is None:
                chosen = fraction_cleared(expr)
            if chosen is None:
                chosen = sign_chosen(expr)
            if chosen is not None:
                return self._print(chosen)
            for special in (self._integral_last, self._tall_functions_apart,
                            self._roots_joined):
                printed = special(expr)
                if printed is not None:
                    return printed
            return super()._print_Mul(expr)
        factors = list(expr.args)
        denominator = [factor for factor in factors if isinstance(factor, sympy.Pow)
                       and factor.exp.is_Number and factor.exp.is_negative]
        if denominator and not any(self._differentials(factor) for factor in factors):
            # a quotient written as one (a density as its file writes it): \frac{a}{b},
            # with a sign of the numerator set before the fraction
            numerator, sign = [], ""
            for factor in factors:
                if factor in denominator:
                    continue
                if factor == -1:
                    sign = "- "
                elif isinstance(factor, sympy.Mul) and factor.args[0] == -1:
                    sign = "- "
                    numerator.append(sympy.Mul(*factor.args[1:], evaluate=False))
                else:
                    numerator.append(factor)
            below = [factor.base if factor.exp == -1 else
                     sympy.Pow(factor.base, -factor.exp, evaluate=False)
                     for factor in denominator]
            above = (self._print(sympy.Mul(*numerator, evaluate=False)) if numerator else "1")
            return (sign + rf"\frac{{{above}}}"
                    rf"{{{self._print(sympy.Mul(*below, evaluate=False))}}}")
        sign = ""
        if factors and factors[0] == -1:
            sign, factors = "- ", factors[1:]
        if factors and factors[0].is_Number:
            # a numeric coefficient (1/2*(nu + 1)) reads best as SymPy sets it: (nu + 1)/2
            return super()._print_Mul(expr)
        if len(factors) == 1:
            text = self._print(factors[0])
            if isinstance(factors[0], sympy.Add):
                text = rf"\left({text}\right)"
            return sign + text
        text = ""
        for index, factor in enumerate(factors):
            printed = self._print(factor)
            if isinstance(factor, sympy.Add) or (index and factor.could_extract_minus_sign()):
                printed = rf"\left({printed}\right)"
            # a written form juxtaposes its factors, as one writes 2 pi sigma^2, and so
            # does a coefficient with the differentials of a line element
            text += ("" if not index else self._factor_gap(factors[index - 1], factor, printed)
                     ) + printed
        return sign + text

    def _factor_gap(self, before: sympy.Expr, factor: sympy.Expr, printed: str) -> str:
        r"""What stands between two factors of a product the engine built factor by factor:
        a space, as one writes ``\frac{\mu}{\sigma^2} x`` or ``2 \pi \sigma^2``; ``\cdot``
        before a number (``\frac{1}{2b^2} \cdot 2``, not ``\frac{1}{2b^2} 2``) and between
        two quotients, whose bars would otherwise read as one."""
        if self.written or self._differentials(factor):
            return " "
        if printed.lstrip()[:1].isdigit():
            return r" \cdot "
        if all(isinstance(f, sympy.Expr) and sympy.fraction(f, exact=True)[1] != 1
               for f in (before, factor)):
            return r" \cdot "
        return " "

    def _differential_product(self, expr: sympy.Mul) -> str:
        r"""``\mathrm{d}k \, \mathrm{d}\theta``: differentials in the order of the coordinates,
        a thin space apart (juxtaposed they read as one symbol ``dkd\theta``)."""
        order = {name: index for index, name in enumerate(self._differential_order)}

        def position(factor):
            base = factor.as_base_exp()[0]
            return order.get(base.name, 0) if base.is_Symbol else 0

        return r" \, ".join(self._print(factor) for factor in sorted(expr.args, key=position))

    def _coefficient_before_differentials(self, expr: sympy.Mul) -> str | None:
        r"""A term of a line element as a geometer writes it, its coefficient before its
        differentials: ``g_{aa} \mathrm{d}a^2``, not SymPy's order ``\mathrm{d}a^2 g_{aa}``."""
        differentials = [f for f in expr.args if self._differentials(f)]
        rest = [f for f in expr.args if not self._differentials(f)]
        if not differentials or not rest:
            return None
        coefficient = sympy.Mul(*rest)
        if sympy.fraction(coefficient)[0] == 1:
            return None  # a reciprocal: \frac{\mathrm{d}p}{\sqrt{p (1 - p)}} as SymPy sets it
        head = self._print(coefficient)
        if isinstance(coefficient, sympy.Add):
            head = rf"\left({head}\right)"
        return f"{head} {self._print(sympy.Mul(*differentials))}"

    def _integral_last(self, expr: sympy.Mul) -> str | None:
        r"""A product of an integral (or a sum) and other factors printed with the other
        factors first, in their shortest form, and the integral after them:
        ``\frac{(\nu + 1)^2 \Gamma(\ldots)}{\sqrt{\pi} \nu^{3/2} s^2} \int \ldots``, not the
        integral above a fraction's bar (set in text style, its limits squeezed)."""
        integrals = [f for f in expr.args if isinstance(f, (sympy.Integral, sympy.Sum))]
        if len(integrals) != 1:
            return None
        (integral,) = integrals
        rest = sympy.Mul(*(f for f in expr.args if f is not integral))
        factored = sympy.factor(rest)
        if sympy.count_ops(factored) < sympy.count_ops(rest):
            rest = factored
        if rest == 1:
            return self._print(integral)
        if rest == -1:
            return "- " + self._print(integral)
        head = self._print(rest)
        if isinstance(rest, sympy.Add):
            head = rf"\left({head}\right)"
        return f"{head} {self._print(integral)}"

    def _roots_joined(self, expr: sympy.Mul) -> str | None:
        r"""Square roots of positive factors joined under one root, as a reader writes them:
        ``\sqrt{p (1 - p)}``, not ``\sqrt{p} \sqrt{1 - p}`` (the same for positive bases,
        which the declared domains decide)."""
        roots: dict = {}
        factors = _root_of_number_below([part for factor in expr.args
                                         for part in _root_of_sum_apart(factor, self.spec)])
        for factor in factors:
            base, exponent = factor.as_base_exp()
            if exponent in (sympy.S.Half, -sympy.S.Half) and positive_on_domain(base, self.spec):
                roots.setdefault(exponent, []).append(factor)
        if all(len(factors) < 2 for factors in roots.values()):
            return None
        joined_away = {factor for factors in roots.values() if len(factors) > 1
                       for factor in factors}
        others = [f for f in factors if f not in joined_away]
        numerator = [f for f in others if not (f.is_Pow and f.exp.is_negative)
                     and not f.is_Rational]
        denominator = [f.base if f.exp == -1 else sympy.Pow(f.base, -f.exp)
                       for f in others if f.is_Pow and f.exp.is_negative]
        for number in (f for f in others if f.is_Rational):  # 1/2: 1 above, 2 below
            numerator.append(sympy.Integer(number.p))
            denominator.append(sympy.Integer(number.q))
        for exponent, factors in roots.items():
            if len(factors) < 2:
                continue
            bases = sorted((part for f in factors for part in sympy.Mul.make_args(f.base)),
                           key=lambda base: not base.is_Number)
            root = sympy.Pow(sympy.Mul(*bases, evaluate=False),
                             sympy.S.Half, evaluate=False)
            (numerator if exponent.is_positive else denominator).append(root)
        top = self._product_of(numerator)
        if not denominator:
            return top
        sign = ""
        if top.startswith("- "):
            sign, top = "- ", top[2:]
        return sign + rf"\frac{{{top}}}{{{self._product_of(denominator)}}}"

    def _product_of(self, factors: list) -> str:
        """Factors side by side, as SymPy's printer sets a product: the number first, sums
        in brackets; ``1`` for none."""
        coefficient = sympy.Mul(*(f for f in factors if f.is_Number))
        pieces = []
        # functions after the powers and roots: \sqrt{2 \nu} \operatorname{acosh}(...)
        for factor in sorted((f for f in factors if not f.is_Number),
                             key=lambda f: isinstance(f, sympy.Function)):
            text = self._print(factor)
            if isinstance(factor, sympy.Add) or (isinstance(factor, sympy.Mul)
                                                 and factor.could_extract_minus_sign()):
                text = rf"\left({text}\right)"
            pieces.append(text)
        sign = "- " if coefficient.is_negative else ""
        coefficient = abs(coefficient)
        if coefficient != 1 or not pieces:
            pieces.insert(0, self._print(coefficient))
        return sign + " ".join(pieces)

    def _tall_functions_apart(self, expr: sympy.Mul) -> str | None:
        r"""A quotient with a function of a fraction above its bar (``\sqrt{2\nu}
        \operatorname{acosh}(1 + a/b)/\sqrt{\nu + 3}``) printed as the quotient of the other
        factors times the function, so that the fraction inside is not set in script size."""
        numerator, denominator = sympy.fraction(expr, exact=True)
        if denominator == 1:
            return None
        tall = [factor for factor in sympy.Mul.make_args(numerator)
                if isinstance(factor, TALL_FUNCTIONS) and r"\frac" in self._print(factor.args[0])
                and (isinstance(factor.args[0], sympy.Add)  # (log1p prints log(1 + u))
                     or not isinstance(factor, sympy.log))]
        if not tall:
            return None
        rest = sympy.Mul(*(f for f in sympy.Mul.make_args(numerator) if f not in tall))
        head = self._print(rest / denominator)
        return head + " " + " ".join(self._print(factor) for factor in tall)

    def _differentials(self, expr: sympy.Expr) -> bool:
        """Whether an expression is a product of powers of coordinate differentials."""
        symbols = expr.free_symbols
        return bool(symbols) and all(symbol.name in self._differential_names
                                     for symbol in symbols) and not isinstance(expr, sympy.Add)

    def doprint_written(self, expr: sympy.Expr) -> str:
        r"""An expression built unevaluated from what a file writes (see
        :func:`raosym.emit.latex.forms.written_form`), printed in that order: terms as
        written (``x - \mu``, not ``-\mu + x``) and factors side by side."""
        order = self._settings["order"]
        self.written, self._settings["order"] = True, "none"
        try:
            return self.doprint(expr)
        finally:
            self.written, self._settings["order"] = False, order

    def _print_Symbol(self, expr: sympy.Symbol, style: str = "plain") -> str:
        if expr.name in self._names_by_name:
            return self._names_by_name[expr.name]
        head, separator, subscript = expr.name.partition("_")
        if separator and head and len(subscript) > 1 and subscript.isalpha():
            # g_mumu -> g_{\mu \mu}; theta_joint -> \theta_{\mathrm{joint}}
            run = self._parameter_run(subscript)
            if run is not None or subscript.lower() not in GREEK_NAMES:
                text = run if run is not None else rf"\mathrm{{{subscript}}}"
                return f"{self._print_Symbol(sympy.Symbol(head))}_{{{text}}}"
        return _varepsilon(super()._print_Symbol(expr, style=style))

    def _parameter_run(self, text: str) -> str | None:
        """``mumu`` -> ``\\mu \\mu`` when ``text`` is a run of the family's parameter names."""
        pieces = []
        while text:
            name = next((n for n in self._parameters if text.startswith(n)), None)
            if name is None:
                return None
            pieces.append(symbol_latex(name))
            text = text[len(name):]
        return " ".join(pieces)

    def _print_UnitCircleIntegral(self, expr) -> str:
        # the contour named under the integral sign: \oint_{|z| = 1} f \, dz
        (variable,) = expr.variables
        z = self._print(variable)
        return (rf"\oint_{{\left|{z}\right| = 1}} {self._print(expr.function)}"
                rf" \, \mathrm{{d}}{z}")

    def _print_polygamma(self, expr: sympy.polygamma, exp: str | None = None) -> str:
        order, argument = expr.args
        head = r"\psi" if order == 0 else rf"\psi^{{({self._print(order)})}}"
        text = rf"{head}\left({self._print(argument)}\right)"
        return rf"\left({text}\right)^{{{exp}}}" if exp else text

    def _print_expm1(self, expr, exp: str | None = None) -> str:
        # Mathematics, not the name of the library function the generated code calls for it
        # (SymPy prints expm1 as "expm" with a subscript 1).
        text = rf"\left(e^{{{self._print(expr.args[0])}}} - 1\right)"
        return rf"{text}^{{{exp}}}" if exp else text

    def _print_log(self, expr, exp: str | None = None) -> str:
        r"""``\log f(x)``, as one writes the log-density, for the logarithm of a function the
        proof names; any other logarithm as SymPy's, ``\log(u)``."""
        argument = expr.args[0]
        if isinstance(argument, AppliedUndef) and exp is None:
            return rf"\log {self._print(argument)}"
        return super()._print_log(expr, exp)

    def _print_log1p(self, expr, exp: str | None = None) -> str:
        # log(1 + u) as a proof writes it; the generated code evaluates it as log1p(u).
        text = rf"\log\left({self.one_plus(expr.args[0])}\right)"
        return rf"\left({text}\right)^{{{exp}}}" if exp else text

    def one_plus(self, term: sympy.Expr) -> str:
        """``1 + term`` printed in that order (``1 - v`` for a term printed with a minus)."""
        printed = self._print(term)
        return f"1 {printed}" if printed.lstrip().startswith("-") else f"1 + {printed}"

    def _print_beta(self, expr: sympy.beta, exp: str | None = None) -> str:
        # SymPy 1.14 prints the arguments of beta with str() ("nu/2").
        arguments = ", ".join(self._print(argument) for argument in expr.args)
        text = rf"\mathrm{{B}}\left({arguments}\right)"
        return rf"{text}^{{{exp}}}" if exp else text

    def _as_ordered_terms(self, expr: sympy.Expr, order=None) -> list[sympy.Expr]:
        """The terms of a sum in SymPy's print order, with every integral or sum free of
        symbols (a proof's ``Integral(exp(-t)*log(t)**2, (t, 0, oo))``) ordered as a symbol.
        SymPy orders terms by the complex value of their numeric factors and would evaluate
        each such integral by quadrature to find it: most of Gumbel's proof time."""
        constant = sorted({node for node in expr.atoms(sympy.Integral, sympy.Sum)
                           if not node.free_symbols}, key=sympy.default_sort_key)
        if not constant:
            return self._positive_first(super()._as_ordered_terms(expr, order=order))
        names = {node: sympy.Symbol(f"_constant{index}") for index, node in enumerate(constant)}
        originals = {symbol: node for node, symbol in names.items()}
        ordered = super()._as_ordered_terms(expr.xreplace(names), order=order)
        return self._positive_first([term.xreplace(originals) for term in ordered])

    def _positive_first(self, terms: list) -> list:
        """Terms in print order with a term printed without a minus sign first, when the
        first one has a minus sign: ``x - mu``, not ``-mu + x`` (SymPy's order)."""
        if len(terms) < 2 or not self._printed_negative(terms[0]):
            return terms
        for index, term in enumerate(terms[1:], start=1):
            if not self._printed_negative(term):
                return [term, *terms[:index], *terms[index + 1:]]
        return terms

    def _printed_negative(self, term: sympy.Expr) -> bool:
        return self._print(term).lstrip().startswith("-")

    def signed_terms(self, expr: sympy.Add) -> list[str]:
        """The terms of a sum as ``_print_Add`` prints them, the first bare and the others
        with their sign (``+ x``, ``- y``), so that a long sum can be set on several lines."""
        printed = []
        for index, (sign, term) in enumerate(self.signed_parts(expr)):
            text = self._print(term)
            if self.needs_term_brackets(term):
                text = rf"\left({text}\right)"
            printed.append(sign + text)
        return printed

    def needs_term_brackets(self, term: sympy.Expr) -> bool:
        """Whether a term of a sum is bracketed: as SymPy decides, except a sum printed as
        one fraction over its common denominator (``- (nu + 5)/2``, not ``- ((nu + 5)/2)``)."""
        if isinstance(term, sympy.Add) and over_common_denominator(term) is not None:
            return False
        return self._needs_add_brackets(term)

    def signed_parts(self, expr: sympy.Add) -> list[tuple[str, sympy.Expr]]:
        """``(sign, term)`` for each term of a sum, in print order: ``""`` for the first,
        ``"- "`` with the term negated when that takes a minus sign out (also of an
        unevaluated product ``(-1/theta)*x``, which keeps its factors), else ``"+ "``."""
        parts = []
        # An unevaluated sum keeps the order the engine gave its terms.
        # A zero term (an empty base measure, log h = 0) is not printed.
        terms = ([t for t in expr.args if t != 0] or [sympy.S.Zero]) if _unevaluated(expr) \
            else self._as_ordered_terms(expr)
        for index, term in enumerate(terms):
            if not index:
                parts.append(("", term))
            elif not self._printed_negative(term):
                # also a term whose sign the printer chose (1/(1 - p) for -1/(p - 1))
                parts.append(("+ ", term))
            elif takes_minus(term) and not self._printed_negative(negated(term)):
                parts.append(("- ", negated(term)))
            else:
                # a term that prints with its own minus sign
                parts.append(("", term))
        return parts

    def _print_Add(self, expr: sympy.Add, order=None) -> str:
        if len(expr.args) > 1 and all(isinstance(term, sympy.log) and not term.free_symbols
                                      and term.args[0].is_positive for term in expr.args):
            # log(2) + log(pi) as log(2 pi): the logarithm of a product of positive numbers
            product = sympy.Mul(*sorted((term.args[0] for term in expr.args),
                                        key=lambda number: not number.is_Number),
                                evaluate=False)
            return self._print(sympy.log(product, evaluate=False))
        common = over_common_denominator(expr)
        if common is not None:
            return self._print(common)
        return " ".join(self.signed_terms(expr))

    def _print_Abs(self, expr, exp: str | None = None) -> str:
        """``|x - mu|`` for SymPy's ``|mu - x|``: a difference inside the bars is written with
        the family's variable first (``|-B| = |B|``)."""
        argument = expr.args[0]
        if isinstance(argument, sympy.Add) and self._variable_first(-argument) and not (
                self._variable_first(argument)):
            text = rf"\left|{{{self._print(-argument)}}}\right|"
            return rf"{text}^{{{exp}}}" if exp else text
        return super()._print_Abs(expr, exp=exp)

    def _variable_first(self, expr: sympy.Add) -> bool:
        """Whether the first printed term of a sum is a sample variable (``x``, ``x_1``)."""
        first = self._as_ordered_terms(expr)[0]
        return first.is_Symbol and first.name in self._variables
