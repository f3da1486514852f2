r"""Jinja environments of the emit stage, and the digest that names a template folder.

Emit stage, shared by every backend. Templates only lay out strings that Python code already
printed (with the backend's SymPy printer); they never call SymPy. Every environment uses
``StrictUndefined`` (a misspelt variable is an error, not an empty string), no autoescaping
(the backends escape what they print) and keeps the trailing newline of a template.

LaTeX templates use their own delimiters, because Jinja's defaults clash with TeX (``{#1}``
opens a Jinja comment) and parentheses clash with TeX's own ``f(x)``::

    \BLOCK{ block }      \VAR{ variable }      \#{ comment }
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2

#: Delimiters of LaTeX templates (Jinja's ``{% %}``, ``{{ }}``, ``{# #}`` clash with TeX).
LATEX_DELIMITERS = {
    "block_start_string": r"\BLOCK{",
    "block_end_string": "}",
    "variable_start_string": r"\VAR{",
    "variable_end_string": "}",
    "comment_start_string": r"\#{",
    "comment_end_string": "}",
    "line_statement_prefix": None,
    "line_comment_prefix": None,
}


def environment(templates: Path, *, latex: bool = False) -> jinja2.Environment:
    """The Jinja environment of one backend's template folder."""
    delimiters = LATEX_DELIMITERS if latex else {}
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        **delimiters,
    )


def template_digest(templates: Path) -> str:
    """sha256 over the names and bytes of every template in a folder (sorted, so stable).

    Generated files carry it in their header: editing any template changes every file the
    backend writes, which the drift check (``raosym generate --check``) then reports.
    """
    digest = hashlib.sha256()
    for path in sorted(templates.rglob("*.j2")):
        digest.update(path.relative_to(templates).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
