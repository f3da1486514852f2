"""Compiling the LaTeX output with pdflatex (``raosym generate --pdf``, and the tests).

After the write stage. Input: a folder of generated sections and ``appendix.tex``. Output:
``appendix.pdf``, or an :class:`EmitError` naming the families whose sections do not compile
(each section is then compiled alone to find them) with the first lines of each TeX error.
Compilation runs in a temporary folder, so the output folder never holds auxiliary files.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raosym.derive.children import ending_with_this_process
from raosym.errors import EmitError

PDFLATEX = ("pdflatex", "-halt-on-error", "-interaction=nonstopmode")
#: The smallest document that can include one section: the packages a section needs.
SECTION_WRAPPER = (
    "\\documentclass{article}\n\\usepackage{amsmath}\n\\usepackage{amssymb}\n"
    "\\usepackage{amsthm}\n\\begin{document}\n\\input{%s}\n\\end{document}\n"
)


@dataclass(frozen=True)
class Compilation:
    """The outcome of one pdflatex run."""

    ok: bool
    errors: str  # the first TeX error and its context, from the log ("" when ok)
    pdf: Path | None


def pdflatex_path() -> str:
    found = shutil.which("pdflatex")
    if found is None:
        raise EmitError("pdflatex not found: install TeX Live (Debian: texlive-latex-base "
                        "texlive-latex-recommended)")
    return found


#: pdflatex runs at most, until the references settle (the table of contents, the lemma and
#: citation references need three: labels written, pages moved by the contents, settled).
SETTLE_RUNS = 5
#: What LaTeX writes to its log while cross-references are not settled yet.
RERUN = ("Rerun to get", "Label(s) may have changed")


def compile_tex(folder: Path, main: str, *, runs: int = 1, settle: bool = False) -> Compilation:
    """Run pdflatex on ``folder/main``: ``runs`` times, or with ``settle`` until the log asks
    for no further run (at most SETTLE_RUNS, and at least twice, so that a first run's
    labels are read back)."""
    command = [pdflatex_path(), *PDFLATEX[1:], main]
    log = folder / (Path(main).stem + ".log")
    for run in range(SETTLE_RUNS if settle else runs):
        result = subprocess.run(command, cwd=folder, capture_output=True, text=True,
                                errors="replace", check=False, timeout=300,
                                preexec_fn=ending_with_this_process())
        if result.returncode != 0:
            return Compilation(False, first_error(result.stdout), None)
        if settle and run >= 1 and not any(
                marker in log.read_text(errors="replace") for marker in RERUN):
            break
    return Compilation(True, "", folder / (Path(main).stem + ".pdf"))


def first_error(log: str) -> str:
    """The first ``! ...`` error of a TeX log with the lines after it."""
    lines = log.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("!"):
            return "\n".join(lines[index:index + 6])
    return "\n".join(lines[-10:])


def compile_section(latex_folder: Path, name: str) -> Compilation:
    """Compile one family's section alone, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="raosym-tex-") as work:
        work_path = Path(work)
        shutil.copy(latex_folder / f"{name}.tex", work_path / f"{name}.tex")
        (work_path / "wrapper.tex").write_text(SECTION_WRAPPER % name, encoding="utf-8")
        result = compile_tex(work_path, "wrapper.tex")
        return Compilation(result.ok, result.errors, None)


def compile_appendix(latex_folder: Path, target: Path, *,
                     draw_figures: Callable[[Path], None] | None = None) -> Path:
    """Compile ``appendix.tex`` with every section; copy the PDF to ``target``.

    ``draw_figures(folder)`` may write the figures the appendix includes when present
    (``rdp_curves.pdf``) into the compilation folder. On failure, each section is compiled
    alone and the error names the families that fail.
    """
    with tempfile.TemporaryDirectory(prefix="raosym-tex-") as work:
        work_path = Path(work)
        for source in sorted(latex_folder.glob("*.tex")):
            shutil.copy(source, work_path / source.name)
        if draw_figures is not None:
            draw_figures(work_path)
        result = compile_tex(work_path, "appendix.tex", settle=True)
        if result.ok and result.pdf is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(result.pdf, target)
            return target
    failures = []
    for section in sorted(latex_folder.glob("*.tex")):
        if section.name == "appendix.tex":
            continue
        alone = compile_section(latex_folder, section.stem)
        if not alone.ok:
            failures.append(f"family {section.stem} ({section}):\n{alone.errors}")
    detail = "\n".join(failures) if failures else f"appendix.tex:\n{result.errors}"
    raise EmitError(f"pdflatex failed on {latex_folder / 'appendix.tex'}\n{detail}")
