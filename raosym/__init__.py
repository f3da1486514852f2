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

Python API: ``load(name_or_path)`` -> FamilySpec, ``derive(spec)`` -> Derivation,
``verify(derivation)`` -> Verified, ``run(name_or_path)`` -> Verified (all three),
``generate(names, output="generated", check=False)`` -> Generation (all five stages).
"""

from raosym.derive import derive
from raosym.pipeline import generate, load
from raosym.pipeline import run_family as run
from raosym.verify.checks import verify

__version__ = "0.1.0"
__all__ = ["load", "derive", "verify", "run", "generate", "__version__"]
