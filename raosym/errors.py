"""raosym's own exception types.

Every stage of the pipeline (spec → derive → verify → emit → write) and the runtime
accounting (:mod:`raosym.accounting`) raise one of these, so the CLI can map them to exit statuses: bad input is 2, a failed check is 1. An error carries
the file, the key and the position when there is one, and says what was expected.
"""

from __future__ import annotations


class RaosymError(Exception):
    """Base class of every error raosym raises on purpose."""

    exit_status = 2


class SpecError(RaosymError):
    """A derivation file is malformed, unsafe or mathematically invalid (exit status 2).

    ``where`` is rendered as ``file:line:column: key 'name':`` in front of the message, as
    much of it as is known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        key: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.key = key
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        location = ""
        if self.path:
            location = str(self.path)
            if self.line is not None:
                location += f":{self.line}"
                if self.column is not None:
                    location += f":{self.column}"
            location += ": "
        key = f"key '{self.key}': " if self.key else ""
        return f"{location}{key}{self.message}"

    def located(self, **where) -> "SpecError":
        """The same error with missing location fields filled in."""
        fields = dict(path=self.path, key=self.key, line=self.line, column=self.column)
        for name, value in where.items():
            if fields.get(name) is None:
                fields[name] = value
        return SpecError(self.message, **fields)


class DerivationError(RaosymError):
    """SymPy could not close a quantity (every strategy declined, or the budget ran out)."""

    exit_status = 1


class VerificationError(RaosymError):
    """A symbolic result disagrees with its high-precision numeric check (exit status 1)."""

    exit_status = 1


class EmitError(RaosymError):
    """A verified result cannot be emitted: a function no backend can print, a name that
    clashes with the generated code, or a LaTeX compile failure (exit status 1).

    ``quantity`` names the optional quantity the failure belongs to ("Rao distance",
    "privacy accounting"), which the family can do without; None for the family as a whole."""

    exit_status = 1

    def __init__(self, message: str, quantity: str | None = None) -> None:
        super().__init__(message)
        self.quantity = quantity


class AccountingError(RaosymError):
    """Bad input to the accounting layer: an unknown mechanism or parameter, a value out of its
    domain, a target no parameter value meets (exit status 2)."""

    exit_status = 2


class AccountingFailure(RaosymError):
    """A numeric step of the accounting did not converge (exit status 1)."""

    exit_status = 1
