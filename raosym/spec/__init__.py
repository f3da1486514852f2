"""The spec stage: derivation files (TOML) → validated :class:`FamilySpec` objects.

``load_spec`` reads and validates a file; ``parse_expression`` is the safe, whitelisted
parser every expression string goes through.
"""

from raosym.spec.parser import parse_expression
from raosym.spec.schema import load_spec

__all__ = ["load_spec", "parse_expression"]
