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

from raosym.cache import DerivationCache
from raosym.pipeline import derive, generate, load
from raosym.pipeline import run_family as run
from raosym.verify.checks import verify

__version__ = "0.1.0"
__all__ = ["DerivationCache", "__version__", "derive", "generate", "load", "run", "verify"]
