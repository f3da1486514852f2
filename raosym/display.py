"""Notebook display: a FamilySpec, Derivation or Verified as LaTeX.

Outside the pipeline: the package root registers :func:`record_latex` with IPython's LaTeX
formatter for the objects ``raosym.load``, ``raosym.derive`` and ``raosym.run`` return (by
type name, so that no record imports this module). It reuses the
LaTeX backend's printer (:class:`~raosym.emit.latex.printer.ProofPrinter`: ``\\lambda`` for
``lam``, ``g_{\\mu\\sigma}`` for Fisher entries) and its equation layout, and returns one
``$$\\begin{aligned} ... \\end{aligned}$$`` block, which MathJax (notebooks) and LaTeX (PDF
export) both render: the density and support, the Fisher matrix, the line element and
curvature, the Rao distance, and then the proof steps of every Fisher entry in order.
"""

from __future__ import annotations

#: Characters that would end a ``\\text{...}`` group early or start math inside it.
_TEXT_SPECIALS = {"\\": "/", "{": "(", "}": ")", "$": "S", "%": " percent", "#": "no.",
                  "&": "and", "~": " "}


def plain_text(text: str) -> str:
    """Prose for ``\\text{...}``, made safe for both MathJax and LaTeX."""
    cleaned = "".join(_TEXT_SPECIALS.get(character, character) for character in text)
    return cleaned.replace("_", r"\_").replace("^", r"\^{}")


def _text(text: str) -> str:
    return rf"\text{{{plain_text(text)}}}"


def _prose(text: str, spec) -> str:
    """An engine sentence in math mode: its words in ``\text{...}``, its formulas (as the
    LaTeX backend sets them, see :mod:`raosym.emit.latex.prose`) as math."""
    from raosym.emit.latex.printer import symbol_latex
    from raosym.emit.latex.prose import Prose

    converted = Prose({p.name: symbol_latex(p.name) for p in spec.parameters},
                      escape=plain_text).latex(text)
    pieces = converted.split("$")
    return "".join(rf"\text{{{piece}}}" if index % 2 == 0 else piece
                   for index, piece in enumerate(pieces) if piece)


def _printer(spec):
    from raosym.emit.latex.printer import ProofPrinter

    return ProofPrinter(spec)


def _block(rows: list[str]) -> str:
    return "$$\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}$$"


def _spec_rows(spec, printer) -> list[str]:
    from raosym.emit.latex import domain_latex, support_latex

    kind = "probability mass function" if spec.support.discrete else "density"
    rows = [rf"&\textbf{{{plain_text(spec.name)}}}\ {_text('(' + spec.title + ')')}",
            (rf"&{_text(kind + ':')}\ f({printer.doprint(spec.variable)}) = "
             rf"{printer.doprint(spec.density)}, \quad {printer.doprint(spec.variable)} \in "
             rf"{support_latex(spec.support, printer)}")]
    parameters = [rf"{printer.doprint(p.symbol)} \in {domain_latex(p.domain, printer)}"
                  for p in spec.parameters]
    rows.append(rf"&{_text('coordinates and constants:')}\ " + ", \\quad ".join(parameters))
    return rows


def record_latex(record) -> str:
    """What a notebook shows of a FamilySpec, a Derivation or a Verified."""
    from raosym.derive.steps import Derivation
    from raosym.verify.checks import Verified

    if isinstance(record, Verified):
        return verified_latex(record)
    if isinstance(record, Derivation):
        return derivation_latex(record)
    return spec_latex(record)


def spec_latex(spec) -> str:
    """A FamilySpec: name, density, support, coordinates and constants."""
    return _block(_spec_rows(spec, _printer(spec)))


def derivation_latex(derivation) -> str:
    """A Derivation: the spec, the Fisher matrix, the geometry, the Rao distance and the
    proof steps of each Fisher entry."""
    return _block(_derivation_rows(derivation))


def verified_latex(verified) -> str:
    """A Verified: the derivation and a line with its numeric verification."""
    rows = _derivation_rows(verified.derivation)
    rows.insert(3, rf"&{_text(f'verified: {len(verified.checks)} checks, at least ')}"
                   rf"{verified.min_digits:.1f}\ {_text('digits agreed')}")
    return _block(rows)


def _derivation_rows(derivation) -> list[str]:
    from raosym.emit.latex import display_rows
    from raosym.emit.latex.printer import fisher_latex

    spec = derivation.spec
    printer = _printer(spec)
    rows = _spec_rows(spec, printer)
    rows.append(rf"&{_text('Fisher information:')}\ g = {printer.doprint(derivation.fisher)}")
    geometry = derivation.geometry
    rows.append(rf"&{_text('line element:')}\ \mathrm{{d}}s^2 = "
                rf"{printer.doprint(geometry.line_element)}")
    if geometry.gaussian_curvature is not None:
        rows.append(rf"&{_text('Gaussian curvature:')}\ K = "
                    rf"{printer.doprint(geometry.gaussian_curvature)}")
    rows += _distance_rows(derivation.distance, printer)
    for entry in derivation.entries:
        row, column = spec.coordinates[entry.row].name, spec.coordinates[entry.column].name
        symbol = fisher_latex(row, column)
        rows.append(rf"&{_text('Proof of')}\ {symbol} = {printer.doprint(entry.value)}\ "
                    rf"{_text('(' + entry.strategy + ')')}")
        for number, step in enumerate(entry.steps, start=1):
            rows.append(rf"&\quad {_prose(f'{number}. {step.claim}', spec)}")
            lhs = printer.doprint(step.lhs) if step.lhs is not None else ""
            for line in display_rows(lhs, step.rhs, printer):
                rows.append(r"&\qquad " + line.replace("&", ""))
            rows.append(rf"&\qquad {_prose('because ' + step.justification, spec)}")
    return rows


def _distance_rows(distance, printer) -> list[str]:
    if distance is None:
        return [rf"&{_text('Rao distance: not derived (more than two coordinates)')}"]
    if distance.textbook is None:
        reason = f"Rao distance ({distance.structure}): no closed form: {distance.reason or ''}"
        return [rf"&{_text(reason)}"]
    label = _text(f"Rao distance ({distance.structure}):")
    return [rf"&{label}\ d = {printer.doprint(distance.textbook)}"]
