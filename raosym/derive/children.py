"""Child processes that end with their parent.

Used by the processes raosym forks: the workers of :func:`raosym.pipeline.run_families`, the
children of :func:`raosym.derive.budget.run_with_budget` that run one SymPy call, and (through
:func:`ending_with_this_process`) the programs the emit stage runs, the emitted-code gate's
interpreter and pdflatex. A
``kill -9`` of ``raosym generate`` gives its children no chance to be stopped by it; left
alive they kept deriving for minutes and held the caller's stdout open, so that
``$(raosym generate)`` never returned (issue 14, item 4). On Linux the kernel ends them
instead: :func:`die_with_parent` asks for SIGKILL when the parent exits (``PR_SET_PDEATHSIG``).
Elsewhere it does nothing, and the parent's own clean-up (on Ctrl-C, SIGTERM, an exception)
is all there is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

#: prctl(2) option: the signal a process receives when its parent exits.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Make the kernel SIGKILL this process when ``parent`` (the pid that forked it) exits.

    Call it first thing in a forked child. If the parent already exited before the request
    was made (the child then has another parent), exit at once.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no libc to ask: the parent's clean-up only
        return
    if os.getppid() != parent:
        os._exit(1)


def ending_with_this_process():
    """A ``preexec_fn`` for :mod:`subprocess`: the program it starts is killed when the
    calling process exits (a ``kill -9`` of ``raosym generate`` during the gate left the
    gate's interpreter computing on its own)."""
    parent = os.getpid()
    return lambda: die_with_parent(parent)
