"""How derivation results cross a process boundary or go to disk, unchanged.

Between the verify and emit stages. A :class:`~raosym.verify.checks.Verified` travels as
bytes from a forked worker to the parent (:mod:`raosym.pipeline`) and into and out of the
derivation cache (:mod:`raosym.cache`). Plain pickle does not give back the same SymPy
expressions: it rebuilds every ``Add``, ``Mul`` or ``Pow`` by calling its class, which
*evaluates* it again, so an expression the derive stage built unevaluated on purpose (the
exponential-family decomposition ``log f = eta*T + h - A`` of a proof step, with its ``+ 0``
and its grouping) comes back flattened and re-sorted. The LaTeX proof then depended on
whether the family was derived in this process (``--jobs 1``, one family alone) or in a
worker (issue 14, item 5a).

:func:`dumps` stores every operation node with ``evaluate=False`` reconstruction, so
:func:`loads` gives back exactly the tree that was stored; an evaluated tree rebuilt without
evaluation is the same tree (same arguments, same order). Nothing else differs from pickle:
:func:`loads` runs a pickle, so it must only see bytes this program wrote (the cache checks an
HMAC before calling it).
"""

from __future__ import annotations

import io
import pickle

import sympy
from sympy.core.function import Application
from sympy.core.operations import AssocOp
from sympy.core.relational import Relational

#: Node types that evaluate when built and accept ``evaluate=False``.
_UNEVALUATED = (AssocOp, sympy.Pow, Application, Relational)


def _rebuild(cls, args):
    """The node ``cls(*args)`` exactly as it was stored: without evaluating it again."""
    return cls(*args, evaluate=False)


class _FaithfulPickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, _UNEVALUATED) and isinstance(obj, sympy.Basic) and obj.args:
            return _rebuild, (type(obj), obj.args)
        return NotImplemented


def dumps(value) -> bytes:
    """``value`` as bytes that :func:`loads` turns back into the same SymPy trees."""
    buffer = io.BytesIO()
    _FaithfulPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def loads(data: bytes):
    """The value :func:`dumps` stored (trusted bytes only: this is a pickle)."""
    return pickle.loads(data)
