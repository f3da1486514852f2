"""The emit stage: verified derivations as files, through backends.

Input: :class:`~raosym.verify.checks.Verified` objects, and nothing else (verification is a
gate: anything else is a ``TypeError``). Output: rendered files in memory, as a mapping from
paths relative to ``generated/`` to text. :mod:`raosym.emit.write` then writes them.

A backend is a configuration, a SymPy printer subclass and a folder of Jinja templates:

- :mod:`raosym.emit.python`: ``python/NAME.py``, a standalone NumPy module per family;
- :mod:`raosym.emit.latex`: ``latex/NAME.tex``, a section of proofs per family, and
  ``latex/appendix.tex``, a document including every section.

Between rendering and writing, :mod:`raosym.emit.gate` imports each rendered Python module in
a subprocess and holds every public function to the verified mathematics at the verification
points and at adversarial inputs; a family whose metric code fails is not emitted, and an
optional quantity whose code fails (the Rao distance, the privacy accounting) is left out and
reported unavailable.

Later stages of the catalog (Rao distances, privacy accounting) add functions and sections by
extending these backends' contexts and templates.
"""

from __future__ import annotations

import dataclasses

from raosym.derive.steps import Unavailable
from raosym.emit import gate, latex, python
from raosym.errors import EmitError
from raosym.verify.checks import Verified

#: The per-family backends, in the order their files are rendered.
BACKENDS = (python, latex)


def family_paths(name: str) -> set[str]:
    """The files the backends write for the family ``name``, relative to ``generated/``: the
    layout the write stage and the render cache accept, and nothing else."""
    return {f"python/{name}.py", f"latex/{name}.tex"}


#: The fields of a Derivation that an optional quantity lives in (dropped when its emitted
#: code fails the gate).
_OPTIONAL_FIELDS = {"Rao distance": "distance", "privacy accounting": "mechanism"}


def render_family(verified: Verified) -> dict[str, str]:
    """Every backend's files for one family: ``{"python/NAME.py": ..., "latex/NAME.tex": ...}``.

    When the emitted code of an optional quantity (the Rao distance, the privacy accounting)
    fails the gate, the family is rendered again without it, and the quantity is reported
    unavailable with the gate's finding: the family keeps every quantity whose code passed.
    A failure of the metric's own functions is an error (nothing of the family is written)."""
    if not isinstance(verified, Verified):
        raise TypeError(f"emit accepts only Verified results (a derivation that passed "
                        f"raosym.verify), not {type(verified).__name__}")
    while True:
        try:
            return _render_and_gate(verified)
        except gate.EmittedCodeError as error:
            if error.quantity is None:
                raise
            derivation = verified.derivation
            unavailable = Unavailable(error.quantity, "derived and verified, but its emitted "
                                      f"code failed raosym's emitted-code gate: {error}")
            derivation = dataclasses.replace(
                derivation, unavailable=(*derivation.unavailable, unavailable),
                **{_OPTIONAL_FIELDS[error.quantity]: None})
            verified = dataclasses.replace(verified, derivation=derivation)


def _render_and_gate(verified: Verified) -> dict[str, str]:
    files: dict[str, str] = {}
    for backend in BACKENDS:
        files.update(backend.render(verified))
    if set(files) != family_paths(verified.derivation.spec.name):
        raise EmitError(f"the backends rendered {sorted(files)}, not the planned layout "
                        f"{sorted(family_paths(verified.derivation.spec.name))}")
    # The emitted-code gate: the rendered module's functions against mpmath, in a subprocess;
    # raises EmittedCodeError (an EmitError) for a function outside its tolerance, so the
    # family's files are not written. The accuracy it measured goes into the docstrings.
    module = f"python/{verified.derivation.spec.name}.py"
    accuracy = gate.check_module(verified, files[module])
    files[module] = python.with_accuracy(files[module], accuracy)
    return files


def render_appendix(names: list[str]) -> dict[str, str]:
    """``{"latex/appendix.tex": ...}``, including the sections of ``names`` in sorted order."""
    return latex.render_appendix(names)


__all__ = ["BACKENDS", "family_paths", "render_appendix", "render_family"]
