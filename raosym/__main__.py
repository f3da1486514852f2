"""``python -m raosym`` and the ``raosym`` command: :func:`raosym.cli.main`, and its exit."""

import os
import sys


def run() -> None:
    try:
        from raosym.cli import main
    except KeyboardInterrupt:  # Ctrl-C while the (light) command-line module is imported
        status = 130
        print("raosym: interrupted", file=sys.stderr)
    else:
        status = main()
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
