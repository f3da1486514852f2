"""Progress of a long run, per family, on stderr (used by the CLI around the pipeline).

The pipeline calls ``on_step(family, step, elapsed)`` when a family enters a step (``cache``,
``spec``, ``derive``, ``verify``) and when it ends (``done``, ``cached``, ``failed``); with
``--jobs`` the events come from the worker processes through a queue. Two reporters:

- :class:`TerminalProgress` (stderr is a terminal): one status line, rewritten in place,
  showing each running family with its step and elapsed time, and a permanent line per
  finished family, coloured (green done, cyan cached, red failed);
- :class:`LogProgress` (anything else: a file, a pipe, CI): a plain line per event, no colour
  and no carriage returns, so logs stay readable.

``--quiet`` uses neither.
"""

from __future__ import annotations

import sys
import threading
import time

FINAL_STEPS = {"done": "derived and verified", "cached": "from the cache",
               "failed": "failed"}
COLOURS = {"done": "\033[32m", "cached": "\033[36m", "failed": "\033[31m"}
RESET = "\033[0m"


class LogProgress:
    """One plain line per step: ``raosym: gamma: derive (1.2 s)``."""

    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stderr

    def __call__(self, family: str, step: str, elapsed: float) -> None:
        if step == "cache":  # a lookup takes milliseconds; its outcome gets its own line
            return
        what = FINAL_STEPS.get(step, step)
        print(f"raosym: {family}: {what} ({elapsed:.1f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        pass


class TerminalProgress:
    """A status line of the running families, redrawn every half second, and a coloured line
    per finished family."""

    def __init__(self, stream=None, *, total: int = 0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.finished = 0
        self.running: dict[str, tuple[str, float]] = {}  # family -> (step, monotonic start)
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, daemon=True)
        self.ticker.start()

    def __call__(self, family: str, step: str, elapsed: float) -> None:
        with self.lock:
            if step in FINAL_STEPS:
                self.running.pop(family, None)
                self.finished += 1
                colour = COLOURS[step]
                self._clear()
                self.stream.write(f"{colour}{family}{RESET}: {FINAL_STEPS[step]} "
                                  f"({elapsed:.1f} s)\n")
            else:
                self.running[family] = (step, time.monotonic() - elapsed)
            self._draw()

    def _tick(self) -> None:
        while not self.stopped.wait(0.5):
            with self.lock:
                self._draw()

    def _clear(self) -> None:
        self.stream.write("\r\033[K")

    def _draw(self) -> None:
        now = time.monotonic()
        busy = ", ".join(f"{family} {step} {now - since:.0f}s"
                         for family, (step, since) in sorted(self.running.items()))
        counter = f"[{self.finished}/{self.total}] " if self.total else ""
        self._clear()
        self.stream.write(f"{counter}{busy}"[:200])
        self.stream.flush()

    def close(self) -> None:
        self.stopped.set()
        self.ticker.join(timeout=1)
        with self.lock:
            self._clear()
            self.stream.flush()


def reporter(*, quiet: bool, total: int, stream=None):
    """The reporter for this run: None when quiet, else by whether stderr is a terminal."""
    if quiet:
        return None
    stream = stream if stream is not None else sys.stderr
    if stream.isatty():
        return TerminalProgress(stream, total=total)
    return LogProgress(stream)


def colour_enabled(stream=None) -> bool:
    stream = stream if stream is not None else sys.stderr
    return stream.isatty()
