"""raosym: derive, verify and emit the information geometry of noise families.

The pipeline, one package per stage, data flowing one way (no import runs against it; emit
imports only the record types of derive and verify)::

    derivations/NAME.toml
      spec     raosym.spec     parse (AST whitelist), validate                -> FamilySpec
               raosym.verify.density  normalization, sign (still input checks)
      derive   raosym.derive   SymPy: Fisher ladder, geometry, distance,      -> Derivation
                               divergences, mechanism, proof steps
      verify   raosym.verify   mpmath: quadrature, sums, Brioschi, geodesics  -> Verified
      cache    raosym.cache    Verified on disk, authenticated; cache.transport
      emit     raosym.emit     Python modules and LaTeX proofs, from records  -> files in memory
      gate     raosym.gate     the emitted modules run against mpmath; pdflatex
      write    raosym.emit.write  atomic, deterministic, drift check          -> generated/

Below the stages, leaves every stage may import: ``_version``, ``errors``, ``functions``
(SymPy functions for float evaluation). After them: :mod:`raosym.pipeline` (the stages in
order), :mod:`raosym.accounting` (runtime accounting on the generated modules, no SymPy),
:mod:`raosym.cli` (the ``raosym`` command), the figures and :mod:`raosym.display`.

Python API: ``load(name_or_path)`` -> FamilySpec, ``derive(spec_or_name_or_path)`` ->
Derivation, ``verify(derivation)`` -> Verified, ``run(name_or_path, cache=None)`` -> Verified
(all three), ``generate(names, output="generated", check=False, cache=None)`` -> Generation
(all five stages), ``DerivationCache(folder=None)``. In Jupyter, FamilySpec, Derivation and
Verified display as LaTeX (density, Fisher matrix, distance, proof steps), registered here with
IPython's formatter (:func:`register_notebook_display`; ``%load_ext raosym`` in a shell
started after the import).
"""

import sys
import types

from raosym._version import __version__

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


#: The records a notebook displays as LaTeX (through :func:`raosym.display.record_latex`).
NOTEBOOK_RECORDS = (("raosym.spec.model", "FamilySpec"), ("raosym.derive.steps", "Derivation"),
                    ("raosym.verify.checks", "Verified"))


def _record_latex(record) -> str:
    from raosym.display import record_latex

    return record_latex(record)


def register_notebook_display(latex_formatter) -> None:
    """Display FamilySpec, Derivation and Verified through ``latex_formatter`` (IPython's
    ``text/latex`` formatter). By type name: neither the records nor ``import raosym`` import
    the display code or SymPy for it."""
    for module, name in NOTEBOOK_RECORDS:
        latex_formatter.for_type_by_name(module, name, _record_latex)


def load_ipython_extension(ipython) -> None:
    """``%load_ext raosym``: the LaTeX display in a shell that started after the import."""
    register_notebook_display(ipython.display_formatter.formatters["text/latex"])


def _register_in_running_ipython() -> None:
    ipython = sys.modules.get("IPython")  # never imported here: only a running shell counts
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        load_ipython_extension(shell)


_register_in_running_ipython()


class _Package(types.ModuleType):
    """The package, whose ``derive`` and ``verify`` stay the API functions: importing the
    subpackages of the same names would otherwise rebind them to the modules."""

    def __setattr__(self, name, value):
        if name in ("derive", "verify") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
