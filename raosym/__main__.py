"""``python -m raosym`` and the ``raosym`` command: :func:`raosym.cli.main`, and its exit."""

import _thread
import os
import signal
import sys
import threading

#: Whether Ctrl-C arrived: an extension module's import that it interrupts may report it as
#: an ImportError instead (NumPy's "PyCapsule_Import could not import module").
_interrupt_received = False


def _on_interrupt(signum, frame) -> None:
    global _interrupt_received
    _interrupt_received = True
    raise KeyboardInterrupt


def _deliver_interrupt_again(unraisable) -> None:
    """Ctrl-C that lands in a callback Python cannot raise from (an import's module-lock
    weakref callback, a ``__del__``) is only printed as "Exception ignored", and the command
    would then run on to exit 0: the interrupt is raised again, in the code that runs next.
    It is raised from another thread a moment later: a signal made pending here would be
    handled inside this hook, which Python cannot raise from either."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt):
        again = threading.Timer(0.01, _thread.interrupt_main)
        again.daemon = True
        again.start()
    else:
        sys.__unraisablehook__(unraisable)


def install_interrupt_handling() -> None:
    """Ctrl-C ends the command with "raosym: interrupted" and exit 130 wherever it lands,
    set up before anything else is imported (the start-up's imports are where it gets lost);
    by the command, never by ``import raosym``."""
    signal.signal(signal.SIGINT, _on_interrupt)
    sys.unraisablehook = _deliver_interrupt_again


def run() -> None:
    install_interrupt_handling()
    try:
        from raosym.cli import main
        status = main()
    except (KeyboardInterrupt, ImportError):
        # Ctrl-C while the (light) command-line module is imported, or an import it broke.
        if not _interrupt_received:
            raise
        status = 130
        print("raosym: interrupted", file=sys.stderr)
    if status == 130:
        # An interrupt that arrived inside an import may leave CPython's "unhandled
        # KeyboardInterrupt" flag set even though main() handled it, and the interpreter
        # would then end by killing itself with SIGINT (exit -2) instead of exiting 130.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(status)


if __name__ == "__main__":
    run()
