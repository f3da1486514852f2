"""Names in one place: the identifiers raosym itself uses, which a parameter may not take.

Read by the spec stage (to refuse a name at once, with the file and key) and by the Python
backend (to give a parameter a local variable that collides with nothing). The rule:

- In generated modules every internal helper and every local variable of a function that
  takes user-named arguments starts with ``_`` (``_point``, ``_argument``, ``_shape``), and a
  parameter name never does (the spec refuses it), so those cannot collide.
- A *constant* is a keyword argument of the public functions, under its own name: it may not
  be one of :data:`PUBLIC_NAMES` (the public functions' other arguments, the module's globals
  and Python's builtins, which the function bodies use and a keyword argument would shadow).
- A *coordinate* is never an argument (it travels inside ``theta``): its local variable is
  its name, or its name with ``_`` appended when the name is in :data:`LOCAL_NAMES`.
- The Rao distance is derived between two points whose coordinates the engine names
  ``NAME_1`` and ``NAME_2`` (:func:`point_name`); no parameter may take such a name (a
  constant ``mu_1`` beside a coordinate ``mu`` crashed verification with a duplicate argument,
  and with equal assumptions would have been the same SymPy symbol as the point's).
- In a family with a ``[mechanism]`` the derivation engine uses the symbols of
  :data:`MECHANISM_NAMES` itself (the Rényi order, the Rao-DP budget, the sensitivity), so no
  parameter of such a family may be called that. The excess ``alpha - 1`` of the order is an
  internal symbol (:data:`EXCESS_NAME`, which no parameter can take): a proof writes it with
  the first letter of :data:`EXCESS_LETTERS` the family leaves free (:func:`excess_letter`).
- The mpmath functions the verify stage and the gate print with lambdify bind each argument's
  name in the namespace of the code they run, beside ``mpmath``: :func:`hidden_arguments`
  renames the arguments ``_`` + their name first (a parameter ``mpmath`` crashed
  verification).
"""

from __future__ import annotations

import builtins
import keyword

import sympy

#: Functions and globals of a generated module, and the arguments of its public functions.
MODULE_NAMES = frozenset({
    "np", "math", "scipy", "COORDINATES", "CONSTANTS", "GeodesicError",
    "fisher_information", "line_element", "gaussian_curvature", "rao_distance",
    "rao_dp_theta", "rao_dp_scale", "rao_dp_parameter", "rdp_epsilon", "kl_divergence",
    "theta", "dtheta", "theta1", "theta2",
})
#: What a constant (a keyword argument of the generated functions) may not be called.
PUBLIC_NAMES = MODULE_NAMES | frozenset(dir(builtins))
#: What a coordinate's local variable may not be called (it is renamed instead): the public
#: names, the locals the function bodies assign without a leading ``_``, and E741's
#: ambiguous l, O, I.
LOCAL_NAMES = PUBLIC_NAMES | frozenset({
    "fisher", "curvature", "metric", "christoffel", "value", "alpha", "sensitivity",
    "l", "O", "I", *keyword.kwlist,
})
#: Names the derivation engine gives its own symbols in a mechanism family: the Rényi order
#: alpha, the Rao-DP budget theta, and the sensitivity (Delta in formulas, ``sensitivity`` in
#: generated code).
MECHANISM_NAMES = {
    "alpha": "the order of the Renyi divergence",
    "theta": "the Rao-DP budget",
    "sensitivity": "the sensitivity argument of the generated accounting functions",
    "Delta": "the sensitivity of the mechanism",
}


#: The name of the engine's symbol for the excess ``alpha - 1`` of the Rényi order (a leading
#: ``_``, which a parameter name never has: it cannot be a parameter's symbol).
EXCESS_NAME = "_excess"
#: The letters a proof may write the excess with, in order of preference.
EXCESS_LETTERS = ("a", "b", "c", "u", "v", "w")


def excess_letter(spec) -> str:
    """The letter a family's proofs write the excess ``alpha - 1`` with: the first of
    :data:`EXCESS_LETTERS` that names none of its parameters and sample variables, so
    ``a = alpha - 1`` never reads as a parameter called ``a``."""
    variables = getattr(spec, "sample_variables", ())  # a printer's stand-in spec has none
    taken = {p.name for p in spec.parameters} | {v.name for v in variables}
    return next((letter for letter in EXCESS_LETTERS if letter not in taken), "a'")


def constant_name_problem(name: str) -> str | None:
    """Why a constant may not be called ``name`` (None when it may)."""
    if name in PUBLIC_NAMES:
        what = "a Python builtin" if name in dir(builtins) else "a name of the generated module"
        return (f"the constant name '{name}' is {what}: as a keyword argument of the generated "
                "functions it would hide it; choose another name")
    return None


def mechanism_name_problem(name: str) -> str | None:
    """Why a parameter of a mechanism family may not be called ``name`` (None when it may):
    the engine's own symbols, and the public names (the accounting functions take the
    mechanism's parameters, coordinates too, as arguments under their own names)."""
    if name in MECHANISM_NAMES:
        return (f"'{name}' names {MECHANISM_NAMES[name]} in a mechanism family; rename the "
                "parameter")
    if name in PUBLIC_NAMES:
        return (f"the parameter name '{name}' is a name of the generated module or a Python "
                "builtin, and a mechanism's parameters are arguments of its accounting "
                "functions; rename it")
    return None


def local_name(name: str, taken: set[str]) -> str:
    """The local variable of a parameter in generated code: ``name``, or ``name_`` (with more
    ``_`` while that is the name of another parameter) when ``name`` is reserved."""
    if name not in LOCAL_NAMES:
        return name
    local = name + "_"
    while local in taken or local in LOCAL_NAMES:
        local += "_"
    return local


def point_name(coordinate: str, point: int) -> str:
    """The name of ``coordinate`` at the first or second point of a distance: ``mu_1``."""
    return f"{coordinate}_{point}"


def point_name_problem(name: str, coordinates) -> str | None:
    """Why a parameter may not be called ``name`` in a family with these coordinates: it is
    the name of a coordinate at one of the two points of the Rao distance (None when it may)."""
    for coordinate in coordinates:
        for point, which in ((1, "first"), (2, "second")):
            if name == point_name(coordinate, point):
                return (f"'{name}' is the name raosym gives the coordinate '{coordinate}' at "
                        f"the {which} of the two points of the Rao distance; rename the "
                        "parameter")
    return None


def hidden_arguments(symbols, expr):
    """The arguments renamed ``_`` + their name (which no parameter may start with), with
    the same assumptions, and the expression in them: lambdify binds each argument's name in
    the namespace of the function it prints, where a parameter called ``mpmath`` would hide
    the module. Symbols, not Dummies: a Dummy's sort key holds its creation count, and the
    printed code (so its last bits) would depend on the order families are worked on."""
    hidden, taken = [], set()
    for symbol in symbols:
        # The stages' own symbols may share a name with a parameter (a Dummy c of the
        # quadrature beside a coordinate c): one more underscore each time a name is taken.
        name = f"_{symbol.name}"
        while name in taken:
            name = f"_{name}"
        taken.add(name)
        hidden.append(sympy.Symbol(name, **symbol.assumptions0))
    replace = dict(zip(symbols, hidden))

    def renamed(e):
        return [renamed(item) for item in e] if isinstance(e, (list, tuple)) else (
            sympy.sympify(e).xreplace(replace))

    return hidden, renamed(expr)
