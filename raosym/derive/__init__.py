"""The derive stage: FamilySpec -> Derivation (Fisher ladder, geometry, Rao distance, proof
steps)."""

from __future__ import annotations

import time

import sympy

from raosym.derive.budget import DEFAULT_BUDGET, BudgetExceeded
from raosym.derive.distance import derive_distance, numeric_metric_distance
from raosym.derive.fisher import fisher_entries, fisher_matrix, numeric_entries, scores
from raosym.derive.geometry import derive_geometry, geometry_unavailable, metric_only_geometry
from raosym.derive.mechanism import derive_mechanism
from raosym.derive.multivariate import multivariate_distance
from raosym.derive.steps import Derivation, Unavailable
from raosym.errors import DerivationError
from raosym.spec.model import FamilySpec


def derive(spec: FamilySpec, *, budget: float = DEFAULT_BUDGET) -> Derivation:
    """Derive the Fisher matrix, its geometry and the Rao distance (closed, or a numeric
    geodesic for the emitted solver), recording every step taken.

    The Fisher matrix is the one quantity a family cannot do without (its failure is an
    error); the distance, the curvature of three or more coordinates and the privacy
    accounting that cannot be derived are recorded in ``Derivation.unavailable`` instead.
    A SymPy call that runs out of its time budget (:class:`BudgetExceeded`) is never recorded
    so: it fails the family, whatever it was computing, because what the generated files hold
    must not depend on how fast the machine was."""
    started = time.perf_counter()
    entries = fisher_entries(spec, budget=budget)
    fisher = fisher_matrix(spec, entries)
    numeric = numeric_entries(entries)
    if numeric:
        geometry = metric_only_geometry(spec.coordinate_symbols, fisher)
        names = ", ".join(sympy.sstr(fisher[e.row, e.column]) for e in numeric)
        unavailable = [Unavailable(quantity, f"not derived: the metric entries {names} are "
                                   f"known only numerically{why}")
                       for quantity, why in _missing_with_numeric_metric(spec)]
    else:
        geometry = derive_geometry(spec.coordinate_symbols, fisher)
        unavailable = list(geometry_unavailable(spec.coordinate_symbols, geometry))
    distance_started = time.perf_counter()
    distance = None
    if numeric and not _missing_with_numeric_metric(spec):
        distance = numeric_metric_distance(spec, fisher)
    elif not numeric:
        # Any number of coordinates: what no recognizer closes is a numeric geodesic.
        distance_of = multivariate_distance if spec.multivariate else derive_distance
        try:
            distance = distance_of(spec, fisher, geometry, budget=budget)
        except BudgetExceeded:
            raise
        except DerivationError as error:
            unavailable.append(Unavailable("Rao distance", f"not derived: {error}"))
    distance_seconds = time.perf_counter() - distance_started
    mechanism = None
    if spec.mechanism is not None and spec.multivariate and not spec.mechanism.vector:
        unavailable.append(Unavailable(
            "privacy accounting", "not derived: a mechanism of several variables is derived "
            'for a vector location (location = ["m1", ...] with sensitivity = "l2" or "l1")'))
    elif spec.mechanism is not None:
        try:
            mechanism = derive_mechanism(spec, fisher, distance, budget=budget)
        except BudgetExceeded:
            raise
        except DerivationError as error:
            unavailable.append(Unavailable("privacy accounting", f"not derived: {error}"))
        placeholders = {fisher[e.row, e.column] for e in numeric}
        if mechanism is not None and mechanism.theta.has(*placeholders):
            mechanism = None
            unavailable.append(Unavailable(
                "privacy accounting", "not derived: the metric entry of the data-dependent "
                "parameter is known only numerically"))
    hypotheses = tuple(dict.fromkeys(h for entry in entries for h in entry.hypotheses))
    return Derivation(
        spec=spec,
        fisher=fisher,
        entries=entries,
        geometry=geometry,
        hypotheses=hypotheses,
        timings={"derive": time.perf_counter() - started, "distance": distance_seconds},
        distance=distance,
        mechanism=mechanism,
        unavailable=tuple(unavailable),
        scores=scores(spec),
    )


def _missing_with_numeric_metric(spec: FamilySpec) -> tuple[tuple[str, str], ...]:
    """What a metric with entries known only numerically leaves underived, and the end of the
    reason. A line has no curvature to miss, and its distance needs no connection: the
    integral of sqrt(g) along the segment, delivered where each value of g is a quadrature.
    On a support of infinitely many integers each value is a series summed term by term in
    mpmath (a second for the Yule-Simon shape): the integral of such values is not verified,
    nor delivered."""
    if len(spec.coordinates) > 1:
        return (("curvature", ""), ("Rao distance", ""))
    support = spec.support
    if support.kind == "integers" and not (support.lower.is_finite and support.upper.is_finite):
        return (("Rao distance", (", each value an infinite series: the integral of "
                                  "sqrt(g) over such values is beyond the verification's "
                                  "means")),)
    return ()
