r"""How free text reaches generated files: the only ways in, each proved by a property test.

Emit stage, shared by the backends. A derivation file's title, reference, domain texts and
the name of the folder it sits in are written by users; they must never become code. Every
such text enters a generated file through one of these functions
(``tests/test_escaping.py`` checks them on arbitrary Unicode, lone surrogates included):

- :func:`docstring_literal`: a Python triple-quoted literal whose value is the text, exactly
  (``ast.literal_eval`` gives it back). Backslashes are doubled, a ``"`` that could end the
  literal is escaped, and every character Python's tokenizer would read differently or that a
  UTF-8 file cannot hold (``\r``, NUL, other controls, lone surrogates, line separators) is
  written as its escape sequence; ``\N{...}`` and ``\u...`` in the text stay text.
- :func:`comment_text`: one line for a ``#`` (Python) or ``%`` (TeX) comment: printable ASCII
  only, everything else (a newline above all, which would end the comment) as a backslash
  escape, so the header still names the file faithfully.

Plain text for TeX (:func:`raosym.emit.latex.printer.tex_text`) lives with the LaTeX printer.
"""

from __future__ import annotations


def _escape_character(character: str) -> str:
    """Python's escape sequence of one character (``\x00``, ``\u2028``, ``\udc80``)."""
    code = ord(character)
    if character == "\n":
        return "\\n"
    if character == "\t":
        return "\\t"
    if character == "\r":
        return "\\r"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def docstring_body(text: str) -> str:
    """The characters between the quotes of ``docstring_literal(text)``."""
    pieces = []
    for index, character in enumerate(text):
        if character == "\\":
            pieces.append("\\\\")
        elif character == '"' and (index + 1 == len(text) or text[index + 1] == '"'):
            # Escaped when another quote follows (no run of three can form) or at the end
            # (it would merge with the closing quotes); a lone quote inside stays as it is.
            pieces.append('\\"')
        elif character == "\n" or (character.isprintable() and not 0xD800 <= ord(character) < 0xE000):
            pieces.append(character)
        else:
            pieces.append(_escape_character(character))
    return "".join(pieces)


def docstring_literal(text: str) -> str:
    """A ``\"\"\"...\"\"\"`` literal of ``text``: Python source whose value is ``text``."""
    return '"""' + docstring_body(text) + '"""'


def comment_text(text: str) -> str:
    """``text`` as one line of printable ASCII, for a ``#`` or ``%`` comment."""
    return "".join("\\\\" if character == "\\"
                   else character if " " <= character <= "~"
                   else _escape_character(character)
                   for character in text)
