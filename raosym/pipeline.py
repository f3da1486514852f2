"""The pipeline in one place: spec -> (density check) -> derive -> verify -> [cache] -> emit
-> write.

``run_family`` takes a family name or a path and returns a :class:`Verified` or raises the
stage's own error; given a :class:`~raosym.cache.DerivationCache` it first looks the family up
there (by the sha256 of its file and the engine version) and stores what it verified.
``run_families`` runs several in parallel over the available cores, reporting each family's
steps to an ``on_step`` callback (the CLI's progress); ``generate`` runs them and then the
emit and write stages into ``generated/``. The CLI and the Python API (``raosym.load``,
``raosym.derive``, ``raosym.verify``, ``raosym.run``, ``raosym.generate``) call these.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sympy

from raosym.cache import DerivationCache, transport
from raosym.derive import derive as derive_spec
from raosym.derive.children import die_with_parent
from raosym.derive.steps import Derivation
from raosym.errors import DerivationError, RaosymError, SpecError
from raosym.spec import load_spec
from raosym.spec.model import FamilySpec
from raosym.verify.checks import Verified, verify
from raosym.verify.density import check_density


#: Where family names are looked up: $RAOSYM_DERIVATIONS, else ./derivations.
def derivations_folder() -> Path:
    return Path(os.environ.get("RAOSYM_DERIVATIONS", "derivations"))


def resolve(name_or_path: str | os.PathLike) -> Path:
    """``laplace`` -> ``derivations/laplace.toml``; a path is taken as it is."""
    text = str(name_or_path)
    if text.endswith(".toml") or os.sep in text or "/" in text:
        path = Path(text)
    else:
        path = derivations_folder() / f"{text}.toml"
    if not path.is_file():
        known = ", ".join(p.stem for p in all_derivation_files()) or "none"
        raise SpecError(f"no derivation file {path} (families in {derivations_folder()}: {known})",
                        path=str(path))
    return path


def all_derivation_files() -> list[Path]:
    folder = derivations_folder()
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def load(name_or_path: str | os.PathLike) -> FamilySpec:
    """Parse and validate a derivation file, including the density check."""
    spec = load_spec(resolve(name_or_path))
    check_density(spec)
    return spec


def run_family(name_or_path: str | os.PathLike, *, cache: DerivationCache | None = None,
               on_step: StepCallback | None = None) -> Verified:
    """Load, derive and verify one family (or take its Verified result from ``cache``)."""
    return _run_family(name_or_path, cache=cache, on_step=on_step)[0]


#: ``on_step(family, step, elapsed_seconds)``: called when a family enters a step
#: (``cache``, ``spec``, ``derive``, ``verify``) and when it ends (``done``, ``cached``,
#: ``failed``).
StepCallback = Callable[[str, str, float], None]


def _run_family(name_or_path, *, cache, on_step) -> tuple[Verified, bool]:
    started = time.perf_counter()
    family = Path(str(name_or_path)).stem

    def step(name: str) -> None:
        if on_step is not None:
            on_step(family, name, time.perf_counter() - started)

    path = resolve(name_or_path)
    if cache is not None:
        step("cache")
        cached = cache.load(path)
        if cached is not None:
            step("cached")
            return cached, True
    step("spec")
    spec = load(path)
    step("derive")
    derivation = derive_spec(spec)
    _check_no_dirac_delta(derivation)
    step("verify")
    verified_at = time.perf_counter()
    verified = verify(derivation)
    derivation.timings["verify"] = time.perf_counter() - verified_at
    derivation.timings["total"] = time.perf_counter() - started
    if cache is not None:
        cache.store(path, verified)
    step("done")
    return verified, False


def _check_no_dirac_delta(derivation: Derivation) -> None:
    """Refuse a Fisher entry holding a DiracDelta, as bad input of the file that caused it.

    It comes from differentiating ``Abs`` or ``sign`` of a parameter, when a scale is
    declared ``real`` instead of ``positive`` (``sqrt(sigma**2)`` is ``Abs(sigma)`` then): a
    Fisher information with a point mass is not a metric, and nothing can evaluate it."""
    spec = derivation.spec
    for entry in derivation.entries:
        if entry.value is None:  # a numeric entry: its score product is checked by verify
            continue
        deltas = sorted(entry.value.atoms(sympy.DiracDelta), key=sympy.default_sort_key)
        if not deltas:
            continue
        involved = sorted({s.name for d in deltas for s in d.free_symbols}
                          & {p.name for p in spec.parameters})
        parameter = next((p for p in spec.parameters if p.name in involved), None)
        raise SpecError(
            f"the Fisher entry g_{spec.coordinates[entry.row].name}_"
            f"{spec.coordinates[entry.column].name} contains {deltas[0]} (the derivative of "
            f"an absolute value or sign of {', '.join(involved) or 'a parameter'}); a scale "
            "declared 'real' makes the density depend on its sign: declare it 'positive'",
            path=spec.path,
            key=f"{parameter.role}s.{parameter.name}" if parameter else "density")


def derive(spec_or_name, *, budget: float | None = None) -> Derivation:
    """The Derivation of a FamilySpec, or of a family name or path (loaded first).

    This is ``raosym.derive``: in Jupyter the result displays as LaTeX (density, Fisher
    matrix, distance, proof steps).
    """
    spec = spec_or_name if isinstance(spec_or_name, FamilySpec) else load(spec_or_name)
    return derive_spec(spec) if budget is None else derive_spec(spec, budget=budget)


@dataclass(frozen=True)
class FamilyOutcome:
    """What happened to one family: its Verified result or the error that stopped it, whether
    it came from the cache, and the seconds it took."""

    name: str
    verified: Verified | None = None
    error: RaosymError | None = None
    cached: bool = False
    seconds: float = 0.0


def _outcome(name_or_path, cache=None, on_step=None) -> FamilyOutcome:
    started = time.perf_counter()
    try:
        verified, cached = _run_family(name_or_path, cache=cache, on_step=on_step)
        return FamilyOutcome(str(name_or_path), verified=verified, cached=cached,
                             seconds=time.perf_counter() - started)
    except RaosymError as error:
        if on_step is not None:
            on_step(Path(str(name_or_path)).stem, "failed", time.perf_counter() - started)
        return FamilyOutcome(str(name_or_path), error=error,
                             seconds=time.perf_counter() - started)


def run_families(names, *, jobs: int | None = None, cache: DerivationCache | None = None,
                 on_step: StepCallback | None = None) -> list[FamilyOutcome]:
    """Run several families, in parallel over ``jobs`` processes (default: every core).

    The workers are forked processes, each with a pipe to this one: this process hands a
    family to each idle worker, and receives its step events (passed to ``on_step`` here, so
    progress is reported from one place) and its outcome. A worker that dies (killed, out of
    memory) fails its family with a DerivationError instead of hanging the run. On Ctrl-C, or
    any exception here, every worker is terminated at once.
    """
    names = list(names)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names) or 1))
    if jobs == 1:
        return [_outcome(name, cache, on_step) for name in names]
    context = multiprocessing.get_context("fork")
    workers = []
    try:
        for _ in range(jobs):
            parent_end, worker_end = context.Pipe()
            process = context.Process(target=_worker, args=(worker_end, cache, os.getpid()),
                                      daemon=False)
            process.start()
            worker_end.close()
            workers.append(_Worker(process, parent_end))
        return _dispatch(names, workers, on_step)
    finally:
        for worker in workers:
            worker.stop()


@dataclass
class _Worker:
    process: multiprocessing.Process
    connection: object
    task: tuple[int, str] | None = None

    def stop(self) -> None:
        self.connection.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def _dispatch(names: list[str], workers: list[_Worker], on_step) -> list[FamilyOutcome]:
    """Hand out families to idle workers until every family has an outcome."""
    from multiprocessing.connection import wait

    pending = list(enumerate(names))[::-1]
    outcomes: list[FamilyOutcome | None] = [None] * len(names)

    def hand_out(worker: _Worker) -> None:
        worker.task = pending.pop() if pending else None
        worker.connection.send(worker.task)

    for worker in workers:
        hand_out(worker)
    busy = {worker.connection: worker for worker in workers if worker.task is not None}
    while busy:
        for connection in wait(list(busy)):
            worker = busy[connection]
            try:
                message = transport.loads(connection.recv_bytes())
            except (EOFError, OSError):  # the worker died with a family in hand
                index, name = worker.task
                outcomes[index] = FamilyOutcome(name, error=DerivationError(
                    f"{name}: the worker process deriving it exited "
                    f"(exit code {worker.process.exitcode})"))
                del busy[connection]
                continue
            if message[0] == "step":
                if on_step is not None:
                    on_step(*message[1:])
                continue
            _, index, outcome = message
            outcomes[index] = outcome
            hand_out(worker)
            if worker.task is None:
                del busy[connection]
    for index, name in enumerate(names):  # workers that died before taking their task
        if outcomes[index] is None:
            outcomes[index] = FamilyOutcome(name, error=DerivationError(
                f"{name}: no worker process was left to derive it"))
    return outcomes


def _worker(connection, cache, parent: int) -> None:
    """A worker process of :func:`run_families`: derive the families it is sent, one at a
    time, until it is sent None (or the parent exits: then the kernel kills it)."""
    die_with_parent(parent)
    # Ctrl-C reaches the whole process group; only the parent reacts (it stops the workers),
    # so a worker never prints a KeyboardInterrupt traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)

    def on_step(family: str, step: str, elapsed: float) -> None:
        connection.send_bytes(transport.dumps(("step", family, step, elapsed)))

    while (task := connection.recv()) is not None:
        index, name = task
        # Sent through raosym.cache.transport, not plain pickle: the parent must receive the very
        # expressions derived here, so that output does not depend on where a family was
        # derived (in this worker or, with --jobs 1, in the parent).
        connection.send_bytes(transport.dumps(("done", index, _outcome(name, cache, on_step))))
    connection.close()


def _stop_worker(signum, frame) -> None:
    """SIGTERM in a worker: kill the budget's child running a SymPy call, then exit now."""
    for child in multiprocessing.active_children():
        child.kill()
    os._exit(128 + signum)


# ----------------------------------------------------------------------------- generate


@dataclass(frozen=True)
class Generation:
    """What ``raosym generate`` did: the families that failed (their files untouched), the
    files written or removed, and, for ``--check``, the diff from the output to a fresh render."""

    output: Path
    failures: tuple[FamilyOutcome, ...]
    changed: tuple[str, ...] = ()
    diff: str = ""
    outcomes: tuple[FamilyOutcome, ...] = ()


def generate(names=None, *, output: str | os.PathLike = "generated", check: bool = False,
             jobs: int | None = None, cache: DerivationCache | None = None,
             on_step: StepCallback | None = None) -> Generation:
    """Derive, verify and emit the named families (default: every derivation file) into
    ``output``; with ``check``, only compare a fresh render with ``output``. Families found in
    ``cache`` are rendered from it without deriving."""
    files = all_derivation_files()
    if not files and not names:
        raise SpecError(f"no derivation files in {derivations_folder()} (name a derivation "
                        "file to generate it: raosym generate PATH/NAME.toml)",
                        path=str(derivations_folder()))
    targets = [str(resolve(name)) for name in names] if names else [str(f) for f in files]
    outcomes = run_families(targets, jobs=jobs, cache=cache, on_step=on_step)
    # The families that exist: the derivations folder's and the files named here (a file
    # outside the folder is generated like any other; a later plain run keeps its files).
    families = {f.stem for f in files} | {Path(target).stem for target in targets}
    return generate_from(outcomes, output=output, families=families, check=check, cache=cache)


def _render(outcome: FamilyOutcome, cache: DerivationCache | None):
    """A family's files and the quantities the emitted-code gate left out: from the render
    cache when its Verified came from the cache (same entry, same emit sources), else rendered
    now (and stored)."""
    from raosym import gate

    path = outcome.verified.derivation.spec.path
    if cache is not None and outcome.cached:
        rendered = cache.load_rendered(path)
        if rendered is not None:
            return rendered
    files, dropped = gate.render_family(outcome.verified)
    if cache is not None:
        cache.store_rendered(path, files, dropped)
    return files, dropped


def _with_dropped(outcome: FamilyOutcome, dropped) -> FamilyOutcome:
    """The outcome as delivered: the quantities the gate dropped joined the unavailable ones."""
    if not dropped:
        return outcome
    derivation = outcome.verified.derivation
    derivation = dataclasses.replace(derivation, unavailable=(*derivation.unavailable, *dropped))
    return dataclasses.replace(outcome, verified=dataclasses.replace(outcome.verified,
                                                                     derivation=derivation))


def generate_from(outcomes, *, output: str | os.PathLike, families: set[str],
                  check: bool = False, cache: DerivationCache | None = None) -> Generation:
    """The emit and write stages for outcomes already derived and verified.

    ``families`` names every family that exists (one per derivation file): the files of any
    other family in ``output`` that were generated from the derivations folder are stale and
    removed (files generated from elsewhere, or not by raosym, are kept; see
    :func:`raosym.emit.write.plan_tree`). Rendering happens entirely in memory before
    anything is written, so an exception leaves ``output`` untouched.
    """
    from raosym.emit import write
    from raosym.errors import EmitError

    output = Path(output)
    write.recover(output)  # a swap a killed run left half done, before reading the tree
    rendered, failures, delivered = {}, [], []
    for outcome in outcomes:
        delivered.append(outcome)
        if outcome.error is not None:
            failures.append(outcome)
            continue
        spec = outcome.verified.derivation.spec
        if spec.name != Path(spec.path).stem:
            failures.append(FamilyOutcome(outcome.name, error=EmitError(
                f"{spec.path}: the family name {spec.name!r} must match the file name, which "
                "names its generated files")))
            continue
        try:
            rendered[spec.name], dropped = _render(outcome, cache)
        except EmitError as error:
            failures.append(FamilyOutcome(outcome.name, error=EmitError(f"{spec.path}: {error}")))
            delivered[-1] = failures[-1]
            continue
        delivered[-1] = _with_dropped(outcome, dropped)
    plan = write.plan_tree(output, rendered, families, derivations_folder().name)
    if check:
        return Generation(output, tuple(failures), diff=write.drift(output, plan),
                          outcomes=tuple(delivered))
    return Generation(output, tuple(failures), changed=tuple(write.write_tree(output, plan)),
                      outcomes=tuple(delivered))
