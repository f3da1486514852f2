"""The derivation cache: Verified results on disk, between the verify and emit stages.

``raosym generate`` and ``raosym derive`` look a family up here before deriving it, so a run
with nothing changed only re-renders. An entry is keyed by a sha256 over

- the derivation file's bytes (a changed file is a new key; so is a renamed one, because the
  file name is hashed too and names the generated files),
- the *engine version*: a sha256 of the source files of the stages that produce a Verified
  (``raosym/spec``, ``raosym/derive``, ``raosym/verify``, ``errors.py``). Any edit there is a
  new engine, and every entry becomes unreachable. The emit templates and printers are
  deliberately not part of it: a template change re-renders from the cache without deriving.
- the SymPy, mpmath and Python versions, and the time budget (which can change the route a
  derivation takes).

An entry is one file ``KEY.pickle``: a magic line, the key, the sha256 of the payload, then the
pickled Verified. Reading checks all three before unpickling, and then that the result is a
Verified of the same derivation file; anything else (a truncated or corrupt file, another
key's entry copied over, another program's file) is reported as a miss, and the family is
derived again and the entry rewritten. Entries are written to a temporary file and renamed,
so an interrupted run never leaves half an entry.

Rendered files are cached too (``KEY.render``, JSON in the same envelope), keyed by the
entry's key and the *emit version* (a sha256 of ``raosym/emit``: printers, backends and
templates): with nothing changed, ``raosym generate`` neither derives nor renders; after a
template change it re-renders from the Verified entries without deriving.

Pickle runs code on load: like ``__pycache__``, the cache folder must only be writable by the
user. The checksum detects damage, not an attacker who can write there.

The folder is ``$RAOSYM_CACHE`` when set, else ``.raosym-cache/`` in the current folder (the
project root, where raosym is run); ``--no-cache`` bypasses it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import pickle
import platform
import tempfile
from pathlib import Path

import mpmath
import sympy

from raosym.verify.checks import Verified

PACKAGE = Path(__file__).resolve().parent
#: The sources whose behaviour a Verified depends on (emit is not among them on purpose).
ENGINE_SOURCES = ("spec", "derive", "verify", "errors.py")
MAGIC = b"raosym-cache 1\n"
DEFAULT_FOLDER = ".raosym-cache"


@functools.lru_cache(maxsize=1)
def engine_version() -> str:
    """A sha256 over the engine's source files (relative path and bytes, in sorted order)."""
    digest = hashlib.sha256()
    for source in ENGINE_SOURCES:
        path = PACKAGE / source
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.relative_to(PACKAGE).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def emit_version() -> str:
    """A sha256 over the emit stage's sources: Python files and Jinja templates."""
    digest = hashlib.sha256()
    for file in sorted(path for path in (PACKAGE / "emit").rglob("*")
                       if path.is_file() and path.suffix in (".py", ".j2")):
        digest.update(file.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def render_key(derivation_file: str | os.PathLike) -> str:
    """The key of a family's rendered files: its entry's key, the emit version, the
    derivation file's folder name and raosym's version (both printed in the headers)."""
    import raosym  # the version the headers print; read lazily (raosym imports this module)

    path = Path(derivation_file)
    parts = (cache_key(path), emit_version(), path.resolve().parent.name, raosym.__version__)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def cache_key(derivation_file: str | os.PathLike, *, budget: float | None = None) -> str:
    """The key of a derivation file's entry under the current engine and libraries."""
    from raosym.derive.budget import DEFAULT_BUDGET

    path = Path(derivation_file)
    digest = hashlib.sha256()
    for part in (
        path.name.encode(),
        hashlib.sha256(path.read_bytes()).hexdigest().encode(),
        engine_version().encode(),
        f"sympy {sympy.__version__}; mpmath {mpmath.__version__}".encode(),
        f"python {platform.python_version()}".encode(),
        f"budget {DEFAULT_BUDGET if budget is None else budget!r}".encode(),
    ):
        digest.update(part + b"\0")
    return digest.hexdigest()


def default_folder() -> Path:
    return Path(os.environ.get("RAOSYM_CACHE") or DEFAULT_FOLDER)


@dataclasses.dataclass(frozen=True)
class Lookup:
    """The result of reading an entry: the Verified on a hit, else why it missed."""

    verified: Verified | None
    reason: str  # "hit", "absent", or what was wrong with the entry


class DerivationCache:
    """Verified results in ``folder``, one file per key."""

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()

    def entry_path(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def lookup(self, derivation_file: str | os.PathLike) -> Lookup:
        """The cached Verified of a derivation file, or a miss that says why."""
        path = Path(derivation_file)
        key = cache_key(path)
        try:
            blob = self.entry_path(key).read_bytes()
        except FileNotFoundError:
            return Lookup(None, "absent")
        except OSError as error:
            return Lookup(None, f"unreadable ({error.strerror or error})")
        verified, reason = _decode(blob, key)
        if verified is None:
            return Lookup(None, reason)
        expected = hashlib.sha256(path.read_bytes()).hexdigest()
        if verified.derivation.spec.sha256 != expected:
            return Lookup(None, "foreign (derived from another derivation file)")
        return Lookup(_at_path(verified, path), "hit")

    def load(self, derivation_file: str | os.PathLike) -> Verified | None:
        return self.lookup(derivation_file).verified

    def store(self, derivation_file: str | os.PathLike, verified: Verified) -> Path | None:
        """Write an entry atomically; a cache that cannot be written is skipped, not fatal."""
        key = cache_key(derivation_file)
        try:
            payload = pickle.dumps(verified, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an unpicklable result is simply not cached
            return None
        return self._write(self.entry_path(key), key, payload)

    def _write(self, target: Path, key: str, payload: bytes) -> Path | None:
        blob = MAGIC + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".entry-", dir=self.folder)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(blob + payload)
                os.replace(temporary, target)
            finally:
                if os.path.exists(temporary):
                    os.unlink(temporary)
        except OSError:
            return None
        return target

    def load_rendered(self, derivation_file: str | os.PathLike) -> dict[str, str] | None:
        """The files rendered from this family's entry by the current emit stage, or None."""
        key = render_key(derivation_file)
        try:
            blob = (self.folder / f"{key}.render").read_bytes()
        except OSError:
            return None
        payload, _ = _payload(blob, key)
        if payload is None:
            return None
        try:
            files = json.loads(payload.decode("utf-8"))
        except ValueError:
            return None
        if not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return None
        return files

    def store_rendered(self, derivation_file: str | os.PathLike,
                       files: dict[str, str]) -> Path | None:
        key = render_key(derivation_file)
        payload = json.dumps(files, sort_keys=True).encode("utf-8")
        return self._write(self.folder / f"{key}.render", key, payload)


def _payload(blob: bytes, key: str) -> tuple[bytes | None, str]:
    """The payload of an entry whose magic line, key and checksum are right; never raises."""
    if not blob.startswith(MAGIC):
        return None, "foreign (not a raosym cache entry)"
    header = blob[len(MAGIC):]
    parts = header.split(b"\n", 2)
    if len(parts) != 3:
        return None, "corrupt (truncated header)"
    stored_key, checksum, payload = parts
    if stored_key != key.encode():
        return None, "foreign (its key is not this file's key)"
    if hashlib.sha256(payload).hexdigest().encode() != checksum:
        return None, "corrupt (checksum mismatch)"
    return payload, "ok"


def _decode(blob: bytes, key: str) -> tuple[Verified | None, str]:
    """Check the header of an entry, then unpickle it; never raises."""
    payload, reason = _payload(blob, key)
    if payload is None:
        return None, reason
    try:
        verified = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - a damaged pickle can raise almost anything
        return None, "corrupt (cannot be unpickled)"
    if not isinstance(verified, Verified):
        return None, f"foreign (holds a {type(verified).__name__}, not a Verified)"
    return verified, "hit"


def _at_path(verified: Verified, path: Path) -> Verified:
    """The cached result as if derived from ``path`` (same bytes; the folder may differ)."""
    derivation = verified.derivation
    if derivation.spec.path == str(path):
        return verified
    spec = dataclasses.replace(derivation.spec, path=str(path))
    return dataclasses.replace(verified, derivation=dataclasses.replace(derivation, spec=spec))
