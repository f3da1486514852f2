"""``raosym new NAME [--like FAMILY]``: start a derivation file (before the spec stage).

Writes ``derivations/NAME.toml`` (or ``$RAOSYM_DERIVATIONS/NAME.toml``) either from
:data:`TEMPLATE`, a commented file that derives and verifies as it stands (the exponential
distribution in its scale ``theta``, Fisher information ``1/theta**2``) so a new user sees the
whole pipeline work before editing it, or as a copy of an existing family with its ``name``
changed. It never overwrites a file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from raosym.errors import SpecError

FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]*")
_NAME_LINE = re.compile(r'^name\s*=\s*"[^"\n]*"', re.MULTILINE)

TEMPLATE = '''\
# A noise family for raosym: edit this file, then run
#     raosym derive {name}      # derive and verify the Fisher information, print the results
#     raosym generate {name}    # also write generated/python/{name}.py and generated/latex/{name}.tex
# As written it is the exponential distribution with scale theta (Fisher information
# 1/theta^2), so it derives as it stands. The README lists every key, support and domain.

name = "{name}"    # lower case, digits and _; must match the file name
title = "{name}"   # free text, shown in the outputs
reference = ""     # optional: where the family comes from, e.g. "Amari and Nagaoka (2000)"

variable = "x"         # the random variable
support = "positive"   # real, positive, (0, 1), [0, n], integers >= 0, {{0, 1}}, ...

# The density (or, for a discrete support, the probability mass function). Parsed safely:
# numbers, the names declared below, + - * / **, and functions such as exp, log, sqrt, Abs,
# gamma, beta, binomial, erf. It must integrate (sum) to 1 over the support.
density = "exp(-x/theta) / theta"

[coordinates]   # the parameters the Fisher metric is taken in, in order, with their domains
theta = "positive"

[constants]     # parameters held fixed (optional): name = domain, e.g. N = "> 1/2"
'''


def new_derivation(name: str, *, like: str | None = None,
                   folder: str | os.PathLike | None = None) -> Path:
    """Write ``folder/NAME.toml`` from the template or from the family ``like``; return it."""
    from raosym.pipeline import derivations_folder, resolve

    folder = Path(folder) if folder is not None else derivations_folder()
    if not FAMILY_NAME.fullmatch(name):
        raise SpecError(f"the family name {name!r} is not allowed: use lower-case letters, "
                        "digits and _, starting with a letter (it names the derivation file "
                        "and the generated modules)", key="name")
    target = folder / f"{name}.toml"
    if like is None:
        text = TEMPLATE.format(name=name)
    else:
        source = resolve(like)
        text, count = _NAME_LINE.subn(f'name = "{name}"', source.read_text(encoding="utf-8"),
                                      count=1)
        if count == 0:
            raise SpecError("has no `name = \"...\"` line to change", path=str(source),
                            key="name")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "x", encoding="utf-8", newline="\n") as file:
            file.write(text)
    except FileExistsError:
        raise SpecError("the file already exists; raosym new never overwrites a derivation "
                        "file (choose another name, or edit that file)", path=str(target),
                        key="name") from None
    except OSError as error:
        raise SpecError(f"cannot write {target}: {error.strerror or error}",
                        path=str(target)) from None
    return target
