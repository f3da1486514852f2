"""The emitted files checked by running them: after the emit stage, before (and after) write.

An application of the pipeline, ranked after emit, which does not import it. The verify stage
checked the mathematics; this package checks what the emit stage printed from it:

- :mod:`raosym.gate.emitted` (with :mod:`~raosym.gate.mechanism` for the accounting functions
  and :mod:`~raosym.gate.runner`, the subprocess side): every public function of a rendered
  Python module against mpmath at the verification points and at adversarial inputs;
- :mod:`raosym.gate.pdf`: the written LaTeX sections compiled with pdflatex.

:func:`render_family` is the emit stage as the pipeline runs it: the backends' files, the
module held to the gate and its measured accuracy added to its docstrings; a family whose
metric code fails is not emitted, and an optional quantity whose code fails (the Rao distance,
the privacy accounting) is left out and reported unavailable.
"""

from __future__ import annotations

import dataclasses

from raosym import emit
from raosym.derive.steps import Unavailable
from raosym.emit import python
from raosym.errors import EmitError
from raosym.gate.emitted import EmittedCodeError, check_module
from raosym.verify.checks import Verified

#: The fields of a Derivation that an optional quantity lives in (dropped when its emitted
#: code fails the gate).
_OPTIONAL_FIELDS = {"Rao distance": "distance", "privacy accounting": "mechanism"}


def render_family(verified: Verified) -> tuple[dict[str, str], tuple[Unavailable, ...]]:
    """Every backend's files for one family, gated (``{"python/NAME.py": ...,
    "latex/NAME.tex": ...}``), and the quantities the gate left out.

    When the emitted code of an optional quantity (the Rao distance, the privacy accounting)
    fails the gate, or cannot be printed at all, the family is rendered again without it, and the quantity is reported
    unavailable with the gate's finding: the family keeps every quantity whose code passed,
    and the caller reports the dropped ones with the rest (summary, ``--json``, ``--strict``).
    A failure of the metric's own functions is an error (nothing of the family is written)."""
    dropped: tuple[Unavailable, ...] = ()
    while True:
        try:
            return _render_and_gate(verified), dropped
        except EmitError as error:
            if error.quantity is None:
                raise
            derivation = verified.derivation
            finding = (f"its emitted code failed raosym's emitted-code gate: {error}"
                       if isinstance(error, EmittedCodeError) else
                       f"its code could not be emitted: {error}")
            unavailable = Unavailable(error.quantity, f"derived and verified, but {finding}")
            dropped = (*dropped, unavailable)
            derivation = dataclasses.replace(
                derivation, unavailable=(*derivation.unavailable, unavailable),
                **{_OPTIONAL_FIELDS[error.quantity]: None})
            verified = dataclasses.replace(verified, derivation=derivation)


def _render_and_gate(verified: Verified) -> dict[str, str]:
    files = emit.render_files(verified)
    # The rendered module's functions against mpmath, in a subprocess; raises
    # EmittedCodeError (an EmitError) for a function outside its tolerance, so the family's
    # files are not written. The accuracy it measured goes into the docstrings.
    module = f"python/{verified.derivation.spec.name}.py"
    accuracy = check_module(verified, files[module])
    files[module] = python.with_accuracy(files[module], accuracy)
    return files


__all__ = ["EmittedCodeError", "check_module", "render_family"]
