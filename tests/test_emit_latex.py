"""The LaTeX backend: sections and appendix compile, and the proofs are the engine's steps.

Compiling needs pdflatex. CI installs TeX Live (.ci/run), so a missing pdflatex fails these
tests rather than skipping them.
"""

from __future__ import annotations

import re
import shutil
import string

import jinja2
import pytest
from conftest import family_names, verified

from raosym.derive.steps import PERIOD_STRATEGY
from raosym.emit.latex import HALF_PLANE_STRATEGIES, TEMPLATES, family_printers, render
from raosym.emit.latex.printer import ProofPrinter, tex_text
from raosym.emit.latex.prose import sentence
from raosym.emit.render import environment
from raosym.gate.pdf import compile_section, compile_tex

FAMILIES = family_names()


def test_pdflatex_is_installed():
    assert shutil.which("pdflatex"), "pdflatex is missing: install texlive-latex-base and " \
                                     "texlive-latex-recommended (CI does, in .ci/run)"


@pytest.mark.parametrize("name", FAMILIES)
def test_section_compiles_alone(generated_tree, name):
    result = compile_section(generated_tree / "latex", name)
    assert result.ok, result.errors


def test_appendix_compiles_and_includes_every_family(generated_tree, tmp_path):
    latex = generated_tree / "latex"
    appendix = (latex / "appendix.tex").read_text()
    inputs = [line[len("\\input{"):-1] for line in appendix.splitlines()
              if line.startswith("\\input{")]
    assert inputs == FAMILIES  # every family, sorted
    for source in latex.glob("*.tex"):
        shutil.copy(source, tmp_path / source.name)
    result = compile_tex(tmp_path, "appendix.tex", settle=True)
    assert result.ok, result.errors
    assert result.pdf.stat().st_size > 10_000


@pytest.mark.parametrize("name", FAMILIES)
def test_proofs_are_the_recorded_steps_in_order(catalog, generated_tree, name):
    """Every displayed step is one the engine recorded, shared steps shown once, in order."""
    family = verified(catalog, name)
    derivation = family.derivation
    printer, distance_printer = family_printers(family)
    prose, distance_prose = printer.prose, distance_printer.prose
    text = (generated_tree / "latex" / f"{name}.tex").read_text()
    items = [line[len("\\item "):] for line in text.splitlines() if line.startswith("\\item ")]
    entries = derivation.entries
    shared = 0
    if len(entries) > 1:
        while all(shared < len(e.steps) - 1 and e.steps[shared] == entries[0].steps[shared]
                  for e in entries):
            shared += 1
    # a rewrite whose result prints like its input changed nothing, and is not shown; nor is
    # one that only multiplies out a rational function
    def unchanged(step):
        if step.strategy not in ("stable form", "Euler integral") or step.also:
            return False
        if len({printer.doprint(side) for side in (step.lhs, *step.chain, step.rhs)}) == 1:
            return True
        import sympy

        return (not step.chain and step.lhs is not None
                and all(not side.atoms(sympy.Function) and side.is_rational_function()
                        for side in (step.lhs, step.rhs))
                and sympy.simplify(step.lhs - step.rhs) == 0)

    def renaming(step):  # only a bound variable renamed: not a step
        return (step.lhs is not None and not step.chain and not step.also
                and step.lhs != step.rhs and step.lhs.as_dummy() == step.rhs.as_dummy())

    def claims(steps):
        """The claims shown, as sentences: a definition whose display the next step
        continues opens that step's display instead of being a step of its own, and a step
        whose left-hand side prints as the right-hand side the step before ended with is the
        next equality of that step's display, its claim joined to that step's by "then"."""
        shown = [step for step in steps if not unchanged(step) and not renaming(step)]
        out, before = [], None
        for step in shown:
            claim = sentence(prose.latex(step.claim))
            # the same to a reader: printed alike, or alike but for a bound variable's name
            continues = (before is not None and step.lhs is not None
                         and (printer.doprint(step.lhs) == printer.doprint(before.rhs)
                              or step.lhs.as_dummy() == before.rhs.as_dummy()))
            printed = {printer.doprint(side)
                       for side in (step.lhs, *step.chain, step.rhs) if side is not None}
            shows = step.lhs is None or len(printed) > 1 or bool(step.also)
            if continues and before.strategy == "definition" and before.lhs is not None:
                out[-1] = claim
            elif continues and shows:
                # (a first word in capitals, a name such as KL, keeps them)
                later = claim if claim[1:2].isupper() else claim[0].lower() + claim[1:]
                out[-1] = out[-1].rstrip(".:") + "; then " + later
            else:
                out.append(claim)
            ends_with_result = not step.also and (step.lhs is None or len(printed) > 1)
            before = step if ends_with_result else None
        return out

    expected = [sentence(prose.latex(s.claim)) for s in entries[0].steps[:shared]]
    for entry in entries:
        expected += claims(entry.steps[shared:])
    expected += [sentence(prose.latex(step.claim)) for step in derivation.geometry.steps]
    if derivation.distance is not None:  # a numeric distance shows its periods' steps only
        expected += [sentence((distance_prose if step.strategy in HALF_PLANE_STRATEGIES
                               else prose).latex(step.claim))
                     for step in derivation.distance.steps
                     if derivation.distance.closed or step.strategy == PERIOD_STRATEGY]
    if derivation.mechanism is not None:  # the privacy-accounting subsection
        expected += claims(derivation.mechanism.steps)
    # the "Not delivered" list: what is unavailable, and why
    expected += [f"{tex_text(item.quantity)}: {prose.latex(item.reason)}"
                 for item in derivation.unavailable]
    assert items == expected
    for entry in entries:
        for step in entry.steps[shared:]:
            # (a merged step's justification continues after a semicolon: compare from the
            # second letter on, without the full stop)
            assert unchanged(step) or renaming(step) or sentence(
                prose.latex(step.justification))[1:].rstrip(".") in text


def test_exponential_family_steps_are_shared(generated_tree):
    text = (generated_tree / "latex" / "gamma.tex").read_text()
    assert text.count("exponential-family form") == 1
    # recognition, T/eta/A, first derivatives, the means (solved for together), second
    # derivatives
    assert text.count("Steps 1--5 above, then:") == 3


def test_line_element_symbol_differs_from_a_coordinate_differential(generated_tree):
    logistic = (generated_tree / "latex" / "logistic.tex").read_text()
    line = next(line for line in logistic.splitlines() if r"\mathrm{d}\ell^{2} &=" in line)
    # s is a coordinate: ds is its differential, on the right-hand side only.
    assert r"\mathrm{d}s^{2}" in line and r"\mathrm{d}\ell" not in line.split("&=")[1]
    gaussian = (generated_tree / "latex" / "gaussian.tex").read_text()
    assert r"\mathrm{d}s^{2} &=" in gaussian


def test_verification_remark(catalog, generated_tree):
    family = verified(catalog, "laplace")
    text = (generated_tree / "latex" / "laplace.tex").read_text()
    assert f"{len(family.checks)} checks at" in text
    assert f"agreed to at least {family.min_digits:g} digits" in text


@pytest.mark.parametrize("name", FAMILIES)
def test_distance_subsection(catalog, generated_tree, name):
    """The Rao distance: line element, structure, both forms with the steps proving them
    equal, and the numeric geodesic check; or, without a closed form, the reason."""
    family = verified(catalog, name)
    derivation = family.derivation
    distance = derivation.distance
    printers = family_printers(family)
    prose = printers[0].prose
    text = (generated_tree / "latex" / f"{name}.tex").read_text()
    if distance is None:  # not derived: the section says so, with the reason
        (item,) = [u for u in derivation.unavailable if u.quantity == "Rao distance"]
        assert r"\paragraph{Not delivered.}" in text and prose.latex(item.reason) in text
        return
    section = text[text.index(r"\subsection*{Rao distance}"):]
    section = section[:section.index("[Numeric verification]")]
    # a line without a closed distance is checked by quadratures of its integral
    arc_length = not distance.closed and len(derivation.spec.coordinates) == 1
    assert ("[Numeric check]" if arc_length else "[Numeric geodesic check]") in section
    assert r"\texttt{rao\_distance} computes at" in section
    if distance.closed:
        from raosym.emit.latex.distance import STRUCTURES

        # the structure named as a noun phrase ("a one-coordinate manifold")
        assert prose.latex(STRUCTURES[distance.structure]) in section
        assert "d(P_1, P_2)" in section
        strategies = [step.strategy for step in distance.steps]
        assert "stable form" in strategies and strategies.count("distance") >= 1
        for step in distance.steps:
            chosen = printers[1] if step.strategy in HALF_PLANE_STRATEGIES else printers[0]
            assert sentence(chosen.prose.latex(step.justification)) in section
    else:
        # the structures tried, each with why it does not apply, said as mathematics
        if derivation.geometry.christoffel is None:  # a metric known only numerically
            assert "is computed numerically, as stated above" in section
        else:
            tried = distance.reason.split(". ")[0].removeprefix("no closed form recognized: ")
            assert f"it is {prose.latex(tried)}." in section
        if arc_length:  # the integral the distance is, displayed
            assert r"d(P_1, P_2) = \left|{\int\limits_" in section
        else:
            assert "no closed-form solution known to the derivation" in section
        assert "relative tolerance" in section


def test_unicode_of_the_proof_steps_compiles(tmp_path):
    from raosym.emit.latex.printer import UNICODE_TEXT

    text = tex_text("".join(UNICODE_TEXT) + " Poincaré")
    assert all(character not in text for character in UNICODE_TEXT)
    (tmp_path / "unicode.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\texttt{" + text
        + "}\n\\end{document}\n")
    result = compile_tex(tmp_path, "unicode.tex")
    assert result.ok, result.errors


def test_plain_text_is_escaped(tmp_path):
    every_character = string.printable.replace("\x0b", "").replace("\x0c", "")
    escaped = tex_text(every_character)
    for special in "\\{}$&%#_^~<>|":
        assert special in every_character
    (tmp_path / "escape.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n" + escaped + "\n\n\\texttt{"
        + escaped.replace("\n", " ") + "}\n\\end{document}\n")
    result = compile_tex(tmp_path, "escape.tex")
    assert result.ok, result.errors


def test_templates_are_strict():
    template = environment(TEMPLATES, latex=True).from_string(r"\section{\VAR{title}}")
    assert template.render(title="x") == r"\section{x}"
    with pytest.raises(jinja2.UndefinedError):
        template.render()


def test_render_is_deterministic(catalog):
    family = verified(catalog, "cauchy")
    assert render(family) == render(family)


# ------------------------------------------------------------------- proofs that compute (issue 11)


def _exponential_families(catalog):
    return [name for name in FAMILIES
            if {e.strategy for e in verified(catalog, name).derivation.entries}
            == {"exponential family"}]


def test_exponential_family_proofs_show_t_eta_a_and_the_hessian(catalog, generated_tree):
    """The recorded T, eta and A reproduce log f (up to a term free of the coordinates), the
    recorded means solve J^T E[T] = grad A, and each entry is the Hessian of A less the
    second derivatives of eta weighted by the means: all checked here with SymPy, and every
    one of those objects is displayed in the section."""
    import sympy

    names = _exponential_families(catalog)
    assert {"gaussian", "gamma", "bernoulli", "poisson"} <= set(names)
    for name in names:
        family = verified(catalog, name)
        derivation, spec = family.derivation, family.derivation.spec
        printer = family_printers(family)[0]
        text = (generated_tree / "latex" / f"{name}.tex").read_text()
        steps = derivation.entries[0].steps
        read_off = next(s for s in steps if s.also and s.lhs.func.__name__.startswith("T"))
        pairs = [(read_off.lhs, read_off.rhs), *read_off.also]
        statistics = [rhs for lhs, rhs in pairs if lhs.func.__name__.startswith("T")]
        eta = [rhs for lhs, rhs in pairs if lhs.func.__name__.startswith("eta")]
        (log_partition,) = [rhs for lhs, rhs in pairs if lhs.func.__name__ == "A"]
        coordinates = spec.coordinate_symbols
        log_f = sympy.expand_log(sympy.log(spec.density), force=True)
        # cancel() puts the bivariate normal's rational terms over one denominator, where
        # the coordinates' terms drop out (simplify() alone leaves them in).
        base = sympy.cancel(sympy.simplify(log_f - sum(e * t for e, t in zip(eta, statistics))
                                           + log_partition))
        assert not base.free_symbols & set(coordinates), (name, base)
        means = [rhs for s in steps for lhs, rhs in ((s.lhs, s.rhs), *s.also)
                 if lhs is not None and lhs.func.__name__ == "Expectation"]
        assert len(means) == len(statistics)
        for theta in coordinates:
            assert sympy.simplify(sum(sympy.diff(e, theta) * m for e, m in zip(eta, means))
                                  - sympy.diff(log_partition, theta)) == 0, (name, theta)
        for entry in derivation.entries:
            ti, tj = coordinates[entry.row], coordinates[entry.column]
            expected = sympy.diff(log_partition, ti, tj) - sum(
                sympy.diff(e, ti, tj) * m for e, m in zip(eta, means))
            assert sympy.simplify(expected - entry.value) == 0, (name, entry.row, entry.column)
        # A right side too long for one row (the bivariate normal's A) is continued on the
        # next rows of its align* (``\\`` then ``&\quad``): joined again here.
        joined = re.sub(r"\\\\\n\s*&(?:\\quad)+ ", " ", text)
        for lhs, rhs in pairs:
            assert printer.doprint(rhs) in joined, (name, lhs)
        assert r"\frac{\partial^{2} A}" in text or r"\frac{\mathrm{d}^{2} A}" in text, name


def test_every_fisher_proof_ends_at_the_value_it_states(catalog, generated_tree):
    """No proof does its last combination silently: the last displayed right-hand side of
    each closed entry's proof is the proposition's value (SymPy-equal, and printed alike), and
    the location-scale rung shows the integral's value times the substitution's factor."""

    for name in FAMILIES:
        family = verified(catalog, name)
        printer = family_printers(family)[0]
        text = (generated_tree / "latex" / f"{name}.tex").read_text()
        assert "Together these steps" not in text
        for entry in family.derivation.entries:
            if entry.value is None:
                continue
            last = entry.steps[-1]
            assert printer.doprint(last.rhs) == printer.doprint(entry.value), (name, entry)
            if entry.strategy == "location-scale":
                (product,) = last.chain or (last.rhs,)
                assert _equal(product.doit(), entry.value), name
                # displayed: whole, or (a long one, broken over rows) its factor
                shown = printer.doprint(product)
                assert (shown if len(shown) < 150 else printer.doprint(product.args[0])) in text


def test_euler_integrals_show_their_gamma_values_before_the_value(catalog, generated_tree):
    """Evaluating Euler's Gamma integrals is not done silently either: the display writes the
    sum of the terms' Gamma values (Laplace's g_bb: Γ(1) - 2Γ(2) + Γ(3)) and then the value,
    and the two are SymPy-equal."""
    import sympy

    shown = 0
    for name in FAMILIES:
        family = verified(catalog, name)
        printer = family_printers(family)[0]
        text = (generated_tree / "latex" / f"{name}.tex").read_text()
        for entry in family.derivation.entries:
            for step in entry.steps:
                if not step.claim.startswith("Evaluate the Euler integrals") or not step.chain:
                    continue
                (values,) = step.chain
                assert values.has(sympy.gamma) and _equal(values.doit(), step.rhs), (name, step)
                assert printer.doprint(values) in text, name
                shown += 1
    assert shown >= 5


def _equal(first, second) -> bool:
    """SymPy-equal: the difference simplifies to 0 (Gamma functions combined first), or, where
    simplify cannot show it, vanishes to 40 digits at three points with each symbol at a
    different positive rational (a nonzero difference of these special functions is not 0
    there)."""
    import sympy

    difference = first - second
    if sympy.simplify(sympy.gammasimp(difference)) == 0:
        return True
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    for shift in (0, 1, 2):
        values = {s: sympy.Rational(7 + 3 * k + shift, 5 + k) for k, s in enumerate(symbols)}
        if abs(sympy.N(difference.subs(values), 60)) > sympy.Float("1e-40"):
            return False
    return True


def test_notation_does_not_clash(catalog, generated_tree):
    """A scale called s: the scores are u_i; the half-plane coordinate is xi, never the
    family's variable x; a scale called theta: the point is vartheta, also under E."""
    logistic = (generated_tree / "latex" / "logistic.tex").read_text()
    note = "whose\n$s_i$ are written $u_i$ here because $s$ is a parameter"
    assert "$u_i = " in logistic and note in logistic
    logistic = logistic.replace(note, "")
    assert "s_i" not in logistic and "s_{i}" not in logistic
    gaussian = (generated_tree / "latex" / "gaussian.tex").read_text()
    distance = gaussian[gaussian.index(r"\subsection*{Rao distance}"):]
    half_plane = distance[distance.index("scaled Poincar"):]
    half_plane = half_plane[:half_plane.index(r"\item")]
    assert r"\xi" in half_plane and r"\mathrm{d}\xi" in half_plane
    assert "$x = " not in half_plane and r"\mathrm{d}x" not in half_plane
    gamma = (generated_tree / "latex" / "gamma.tex").read_text()
    assert r"\mathbb{E}_{\vartheta}" in gamma and r"\mathbb{E}_{\theta}" not in gamma
    appendix = (generated_tree / "latex" / "appendix.tex").read_text()
    lemmas = appendix[appendix.index("Location--scale reduction"):
                      appendix.index("Gamma and Beta integrals")]
    assert "(x; \\mu, \\sigma)" in lemmas and " s)" not in lemmas


def test_composition_is_checked_from_the_product_density(catalog, generated_tree):
    """The composition step's scores are the derivatives of the log of the product density
    (recomputed here), each free of the other release; the joint budget equals
    sqrt(theta_1^2 + theta_2^2) (checked here with SymPy)."""
    import sympy

    for name in FAMILIES:
        derivation = verified(catalog, name).derivation
        mechanism = derivation.mechanism
        if mechanism is None or mechanism.kind != "additive":
            continue
        spec, (scores, joint) = derivation.spec, [s for s in mechanism.steps
                                                  if s.strategy == "composition"]
        location = spec.mechanism.location.symbol
        scale = spec.mechanism.scale.symbol
        for (lhs, score), k in zip([(scores.lhs, scores.rhs), *scores.also], (1, 2)):
            other = 3 - k
            x_k, mu_k, s_k = (sympy.Symbol(f"{spec.variable}_{k}", real=True),
                              sympy.Symbol(f"{location}_{k}", real=True),
                              sympy.Symbol(f"{scale}_{k}", positive=True))
            mine = spec.density.subs({spec.variable: x_k, location: mu_k, scale: s_k},
                                     simultaneous=True)
            assert sympy.simplify(score - sympy.diff(sympy.log(mine), mu_k)) == 0, name
            assert not {str(s) for s in score.free_symbols} & {
                f"{spec.variable}_{other}", f"{location}_{other}", f"{scale}_{other}"}, name
        theta = mechanism.theta
        delta = spec.mechanism.sensitivity
        budgets = [theta.subs({scale: sympy.Symbol(f"{scale}_{k}", positive=True),
                               delta: sympy.Symbol(f"{delta}_{k}", positive=True)})
                   for k in (1, 2)]
        assert sympy.simplify(joint.rhs**2 - budgets[0]**2 - budgets[1]**2) == 0, name


def test_literature_forms_next_to_the_derived_ones(catalog, generated_tree):
    """Bernoulli's Fisher information as 1/(p(1-p)) and the Laplace mechanism's RDP curve in
    Mironov's collected form, each shown with the derived form and equal to it (SymPy)."""
    import sympy

    bernoulli = verified(catalog, "bernoulli").derivation
    p = bernoulli.spec.coordinate_symbols[0]
    assert sympy.simplify(bernoulli.entries[0].value - 1 / (p * (1 - p))) == 0
    text = (generated_tree / "latex" / "bernoulli.tex").read_text()
    assert r"= \frac{1}{p \left(1 - p\right)}" in text
    laplace = verified(catalog, "laplace_location").derivation
    curve = laplace.mechanism.renyi.textbook
    alpha = next(s for s in curve.free_symbols if s.name == "alpha")
    delta = next(s for s in curve.free_symbols if s.name == "Delta")
    b = next(s for s in curve.free_symbols if s.name == "b")
    # Mironov (2017), Table II: the argument of the logarithm of (alpha - 1) D_alpha
    mironov = (alpha / (2 * alpha - 1) * sympy.exp((alpha - 1) * delta / b)
               + (alpha - 1) / (2 * alpha - 1) * sympy.exp(-alpha * delta / b))
    derived = sympy.exp((alpha - 1) * curve)  # exp(log(A)) is A
    assert not derived.has(sympy.log)
    assert sympy.simplify(sympy.expand(derived - mironov)) == 0
    text = (generated_tree / "latex" / "laplace_location.tex").read_text()
    assert r"\frac{\alpha}{2 \alpha - 1} e^{\frac{\Delta \left(\alpha - 1\right)}{b}}" in text
    assert r"\frac{\alpha - 1}{2 \alpha - 1} e^{- \frac{\Delta \alpha}{b}}" in text


def test_comparison_has_dp_and_gdp_rows(generated_tree):
    """At Rao-DP budget 1 and sensitivity 1 the Gaussian mechanism has sigma = 1, RDP curve
    alpha/2: Mironov's conversion at delta = 1e-5 gives 1/2 + sqrt(2 log 1e5) (minimum at
    alpha - 1 = sqrt(2 log 1e5)) and it is exactly 1-GDP; Laplace noise is not mu-GDP-rated."""
    import mpmath

    text = (generated_tree / "latex" / "gaussian_location.tex").read_text()
    expected = mpmath.mpf(1) / 2 + mpmath.sqrt(2 * mpmath.log(mpmath.mpf(10) ** 5))
    table = text[text.index("Definitions compared"):]
    table = table[:table.index(r"\end{tabular}")]
    assert f"Prop.~3]{{ref:mironov2017}} & {mpmath.nstr(expected, 8)}" in table
    assert r"$\mu$-GDP $\mu$ & 1.0" in table
    laplace = (generated_tree / "latex" / "laplace_location.tex").read_text()
    assert r"$\mu$-GDP $\mu$ & -- \\" in laplace


@pytest.mark.parametrize("name", FAMILIES)
def test_no_doubled_signs(generated_tree, name):
    """A term of a sum that prints with its own minus sign is not given a second one: no
    "x - - y" (Gumbel's distance, randomized response's terms printed "- - (1 - p)")."""
    import re

    text = (generated_tree / "latex" / f"{name}.tex").read_text()
    assert not re.search(r"(?<![&=])[-+] +- ", text), re.search(r".{60}[-+] +- .{30}", text)


#: Words that name the program rather than the mathematics: a proof says which fact justifies
#: a step ("by the Gamma integral", "completing the square"), never which tool took it.
TOOL_WORDS = ("SymPy", "sympy", "gammasimp", "expand_func", "Risch", "Meijer")


def _all_steps(derivation):
    for entry in derivation.entries:
        yield from entry.steps
    yield from derivation.geometry.steps
    if derivation.distance is not None:
        yield from derivation.distance.steps
    if derivation.mechanism is not None:
        yield from derivation.mechanism.steps


def test_justifications_state_mathematics_not_tools(catalog):
    found = [(name, step.claim, step.justification) for name in FAMILIES
             for step in _all_steps(verified(catalog, name).derivation)
             if any(word in f"{step.claim} {step.justification}" for word in TOOL_WORDS)]
    assert not found, found[:10]


def test_rewrite_rules_are_cited_by_the_label_of_their_lemma():
    """A justification made of rewrite rules cites their labels (stated once, in the lemma of
    cancellation-free forms, whose items are the same statements); other parts stay prose."""
    from raosym.derive.divergence import RULES
    from raosym.emit.latex import RULE_LABELS, justification_latex, render_appendix
    from raosym.emit.latex.prose import Prose

    prose = Prose()
    text = justification_latex(f"{RULES[1]}; {RULES[2]}; {RULES[4]}", prose)
    assert text == (rf"Rules (\ref{{{RULE_LABELS[RULES[1]]}}}), (\ref{{{RULE_LABELS[RULES[2]]}}})"
                    rf" and (\ref{{{RULE_LABELS[RULES[4]]}}}).")
    mixed = justification_latex(f"{RULES[3]}; log(c*exp(x)) = log(c) + x", prose)
    assert mixed.startswith(rf"Rule (\ref{{{RULE_LABELS[RULES[3]]}}}); $\log(c e^{{x}})")
    appendix = render_appendix(["gaussian"])["latex/appendix.tex"]
    for statement, label in RULE_LABELS.items():
        assert rf"\item {prose.latex(statement)}.\label{{{label}}}" in appendix


@pytest.mark.parametrize("name", ["laplace", "student_t", "von_mises"])
def test_a_step_continues_the_chain_of_the_step_before(catalog, generated_tree, name):
    """Where a step's left-hand side is the result the display before it ended with, the
    chain goes on in that display (its next equality, with the step's justification
    introduced as that of the next equality) instead of printing that expression again or
    starting a display of its own at "=", which would have no left-hand side."""
    import itertools
    import re

    family = verified(catalog, name)
    printer = family_printers(family)[0]
    text = (generated_tree / "latex" / f"{name}.tex").read_text()

    def displays(step):
        sides = [printer.doprint(s) for s in (step.lhs, *step.chain, step.rhs) if s is not None]
        return len(set(sides)) > 1 or step.lhs is None

    import dataclasses

    def shown(steps):
        """The steps without renamings of a bound variable (dropped: the steps after keep
        the variable the reader saw)."""
        kept, renamed = [], {}
        for step in steps:
            if (step.lhs is not None and not step.chain and not step.also
                    and step.lhs != step.rhs and step.lhs.as_dummy() == step.rhs.as_dummy()):
                renamed[step.rhs] = step.lhs
                continue
            kept.append(dataclasses.replace(step, lhs=renamed.get(step.lhs, step.lhs)))
        return kept

    expected = 0
    for entry in family.derivation.entries:
        steps = shown(entry.steps)
        for before, after in itertools.pairwise(steps):
            # a definition continued is merged into the step after it: one display
            if (after.lhs is not None and not before.also and displays(before)
                    and displays(after) and before.strategy != "definition"
                    and (printer.doprint(after.lhs) == printer.doprint(before.rhs)
                         or after.lhs.as_dummy() == before.rhs.as_dummy())):
                expected += 1
    assert expected > 0
    proofs = re.findall(r"\\begin\{proof\}(.*?)\\end\{proof\}", text, flags=re.DOTALL)
    fisher = proofs[:len(family.derivation.entries)]
    # each continuation introduces its justification by the equalities it justifies
    label = re.compile(r" (?:The (?!first)[a-z]+(?: (?:and|to) [a-z]+)? equalit(?:y|ies)"
                       r"|Equalit(?:y \d+|ies \d+ to \d+)): ")
    continued = sum(len(label.findall(proof)) for proof in fisher)
    assert continued == expected
    opened = sum(len(re.findall(r"The first (?:(?:and|to) [a-z]+ )?equalit(?:y|ies): ", proof))
                 for proof in fisher)
    assert 0 < opened <= continued
    assert "\\begin{align*}\n  &=" not in text  # no display starts with "="
    for proof in fisher:
        for item in proof.split("\\item ")[1:]:
            # the continued step's rows are in the display of the item that states it
            if label.search(item):
                assert item.count("\\begin{align*}") == 1


def test_a_residue_step_names_its_contour(tmp_path):
    """The wrapped Cauchy family's entries are closed by residues: the displays integrate over
    the unit circle |z| = 1, named under the integral sign, not an integral without limits
    that would read as an antiderivative."""
    import re

    from raosym.emit.latex import step_rows
    from raosym.pipeline import derive
    from raosym.spec import load_spec

    path = tmp_path / "wrapped_cauchy.toml"
    path.write_text('name = "wrapped_cauchy"\nvariable = "x"\nsupport = "(-pi, pi)"\n'
                    'density = "(1 - rho**2)/(2*pi*(1 + rho**2 - 2*rho*cos(x - mu)))"\n\n'
                    '[coordinates]\nmu = "real"\nrho = "(0, 1)"\n')
    spec = load_spec(path)
    printer = ProofPrinter(spec)
    steps = [step for entry in derive(spec).entries for step in entry.steps
             if step.strategy == "residues"]
    assert steps
    for step in steps:
        rows = "\n".join(step_rows(step, printer))
        assert r"\oint_{\left|z\right| = 1}" in rows, rows
        assert not re.search(r"\\int(?!\\limits_|_)", rows), rows


# ------------------------------------------- what a referee flagged on the rendered pages


def test_fisher_integrals_are_written_with_the_scores(catalog, generated_tree):
    """Student-t's first Fisher display was SymPy's integrand, ``(2\\mu - 2x)^2`` and all: the
    integral is now written with the scores, ``\\int u_\\mu(x)^2 f(x) dx``, and the scores are
    stated once, before the proofs, equal to the forms computed here by hand:
    ``u_mu = (nu + 1)(x - mu)/(nu s^2 + (x - mu)^2)``,
    ``u_s = -1/s + (nu + 1)(x - mu)^2/(s (nu s^2 + (x - mu)^2))``."""
    import sympy

    from raosym.emit.latex import NamedScores
    from raosym.emit.latex.forms import readable_form
    from raosym.emit.latex.layout import visible_width

    for name in ("student_t", "student_t_shape"):
        family = verified(catalog, name)
        spec = family.derivation.spec
        printer, _ = family_printers(family)
        x = spec.variable
        mu, s = (next(p.symbol for p in spec.parameters if p.name == n) for n in ("mu", "s"))
        nu = next(p.symbol for p in spec.parameters if p.name == "nu")
        by_hand = {mu: (nu + 1) * (x - mu) / (nu * s**2 + (x - mu)**2),
                   s: -1 / s + (nu + 1) * (x - mu)**2 / (s * (nu * s**2 + (x - mu)**2))}
        text = (generated_tree / "latex" / f"{name}.tex").read_text()
        fisher = text[text.index(r"\subsection*{Fisher information}"):
                      text.index(r"\subsection*{Line element")]
        assert r"\int\limits_{-\infty}^{\infty} u_{\mu}(x)^{2} f(x)\, dx" in fisher, name
        assert r"2 \mu - 2 x" not in fisher and r"- \mu + x" not in fisher, name
        NamedScores(family.derivation, printer)  # registers the score names
        stated = fisher[:fisher.index("raosymproposition")]
        for index, coordinate in enumerate(spec.coordinate_symbols):
            shown = readable_form(family.derivation.scores[index], [x],
                                  lambda e, p=printer: visible_width(p.doprint(e)))
            assert printer.doprint(shown) in stated, (name, coordinate)
            if coordinate in by_hand:
                assert sympy.simplify(shown - by_hand[coordinate]) == 0, (name, coordinate)


def test_composition_scores_read_as_written(catalog, generated_tree):
    """The Gaussian's composition step showed ``-(2\\mu_1 - 2x_1)/(2\\sigma_1^2)``: it shows
    ``(x_1 - \\mu_1)/\\sigma_1^2``, which is the score of a Gaussian in its mean."""
    import sympy

    text = (generated_tree / "latex" / "gaussian.tex").read_text()
    step = text[text.index(r"\item Composition"):]
    step = step[:step.index(r"\end{align*}")]
    assert r"\frac{x_{1} - \mu_{1}}{\sigma_{1}^{2}}" in step
    assert r"\frac{x_{2} - \mu_{2}}{\sigma_{2}^{2}}" in step
    assert r"2 \mu_{1}" not in step
    x, mu = sympy.symbols("x_1 mu_1", real=True)
    sigma = sympy.Symbol("sigma_1", positive=True)
    density = sympy.exp(-(x - mu)**2 / (2 * sigma**2)) / sympy.sqrt(2 * sympy.pi * sigma**2)
    assert sympy.simplify(sympy.diff(sympy.log(density), mu) - (x - mu) / sigma**2) == 0


def test_stable_forms_are_written_as_mathematics(generated_tree):
    """Randomized response's stable RDP form read like code (``log1p``, ``expm1``, ``if ...
    <= 2:``, ``otherwise:``): no section writes a library function or a case as code; the
    cases are set after their values (``\\qquad \\text{if } ...``, ``\\text{otherwise}``)."""
    for name in FAMILIES:
        text = (generated_tree / "latex" / f"{name}.tex").read_text()
        for token in (r"\operatorname{log1p}", r"\operatorname{expm1}", r"\text{otherwise:}",
                      r"\text{:}"):
            assert token not in text, (name, token)
    bernoulli = (generated_tree / "latex" / "bernoulli.tex").read_text()
    curve = bernoulli[bernoulli.index("its RDP curve) is"):]
    curve = curve[:curve.index(r"\end{align*}")]
    assert r"\qquad \text{if } " in curve and r"\qquad \text{otherwise}" in curve
    assert r"\log{\left(\frac{p}{1 - p} \right)}" in curve
    assert r"- \frac{p}{p - 1}" not in curve


def test_signs_and_orders_are_chosen_as_a_reader_writes_them():
    """The printer writes ``x - mu`` (not SymPy's ``-mu + x``, also inside ``|...|``), takes a
    product's minus sign into a factor (``p/(1 - p)`` for ``-p/(p - 1)``), an even power of a
    negated sum as the power of the sum, ``(nu + 1)/2`` for ``nu/2 + 1/2``; each form is the
    same expression (checked here by SymPy)."""
    import sympy
    from conftest import DERIVATIONS

    from raosym.emit.latex.printer import sign_chosen
    from raosym.spec import load_spec

    printer = ProofPrinter(load_spec(DERIVATIONS / "gaussian.toml"))
    p, x, mu, nu = sympy.symbols("p x mu nu", real=True)
    sigma = sympy.Symbol("sigma", positive=True)
    cases = {
        -mu + x: r"x - \mu",
        -p / (p - 1): r"\frac{p}{1 - p}",
        -1 / (p * (p - 1)): r"\frac{1}{p \left(1 - p\right)}",
        # the sign taken into the sum, and the sum's content 2 into the coefficient 1/2
        -(2 * mu - 2 * x) / (2 * sigma**2): r"\frac{x - \mu}{\sigma^{2}}",
        4 * (nu / 2 + sympy.Rational(1, 2))**2 / sigma: r"\frac{\left(\nu + 1\right)^{2}}{\sigma}",
        (-nu / 2 - sympy.Rational(1, 2))**2: r"\left(\frac{\nu + 1}{2}\right)^{2}",
        -nu / 2 - sympy.Rational(5, 2): r"- \frac{\nu + 5}{2}",
        sympy.gamma(nu / 2 + sympy.Rational(1, 2)): r"\Gamma\left(\frac{\nu + 1}{2}\right)",
        nu / 2 + 1: r"\frac{\nu}{2} + 1",
        sympy.Abs(mu - x): r"\left|{x - \mu}\right|",
        (-nu - 3) / nu: r"- \frac{\nu + 3}{\nu}",
        sympy.log(1 + x / sigma) / (nu - 1):
            r"\frac{1}{\nu - 1} \log{\left(1 + \frac{x}{\sigma} \right)}",
    }
    for expr, expected in cases.items():
        assert printer.doprint(expr) == expected, expr
    for expr in (-p / (p - 1), -1 / (p * (p - 1)), -x / (2 * (mu - x))):
        chosen = sign_chosen(expr)
        assert chosen is not None and sympy.simplify(chosen - expr) == 0
    from raosym.emit.latex.printer import content_taken_out

    for expr in (4 * (nu / 2 + sympy.Rational(1, 2))**2 / sigma,
                 -(2 * mu - 2 * x) / (2 * sigma**2)):
        taken = content_taken_out(expr)
        assert taken is not None and sympy.simplify(taken - expr) == 0


def test_no_fraction_inside_a_fraction_in_the_gaussian_distance(catalog, generated_tree):
    """The Gaussian Rao distance read ``acosh(1 + ((mu_1 - mu_2)^2/2 + (sigma_1 -
    sigma_2)^2)/(2 sigma_1 sigma_2))``, a fraction in a fraction set in script size: it reads
    over one denominator, the form of the literature (Atkinson and Mitchell 1981), which is
    checked here against the derived distance."""
    import sympy

    derivation = verified(catalog, "gaussian").derivation
    (m1, s1), (m2, s2) = derivation.distance.points
    literature = sympy.sqrt(2) * sympy.acosh(
        1 + ((m1 - m2)**2 + 2 * (s1 - s2)**2) / (4 * s1 * s2))
    assert sympy.simplify(derivation.distance.textbook - literature) == 0
    text = (generated_tree / "latex" / "gaussian.tex").read_text()
    section = text.index(r"\subsection*{Rao distance}")
    proposition = text[text.index(r"\begin{raosymproposition}", section):]
    proposition = proposition[:proposition.index(r"\end{align*}")]
    assert (r"\frac{\left(\mu_{1} - \mu_{2}\right)^{2} + 2 \left(\sigma_{1} - \sigma_{2}\right)"
            r"^{2}}{4 \sigma_{1} \sigma_{2}}") in proposition
    # and a function of a fraction is set after the quotient's bar, not above it
    student = (generated_tree / "latex" / "student_t.tex").read_text()
    # (with the roots of the positive 2 and nu under one root)
    assert r"\frac{\sqrt{2 \nu}}{\sqrt{\nu + 3}} \operatorname{acosh}" in student


def test_no_fraction_inside_a_root_in_the_stable_distances(catalog, generated_tree):
    """The stable Gaussian distance read ``2 sqrt(2) asinh(sqrt((mu_1 - mu_2)^2/2 + (sigma_1 -
    sigma_2)^2)/(2 sqrt(sigma_1) sqrt(sigma_2)))``: a fraction under a root in a fraction. It
    reads ``2 sqrt(2) asinh(sqrt((mu_1 - mu_2)^2 + 2 (sigma_1 - sigma_2)^2)/(2 sqrt(2 sigma_1
    sigma_2)))``, checked here against the derived form (SymPy)."""
    import sympy

    distance = verified(catalog, "gaussian").derivation.distance
    (m1, s1), (m2, s2) = distance.points
    written = 2 * sympy.sqrt(2) * sympy.asinh(
        sympy.sqrt((m1 - m2)**2 + 2 * (s1 - s2)**2) / (2 * sympy.sqrt(2 * s1 * s2)))
    assert sympy.simplify(distance.stable - written) == 0
    text = (generated_tree / "latex" / "gaussian.tex").read_text()
    assert (r"\frac{\sqrt{\left(\mu_{1} - \mu_{2}\right)^{2} + 2 \left(\sigma_{1} - "
            r"\sigma_{2}\right)^{2}}}{2 \sqrt{2 \sigma_{1} \sigma_{2}}}") in text
    for name in ("gaussian", "laplace", "student_t", "logistic", "cauchy"):
        section = (generated_tree / "latex" / f"{name}.tex").read_text()
        section = section[section.index(r"\subsection*{Rao distance}"):]
        section = section[:section.index(r"\begin{raosymremark}[Numeric geodesic check]")]
        assert r"\sqrt{\frac" not in section, name
        assert not re.search(r"\\sqrt\{[^{}]*\}\s*\\sqrt\{[^{}]*\}", section), name


def test_a_one_coordinate_distance_writes_its_arc_length_upright(generated_tree):
    text = (generated_tree / "latex" / "bernoulli.tex").read_text()
    assert r"\mathrm{d}s &= \frac{\mathrm{d}p}{\sqrt{p \left(1 - p\right)}}" in text


def test_a_line_element_term_has_its_coefficient_first_and_no_name_is_displayed_alone(
        generated_tree):
    """A numeric entry's line element reads g_aa da^2 (coefficient, then differential), and
    the step that says the entry is computed numerically displays nothing: a display of
    the bare name g_aa states nothing."""
    text = (generated_tree / "latex" / "skew_normal.tex").read_text()
    assert r"\mathrm{d}s^{2} &= g_{a a} \mathrm{d}a^{2}" in text
    assert "\\begin{align*}\n  & g_{a a}\n\\end{align*}" not in text
    gamma = (generated_tree / "latex" / "gamma.tex").read_text()
    assert r"\frac{2}{\theta} \mathrm{d}k \, \mathrm{d}\theta" in gamma


def test_randomized_response_kl_reads_as_the_literature_writes_it(catalog, generated_tree):
    """KL(Ber(p) || Ber(1 - p)) = (2p - 1) log(p/(1 - p)), a product of two factors positive
    for p > 1/2 (the derived (1 - 2p) log((1 - p)/p) has two negative ones); SymPy checks that
    it is the derived value."""
    import sympy

    renyi = verified(catalog, "bernoulli").derivation.mechanism.renyi
    p = next(s for s in renyi.kl.free_symbols if s.name == "p")
    literature = (2 * p - 1) * sympy.log(p / (1 - p))
    assert sympy.simplify(sympy.expand_log(renyi.kl - literature, force=True)) == 0
    text = (generated_tree / "latex" / "bernoulli.tex").read_text()
    assert (r"is $\left(2 p - 1\right) \log{\left(\frac{p}{1 - p} \right)}$") in text


@pytest.mark.parametrize("name", ["gaussian_location", "binomial", "lognormal"])
def test_the_base_measure_is_written_as_one_writes_it(catalog, generated_tree, name):
    """log h(x) without a logarithm of a power (gaussian_location's log((2 pi sigma^2)^sigma^2)
    over 2 sigma^2, binomial's log(1/(n - k)!)) and with log 2 + log pi as log(2 pi); the
    recognized form is still the log-density (SymPy)."""
    import sympy

    derivation = verified(catalog, name).derivation
    step = next(s for s in derivation.entries[0].steps if s.claim.startswith(
        "The log-density has exponential-family form"))
    spec = derivation.spec
    difference = sympy.expand_log(step.rhs.doit() - sympy.log(spec.density), force=True)
    # (the binomial coefficient written with factorials, the logarithms split)
    difference = sympy.expand_log(difference.rewrite(sympy.factorial), force=True)
    assert sympy.expand_log(sympy.simplify(difference), force=True) == 0
    text = (generated_tree / "latex" / f"{name}.tex").read_text()
    line = next(line for line in text.splitlines() if line.lstrip().startswith(r"\log f"))
    assert not re.search(r"\\log\{\\left\(\\left\(.*\\right\)\^\{", line)
    assert r"\log{\left(\frac{1}{" not in line
    assert r"\log{\left(\pi \right)}" not in line
