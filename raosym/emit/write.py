"""The write stage: the ``generated/`` tree, written atomically and deterministically.

Input: the files :mod:`raosym.emit` rendered (``{family: {relative path: text}}``) and the
names of the families that exist (one per derivation file). Output: a :class:`TreePlan` (every
file's new text, and the stale files to remove), then either the files on disk
(:func:`write_tree`) or a unified diff against them (:func:`drift`, for ``--check``).

- Everything is rendered in memory before anything is written; new files go to a temporary
  folder next to the output, then each is swapped in with ``os.replace``. A failure while
  rendering leaves the output exactly as it was.
- A family missing from the rendered files (it failed, or was not asked for) keeps its files.
- Files of families that no longer have a derivation file are removed.
- The appendix includes every family that has a section after the write, in sorted order.
- Files are UTF-8 with ``\\n`` line ends; unchanged files are not rewritten.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from raosym.emit import render_appendix

#: Folders of generated/ that belong to raosym, and the suffix of the files it writes there.
MANAGED = {"python": ".py", "latex": ".tex"}
APPENDIX = "latex/appendix.tex"


@dataclass(frozen=True)
class TreePlan:
    """What the output folder should hold: new texts, and files to delete."""

    files: dict[str, str]
    stale: tuple[str, ...]


def existing_files(output: Path) -> dict[str, str]:
    """Relative path -> family name of every managed file in ``output`` (appendix aside)."""
    found = {}
    for folder, suffix in MANAGED.items():
        for path in sorted((output / folder).glob(f"*{suffix}")):
            relative = f"{folder}/{path.name}"
            if relative != APPENDIX:
                found[relative] = path.stem
    return found


def plan_tree(output: Path, rendered: dict[str, dict[str, str]], families: set[str]) -> TreePlan:
    """The new tree: ``rendered`` families' files, the appendix, and the stale files."""
    existing = existing_files(output)
    stale = tuple(sorted(path for path, family in existing.items() if family not in families))
    sections = {family for path, family in existing.items()
                if path.startswith("latex/") and family in families}
    files: dict[str, str] = {}
    for family in sorted(rendered):
        files.update(rendered[family])
        sections.add(family)
    files.update(render_appendix(sorted(sections)))
    return TreePlan(files, stale)


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def write_tree(output: Path, plan: TreePlan) -> list[str]:
    """Write the plan into ``output``; return the relative paths that changed."""
    output.mkdir(parents=True, exist_ok=True)
    changed = [path for path, text in sorted(plan.files.items()) if _read(output / path) != text]
    staging = Path(tempfile.mkdtemp(prefix=f".{output.name}-", dir=output.parent))
    try:
        for path in changed:
            staged = staging / path
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_text(plan.files[path], encoding="utf-8", newline="\n")
        for path in changed:
            (output / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / path, output / path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for path in plan.stale:
        (output / path).unlink(missing_ok=True)
    return changed + list(plan.stale)


def drift(output: Path, plan: TreePlan) -> str:
    """A unified diff from ``output`` to the plan; empty when they agree byte for byte."""
    chunks = []
    for path, text in sorted(plan.files.items()):
        chunks.append(_diff(output, path, _read(output / path), text))
    for path in plan.stale:
        chunks.append(_diff(output, path, _read(output / path), None))
    return "".join(chunks)


def _diff(output: Path, path: str, old: str | None, new: str | None) -> str:
    if old == new:
        return ""
    name = (output / path).as_posix()
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=name if old is not None else "/dev/null",
        tofile=f"{name} (regenerated)" if new is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
