"""Results as text a person reads and as JSON a script reads (used by the CLI).

The JSON object of a family has the keys ``name``, ``title``, ``path``, ``coordinates``,
``constants``, ``fisher`` (k x k strings in SymPy syntax that ``sympy.sympify`` parses back;
null for an entry computed numerically),
``fisher_strategies``, ``line_element``, ``curvature``, ``scalar_curvature``, ``hypotheses``,
``rao_distance`` (the textbook closed form in the coordinates of two points suffixed ``_1`` and
``_2``, e.g. ``mu_1``, ``sigma_2``, in SymPy syntax; null without one), ``rao_distance_stable``
(the equal cancellation-free form), ``rao_distance_structure`` (what was recognized in the
metric: ``one coordinate``, ``constant metric``, ``location-scale half-plane``, ``product`` or
``numeric only``), ``rao_distance_reason`` (null, or why there is no closed form),
``unavailable`` (objects with ``quantity`` and ``reason``: what the family does not deliver and why),
``verification`` (objects with ``quantity``, ``point``, ``symbolic``, ``numeric``, ``digits``;
distance checks have quantity ``rao_distance`` or ``rao_distance_textbook`` and both points in
``point``), ``min_digits``, ``timings`` (seconds) and ``mechanism`` (null without a ``[mechanism]`` table,
else the Rao-DP budget, calibration, conversions, RDP curve and KL with their verification: see
:func:`raosym.verify.divergence.mechanism_report`).
"""

from __future__ import annotations

import sympy

from raosym.derive.fisher import NUMERIC
from raosym.verify.checks import REQUIRED_DIGITS, Verified
from raosym.verify.divergence import mechanism_report


def _string(expr) -> str | None:
    return None if expr is None else sympy.sstr(expr)


def as_json(verified: Verified) -> dict:
    derivation = verified.derivation
    spec, geometry = derivation.spec, derivation.geometry
    size = derivation.fisher.rows
    strategies = [["" for _ in range(size)] for _ in range(size)]
    for entry in derivation.entries:
        strategies[entry.row][entry.column] = strategies[entry.column][entry.row] = entry.strategy
    return {
        "name": spec.name,
        "title": spec.title,
        "path": spec.path,
        "sha256": spec.sha256,
        "variable": spec.variable.name,
        "support": spec.support.text,
        "density": sympy.sstr(spec.density),
        "coordinates": [p.name for p in spec.coordinates],
        "coordinate_domains": {p.name: p.domain.text for p in spec.coordinates},
        "constants": {p.name: p.domain.text for p in spec.constants},
        # A numeric entry (strategy "numeric") is null: it has no closed form to print.
        "fisher": [[None if strategies[i][j] == NUMERIC else sympy.sstr(derivation.fisher[i, j])
                    for j in range(size)] for i in range(size)],
        "fisher_strategies": strategies,
        "line_element": sympy.sstr(geometry.line_element),
        "curvature": _string(geometry.gaussian_curvature),
        "scalar_curvature": _string(geometry.scalar_curvature),
        "hypotheses": list(derivation.hypotheses),
        **_distance_json(derivation),
        "verification": [
            {
                "quantity": check.quantity,
                "point": check.point,
                "symbolic": check.symbolic,
                "numeric": check.numeric,
                "digits": check.digits,
                "reached": check.reached,  # false: the numeric side fell short, no verdict
            }
            for check in verified.checks
        ],
        "min_digits": verified.min_digits,
        "mechanism": mechanism_report(verified),  # null without a [mechanism] table
        "unavailable": [{"quantity": item.quantity, "reason": item.reason}
                        for item in verified.unavailable],
        "timings": {stage: round(seconds, 3) for stage, seconds in derivation.timings.items()},
    }


def _missing_distance(derivation) -> str:
    """Why a family has no Rao distance: the reason recorded with it, when it was derived and
    then dropped, else the number of coordinates."""
    for item in derivation.unavailable:
        if item.quantity == "Rao distance":
            return item.reason
    return "not derived for more than two coordinates"


def _distance_json(derivation) -> dict:
    distance = derivation.distance
    if distance is None:
        return {"rao_distance": None, "rao_distance_stable": None,
                "rao_distance_structure": None,
                "rao_distance_reason": _missing_distance(derivation)}
    return {
        "rao_distance": _string(distance.textbook),
        "rao_distance_stable": _string(distance.stable),
        "rao_distance_structure": distance.structure,
        "rao_distance_reason": distance.reason,
    }


def _distance_lines(derivation) -> list[str]:
    distance = derivation.distance
    if distance is None:
        return [f"  Rao distance: {_missing_distance(derivation)}"]
    lines = [f"  Rao distance ({distance.structure}):"]
    if distance.textbook is None:
        lines.append(f"    none in closed form: {distance.reason}")
    else:
        lines.append(f"    d = {sympy.sstr(distance.textbook)}")
        lines.append(f"      = {sympy.sstr(distance.stable)}    (cancellation-free)")
    return lines


def as_text(verified: Verified) -> str:
    derivation = verified.derivation
    spec, geometry = derivation.spec, derivation.geometry
    lines = [f"{spec.name}: {spec.title} ({spec.path})"]
    if spec.reference:
        lines.append(f"  reference:   {spec.reference}")
    if spec.multivariate:
        names = ", ".join(v.name for v in spec.variables)
        supports = ", ".join(f"{v} in {s.text}" for v, s in zip(spec.variables, spec.supports))
        lines.append(f"  density:     f({names}) = {sympy.sstr(spec.density)}, {supports}")
    else:
        lines.append(f"  density:     f({spec.variable}) = {sympy.sstr(spec.density)}, "
                     f"{spec.variable} in {spec.support.text}")
    lines.append("  coordinates: " + ", ".join(
        f"{p.name} in {p.domain.describe()}" for p in spec.coordinates))
    lines.append("  constants:   " + (", ".join(
        f"{p.name} in {p.domain.describe()}" for p in spec.constants) or "none"))
    lines.append("  hypotheses:  " + ("; ".join(derivation.hypotheses) or "none"))
    lines.append("  Fisher information g_ij = E[s_i s_j]:")
    for entry in derivation.entries:
        row, column = spec.coordinates[entry.row].name, spec.coordinates[entry.column].name
        value = "computed numerically" if entry.value is None else sympy.sstr(entry.value)
        lines.append(f"    g[{row},{column}] = {value}    ({entry.strategy})")
    lines.append(f"  line element: ds^2 = {sympy.sstr(geometry.line_element)}")
    if geometry.gaussian_curvature is not None:
        lines.append(f"  Gaussian curvature: K = {sympy.sstr(geometry.gaussian_curvature)}")
    elif geometry.scalar_curvature is not None:
        lines.append(f"  scalar curvature: R = {sympy.sstr(geometry.scalar_curvature)}")
    if derivation.distance is not None or len(spec.coordinates) > 2:
        lines += _distance_lines(derivation)
    lines += _mechanism_lines(mechanism_report(verified))
    for item in verified.unavailable:
        lines.append(f"  unavailable: {item.quantity}: {item.reason}")
    lines.append(_verification_table(verified))
    return "\n".join(lines)


def _mechanism_lines(mechanism: dict | None) -> list[str]:
    """The mechanism's results in the text output (the ``mechanism`` object of the JSON, with
    the textbook forms; ``--json`` also gives the cancellation-free ones): Rao-DP budget,
    calibration, composition, conversions, RDP curve, KL and their verification."""
    if mechanism is None:
        return []
    lines = [f"  mechanism ({mechanism['kind']}): distances in {mechanism['manifold']}",
             f"    Rao-DP budget: theta = {mechanism['rao_dp_theta']}"
             + (f"    (constant k = {mechanism['rao_dp_constant']})"
                if mechanism["rao_dp_constant"] is not None else "")]
    calibration = mechanism["calibration"]
    if calibration is not None:
        note = (f"    (theta-Rao-DP exactly; a larger {calibration['solves_for']} gives a "
                "smaller budget)" if mechanism["kind"] == "additive" else "")
        lines.append(f"    calibration: {calibration['solves_for']} = {calibration['value']}"
                     + note)
    if mechanism["composition"] is not None:
        lines.append(f"    composition of two releases: theta = {mechanism['composition']}")
    for conversion in mechanism["conversions"]:
        lines.append(f"    {conversion['name']} ({conversion['source']}): scale = "
                     f"{conversion['scale']}, theta = {conversion['rao_dp_theta']}")
    if mechanism["rdp_closed"]:
        zcdp = (f"    (rho-zCDP with rho = {mechanism['zcdp_rho']})"
                if mechanism["zcdp_rho"] is not None else "")
        lines.append(f"    RDP curve: D_alpha = {mechanism['rdp_curve']}    (alpha > 1){zcdp}")
        lines.append(f"    KL divergence: {mechanism['kl']}    (the limit alpha -> 1)")
    else:
        lines.append(f"    RDP curve and KL divergence: no closed form ({mechanism['rdp_reason']}); "
                     "the generated module computes them by quadrature")
    checks = "; ".join(f"{name} {entry['points']} points, {entry['min_digits']:g} digits"
                       for name, entry in mechanism["verification"].items())
    if checks:
        lines.append(f"    verified: {checks}")
    return lines


def _verification_table(verified: Verified) -> str:
    checks = verified.checks
    points = len({tuple(sorted(check.point.items())) for check in checks})
    others = sorted({check.required for check in checks} - {REQUIRED_DIGITS}, reverse=True)
    required = f"{REQUIRED_DIGITS} required" + (
        f"; distances {', '.join(f'{r:g}' for r in others)}" if others else "")
    lines = [(f"  verification: {len(checks)} checks at {points} points, min "
              f"{verified.min_digits:g} digits agreed ({required})")]
    width = max(len(check.quantity) for check in checks)
    for check in checks:
        point = ", ".join(f"{k}={v}" for k, v in check.point.items())
        needed = "" if check.required == REQUIRED_DIGITS else f" (of {check.required:g})"
        agreement = f"{check.digits:5.1f} digits{needed}" if check.reached else check.numeric
        lines.append(f"    {check.quantity:<{width}}  {agreement}  at {point}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- run summary


def summary_row(outcome) -> dict:
    """One family of a run (a :class:`~raosym.pipeline.FamilyOutcome`) as a JSON object:
    ``family``, ``entries`` (Fisher entries derived), ``checks``, ``digits`` (the worst
    agreement), ``seconds``, ``status`` (``ok``, ``partial`` when some quantities are unavailable, or the
    error type), ``cached``, ``error`` and ``unavailable`` (the quantities not delivered)."""
    from pathlib import Path

    row = {"family": Path(outcome.name).stem, "entries": None, "checks": None, "digits": None,
           "seconds": round(outcome.seconds, 3), "status": "ok", "cached": outcome.cached,
           "error": None}
    if outcome.error is not None:
        row.update(status=type(outcome.error).__name__, error=str(outcome.error))
    else:
        verified = outcome.verified
        row.update(entries=len(verified.derivation.entries), checks=len(verified.checks),
                   digits=round(verified.min_digits, 1),
                   unavailable=[item.quantity for item in verified.unavailable])
        if verified.unavailable:
            row["status"] = "partial"
    return row


def summary_table(outcomes, *, colour: bool = False) -> str:
    """The end-of-run table: family, entries derived, checks, digits agreed, time, status,
    cached; a last line with the totals."""
    header = ("family", "entries", "checks", "digits", "time", "status", "cached")
    rows = []
    for outcome in outcomes:
        row = summary_row(outcome)
        rows.append((row["family"], _cell(row["entries"]), _cell(row["checks"]),
                     _cell(row["digits"], "{:.1f}"), f"{row['seconds']:.1f} s", row["status"],
                     "yes" if row["cached"] else "no"))
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for row in rows:
        text = "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
        if colour:
            text = _COLOURS.get(row[5], "\033[31m") + text + "\033[0m"
        lines.append(text)
    partial = sum(1 for row in rows if row[5] == "partial")
    failed = sum(1 for row in rows if row[5] not in ("ok", "partial"))
    cached = sum(1 for row in rows if row[6] == "yes")
    lines.append(f"{len(rows)} families: {len(rows) - failed - partial} ok, "
                 + (f"{partial} partial (some quantities unavailable), " if partial else "")
                 + f"{failed} failed, {cached} from the cache")
    return "\n".join(lines)


#: Row colours of the summary table: green for ok, yellow for partial, red for failures.
_COLOURS = {"ok": "\033[32m", "partial": "\033[33m"}


def _cell(value, form: str = "{}") -> str:
    return "-" if value is None else form.format(value)
