"""The LaTeX backend: sections and appendix compile, and the proofs are the engine's steps.

Compiling needs pdflatex. CI installs TeX Live (.ci/run), so a missing pdflatex fails these
tests rather than skipping them.
"""

from __future__ import annotations

import shutil
import string

import jinja2
import pytest
from conftest import family_names, verified

from raosym.derive.steps import PERIOD_STRATEGY
from raosym.emit.latex import TEMPLATES, render
from raosym.emit.latex.printer import ProofPrinter, tex_text
from raosym.emit.latex.prose import sentence
from raosym.emit.pdf import compile_section, compile_tex
from raosym.emit.render import environment

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
    derivation = verified(catalog, name).derivation
    prose = ProofPrinter(derivation.spec).prose
    text = (generated_tree / "latex" / f"{name}.tex").read_text()
    items = [line[len("\\item "):] for line in text.splitlines() if line.startswith("\\item ")]
    entries = derivation.entries
    shared = 0
    if len(entries) > 1:
        while all(shared < len(e.steps) - 1 and e.steps[shared] == entries[0].steps[shared]
                  for e in entries):
            shared += 1
    expected = [s.claim for s in derivation.steps] + [s.claim for s in entries[0].steps[:shared]]
    for entry in entries:
        expected += [step.claim for step in entry.steps[shared:]]
    expected += [step.claim for step in derivation.geometry.steps]
    if derivation.distance is not None:  # a numeric distance shows its periods' steps only
        expected += [step.claim for step in derivation.distance.steps
                     if derivation.distance.closed or step.strategy == PERIOD_STRATEGY]
    if derivation.mechanism is not None:  # the privacy-accounting subsection
        expected += [step.claim for step in derivation.mechanism.steps]
    expected = [sentence(prose.latex(claim)) for claim in expected]
    # the "Not delivered" list: what is unavailable, and why
    expected += [f"{tex_text(item.quantity)}: {prose.latex(item.reason)}"
                 for item in derivation.unavailable]
    assert items == expected
    for entry in entries:
        for step in entry.steps[shared:]:
            assert sentence(prose.latex(step.justification)) in text


def test_exponential_family_steps_are_shared(generated_tree):
    text = (generated_tree / "latex" / "gamma.tex").read_text()
    assert text.count("exponential-family form with sufficient statistics") == 1
    assert text.count("Steps 1--3 above, then:") == 3


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
    derivation = verified(catalog, name).derivation
    distance = derivation.distance
    prose = ProofPrinter(derivation.spec).prose
    text = (generated_tree / "latex" / f"{name}.tex").read_text()
    if distance is None:  # not derived: the section says so, with the reason
        (item,) = [u for u in derivation.unavailable if u.quantity == "Rao distance"]
        assert r"\paragraph{Not delivered.}" in text and prose.latex(item.reason) in text
        return
    section = text[text.index(r"\subsection*{Rao distance}"):]
    section = section[:section.index("[Numeric verification]")]
    assert "Numeric geodesic check" in section
    assert r"\texttt{rao\_distance} computes at" in section
    if distance.closed:
        assert prose.latex(distance.structure) in section
        assert "d(P_1, P_2)" in section
        strategies = [step.strategy for step in distance.steps]
        assert "stable form" in strategies and strategies.count("distance") >= 1
        for step in distance.steps:
            assert sentence(prose.latex(step.justification)) in section
    else:
        # the structures tried, each with why it does not apply
        assert sentence(prose.latex(distance.reason.split(". ")[0])) in section
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
