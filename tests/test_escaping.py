"""The only ways free text reaches a generated file, proved on arbitrary Unicode (issue 14, 1).

Python: ``docstring_literal`` must give source that parses to exactly the text and runs
nothing; ``comment_text`` one line of printable ASCII. TeX: ``tex_text`` must compile with
pdflatex and set every character (no "Missing character" in the log). Truth comes from
outside the functions: Python's own tokenizer and ``ast``, and pdflatex.
"""

from __future__ import annotations

import ast
import dataclasses
import shutil
import subprocess

import pytest
from conftest import REPOSITORY
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from raosym.emit.escape import comment_text, docstring_literal
from raosym.emit.latex.printer import tex_text

# Its module-scoped fixtures are computed once: the whole file runs on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_escaping")

#: Every code point, lone surrogates included (a folder name that is not UTF-8 gives them).
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=60)
HOSTILE = ['"""; __import__("os").system("touch PWNED"); """', '\\N{BULLET}', "\\u00e9",
           "a\x00b", "C:\\xdata", '"', '""', 'x"', "\\", "\r\n", "\u2028", "\ud800", "\udcff",
           "'''", "\\\n", "\x0c", "\ufeff"]
SETTINGS = settings(max_examples=2000, deadline=None, database=None)


def module_with(text: str) -> str:
    return f"{docstring_literal(text)}\nVALUE = 1\n"


@SETTINGS
@given(text=st.one_of(ANY_TEXT, st.sampled_from(HOSTILE),
                      st.lists(st.sampled_from(HOSTILE), max_size=5).map("".join)))
def test_docstring_literal_round_trips_any_text_and_runs_nothing(text):
    source = module_with(text)
    source.encode("utf-8")  # the file can be written (no lone surrogate left raw)
    tree = ast.parse(source)
    # Exactly two statements: the docstring and VALUE = 1; nothing else was smuggled in.
    assert [type(node) for node in tree.body] == [ast.Expr, ast.Assign]
    assert ast.get_docstring(tree, clean=False) == text
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102 - the code under test
    assert namespace["__doc__"] == text and namespace["VALUE"] == 1


@SETTINGS
@given(text=st.one_of(ANY_TEXT, st.sampled_from(HOSTILE)))
def test_comment_text_is_one_printable_line_that_keeps_the_text(text):
    line = comment_text(text)
    assert all(" " <= character <= "~" for character in line)
    # A comment of it ends where the line ends: the code after it still runs, and only it.
    tree = ast.parse(f"# {line}\nVALUE = 1\n")
    assert len(tree.body) == 1
    # Faithful: Python's own unescaping gives the text back.
    assert line.encode("ascii").decode("unicode_escape") == text


def test_the_issue_s_inputs():
    assert ast.literal_eval(docstring_literal("C:\\xdata")) == "C:\\xdata"  # not C:Úta
    assert ast.literal_eval(docstring_literal("\\N{BULLET} \\u00e9")) == "\\N{BULLET} \\u00e9"
    assert comment_text("folder\nimport os") == "folder\\nimport os"


TEX_WRAPPER = ("\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n"
               "\\tableofcontents\n%s\n\\end{document}\n")


def compile_tex(body: str, tmp_path) -> str:
    assert shutil.which("pdflatex"), "pdflatex is needed (texlive-latex-base)"
    (tmp_path / "text.tex").write_text(TEX_WRAPPER % body, encoding="ascii")
    result = subprocess.run(["pdflatex", "-halt-on-error", "-interaction=nonstopmode",
                             "text.tex"], cwd=tmp_path, capture_output=True, text=True,
                            errors="replace", timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    return (tmp_path / "text.log").read_text(errors="replace")


@settings(max_examples=8, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.one_of(ANY_TEXT, st.sampled_from(HOSTILE + [
    "Rényi–Gauß naïve Ærø Łódź ¿señor? 50 °C ± 1 “quoted” …", "中文 😀", "% # $ & _ ^ ~ { } \\"])),
    min_size=20, max_size=40))
def test_tex_text_compiles_for_any_text(texts, tmp_path):
    """Each text as a section title (a moving argument: the table of contents) and in a
    paragraph; pdflatex must succeed and set every character."""
    body = "\n".join(f"\\section{{{tex_text(text)}}}\n{tex_text(text)}\n\n\\texttt{{{tex_text(text)}}}"
                     for text in texts)
    assert body.isascii()
    log = compile_tex(body, tmp_path)
    assert "Missing character" not in log


# ----------------------------------------------------------------------------- through the backends

#: A folder's name: any code point but the separator and NUL (lone surrogates are what a
#: name that is not UTF-8 decodes to).
FOLDER_NAMES = st.text(st.characters(min_codepoint=1, max_codepoint=0x10FFFF,
                                     blacklist_characters="/"), min_size=1, max_size=30)


@pytest.fixture(scope="module")
def exponential():
    """The exponential family derived and verified, and its gate accuracy (both once)."""
    from raosym import pipeline
    from raosym.emit import python
    from raosym.gate import emitted as gate

    verified = pipeline.run_family(REPOSITORY / "derivations" / "exponential.toml")
    module = python.render(verified)["python/exponential.py"]
    return verified, gate.check_module(verified, module)


def with_free_text(verified, title: str, reference: str, folder: str):
    spec = dataclasses.replace(verified.derivation.spec, title=title, reference=reference,
                               path=f"{folder}/exponential.toml")
    return dataclasses.replace(
        verified, derivation=dataclasses.replace(verified.derivation, spec=spec))


def render(verified, accuracy) -> tuple[str, str]:
    """The module and the section, as raosym.gate.render_family makes them."""
    from raosym.emit import latex, python

    module = python.with_accuracy(python.render(verified)["python/exponential.py"], accuracy)
    return module, latex.render(verified)["latex/exponential.tex"]


def code_shape(source: str) -> str:
    """The module's syntax tree with every string constant blanked: what it would run."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


@settings(max_examples=20, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
# Drawn once: LaTeX's \S, \P and \copyright need the TS1 fonts, bitmaps in a basic TeX Live,
# and pdflatex stopped ("auto expansion is only possible with scalable fonts").
@example(title="§ 2, ¶ 3", reference="© 1999", folder="derivations")
@given(title=st.one_of(ANY_TEXT, st.lists(st.sampled_from(HOSTILE), max_size=6).map("".join)),
       reference=st.one_of(ANY_TEXT, st.sampled_from(HOSTILE)), folder=FOLDER_NAMES)
def test_free_text_through_the_backends_runs_nothing_and_compiles(exponential, tmp_path_factory,
                                                                  title, reference, folder):
    """Issue 14, 'done when': arbitrary Unicode in every free-text field of a derivation (its
    title, its reference, the name of its folder) gives a module that imports, holds the text
    exactly and runs nothing else, and a LaTeX section that pdflatex compiles."""
    from raosym.emit import latex

    verified, accuracy = exponential
    baseline, _ = render(with_free_text(verified, "T", "R", "derivations"), accuracy)
    module, section = render(with_free_text(verified, title, reference, folder), accuracy)
    module.encode("utf-8")  # writable as the UTF-8 file it will be
    # Runs nothing else: the same statements and expressions as with plain texts.
    assert code_shape(module) == code_shape(baseline)
    header = module.splitlines()[0]
    assert header.isascii() and header.startswith("# Generated by raosym")
    namespace: dict = {}
    exec(compile(module, "exponential.py", "exec"), namespace)  # noqa: S102 - shape checked
    documentation = namespace["__doc__"]
    assert documentation.startswith(f"{title}: Fisher information")
    if reference:
        assert f"Reference: {reference}." in documentation
    assert namespace["fisher_information"]([2.0])[0, 0] == 0.25  # 1/lambda^2 (Amari 2000)
    # The section compiles inside the appendix, every character set.
    folder_path = tmp_path_factory.mktemp("tex")
    (folder_path / "exponential.tex").write_text(section, encoding="utf-8")
    (folder_path / "appendix.tex").write_text(
        latex.render_appendix(["exponential"])["latex/appendix.tex"], encoding="utf-8")
    result = subprocess.run(["pdflatex", "-halt-on-error", "-interaction=nonstopmode",
                             "appendix.tex"], cwd=folder_path, capture_output=True, text=True,
                            errors="replace", timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Missing character" not in (folder_path / "appendix.log").read_text(errors="replace")
