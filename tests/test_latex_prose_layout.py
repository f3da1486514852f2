"""The LaTeX backend's line breaking and prose, on expressions and sentences made up here.

Line breaking (raosym/emit/latex/layout.py) must only lay out: the rows, with the alignment
and the sized delimiters removed, print the same expression. Prose (prose.py) must set the
engine's formulas in math mode and leave words alone. Both are compiled by pdflatex here and
measured by TeX itself, not by the estimate they use.
"""

from __future__ import annotations

import re

import pytest
import sympy

from raosym.emit.latex.layout import (
    DISPLAY_WIDTH,
    EQUATION_GAP,
    display_rows,
    side_by_side,
    visible_width,
)
from raosym.emit.latex.printer import ProofPrinter
from raosym.emit.latex.prose import Prose, citations, title_latex
from raosym.gate.pdf import compile_tex

X, MU, SIGMA, NU = sympy.symbols("x mu sigma nu", positive=True)


class _Parameter:
    def __init__(self, name):
        self.name = name
        self.symbol = sympy.Symbol(name)


class _Spec:
    """The two attributes of a FamilySpec that the printer reads."""

    def __init__(self, names=("mu", "sigma")):
        self.parameters = tuple(_Parameter(n) for n in names)
        self.coordinates = self.parameters


@pytest.fixture
def printer():
    return ProofPrinter(_Spec())


def _flatten(rows: list[str]) -> str:
    """The rows as one expression again: alignment, row ends, indentation, sizes removed."""
    text = " ".join(rows)
    for token in ("&", r"\\", r"\quad", r"\times"):
        text = text.replace(token, " ")
    text = re.sub(r"\\(?:bigg|Big)[lr]", "", text)
    return re.sub(r"\s+", "", text)


def _long_sum():
    return sympy.Add(*[sympy.log(1 + X**k / SIGMA**2) * sympy.exp(-MU * k) / (k + 1)
                       for k in range(1, 25)])


def test_a_long_sum_is_cut_between_its_terms(printer):
    expr = _long_sum()
    rows = display_rows(sympy.Symbol("S"), expr, printer)
    assert len(rows) > 3
    assert all(visible_width(row.replace("&", "")) <= DISPLAY_WIDTH + 6 for row in rows)
    assert rows[0].startswith("S &= ")
    # the same terms in the same order: only the layout changed
    assert _flatten(rows) == re.sub(r"\s+", "", "S=" + printer.doprint(expr))


def test_a_long_left_side_gets_rows_of_its_own(printer):
    """A long left side never becomes an alignment column that pushes the right side off."""
    lhs = sympy.Integral(_long_sum(), (X, 0, sympy.oo))
    rows = display_rows(lhs, sympy.Integer(2), printer)
    assert all(row.lstrip().startswith("&") for row in rows)
    assert rows[-1].startswith("&= 2")
    assert r"\biggl(" in rows[0] and any(r"\biggr)" in row for row in rows)


def test_a_short_display_is_one_row(printer):
    assert display_rows(sympy.Symbol("K"), -sympy.Rational(1, 2), printer) == [
        r"K &= - \frac{1}{2}"]


def test_a_long_quotient_keeps_its_value(printer):
    expr = _long_sum() / (1 + NU**2)
    rows = display_rows("", expr, printer)
    assert len(rows) > 1
    assert rows[0].startswith(r"& \frac{1}{\nu^{2} + 1}")


def _column_widths(rows: list[str]) -> list[float]:
    """The width of each equation column of an align* (the widest entry of any row)."""
    widths: list[float] = []
    for row in rows:
        for column, entry in enumerate(row.split(" & ")):
            needed = visible_width(entry.replace("&", ""))
            if column == len(widths):
                widths.append(needed)
            widths[column] = max(widths[column], needed)
    return widths


def test_short_equations_share_rows_and_long_ones_keep_theirs(printer):
    """Side by side, the rows still hold every equation once, in order; an equation of
    several rows is not packed; and the columns, which align* aligns across rows, fit the
    line together (a long equation widens the first column of every row of its display)."""
    short = [display_rows(sympy.Symbol(f"T_{k}"), X**k, printer) for k in range(1, 8)]
    long = display_rows(sympy.Symbol("S"), _long_sum(), printer)
    assert any(r.count("&=") > 1 for r in side_by_side(short))
    for equations in (short, [*short[:4], long, *short[4:]]):
        rows = side_by_side(equations)
        widths = _column_widths(rows)
        assert sum(widths) + EQUATION_GAP * (len(widths) - 1) <= DISPLAY_WIDTH
        assert _flatten(rows) == _flatten([row for eq in equations for row in eq])
    assert rows[rows.index(long[0]):rows.index(long[0]) + len(long)] == long


def test_broken_displays_fit_the_page_as_typeset(printer, tmp_path):
    """pdflatex measures the rows: no line of a broken display is wider than the page."""
    displays = [display_rows(sympy.Symbol("S"), _long_sum(), printer),
                display_rows(sympy.Integral(_long_sum(), (X, 0, sympy.oo)),
                             sympy.exp(_long_sum()), printer),
                display_rows("", sympy.sqrt(_long_sum()) * sympy.log(_long_sum()), printer),
                side_by_side([display_rows(sympy.Symbol(f"A_{k}"), sympy.exp(MU * k) / SIGMA**k,
                                           printer) for k in range(1, 12)])]
    body = "\n".join(r"\begin{align*}" + "\\\\\n".join(rows) + r"\end{align*}"
                     for rows in displays)
    (tmp_path / "rows.tex").write_text(
        "\\documentclass{article}\n\\usepackage[letterpaper, margin=1in]{geometry}\n"
        "\\usepackage{amsmath}\n\\allowdisplaybreaks\n\\begin{document}\n\\begin{enumerate}\n"
        "\\item x\n" + body + "\n\\end{enumerate}\n\\end{document}\n")
    result = compile_tex(tmp_path, "rows.tex")
    assert result.ok, result.errors
    log = (tmp_path / "rows.log").read_text()
    widths = [float(w) for w in re.findall(r"Overfull \\hbox \(([\d.]+)pt", log)]
    assert not [w for w in widths if w > 1.0], widths


# ----------------------------------------------------------------------------- prose


@pytest.fixture
def prose():
    return Prose({"mu": r"\mu", "s": "s", "nu": r"\nu", "lam": r"\lambda"})


def test_formulas_are_set_in_math_and_words_stay_words(prose):
    text = prose.latex("substitute x = mu + s*t, dx = s dt; the family is a location-scale "
                       "family, so the parameters leave the integrand")
    assert text.startswith(r"substitute $x = \mu + s t$, $\mathrm{d}x = s \mathrm{d}t$; the")
    assert "location-scale family" in text and "$" not in text.split(";")[1]


def test_english_a_is_not_a_symbol_but_a_with_an_operator_is(prose):
    assert prose.latex("a function of theta") == r"a function of $\theta$"
    assert prose.latex("here a = 3/2 > 0") == "here $a = 3/2 > 0$"


def test_a_shared_relation_keeps_its_variables_together(prose):
    assert prose.latex("for 0 < x, y < 1") == "for $0 < x, y < 1$"
    assert prose.latex("x = 1, y = 2") == "$x = 1$, $y = 2$"


def test_sympy_syntax_becomes_notation(prose):
    text = prose.latex("Integral(u**(s - 1)*exp(-u), (u, 0, oo)) = gamma(s) for s > 0")
    assert text == (r"$\int_{0}^{\infty} u^{s - 1} e^{-u} \, \mathrm{d}u = \Gamma(s)$ "
                    "for $s > 0$")
    assert prose.latex("polygamma(1, nu/2)") == r"$\psi^{(1)}(\nu/2)$"
    # Bessel functions with the order as a subscript, as the displays print them
    assert prose.latex("b = -besseli(1, nu)/besseli(0, nu)") == \
        r"$b = -I_{1}(\nu)/I_{0}(\nu)$"
    assert prose.latex("`Γ'(z) = Γ(z) psi(z)`") == r"$\Gamma '(z) = \Gamma (z) \psi(z)$"
    # an inverse function opening a sentence stays mathematics (never "Acosh u")
    assert prose.latex("acosh u = log(u + 1)").startswith(r"$\operatorname{acosh} u")
    assert prose.latex("sqrt(g) |mu_1 - mu_2|") == r"$\sqrt{g} \lvert \mu_{1} - \mu_{2} \rvert$"
    assert prose.latex("the rate lam") == r"the rate $\lambda$"
    assert prose.latex("an auxiliary exponent beta") == r"an auxiliary exponent $\beta$"
    assert prose.latex("and sin^2 t = 1 - cos^2 t") == r"and $\sin ^{2} t = 1 - \cos ^{2} t$"


def test_references_and_possessives_stay_text(prose):
    assert prose.latex("Soto (2025): the family's Rao distance") == \
        "Soto (2025): the family's Rao distance"
    assert prose.latex("Euler's Beta integral, i.e. the gamma functions") == \
        "Euler's Beta integral, i.e. the gamma functions"


def test_hyphenated_symbols(prose):
    # epsilon is \varepsilon, the letter of the appendix's own (epsilon, delta)-DP text
    assert prose.latex("theta-Rao-DP and epsilon-DP") == r"$\theta$-Rao-DP and $\varepsilon$-DP"
    assert prose.latex("the (epsilon, delta)-DP mechanism") == \
        r"the $(\varepsilon, \delta)$-DP mechanism"


def test_no_code_token_survives_and_everything_compiles(prose, tmp_path):
    sentences = [
        "differentiating gives sqrt(g) back (SymPy simplify, p = _w/(_w + 1) with _w > 0)",
        ("Partial fractions in q: A/(1 - r*q)**m = Sum(A*binomial(n + m - 1, m - 1)*r**n*q**n, "
        "(n, 0, oo)) for |q| < 1 and r = +1 or -1"),
        "`E[s_i s_j] = -E[∂_i ∂_j log f] = ∂_i ∂_j A - Σ_a (∂_i ∂_j eta_a) E[T_a]`",
        "k = s sqrt(g_mumu), and Abs(x) >= 0 as 5% of {braces} & #specials ~ ^ $",
        ("acosh(1 + 2z) = 2·asinh(√z) for z ≥ 0, because cosh(2·asinh √z) = 1 + 2·sinh²(asinh "
        "√z) = 1 + 2z"),
    ]
    converted = [prose.latex(s) for s in sentences]
    for text in converted:
        plain = re.sub(r"\\texttt\{[^}]*\}", "", text)
        for token in ("**", "sqrt(", "Abs(", "_w", "mumu", "oo)", "Sum("):
            assert token not in plain, (token, text)
    (tmp_path / "prose.tex").write_text(
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\usepackage{amssymb}\n"
        "\\begin{document}\n" + "\n\n".join(converted) + "\n\\end{document}\n")
    result = compile_tex(tmp_path, "prose.tex")
    assert result.ok, result.errors


def test_titles_typeset_parameter_names_only():
    names = {"mu": r"\mu", "kappa": r"\kappa", "a": "a", "lam": r"\lambda", "n": "n"}
    title = title_latex("von Mises (mean direction mu, concentration kappa) a_b & rate lambda",
                        names)
    assert r"\texorpdfstring{$\mu$}{mu}" in title and r"\texorpdfstring{$\kappa$}{kappa}" in title
    assert r"\texorpdfstring{$\lambda$}{lambda}" in title  # the Greek name of lam
    assert "a\\_b" in title and "\\&" in title and "$a$" not in title
    assert title_latex("Binomial (n trials)", names) == \
        r"Binomial (\texorpdfstring{$n$}{n} trials)"


def test_references_are_split_into_citations():
    first, second = citations("Soto (2025), Example 1; Amari (1985)")
    assert (first.key, first.work, first.locator) == ("ref:soto2025", "Soto (2025)", "Example 1")
    assert (second.key, second.locator) == ("ref:amari1985", "")
    (other,) = citations("lecture notes & more")
    assert other == r"lecture notes \& more"
    assert citations("van Erven and Harremoës (2014)")[0].key == \
        "ref:vanervenandharremoes2014"


# ----------------------------------------------------------------------------- forms a reader writes


def test_square_roots_of_positive_factors_share_one_root(printer):
    # sqrt(a) sqrt(b) = sqrt(ab) for a, b >= 0: the positive symbols join
    assert printer.doprint(1 / (sympy.sqrt(MU) * sympy.sqrt(SIGMA))) == \
        r"\frac{1}{\sqrt{\mu \sigma}}"
    assert printer.doprint(sympy.sqrt(2) * sympy.sqrt(NU)) == r"\sqrt{2 \nu}"
    # ... but not for a base of unknown sign: sqrt(-1) sqrt(-1) = -1, sqrt((-1)(-1)) = 1
    y = sympy.Symbol("y", real=True)
    assert printer.doprint(sympy.sqrt(y) * sympy.sqrt(y - 1)) == r"\sqrt{y} \sqrt{y - 1}"


def test_roots_join_where_the_declared_domain_makes_the_bases_positive():
    from raosym.spec.schema import load_spec

    spec = load_spec("derivations/bernoulli.toml")
    p = spec.parameters[0].symbol  # p in (0, 1): p and 1 - p are positive
    bernoulli = ProofPrinter(spec)
    assert bernoulli.doprint(1 / (sympy.sqrt(p) * sympy.sqrt(1 - p))) == \
        r"\frac{1}{\sqrt{p \left(1 - p\right)}}"
    p_1, p_2 = sympy.symbols("p_1 p_2")  # two points of the family
    assert bernoulli.doprint(sympy.sqrt(p_1) * sympy.sqrt(p_2)) == r"\sqrt{p_{1} p_{2}}"


def test_an_integral_stands_after_its_coefficient_not_above_a_bar(printer):
    t = sympy.Symbol("t")
    integral = sympy.Integral(sympy.exp(-t**2), (t, -sympy.oo, sympy.oo))
    text = printer.doprint(4 * (NU / 2 + sympy.S.Half)**2 * integral / (MU * SIGMA**2))
    # the coefficient in its factored form ((nu + 1)^2, not 4 ((nu + 1)/2)^2), then the integral
    assert text.startswith(r"\frac{\left(\nu + 1\right)^{2}}{\mu \sigma^{2}} \int")
    assert r"\frac{\int" not in text


def test_factors_built_one_by_one_are_juxtaposed_except_before_a_number(printer):
    product = sympy.Mul(MU / SIGMA**2, X, evaluate=False)
    assert printer.doprint(product) == r"\frac{\mu}{\sigma^{2}} x"
    assert printer.doprint(sympy.Mul(1 / (2 * SIGMA**2), 2, evaluate=False)) == \
        r"\frac{1}{2 \sigma^{2}} \cdot 2"


def test_a_product_of_differentials_is_spaced_in_coordinate_order():
    spec = _Spec(("sigma", "mu"))
    d_mu, d_sigma = sympy.symbols("dmu dsigma")
    assert ProofPrinter(spec).doprint(d_mu * d_sigma) == r"\mathrm{d}\sigma \, \mathrm{d}\mu"


def test_logarithms_of_positive_numbers_are_one_logarithm(printer):
    # log 2 + log pi = log(2 pi) (both positive); (log 2 + log pi)/2 as the Gaussian's log h
    assert printer.doprint(sympy.log(2) + sympy.log(sympy.pi)) == r"\log{\left(2 \pi \right)}"
    assert printer.doprint(-(sympy.log(2) + sympy.log(sympy.pi)) / 2) == \
        r"- \frac{\log{\left(2 \pi \right)}}{2}"
    # a logarithm of a symbol keeps its own term
    assert r"\log{\left(2 \right)}" in printer.doprint(sympy.log(2) + sympy.log(SIGMA))


def test_an_exponent_over_a_symbolic_denominator_is_one_fraction(printer):
    u, n = sympy.symbols("u N", positive=True)
    # u^((2N - 1)/N - 1) = u^((N - 1)/N)
    assert printer.doprint(u**((2 * n - 1) / n - 1)) == r"u^{\frac{N - 1}{N}}"
    # nothing shorter: kept as it is
    assert printer.doprint(u**(1 - 1 / n)) == r"u^{1 - \frac{1}{N}}"


def test_a_root_of_a_number_over_its_multiple_goes_below_the_bar(printer):
    # sqrt(2)/(2 sqrt(nu) sqrt(mu)) = 1/sqrt(2 nu mu)
    assert printer.doprint(1 / (sympy.sqrt(2 * NU) * sympy.sqrt(MU))) == \
        r"\frac{1}{\sqrt{2 \mu \nu}}"


def test_an_exponent_is_multiplied_out_only_where_that_is_shorter(printer):
    a, delta, b = sympy.symbols("a Delta b", positive=True)
    # the kinks resolved: a (Delta - x) + x (a + 1) = a Delta + x
    assert printer.doprint(sympy.exp((a * (delta - X) + X * (a + 1)) / b)) == \
        r"e^{\frac{\Delta a + x}{b}}"
    # a Gaussian's square stays a square
    assert printer.doprint(sympy.exp(-(X - MU)**2 / (2 * SIGMA**2))) == \
        r"e^{- \frac{\left(x - \mu\right)^{2}}{2 \sigma^{2}}}"


def test_the_log_density_is_written_log_f(printer):
    f = sympy.Function("f")
    assert printer.doprint(sympy.log(f(X))) == r"\log f{\left(x \right)}"
    assert printer.doprint(sympy.log(X)) == r"\log{\left(x \right)}"
