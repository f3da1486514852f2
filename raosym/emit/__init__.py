"""The emit stage: verified derivations as files, through backends.

Input: :class:`~raosym.verify.checks.Verified` objects, and nothing else (verification is a
gate: anything else is a ``TypeError``). Output: rendered files in memory, as a mapping from
paths relative to ``generated/`` to text. :mod:`raosym.emit.write` then writes them.

A backend is a configuration, a SymPy printer subclass and a folder of Jinja templates:

- :mod:`raosym.emit.python`: ``python/NAME.py``, a standalone NumPy module per family;
- :mod:`raosym.emit.latex`: ``latex/NAME.tex``, a section of proofs per family, and
  ``latex/appendix.tex``, a document including every section.

Between rendering and writing, the emitted-code gate (:mod:`raosym.gate`, a later stage that
this one does not import) imports each rendered Python module in a subprocess and holds every
public function to the verified mathematics.

Later stages of the catalog (Rao distances, privacy accounting) add functions and sections by
extending these backends' contexts and templates.
"""

from __future__ import annotations

from sympy.printing.codeprinter import PrintMethodNotImplementedError

from raosym.cache import family_paths
from raosym.emit import latex, python
from raosym.errors import EmitError
from raosym.verify.checks import Verified

#: The per-family backends, in the order their files are rendered.
BACKENDS = (python, latex)


def render_files(verified: Verified) -> dict[str, str]:
    """Every backend's files for one family: ``{"python/NAME.py": ..., "latex/NAME.tex": ...}``
    (before the emitted-code gate, which :func:`raosym.gate.render_family` runs on them)."""
    if not isinstance(verified, Verified):
        raise TypeError(f"emit accepts only Verified results (a derivation that passed "
                        f"raosym.verify), not {type(verified).__name__}")
    files: dict[str, str] = {}
    for backend in BACKENDS:
        try:
            files.update(backend.render(verified))
        except PrintMethodNotImplementedError as error:
            # A closed form the backend's target cannot evaluate (a derivative of zeta in
            # NumPy): an error of the family, never a traceback.
            raise EmitError(f"the {backend.__name__.rsplit('.', 1)[-1]} backend cannot print "
                            f"a derived expression: {error}".splitlines()[0]) from None
    if set(files) != family_paths(verified.derivation.spec.name):
        raise EmitError(f"the backends rendered {sorted(files)}, not the planned layout "
                        f"{sorted(family_paths(verified.derivation.spec.name))}")
    return files


def render_appendix(names: list[str]) -> dict[str, str]:
    """``{"latex/appendix.tex": ...}``, including the sections of ``names`` in sorted order."""
    return latex.render_appendix(names)


__all__ = ["BACKENDS", "family_paths", "render_appendix", "render_files"]
