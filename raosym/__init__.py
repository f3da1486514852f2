"""raosym: derive, verify and emit the information geometry of noise families.

The pipeline (each stage a package or module, data flowing one way)::

    derivations/NAME.toml
      spec     raosym.spec     parse (AST whitelist), validate         -> FamilySpec
               raosym.verify.density  normalization, sign              (still input checks)
      derive   raosym.derive   Fisher ladder, geometry, proof steps    -> Derivation
      verify   raosym.verify   mpmath quadrature / sums, Brioschi      -> Verified
      emit     raosym.emit     Python modules and LaTeX proofs         -> files in memory
                               (from Verified only)
      write    raosym.emit.write  atomic, deterministic, drift check   -> generated/

The derivation cache (:mod:`raosym.cache`) sits between verify and emit: ``raosym generate``
and ``raosym derive`` take unchanged families from it.

Python API: ``load(name_or_path)`` -> FamilySpec, ``derive(spec_or_name_or_path)`` ->
Derivation, ``verify(derivation)`` -> Verified, ``run(name_or_path, cache=None)`` -> Verified
(all three), ``generate(names, output="generated", check=False, cache=None)`` -> Generation
(all five stages), ``DerivationCache(folder=None)``. In Jupyter, FamilySpec, Derivation and
Verified display as LaTeX (density, Fisher matrix, distance, proof steps).
"""

import sys
import types

__version__ = "0.1.0"
__all__ = ["DerivationCache", "__version__", "derive", "generate", "load", "run", "verify"]

# The API imports the pipeline on first use, not here: ``import raosym`` (and so
# ``python -m raosym``) stays cheap, and the command line is inside its own Ctrl-C handling
# before SymPy is imported (an interrupt during start-up is "raosym: interrupted", not a
# traceback).


def load(name_or_path):
    """Parse and validate a derivation file, including the density check -> FamilySpec."""
    from raosym.pipeline import load as load_family

    return load_family(name_or_path)


def derive(spec_or_name, *, budget=None):
    """The Derivation of a FamilySpec, or of a family name or path (loaded first)."""
    from raosym.pipeline import derive as derive_family

    return derive_family(spec_or_name, budget=budget)


def verify(derivation):
    """The Verified result of a Derivation; raises VerificationError if a check fails."""
    from raosym.verify.checks import verify as verify_derivation

    return verify_derivation(derivation)


def run(name_or_path, *, cache=None, on_step=None):
    """Load, derive and verify one family (through ``cache`` when given) -> Verified."""
    from raosym.pipeline import run_family

    return run_family(name_or_path, cache=cache, on_step=on_step)


def generate(names=None, **options):
    """Derive, verify and emit into ``generated/`` (see :func:`raosym.pipeline.generate`)."""
    from raosym.pipeline import generate as generate_families

    return generate_families(names, **options)


def __getattr__(name: str):
    if name == "DerivationCache":
        from raosym.cache import DerivationCache

        return DerivationCache
    raise AttributeError(f"module 'raosym' has no attribute {name!r}")


class _Package(types.ModuleType):
    """The package, whose ``derive`` and ``verify`` stay the API functions: importing the
    subpackages of the same names would otherwise rebind them to the modules."""

    def __setattr__(self, name, value):
        if name in ("derive", "verify") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
