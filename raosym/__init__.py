"""raosym: derive, verify and emit the information geometry of noise families.

The pipeline (each stage a package or module, data flowing one way)::

    derivations/NAME.toml
      spec     raosym.spec     parse (AST whitelist), validate         -> FamilySpec
               raosym.verify.density  normalization, sign              (still input checks)
      derive   raosym.derive   Fisher ladder, geometry, proof steps    -> Derivation
      verify   raosym.verify   mpmath quadrature / sums, Brioschi      -> Verified
      emit     (generated/)    Python modules and LaTeX proofs         (from Verified only)

Python API: ``load(name_or_path)`` -> FamilySpec, ``derive(spec)`` -> Derivation,
``verify(derivation)`` -> Verified, ``run(name_or_path)`` -> Verified (all three).
"""

from raosym.derive import derive
from raosym.pipeline import load
from raosym.pipeline import run_family as run
from raosym.verify.checks import verify

__version__ = "0.1.0"
__all__ = ["load", "derive", "verify", "run", "__version__"]
