r"""The engine's plain-text sentences as LaTeX prose with inline mathematics.

Emit stage, LaTeX backend. Input: a sentence the derive stage wrote (a proof step's claim or
justification, a hypothesis, a reason), where mathematics is written as plain text in SymPy's
syntax (``x = mu + s*t``, ``Integral(u**(s - 1)*exp(-u), (u, 0, oo)) = gamma(s)``,
``sqrt(g) |dp|``), and the family's parameter names. Output: LaTeX in which the words stay
words and every formula is set in math mode, with the notation of the displayed equations
(``$x = \mu + s t$``, ``$\int_{0}^{\infty} u^{s - 1} e^{-u} \, \mathrm{d}u = \Gamma(s)$``).

How a formula is recognized, from the text alone (never from the family's name):

- a word that is a Greek letter's name, a parameter of the family, a name with a subscript or
  digits (``mu_1``, ``s_i``), a differential (``dx``, ``dmu``) or a single letter other than
  the English ``a`` and ``I``;
- a call of a known function (``sqrt(...)``, ``gamma(...)``, ``Integral(...)``, ``f(...)``)
  with everything inside its parentheses; brackets and bars holding only mathematics;
- operators (``=``, ``+``, ``**``, ``>=``, ``->``) and numbers joining such pieces.

A formula ends at an English word, at ``;``, ``:`` or a sentence's full stop, and at a comma
outside brackets (the comma stays in the text). Text between backticks is always a formula.
Everything that is not recognized is escaped as text (:func:`tex_text`), so the result always
compiles.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from raosym.emit.latex.printer import ABBREVIATIONS, tex_text

GREEK = {
    "alpha": r"\alpha", "beta": r"\beta", "gamma": r"\gamma", "delta": r"\delta",
    "epsilon": r"\varepsilon", "zeta": r"\zeta", "eta": r"\eta", "theta": r"\theta",
    "iota": r"\iota", "kappa": r"\kappa", "lambda": r"\lambda", "mu": r"\mu", "nu": r"\nu",
    "xi": r"\xi", "pi": r"\pi", "rho": r"\rho", "sigma": r"\sigma", "tau": r"\tau",
    "upsilon": r"\upsilon", "phi": r"\varphi", "chi": r"\chi", "psi": r"\psi",
    "omega": r"\omega", "Gamma": r"\Gamma", "Delta": r"\Delta", "Theta": r"\Theta",
    "Lambda": r"\Lambda", "Xi": r"\Xi", "Pi": r"\Pi", "Sigma": r"\Sigma", "Phi": r"\Phi",
    "Psi": r"\Psi", "Omega": r"\Omega", **ABBREVIATIONS,
}
#: Greek names that are also English words of the proofs ("Euler's Beta integral", "gamma
#: functions"): words unless a call, a parameter's name or an operator makes them symbols.
#: A lowercase "beta" is never English in a proof: it is the letter ("an exponent beta").
GREEK_WORDS = {"Beta", "Gamma", "gamma"}
#: Names written as calls, beyond FUNCTIONS (set by Prose._math_group).
CALLS = {"Integral", "Sum", "polygamma", "besseli", "binomial", "E", "√"}

#: Functions written ``name(arguments)``, and how each is set (``{0}``: the arguments).
FUNCTIONS = {
    "sqrt": r"\sqrt{{{0}}}", "Abs": r"\lvert {0} \rvert", "log": r"\log({0})",
    "exp": r"\exp({0})", "sin": r"\sin({0})", "cos": r"\cos({0})", "tan": r"\tan({0})",
    "sinh": r"\sinh({0})", "cosh": r"\cosh({0})", "tanh": r"\tanh({0})",
    "asin": r"\operatorname{{asin}}({0})", "acos": r"\operatorname{{acos}}({0})",
    "atan": r"\operatorname{{atan}}({0})", "asinh": r"\operatorname{{asinh}}({0})",
    "acosh": r"\operatorname{{acosh}}({0})", "atanh": r"\operatorname{{atanh}}({0})",
    "gamma": r"\Gamma({0})", "Gamma": r"\Gamma({0})", "beta": r"\mathrm{{B}}({0})",
    "B": r"\mathrm{{B}}({0})", "digamma": r"\psi({0})", "psi": r"\psi({0})",
    "zeta": r"\zeta({0})", "eta": r"\eta({0})", "erf": r"\operatorname{{erf}}({0})",
    "log1p": r"\log(1 + {0})", "expm1": r"(e^{{{0}}} - 1)",
    "diag": r"\operatorname{{diag}}({0})", "sign": r"\operatorname{{sign}}({0})",
    "Max": r"\max({0})", "max": r"\max({0})", "Min": r"\min({0})", "min": r"\min({0})",
    "sup": r"\sup({0})", "factorial": r"{0}!",
    "Beta": r"\mathrm{{Beta}}({0})", "Re": r"\operatorname{{Re}}({0})",
}
#: Function names that also stand before an argument without parentheses (``log f``).
OPERATOR_WORDS = {"log": r"\log", "exp": r"\exp", "sin": r"\sin", "cos": r"\cos",
                  "sup": r"\sup", "max": r"\max", "min": r"\min", "asin": r"\operatorname{asin}",
                  "acos": r"\operatorname{acos}", "atan": r"\operatorname{atan}",
                  "asinh": r"\operatorname{asinh}", "acosh": r"\operatorname{acosh}",
                  "tanh": r"\tanh", "sinh": r"\sinh", "cosh": r"\cosh"}
CONSTANTS = {"oo": r"\infty", "pi": r"\pi", "EulerGamma": r"\gamma", "gamma_E": r"\gamma"}
#: Single letters that are English words unless an operator or bracket touches them.
ENGLISH_LETTERS = {"a", "A", "I"}
#: Letters after which ``d`` + letter is a differential (``dx``, ``dt``).
DIFFERENTIAL_LETTERS = set("pqrstuvwxyz")

UNICODE_MATH = {
    "·": r"\cdot ", "×": r"\times ", "≥": r"\ge ", "≤": r"\le ", "−": "-", "∫": r"\int ",
    "∞": r"\infty ", "Γ": r"\Gamma ", "Δ": r"\Delta ", "π": r"\pi ", "φ": r"\varphi ",
    "θ": r"\theta ", "μ": r"\mu ", "σ": r"\sigma ", "λ": r"\lambda ", "²": "^{2}",
    "³": "^{3}", "⁴": "^{4}", "ᵀ": "^{T}", "₀": "_{0}", "₁": "_{1}", "₂": "_{2}",
    "∂": r"\partial ", "Σ": r"\sum ", "∇": r"\nabla ",
}
SCRIPTS = set("²³⁴ᵀ₀₁₂")

_TOKEN = re.compile(r"""
    (?P<code>`[^`]*`)
  | (?P<abbreviation>\b(?:i\.e\.|e\.g\.|cf\.|etc\.))
  | (?P<unicode>[∂Σ](?:_[A-Za-z0-9]+)?|[·×≥≤−∫∞ΓΔπφθμσλ²³⁴ᵀ₀₁₂√∇])
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<word>{letter}[{letters}0-9_]*(?:'s\b|'+)?(?:-{letter}[{letters}0-9_]*(?:'s\b|'+)?)*)
  | (?P<op>\*\*|->|>=|<=|!=|==|[-+*/^=<>!|~])
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<comma>,)
  | (?P<space>\s+)
  | (?P<other>.)
""".replace("{letter}", "[_{letters}]").replace("{letters}", "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f"),
                    re.VERBOSE | re.DOTALL)

_CLOSING = {"(": ")", "[": "]", "{": "}"}


@dataclass
class _Token:
    kind: str      # code number word op open close comma space unicode other, or group
    text: str
    math: bool = False   # certainly mathematics
    atom: bool = False   # a formula on its own only with an operator (numbers, "a")


class Prose:
    """Converts the engine's sentences for one family (its parameter names are
    mathematics wherever they stand as words)."""

    def __init__(self, names: dict[str, str] | None = None, escape=tex_text):
        #: parameter name -> LaTeX (``lam`` -> ``\lambda``, ``N`` -> ``N``)
        self.names = dict(names or {})
        #: how the words are escaped (the notebook display has its own, for MathJax)
        self.escape = escape

    # ------------------------------------------------------------------ public

    def latex(self, text: str) -> str:
        """``text`` as LaTeX: words escaped, formulas in ``$...$``."""
        tokens = self._group(self._classify(list(self._tokens(text))))
        out: list[str] = []
        for kind, run in self._runs(tokens):
            if kind == "math":
                out.append("$" + self._math(run) + "$")
            else:
                out.append("".join(self._text(token) for token in run))
        return "".join(out)

    def math(self, text: str) -> str:
        """``text`` (SymPy syntax) as math-mode LaTeX, without the dollars: every bracket is
        mathematics here."""
        return self._math(self._group(self._classify(list(self._tokens(text))), force=True))

    # ------------------------------------------------------------------ tokens

    def _tokens(self, text: str):
        for match in _TOKEN.finditer(text):
            kind = match.lastgroup
            yield _Token(kind, match.group(0))

    def _is_math_word(self, word: str) -> bool:
        base = word.rstrip("'")
        if "-" in base or base.endswith("'s"):
            return False
        if base.startswith("_") and len(base) > 1:
            base = base[1:]  # a SymPy Dummy's printed name
        if base in self.names or base in GREEK or base in CONSTANTS:
            return True
        if re.fullmatch(r"[A-Za-z]", base):
            return base not in ENGLISH_LETTERS
        if "_" in base or re.fullmatch(r"[A-Za-z]+\d+", base):
            head = re.split(r"_|\d", base)[0]
            return bool(head) and (len(head) == 1 or head in GREEK or head in self.names
                                   or head in FUNCTIONS or head in CALLS)
        return bool(base.startswith("d") and (base[1:] in self.names or base[1:] in GREEK or base[1:] in DIFFERENTIAL_LETTERS))

    def _classify(self, tokens: list[_Token]) -> list[_Token]:
        tokens = _scripts_after_calls(tokens)
        for index, token in enumerate(tokens):
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            after = _after_space(tokens, index)
            if token.kind == "code":
                token.math = True
            elif token.kind == "number":
                token.atom = True
            elif token.kind == "word":
                word = token.text
                called = following is not None and following.kind == "open" and \
                    following.text in "(["
                if called and (word in FUNCTIONS or word in CALLS
                               or self._is_math_word(word) or len(word.rstrip("'")) == 1):
                    token.kind = "call"
                    token.math = True
                elif word in GREEK_WORDS and word not in self.names and not (
                        _touches_operator(tokens, index)):
                    continue  # "gamma functions"; but t^beta, beta = 0
                elif word in ENGLISH_LETTERS:
                    token.atom = True  # even when a parameter is called "a"
                elif self._is_math_word(word):
                    token.math = True
                elif word in OPERATOR_WORDS and following is not None and \
                        following.kind == "op" and following.text in ("^", "**"):
                    token.kind = "operator"  # a power of the function: sin^2 t
                    token.math = True
                elif word in OPERATOR_WORDS and after is not None and (
                        (after.kind == "word" and (self._is_math_word(after.text)
                                                   or after.text in FUNCTIONS))
                        or after.kind in ("unicode", "number")
                        or (after.kind == "op" and after.text == "|")):
                    token.kind = "operator"
                    token.math = True
            elif token.kind == "unicode":
                token.math = True
                if token.text == "√" and following is not None and following.kind == "open":
                    token.kind = "call"
        return tokens

    def _group(self, tokens: list[_Token], force: bool = False) -> list[_Token]:
        """Calls with their argument lists, and brackets or bars that hold only mathematics
        (any bracket with ``force``), become single tokens (kind ``group``, text the
        source, ``parts`` = (call name or None, opening, contents, closing))."""
        out: list[_Token] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            found = None
            if token.kind == "call" and index + 1 < len(tokens):
                end = self._matching(tokens, index + 1)
                if end is not None:
                    found = (token, index + 1, end, self._group(tokens[index + 2:end], True))
                else:
                    token.kind, token.math = "word", self._is_math_word(token.text)
            elif token.kind == "open":
                end = self._matching(tokens, index)
                if end is not None:
                    inner = self._group(tokens[index + 1:end], force)
                    if force or self._all_math(inner):
                        found = (None, index, end, inner)
            elif token.kind == "op" and token.text == "|":
                end = next((j for j in range(index + 1, len(tokens))
                            if tokens[j].kind == "op" and tokens[j].text == "|"), None)
                if end is not None and end > index + 1:
                    inner = self._group(tokens[index + 1:end])
                    if self._all_math(inner):
                        found = (None, index, end, inner)
            if found is None:
                out.append(token)
                index += 1
                continue
            name, opening, end, inner = found
            group = _Token("group", "".join(t.text for t in tokens[index:end + 1]), math=True)
            group.parts = (name, tokens[opening], inner, tokens[end])
            out.append(group)
            index = end + 1
        return out

    @staticmethod
    def _matching(tokens: list[_Token], start: int) -> int | None:
        opening = tokens[start].text
        if tokens[start].kind != "open":
            return None
        closing = _CLOSING[opening]
        depth = 0
        for index in range(start, len(tokens)):
            token = tokens[index]
            if token.kind == "open" and token.text == opening:
                depth += 1
            elif token.kind == "close" and token.text == closing:
                depth -= 1
                if depth == 0:
                    return index
        return None

    def _all_math(self, tokens: list[_Token]) -> bool:
        """Whether bracket contents are mathematics: no English word, and at least one
        formula piece (``(the stable form)`` is text, ``(0, 1)`` and ``(k, theta)`` are not)."""
        if not tokens:
            return False
        for token in tokens:
            if token.kind == "word" and not (token.math or token.atom):
                return False
            if token.kind == "abbreviation":
                return False
            if token.kind in ("other",) and token.text not in ".'":
                return False
            if token.kind == "other" and token.text == ".":
                return False
        return any(t.math for t in tokens) or (
            any(t.atom for t in tokens) and any(t.kind == "op" for t in tokens))

    # ------------------------------------------------------------------ runs

    def _runs(self, tokens: list[_Token]):
        """``("math", tokens)`` and ``("text", tokens)`` runs, in order."""
        runs: list[tuple[str, list[_Token]]] = []
        index = 0
        while index < len(tokens):
            if self._starts_formula(tokens, index):
                end = self._formula_end(tokens, index)
                run = tokens[index:end]
                runs.append(("math" if self._is_formula(run) else "text", run))
                index = end
                continue
            runs.append(("text", [tokens[index]]))
            index += 1
        return runs

    @staticmethod
    def _piece(token: _Token) -> bool:
        return token.math or token.atom

    def _starts_formula(self, tokens, index) -> bool:
        token = tokens[index]
        if self._piece(token):
            return True
        # a sign right before a piece ("-t", "-oo"), a relation before one ("> 1/2")
        if token.kind != "op" or token.text in ("|", "!"):
            return False
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is not None and following.kind == "space" and token.text not in "-+":
            following = tokens[index + 2] if index + 2 < len(tokens) else None
        return following is not None and self._piece(following)

    def _formula_end(self, tokens, start) -> int:
        """The index after the formula that starts at ``start``."""
        end = index = start
        while index < len(tokens):
            token = tokens[index]
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if token.kind == "op" and token.text == "-" and following is not None and \
                    following.kind == "word" and not self._piece(following) and index > start:
                break  # a hyphen: "sqrt(g)-scaled", "(epsilon, delta)-DP"
            if self._piece(token) or token.kind == "op":
                end = index = index + 1
                continue
            if token.kind == "space":
                # across a space only towards another piece or an operator
                if following is not None and (self._piece(following) or (
                        following.kind == "op" and following.text != "|")):
                    index += 1
                    continue
                break
            if token.kind == "comma" and self._list_continues(tokens, index):
                index += 1
                continue
            break
        # a formula never ends with an operator (other than a factorial)
        while end > start + 1 and tokens[end - 1].kind == "op" and tokens[end - 1].text != "!":
            end -= 1
        return end

    def _list_continues(self, tokens, comma: int) -> bool:
        """Whether the comma at ``comma`` separates variables that share a relation:
        ``0 < x, y < 1``, ``u, v >= 0``, ``a, b > 0``."""
        _after_space(tokens, comma - 1 + 1) if comma + 1 < len(tokens) else None
        index = comma + 1
        while index < len(tokens) and tokens[index].kind == "space":
            index += 1
        if index >= len(tokens) or not self._piece(tokens[index]):
            return False
        after = index + 1
        while after < len(tokens) and tokens[after].kind == "space":
            after += 1
        if after >= len(tokens):
            return False
        nxt = tokens[after]
        return nxt.kind == "comma" or (nxt.kind == "op" and nxt.text in ("<", ">", "<=", ">="))

    def _is_formula(self, run: list[_Token]) -> bool:
        if any(token.math for token in run):
            return True
        # numbers and English letters alone are text ("50 digits", "a function") unless an
        # operator joins them ("a > 0", "1/2")
        return any(token.kind == "op" for token in run) and any(t.atom for t in run)

    # ------------------------------------------------------------------ output

    def _text(self, token: _Token) -> str:
        if token.kind == "word" and "-" in token.text:
            # hyphenated words: Greek parts as symbols ("theta-Rao-DP", "epsilon-DP")
            parts = token.text.split("-")
            return "-".join(
                f"${self._word(part)}$" if (self._is_math_word(part) and len(part) > 1
                                            and part not in GREEK_WORDS)
                or part in self.names else self.escape(part) for part in parts)
        if token.kind == "group":
            return self.escape(token.text)
        return self.escape(token.text)

    def _math(self, tokens: list[_Token]) -> str:
        out: list[str] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token.kind == "op" and token.text in ("**", "^"):
                exponent, index = self._exponent(tokens, index + 1)
                out.append("^{" + exponent + "}")
                continue
            if token.kind == "unicode" and token.text == "√":
                argument, index = self._exponent(tokens, index + 1)
                out.append(r"\sqrt{" + argument + "}")
                continue
            out.append(self._math_token(token, tokens, index))
            index += 1
        return _tidy("".join(out))

    def _exponent(self, tokens, index) -> tuple[str, int]:
        """The atom after ``**`` (a number, a word, a call, a bracket group, with a sign)."""
        sign = ""
        while index < len(tokens) and tokens[index].kind == "space":
            index += 1
        if index < len(tokens) and tokens[index].kind == "op" and tokens[index].text == "-":
            sign, index = "-", index + 1
        if index >= len(tokens):
            return sign, index
        token = tokens[index]
        if token.kind == "group" and token.parts[0] is None and token.parts[1].text == "(":
            return sign + self._math(token.parts[2]), index + 1
        return sign + self._math_token(token, tokens, index), index + 1

    def _math_token(self, token: _Token, tokens, index) -> str:
        kind, text = token.kind, token.text
        if kind == "code":
            return self.math(text[1:-1])
        if kind == "group":
            return self._math_group(token)
        if kind in ("word", "operator", "call"):
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if text == "d" and following is not None and following.kind == "op" and \
                    following.text in ("/", "^", "**"):
                return r"\mathrm{d}"  # d/dz, d^m/d epsilon^m
            return self._word(text)
        if kind == "number":
            return text
        if kind == "op":
            return {"**": "^", "->": r" \to ", ">=": r" \ge ", "<=": r" \le ", "!=": r" \ne ",
                    "==": " = ", "~": r" \sim ", "*": _product_sign(tokens, index),
                    "|": r"\vert "}.get(
                        text, f" {text} " if text in "=<>" else text)
        if kind == "open":
            return r"\{" if text == "{" else text
        if kind == "close":
            return r"\}" if text == "}" else text
        if kind == "comma":
            return ", "
        if kind == "space":
            return " "
        if kind == "unicode":
            head, _, subscript = text.partition("_")
            return UNICODE_MATH.get(head, "") + (f"_{{{self._subscript(subscript)}}} "
                                                 if subscript else "")
        if text in ";:":
            return text + r"\, "
        if text == "'":
            return "'"  # a derivative's prime after a symbol (Γ'(z))
        return r"\text{" + self.escape(text) + "}"

    def _math_group(self, group: _Token) -> str:
        name, opening, inner, closing = group.parts
        body = self._math(inner)
        if name is None:
            if opening.text == "|":
                return rf"\lvert {body} \rvert"
            if opening.text == "{":
                return rf"\{{{body}\}}"
            return f"{opening.text}{body}{closing.text}"
        word = name.text
        if word == "√":
            return rf"\sqrt{{{body}}}"
        if word == "E" and opening.text == "[":
            return rf"\mathbb{{E}}[{body}]"
        if word == "Integral":
            return self._integral(inner, r"\int")
        if word == "Sum":
            return self._integral(inner, r"\sum")
        if word == "polygamma":
            order, _, argument = _split_first_argument(inner)
            return rf"\psi^{{({self._math(order)})}}({self._math(argument)})"
        if word == "besseli":  # the order as a subscript, as the displays print it
            order, _, argument = _split_first_argument(inner)
            return rf"I_{{{self._math(order)}}}({self._math(argument)})"
        if word == "binomial":
            top, _, bottom = _split_first_argument(inner)
            return rf"\binom{{{self._math(top)}}}{{{self._math(bottom)}}}"
        if word == "exp" and len(body) <= 24 and "(" not in body:
            return "e^{" + body + "}"
        if word in FUNCTIONS and opening.text == "(":
            return FUNCTIONS[word].format(body)
        return f"{self._word(word)}{opening.text}{body}{closing.text}"

    def _integral(self, inner: list[_Token], sign: str) -> str:
        integrand, _, limits = _split_first_argument(inner)
        limits = [t for t in limits if t.kind != "space"]
        if len(limits) == 1 and limits[0].kind == "group" and limits[0].parts[0] is None:
            variable, _, rest = _split_first_argument(limits[0].parts[2])
            lower, _, upper = _split_first_argument(rest)
            v = self._math(variable)
            if sign == r"\sum":
                return rf"\sum_{{{v}={self._math(lower)}}}^{{{self._math(upper)}}} " \
                       + self._math(integrand)
            return rf"\int_{{{self._math(lower)}}}^{{{self._math(upper)}}} " \
                   rf"{self._math(integrand)} \, \mathrm{{d}}{v}"
        return rf"{sign} {self._math(integrand)}"

    def _word(self, word: str) -> str:
        primes = word[len(word.rstrip("'")):]
        base = word.rstrip("'")
        if base.startswith("_") and len(base) > 1:
            base = base[1:]
        if primes and "_" in base:
            head, _, subscript = base.partition("_")
            return f"{self._name(head)}_{{{self._subscript(subscript)}{primes}}}"
        return self._name(base) + primes

    def _name(self, base: str) -> str:
        if base in self.names:
            return self.names[base]
        if base in CONSTANTS:
            return CONSTANTS[base]
        if base in GREEK:
            return GREEK[base]
        if base in OPERATOR_WORDS:
            return OPERATOR_WORDS[base] + " "
        if base in FUNCTIONS and len(base) > 1:
            return rf"\operatorname{{{base}}}"
        match = re.fullmatch(r"([A-Za-z]+)(\d+)", base)
        if match:
            return f"{self._name(match.group(1))}_{{{match.group(2)}}}"
        if "_" in base:
            head, _, subscript = base.partition("_")
            return f"{self._name(head)}_{{{self._subscript(subscript)}}}"
        if base.startswith("d") and len(base) > 1 and (
                base[1:] in self.names or base[1:] in GREEK or base[1:] in DIFFERENTIAL_LETTERS):
            return r"\mathrm{d}" + self._name(base[1:])
        if len(base) == 1:
            return base
        return rf"\mathit{{{base}}}"

    def _subscript(self, text: str) -> str:
        """``mumu`` -> ``\\mu \\mu`` (a run of parameter or Greek names), ``a_a`` -> ``a a``,
        ``ij`` -> ``ij``, ``GDP`` -> ``\\mathrm{GDP}``, ``1`` -> ``1``."""
        if "_" in text:
            return " ".join(self._subscript(part) for part in text.split("_") if part)
        if re.fullmatch(r"\d+|[A-Za-z]", text):
            return text
        names = sorted(set(self.names) | set(GREEK), key=len, reverse=True)
        pieces, rest = [], text
        while rest:
            head = next((n for n in names if rest.startswith(n)), None)
            if head is None:
                break
            pieces.append(self._name(head))
            rest = rest[len(head):]
        if not rest and pieces:
            return " ".join(pieces)
        if re.fullmatch(r"[a-z]{2,3}", text):
            return text  # indices: g_ij
        return rf"\mathrm{{{self.escape(text)}}}"


def _touches_operator(tokens: list[_Token], index: int) -> bool:
    """Whether an operator stands next to ``tokens[index]`` (a space between allowed)."""
    for step in (-1, 1):
        neighbour = index + step
        if 0 <= neighbour < len(tokens) and tokens[neighbour].kind == "space":
            neighbour += step
        if 0 <= neighbour < len(tokens) and tokens[neighbour].kind == "op" and \
                tokens[neighbour].text not in ("|", "!"):
            return True
    return False


def _after_space(tokens: list[_Token], index: int) -> _Token | None:
    """The token after ``tokens[index]`` and one space, if a space follows it."""
    if index + 2 < len(tokens) and tokens[index + 1].kind == "space":
        return tokens[index + 2]
    return None


def _scripts_after_calls(tokens: list[_Token]) -> list[_Token]:
    """``sinh²(u)`` as ``sinh(u)²``: a superscript between a function's name and its
    parenthesis moves after the parenthesis, so that the call is one group."""
    tokens = list(tokens)
    index = 0
    while index + 2 < len(tokens):
        name, script, opening = tokens[index:index + 3]
        if name.kind == "word" and name.text in FUNCTIONS and script.kind == "unicode" and \
                script.text in SCRIPTS and opening.kind == "open" and opening.text == "(":
            end = Prose._matching(tokens, index + 2)
            if end is not None:
                tokens[index:end + 1] = [name] + tokens[index + 2:end + 1] + [script]
        index += 1
    return tokens


def _product_sign(tokens, index) -> str:
    before = tokens[index - 1] if index else None
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    if before is not None and after is not None and before.kind == "number" and \
            after.kind == "number":
        return r" \cdot "
    return " "


def _split_first_argument(tokens: list[_Token]):
    """``(first, comma, rest)``: the tokens before the first top-level comma and after it."""
    for index, token in enumerate(tokens):
        if token.kind == "comma":
            return tokens[:index], token, tokens[index + 1:]
    return tokens, None, []


def _tidy(text: str) -> str:
    text = re.sub(r" {2,}", " ", text)
    return text.strip()


def sentence(latex: str) -> str:
    """A converted text as a sentence: an initial lowercase word capitalized, a full stop
    at the end (unless it ends with a colon: a display follows)."""
    if latex[:1].islower():
        latex = latex[0].upper() + latex[1:]
    if latex and not latex.rstrip().endswith((".", "?", "!", ":")):
        latex = latex.rstrip() + "."
    return latex


def title_latex(text: str, names: dict[str, str]) -> str:
    """A user-written title, escaped, with the family's parameter names that stand as words
    typeset as its symbols (``mean direction mu`` -> ``mean direction $\\mu$``): names that
    print as a Greek letter or another symbol, and single letters that are not English
    words. The PDF bookmark keeps the plain name."""
    pieces = []
    for match in re.finditer(r"[A-Za-z][A-Za-z0-9_]*|[^A-Za-z]+", text):
        word = match.group(0)
        symbol = names.get(word)
        if symbol is None and GREEK.get(word) in names.values():
            symbol = GREEK[word]  # "rate lambda" for a parameter lam printed as lambda
        if symbol is not None and (symbol != word or (len(word) == 1
                                                        and word not in ENGLISH_LETTERS)):
            pieces.append(rf"\texorpdfstring{{${symbol}$}}{{{tex_text(word)}}}")
        else:
            pieces.append(tex_text(word))
    return "".join(pieces)


@dataclass(frozen=True)
class Citation:
    """One reference of a derivation file: ``Soto (2025), Example 1`` is the work
    ``Soto (2025)`` (key ``soto2025``) at ``Example 1``."""

    key: str
    work: str      # LaTeX: authors and year, as the bibliography lists it
    locator: str   # LaTeX: "Example 1", or ""


_REFERENCE = re.compile(r"^(?P<authors>[^()]+?)\s*\((?P<year>\d{4}[a-z]?)\)\s*(?:,\s*(?P<at>.+))?$")


def citations(reference: str) -> list[Citation | str]:
    """The references of a ``reference`` field, split at ``;``: a :class:`Citation` for each
    that reads ``Authors (Year)[, where]``, the escaped text for any other."""
    found: list[Citation | str] = []
    for part in (p.strip() for p in reference.split(";")):
        if not part:
            continue
        match = _REFERENCE.match(part)
        if match is None:
            found.append(tex_text(part))
            continue
        authors = match.group("authors").strip()
        plain = unicodedata.normalize("NFD", authors).lower()
        key = "ref:" + re.sub(r"[^a-z]", "", plain) + match.group("year")
        found.append(Citation(key, tex_text(f"{authors} ({match.group('year')})"),
                              tex_text(match.group("at") or "")))
    return found
