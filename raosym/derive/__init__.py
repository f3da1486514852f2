"""The derive stage: FamilySpec -> Derivation (Fisher ladder, geometry, Rao distance, proof
steps)."""

from __future__ import annotations

import time

from raosym.derive.budget import DEFAULT_BUDGET
from raosym.derive.distance import derive_distance
from raosym.derive.fisher import fisher_entries, fisher_matrix, scores
from raosym.derive.geometry import derive_geometry
from raosym.derive.mechanism import derive_mechanism
from raosym.derive.steps import Derivation
from raosym.spec.model import FamilySpec


def derive(spec: FamilySpec, *, budget: float = DEFAULT_BUDGET) -> Derivation:
    """Derive the Fisher matrix, its geometry and (for at most two coordinates) the Rao
    distance, recording every step taken."""
    started = time.perf_counter()
    entries = fisher_entries(spec, budget=budget)
    fisher = fisher_matrix(spec, entries)
    geometry = derive_geometry(spec.coordinate_symbols, fisher)
    distance_started = time.perf_counter()
    distance = None
    if len(spec.coordinates) <= 2:
        distance = derive_distance(spec, fisher, geometry, budget=budget)
    distance_seconds = time.perf_counter() - distance_started
    mechanism = derive_mechanism(spec, fisher, distance, budget=budget)
    hypotheses = tuple(dict.fromkeys(h for entry in entries for h in entry.hypotheses))
    return Derivation(
        spec=spec,
        score=scores(spec),
        fisher=fisher,
        entries=entries,
        geometry=geometry,
        hypotheses=hypotheses,
        timings={"derive": time.perf_counter() - started, "distance": distance_seconds},
        distance=distance,
        mechanism=mechanism,
    )
