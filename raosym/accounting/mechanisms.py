"""Generated mechanism modules behind one adapter, :class:`Mechanism` (runtime accounting).

``raosym generate`` writes, for every noise mechanism, ``generated/python/NAME.py`` with the
per-release accounting functions derived and verified from its density (``rdp_epsilon(alpha,
...)``, ``kl_divergence(...)``, ``rao_dp_theta(...)``, ``rao_dp_scale(sensitivity, theta,
...)`` or ``rao_dp_parameter(theta)``) and ``MECHANISM_DOMAINS``, the parameters' domains.
:func:`load_mechanism` imports such a module by file path (generated/ is not a package), so
the accounting works on whatever ``raosym generate`` wrote, and tests can hand it
independent curves. No SymPy: the module declares what the accounting needs.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from raosym.accounting.rdp import RdpCurve
from raosym.errors import AccountingError

#: The accounting functions a generated mechanism module may define. The Rao-DP calibration
#: is ``rao_dp_scale(sensitivity, theta, ...)`` for additive mechanisms (scale = Δ·k/θ) and
#: ``rao_dp_parameter(theta, ...)`` for others (randomized response's p).
ACCOUNTING_FUNCTIONS = ("rdp_epsilon", "kl_divergence", "rao_dp_theta", "rao_dp_scale",
                        "rao_dp_parameter")


@dataclass(frozen=True)
class Mechanism:
    """A noise mechanism's per-release accounting functions, called by parameter name.

    ``parameters`` are the arguments of ``rdp_epsilon`` after α (e.g. ``sensitivity, sigma``),
    the mechanism's own names; ``domains`` maps a parameter to its open interval (lower,
    upper), used to search for a calibration. Missing functions are None.
    """

    name: str
    parameters: tuple[str, ...]
    rdp_epsilon: Callable
    kl_divergence: Callable | None = None
    rao_dp_theta: Callable | None = None
    rao_dp_scale: Callable | None = None
    rao_dp_parameter: Callable | None = None
    domains: dict = field(default_factory=dict)
    source: str = ""
    #: The norm (``"l2"``, ``"l1"``) the sensitivity bounds for a vector query, from the
    #: module's ``MECHANISM_SENSITIVITY_NORM``; None for a scalar one.
    sensitivity_norm: str | None = None

    def check(self, values: dict) -> dict:
        """The parameter values as floats, every parameter present and no unknown one."""
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            raise AccountingError(
                f"mechanism {self.name} has no parameter {', '.join(map(repr, unknown))}; "
                f"its parameters are {', '.join(self.parameters)}")
        missing = [name for name in self.parameters if name not in values]
        if missing:
            raise AccountingError(
                f"mechanism {self.name} needs a value for {', '.join(missing)} "
                f"(parameters: {', '.join(self.parameters)})")
        return {name: float(values[name]) for name in self.parameters}

    def curve(self, **values) -> RdpCurve:
        """The RDP curve of one release with these parameter values."""
        values = self.check(values)
        label = f"{self.name}({describe_values(values)})"
        # The signature is read once here, not at every evaluation of the curve (the (ε, δ)
        # conversion evaluates it many times).
        return RdpCurve(_bound_call(self, self.rdp_epsilon, values), label)

    def theta(self, **values) -> float:
        """The Rao-DP budget θ of one release (distance between adjacent outputs)."""
        return float(_call(self, self._need("rao_dp_theta"), **self.check(values)))

    def kl(self, **values) -> float:
        """The KL divergence between adjacent outputs of one release."""
        return float(_call(self, self._need("kl_divergence"), **self.check(values)))

    def _need(self, function: str) -> Callable:
        found = getattr(self, function)
        if found is None:
            raise AccountingError(f"mechanism {self.name} ({self.source}) has no {function}")
        return found


def _call(mechanism: Mechanism, function: Callable, *args, **values):
    """Call a generated function with the parameters its signature names (by keyword)."""
    return _bound_call(mechanism, function, values)(*args)


def _bound_call(mechanism: Mechanism, function: Callable, values: dict) -> Callable:
    """``function`` with the parameters its signature names bound by keyword (the signature
    read once); a ValueError of the generated domain checks becomes an AccountingError."""
    wanted = inspect.signature(function).parameters
    keywords = {k: v for k, v in values.items() if k in wanted}

    def bound(*args):
        try:
            return function(*args, **keywords)
        except ValueError as error:  # the generated modules check their domains
            raise AccountingError(f"mechanism {mechanism.name}: {error}") from None

    return bound


#: A mechanism's (or a parameter's) name.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def generated_folder() -> Path:
    """Where generated modules are looked up: $RAOSYM_GENERATED, else ./generated."""
    return Path(os.environ.get("RAOSYM_GENERATED", "generated"))


def available_mechanisms(generated: str | os.PathLike | None = None) -> list[str]:
    """Names of the generated modules that define ``rdp_epsilon`` (found by reading the text)."""
    folder = Path(generated or generated_folder()) / "python"
    if not folder.is_dir():
        return []
    defines = re.compile(r"^def rdp_epsilon\(", re.MULTILINE)
    return sorted(path.stem for path in folder.glob("*.py")
                  if defines.search(path.read_text(encoding="utf-8")))


def load_mechanism(name: str, generated: str | os.PathLike | None = None,
                   derivations: str | os.PathLike | None = None) -> Mechanism:
    """The mechanism ``name`` from ``GENERATED/python/NAME.py`` (imported by file path).

    Parameter domains come from the module's ``MECHANISM_DOMAINS`` (so that accounting needs
    no SymPy); for a module generated before it, from the derivation file ``NAME.toml``
    (through the spec stage) when it exists; a parameter not declared there
    (``sensitivity``) is positive.
    """
    if not IDENTIFIER.match(name):
        raise AccountingError(f"mechanism names are identifiers such as gaussian_location; "
                              f"got {name!r}")
    folder = Path(generated or generated_folder())
    path = folder / "python" / f"{name}.py"
    if not path.is_file():
        raise AccountingError(_unknown_mechanism(name, path, folder))
    module = import_by_path(name, path)
    if not callable(getattr(module, "rdp_epsilon", None)):
        raise AccountingError(
            f"{path} has no rdp_epsilon: {name} is not a mechanism (no [mechanism] table in its "
            f"derivation file, or generated/ predates it: run `raosym generate`). "
            + _known(folder))
    rdp = module.rdp_epsilon
    parameters = tuple(list(inspect.signature(rdp).parameters)[1:])
    functions = {f: getattr(module, f, None) for f in ACCOUNTING_FUNCTIONS[1:]}
    domains = getattr(module, "MECHANISM_DOMAINS", None)
    if not (isinstance(domains, dict) and set(parameters) <= set(domains)):
        domains = _domains(name, parameters, derivations)  # a module generated before them
    norm = getattr(module, "MECHANISM_SENSITIVITY_NORM", None)
    return Mechanism(name=name, parameters=parameters, rdp_epsilon=rdp, **functions,
                     domains={p: tuple(map(float, domains[p])) for p in parameters},
                     source=str(path), sensitivity_norm=norm if isinstance(norm, str) else None)


def _unknown_mechanism(name: str, path: Path, folder: Path) -> str:
    return f"unknown mechanism {name!r}: no generated module {path}. " + _known(folder)


def _known(folder: Path) -> str:
    known = available_mechanisms(folder)
    return (f"Mechanisms in {folder}: {', '.join(known)}" if known
            else f"No generated module in {folder} defines rdp_epsilon yet.")


def import_by_path(name: str, path: Path):
    """A generated module imported from its file (generated/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"raosym_generated_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _domains(name: str, parameters, derivations) -> dict:
    """Open intervals of the parameters, from the derivation file where it declares them."""
    domains = {p: (0.0, math.inf) for p in parameters}
    folder = Path(derivations) if derivations else None
    if folder is None:
        from raosym.pipeline import derivations_folder

        folder = derivations_folder()
    path = folder / f"{name}.toml"
    if path.is_file():
        from raosym.spec import load_spec

        for parameter in load_spec(path).parameters:
            if parameter.name in domains:
                domains[parameter.name] = (float(parameter.domain.lower),
                                           float(parameter.domain.upper))
    return domains


def describe_values(values: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in values.items())


#: The sensitivity of an additive mechanism when none is given (counting queries), in
#: ``raosym account``, ``raosym calibrate`` and ``raosym plot rdp`` alike.
DEFAULT_SENSITIVITY = 1.0


def with_default_sensitivity(mechanism: Mechanism, values: dict,
                             solve: str | None = None) -> dict:
    """``values`` with ``sensitivity`` = :data:`DEFAULT_SENSITIVITY` added when the mechanism
    takes one and none is given (unless it is the parameter being solved for)."""
    if ("sensitivity" in mechanism.parameters and "sensitivity" not in values
            and solve != "sensitivity"):
        return {**values, "sensitivity": DEFAULT_SENSITIVITY}
    return dict(values)
