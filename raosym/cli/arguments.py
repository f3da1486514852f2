"""The command line's NAME=VALUE arguments, parsed in one place.

Every command that takes values by name reads them here: ``--param sigma=4`` and a
mechanism's own options (``--s 2``, ``--N=1.5``) of ``raosym account`` and ``raosym
calibrate``, ``--with laplace_location:b=2:repeat=10``, the panels of ``raosym plot rdp``
and ``--centre mu=0`` of ``raosym plot geodesics``. Numbers are read with float(): nothing a
user types is evaluated. Errors are :class:`~raosym.errors.AccountingError` (exit status 2)
unless the caller names another error type.
"""

from __future__ import annotations

import math

from raosym.accounting.mechanisms import IDENTIFIER
from raosym.errors import AccountingError


def name_and_value(text: str, where: str, *, names=None,
                   error=AccountingError) -> tuple[str, str]:
    """``NAME=VALUE`` split at its first ``=``, NAME an identifier (one of ``names`` when
    given); the value's text is returned unparsed."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if names is not None and name not in names:
        raise error(f"{where}: expected NAME=VALUE with NAME one of "
                    f"{', '.join(names) or '(none)'}")
    if not equals or not IDENTIFIER.match(name):
        raise error(f"{where}: expected NAME=VALUE, got {text!r}")
    return name, value


def number(text, where: str, *, error=AccountingError) -> float:
    """A finite float (float() parses the text: nothing is evaluated)."""
    try:
        value = float(text)
    except ValueError:
        raise error(f"{where}: expected a number; got {text!r}") from None
    if not math.isfinite(value):
        raise error(f"{where}: expected a finite number; got {text!r}")
    return value


def named_assignments(text: str, where: str) -> tuple[str, list[tuple[str, str]]]:
    """``NAME:KEY=VALUE[:KEY=VALUE...]`` (a mechanism and its values) as ``(NAME, [(KEY,
    VALUE text), ...])``."""
    name, *assignments = text.split(":")
    return name, [name_and_value(assignment, where) for assignment in assignments]


def parameter_options(tokens: list[str]) -> list[tuple[str, str]]:
    """``--NAME VALUE`` and ``--NAME=VALUE`` options argparse did not know, as (name, text)
    pairs: a mechanism's own parameters (``--s 2``, ``--N 1.5``). Whether the mechanism has
    such a parameter is checked when its values are
    (:meth:`raosym.accounting.Mechanism.check`)."""
    pairs, index = [], 0
    while index < len(tokens):
        token = tokens[index]
        name, equals, text = token[2:].partition("=") if token.startswith("--") else ("", "", "")
        if not IDENTIFIER.match(name):
            raise AccountingError(
                f"unrecognized argument {token!r}: a mechanism parameter is given as --NAME "
                "VALUE, --NAME=VALUE or --param NAME=VALUE")
        if not equals:
            if index + 1 >= len(tokens) or tokens[index + 1].startswith("--"):
                raise AccountingError(f"--{name}: expected a value (--{name} VALUE)")
            index += 1
            text = tokens[index]
        pairs.append((name, text))
        index += 1
    return pairs
