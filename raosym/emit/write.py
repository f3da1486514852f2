"""The write stage: the ``generated/`` tree, written atomically and deterministically.

Input: the files :mod:`raosym.emit` rendered (``{family: {relative path: text}}``) and the
names of the families that exist (one per derivation file). Output: a :class:`TreePlan` (every
file's new text, and the stale files to remove), then either the files on disk
(:func:`write_tree`) or a unified diff against them (:func:`drift`, for ``--check``).

- Everything is rendered in memory before anything is written. A failure while rendering
  leaves the output exactly as it was.
- The tree is replaced as a whole, never file by file. :func:`write_tree` builds the complete
  new tree in ``.NAME.raosym-new/`` beside the output (a copy of the old tree with the plan
  applied), then swaps two directory entries: ``NAME`` -> ``.NAME.raosym-old`` and
  ``.NAME.raosym-new`` -> ``NAME`` (the commit point), then deletes the old tree. On disk the
  output stays a plain folder (it is committed in git; a symlink would not do).
- Recovery (:func:`recover`, at the start of every write and ``--check``): a run killed
  before the commit point is rolled back (``.raosym-old`` renamed back when ``NAME`` is
  missing, ``.raosym-new`` deleted), one killed after it is finished (``.raosym-old``
  deleted). So after any kill the output is the old tree or the new one, never a mixture, and
  no staging folder outlives the next run. The staging folders of raosym versions before
  this one (``.NAME-XXXXXXXX/``) are deleted too. A lock on the parent folder (``flock``)
  keeps two runs from swapping the same output at once.
- Before anything is staged, every folder that would change is checked for write
  permission (its owner's write bit counts even for root): a read-only ``python/`` fails the
  run with that folder named, and nothing is swapped.
- A family missing from the rendered files (it failed, or was not asked for) keeps its files.
- Files of families that no longer have a derivation file are removed.
- The appendix includes every family that has a section after the write, in sorted order.
- Only paths of the planned layout (``python/NAME.py``, ``latex/NAME.tex``) are accepted.
- Files are UTF-8 with ``\\n`` line ends; unchanged files keep their bytes.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import fcntl
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from raosym.emit import render_appendix
from raosym.errors import EmitError

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
    """Write the plan into ``output`` by swapping in a whole new tree; return the relative
    paths that changed (written or removed)."""
    output = Path(output)
    _check_layout(plan.files)
    with _locked(output):
        recover(output)
        changed = [path for path, text in sorted(plan.files.items())
                   if _read(output / path) != text]
        removed = [path for path in plan.stale if (output / path).exists()]
        if not changed and not removed and output.is_dir():
            return []
        _check_writable(output, changed + removed)
        staging = _staging(output, "new")
        try:
            _build(output, staging, plan, changed, removed)
            _checkpoint("built")
            if output.exists():
                os.rename(output, _staging(output, "old"))
                _checkpoint("old moved aside")
            os.rename(staging, output)  # the commit point
            _checkpoint("new moved in")
        except BaseException:
            recover(output)  # roll back (or finish, past the commit point)
            raise
        _remove_tree(_staging(output, "old"))
    return changed + list(plan.stale)


def recover(output: Path) -> None:
    """Finish or roll back a write that was interrupted; delete stale staging folders."""
    output = Path(output)
    old, new = _staging(output, "old"), _staging(output, "new")
    if not output.exists() and old.is_dir():
        os.rename(old, output)  # killed between the two renames: the old tree comes back
    _remove_tree(new)
    _remove_tree(old)
    for legacy in output.parent.glob(f".{output.name}-*"):
        if legacy.is_dir() and re.fullmatch(rf"\.{re.escape(output.name)}-[a-z0-9_]{{8}}",
                                            legacy.name):
            _remove_tree(legacy)


def _checkpoint(name: str) -> None:
    """A named point of the swap; tests replace this to kill the process there."""


def _staging(output: Path, kind: str) -> Path:
    return output.parent / f".{output.name}.raosym-{kind}"


@contextlib.contextmanager
def _locked(output: Path):
    """Hold an exclusive lock on the output's parent folder (flock on the folder itself, so
    no lock file is left behind): two runs never swap the same tree at once."""
    output.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(output.parent, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


_LAYOUT = re.compile(r"(python/[a-z][a-z0-9_]*\.py|latex/[a-z][a-z0-9_]*\.tex)")


def _check_layout(files: dict[str, str]) -> None:
    for path in files:
        if not _LAYOUT.fullmatch(path):
            raise EmitError(f"refusing to write {path!r}: not a path of the generated layout "
                            "(python/NAME.py, latex/NAME.tex)")


def _writable(folder: Path) -> bool:
    """Whether raosym may change ``folder``'s entries: the owner's write bit (which root too
    is held to: a folder made read-only is meant to stay as it is) and the OS's own check."""
    return bool(folder.stat().st_mode & stat.S_IWUSR) and os.access(folder, os.W_OK)


def _check_writable(output: Path, paths: list[str]) -> None:
    """Raise PermissionError naming the first folder that would change but may not."""
    folders = {output.parent}
    if output.exists():
        folders.add(output)
    for path in paths:
        folder = (output / path).parent
        while not folder.exists():
            folder = folder.parent
        folders.add(folder)
    for folder in sorted(folders):
        if not _writable(folder):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))


def _build(output: Path, staging: Path, plan: TreePlan, changed: list[str],
           removed: list[str]) -> None:
    """The new tree in ``staging``: the old tree's files, then the plan applied."""
    if output.is_dir():
        shutil.copytree(output, staging, symlinks=True)
    else:
        staging.mkdir()
    for path in changed:
        target = staging / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)  # a new file: never write through a copied link
        with open(target, "w", encoding="utf-8", newline="\n") as file:
            file.write(plan.files[path])
            file.flush()
            os.fsync(file.fileno())
    for path in removed:
        (staging / path).unlink()


def _remove_tree(folder: Path) -> None:
    """Delete a staging folder, read-only subfolders included."""
    if not folder.is_dir():
        return

    def make_writable(function, path, _):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        function(path)

    shutil.rmtree(folder, onerror=make_writable)


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
