"""Time budgets for SymPy calls (derive stage).

``sympy.integrate`` cannot be interrupted from inside the process, so a budgeted call runs in
a forked child and is killed when its time is up. The result comes back pickled.

A budget is a guard against a call that would run for hours, never a way to choose: how fast
the machine is must not change what raosym derives. So :class:`BudgetExceeded` is not caught
to try another rung, closer, recognizer or proof method, nor to record a quantity as
unavailable: it fails the family, with a message naming the call and ``RAOSYM_BUDGET``
(``tests/test_hostile_input.py::test_a_budget_that_runs_out_fails_the_family``).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable

from raosym.derive.children import die_with_parent
from raosym.errors import DerivationError

#: Seconds a single integration or summation may take; override with RAOSYM_BUDGET.
DEFAULT_BUDGET = float(os.environ.get("RAOSYM_BUDGET", "20"))


class BudgetExceeded(DerivationError):
    """A budgeted SymPy call ran out of time."""


def _child(connection, function, args, parent) -> None:
    die_with_parent(parent)  # a killed raosym must not leave SymPy computing on its own
    try:
        result = ("ok", function(*args))
    except BaseException as error:  # noqa: BLE001 - everything is sent back to the parent
        result = ("error", error)
    try:
        connection.send_bytes(pickle.dumps(result))
    except Exception as error:  # an unpicklable result or exception
        connection.send_bytes(pickle.dumps(("error", RuntimeError(repr(error)))))
    connection.close()


def run_with_budget(function: Callable, *args, seconds: float | None = None, what: str = ""):
    """Call ``function(*args)`` in a forked child; raise :class:`BudgetExceeded` after ``seconds``.

    Exceptions raised by ``function`` are re-raised here.
    """
    seconds = DEFAULT_BUDGET if seconds is None else seconds
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, function, args, os.getpid()),
                            daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            raise BudgetExceeded(
                f"{what or 'a SymPy call'} did not finish within its budget of {seconds:g} s "
                "(raise it with RAOSYM_BUDGET=SECONDS)"
            )
        status, value = pickle.loads(receiver.recv_bytes())
    except EOFError:
        raise DerivationError(f"{what or 'a SymPy call'} crashed (its process exited)") from None
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join()
    if status == "error":
        raise value
    return value
