"""Riemannian geometry of the Fisher metric: line element, Christoffel symbols, curvature.

Derive stage, after the Fisher ladder. Input: the coordinates and the metric ``g``. Output: a
:class:`Geometry`. Conventions: ``Gamma^k_ij = 1/2 g^kl (d_i g_jl + d_j g_il - d_l g_ij)``,
``R^a_bcd = d_c Gamma^a_db - d_d Gamma^a_cb + Gamma^a_ce Gamma^e_db - Gamma^a_de Gamma^e_cb``,
Ricci ``R_bd = R^a_bad``, scalar ``R = g^bd R_bd``; for two coordinates the Gaussian curvature
is ``K = R/2`` (the Poincare half-plane ``(dx^2 + dy^2)/y^2`` has ``K = -1``).
"""

from __future__ import annotations

import functools

import sympy

from raosym.derive.integrals import tidy
from raosym.derive.steps import Geometry, ProofStep, Unavailable


def differentials(coordinates) -> tuple[sympy.Symbol, ...]:
    """The symbols ``d mu``, ``d sigma`` ... of the line element."""
    return tuple(sympy.Symbol(f"d{theta.name}") for theta in coordinates)


def line_element(coordinates, metric: sympy.Matrix) -> sympy.Expr:
    """``ds^2 = sum_ij g_ij dtheta^i dtheta^j``."""
    d = differentials(coordinates)
    size = len(coordinates)
    return sympy.Add(*(
        (1 if i == j else 2) * metric[i, j] * d[i] * d[j]
        for i in range(size) for j in range(i, size)
    ))


def inverse_metric(metric: sympy.Matrix) -> sympy.ImmutableMatrix:
    """``g⁻¹``, through :func:`_inverse_through_placeholders`. Computed once per metric: the
    connection and the curvature both need it."""
    return _inverse(sympy.ImmutableMatrix(metric))


@functools.lru_cache(maxsize=8)
def _inverse(metric: sympy.ImmutableMatrix) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix(_inverse_through_placeholders(metric))


def _inverse_through_placeholders(metric: sympy.Matrix) -> sympy.Matrix:
    """The inverse of a symmetric metric computed with a plain symbol in place of each
    nonzero entry (rational arithmetic, no pivot to test; the zero pattern, e.g. a block
    structure, is kept), the entries substituted afterwards. SymPy's own ``inv`` eliminates
    on the entries themselves and simplifies every product on the way: 12 to 34 s for the
    Kumaraswamy family's polygamma metric, against 0.1 s here, and the Christoffel symbols
    and curvatures simplified from the two inverses are identical for every catalog family.
    It also tests pivots for zero at random numeric points, which fails where SymPy cannot
    evaluate an entry there (polygamma of a shape coordinate)."""
    size = metric.rows
    placeholders = {}
    pattern = sympy.zeros(size, size)
    for i in range(size):
        for j in range(i, size):
            if metric[i, j] != 0:
                symbol = sympy.Dummy(f"g{i}{j}")
                placeholders[symbol] = metric[i, j]
                pattern[i, j] = pattern[j, i] = symbol
    inverse = pattern.inv()
    return inverse.applyfunc(lambda e: sympy.cancel(sympy.factor(e)).xreplace(placeholders))


def christoffel_symbols(coordinates, metric: sympy.Matrix, canonical=None):
    """``Gamma[k][i][j] = Gamma^k_ij`` of the Levi-Civita connection, each in the form
    ``canonical`` gives it (:func:`tidy` by default)."""
    canonical = canonical or tidy
    size = len(coordinates)
    inverse = inverse_metric(metric)
    d = [[[sympy.diff(metric[i, j], coordinates[l]) for l in range(size)] for j in range(size)]
         for i in range(size)]
    # Gamma^k_ij = Gamma^k_ji: each pair is simplified once (tidy is most of a 3-coordinate
    # family's derivation time) and mirrored; the sum is the same expression either way.
    lower = {(k, i, j): canonical(sum(inverse[k, l] * (d[j][l][i] + d[i][l][j] - d[i][j][l])
                                 for l in range(size)) / 2)
             for k in range(size) for i in range(size) for j in range(i, size)}
    return tuple(tuple(tuple(lower[k, min(i, j), max(i, j)] for j in range(size))
                       for i in range(size)) for k in range(size))


def scalar_curvature(coordinates, metric: sympy.Matrix, christoffel) -> sympy.Expr:
    """The Ricci scalar of the metric, or None when its raw form is too large to simplify."""
    raw = _raw_scalar_curvature(coordinates, metric, christoffel)
    if sympy.count_ops(raw) > (SIMPLIFY_LIMIT if len(coordinates) > 2 else SIMPLIFY_LIMIT_2D):
        return None  # simplifying it would take minutes (geometry_unavailable says why)
    return tidy(raw)


def _raw_scalar_curvature(coordinates, metric: sympy.Matrix, christoffel) -> sympy.Expr:
    """``g^(bd) R_bd``, unsimplified."""
    size = len(coordinates)
    gamma = christoffel

    def riemann(a, b, c, d):
        value = sympy.diff(gamma[a][d][b], coordinates[c]) - sympy.diff(gamma[a][c][b], coordinates[d])
        for e in range(size):
            value += gamma[a][c][e] * gamma[e][d][b] - gamma[a][d][e] * gamma[e][c][b]
        return value

    ricci = sympy.Matrix(size, size, lambda b, d: sum(riemann(a, b, a, d) for a in range(size)))
    inverse = inverse_metric(metric)
    return sum(inverse[b, d] * ricci[b, d] for b in range(size) for d in range(size))


def _raw_scalar_curvature_size(coordinates, metric, christoffel) -> int:
    return sympy.count_ops(_raw_scalar_curvature(coordinates, metric, christoffel))


#: Operations above which the raw scalar curvature of three or more coordinates is not
#: simplified, and so not derived: a size, never a clock, decides (the output must not depend
#: on the machine's speed). Polygamma metrics of three coordinates exceed it.
SIMPLIFY_LIMIT = 1500
#: The same, for the raw form built from Christoffel symbols that are cancelled but not
#: simplified (see :func:`_connection`).
CANCELLED_SCREEN = 4 * SIMPLIFY_LIMIT
#: The same for two coordinates, where the curvature is a single Gaussian curvature: the
#: Beta family's raw form has 1,085 operations and simplifies in seconds; the Kumaraswamy
#: family's (polygammas of b and b - 1 over removable poles) ran for minutes.
SIMPLIFY_LIMIT_2D = 6000


def geometry_unavailable(coordinates, geometry: Geometry):
    """The curvature quantities the derivation does without, as ``Unavailable`` records."""
    if geometry.scalar_curvature is None:
        two = len(coordinates) == 2
        yield Unavailable(
            "Gaussian curvature" if two else "scalar curvature",
            "not derived: the unsimplified Ricci scalar has more than "
            f"{SIMPLIFY_LIMIT_2D if two else SIMPLIFY_LIMIT} operations, beyond what raosym "
            "simplifies symbolically")


def metric_only_geometry(coordinates, metric: sympy.Matrix) -> Geometry:
    """The line element alone, for a metric with entries known only numerically (their
    symbols stand in the matrix): no connection and no curvature are derived from it."""
    ds2 = line_element(coordinates, metric)
    steps = (ProofStep("The line element of the Fisher metric.", sympy.Symbol("ds") ** 2, ds2,
                       "`ds^2 = Σ_ij g_ij dtheta^i dtheta^j`", "geometry"),)
    return Geometry(ds2, differentials(coordinates), None, None, None, steps)


def _connection(coordinates, metric: sympy.Matrix):
    """The Christoffel symbols the curvature is computed from. With three or more coordinates
    they serve the scalar curvature alone (distances are derived for two at most), and
    simplifying their 18 or more symbols is most of such a family's derivation time. So the
    raw Ricci scalar is first built from the symbols merely cancelled: beyond
    ``CANCELLED_SCREEN`` operations they are not simplified and the curvature is not derived.
    Simplifying shrinks that raw form by a factor 1.4 to 1.9 in the metrics measured
    (Student-t in (mu, s, nu): 9,112 operations cancelled, 4,919 simplified), so a screen at
    four times ``SIMPLIFY_LIMIT`` lets through every family the exact test after
    simplification would accept. A size decides, never a clock."""
    if len(coordinates) > 2:
        cancelled = christoffel_symbols(coordinates, metric, sympy.cancel)
        if _raw_scalar_curvature_size(coordinates, metric, cancelled) > CANCELLED_SCREEN:
            return cancelled
    return christoffel_symbols(coordinates, metric)


def derive_geometry(coordinates, metric: sympy.Matrix) -> Geometry:
    """Line element, Christoffel symbols and curvature of the Fisher metric."""
    ds2 = line_element(coordinates, metric)
    steps = [ProofStep("The line element of the Fisher metric.", sympy.Symbol("ds") ** 2, ds2,
                       "`ds^2 = Σ_ij g_ij dtheta^i dtheta^j`", "geometry")]
    if len(coordinates) == 1:
        # A one-dimensional manifold is flat: there is no intrinsic curvature.
        gamma = christoffel_symbols(coordinates, metric)
        return Geometry(ds2, differentials(coordinates), gamma, sympy.S.Zero, None, tuple(steps))
    gamma = _connection(coordinates, metric)
    scalar = scalar_curvature(coordinates, metric, gamma)
    gaussian = tidy(scalar / 2) if len(coordinates) == 2 and scalar is not None else None
    if scalar is not None:
        steps.append(ProofStep(
            "The scalar curvature, from the Christoffel symbols of the metric.",
            sympy.Symbol("R"), scalar,
            "the trace `R = g^(bd) R_bd` of the Ricci tensor of the Levi-Civita connection of g",
            "geometry"))
    if gaussian is not None:
        steps.append(ProofStep("The Gaussian curvature of the two-dimensional metric.",
                               sympy.Symbol("K"), gaussian, "K = R/2 in dimension two",
                               "geometry"))
    return Geometry(ds2, differentials(coordinates), gamma, scalar, gaussian, tuple(steps))
