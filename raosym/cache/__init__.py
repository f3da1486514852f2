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

An entry is one file ``KEY.pickle``: a magic line, the key, an HMAC-SHA256 of the kind, key and
payload, then the payload (the Verified, serialized by :mod:`raosym.cache.transport`). The HMAC key
is a secret kept *outside* the cache folder (:func:`secret_path`: ``$RAOSYM_CACHE_KEY``, else
``raosym/cache-key`` in the user's config folder, created 0600 on first use), so an entry that
someone else planted (a repository or an archive can ship a ``.raosym-cache/``, and keys are
predictable) fails the check and is never unpickled: reading checks the magic line, the key
and the HMAC first, and only then deserializes, then checks that the result is a Verified of
the same derivation file. Anything else (a truncated or corrupt file, another key's entry
copied over, a forged or foreign file) is reported as a miss, and the family is derived again
and the entry rewritten. Without a usable secret (it cannot be created, or others may read or
write it) the cache is not used at all. Entries are written to a temporary file and renamed,
so an interrupted run never leaves half an entry.

An entry is read only if it is a regular file of at most :data:`MAX_ENTRY_BYTES` and not a
symbolic link (opened with ``O_NOFOLLOW | O_NONBLOCK``, checked with ``fstat`` before any
read): a FIFO planted under a predictable key hung ``generate`` forever, and a link to
``/dev/zero`` would have read without end. A default folder (``.raosym-cache`` in the current
folder, which a repository can ship) that is itself a symbolic link is not used at all: the
cache would read and write wherever the link points.

Rendered files are cached too (``KEY.render``, JSON in the same authenticated envelope), keyed
by the entry's key and the *emit version* (a sha256 of ``raosym/emit``: printers, backends and
templates): with nothing changed, ``raosym generate`` neither derives nor renders; after a
template change it re-renders from the Verified entries without deriving. A render entry may
only name the files the backends write for that family (``python/NAME.py``,
``latex/NAME.tex``); one naming any other path (``../../X``, an absolute path) is ignored.

The folder is ``$RAOSYM_CACHE`` when set, else ``.raosym-cache/`` in the current folder (the
project root, where raosym is run); ``--no-cache`` bypasses it.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import hashlib
import hmac
import json
import os
import platform
import secrets
import stat
import tempfile
from pathlib import Path

import mpmath
import sympy

from raosym._version import __version__
from raosym.cache import transport
from raosym.verify.checks import Verified
from raosym.derive.steps import Unavailable

PACKAGE = Path(__file__).resolve().parents[1]
#: The sources whose behaviour a Verified depends on (emit is not among them on purpose).
ENGINE_SOURCES = ("spec", "derive", "verify", "errors.py", "functions.py", "cache/transport.py")
#: The sources the rendered files depend on beyond the Verified (see :func:`emit_version`).
RENDER_SOURCES = ("emit", "gate")
MAGIC = b"raosym-cache 2\n"
#: Bytes of the HMAC secret.
SECRET_BYTES = 32
DEFAULT_FOLDER = ".raosym-cache"
#: The largest entry read (the catalog's are below 100 kB).
MAX_ENTRY_BYTES = 64 * 1024 * 1024


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
    """A sha256 over the sources of the emit stage and of the emitted-code gate (whose
    measured accuracy the modules' docstrings print): Python files and Jinja templates."""
    digest = hashlib.sha256()
    for file in sorted(path for stage in RENDER_SOURCES for path in (PACKAGE / stage).rglob("*")
                       if path.is_file() and path.suffix in (".py", ".j2")):
        digest.update(file.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def family_paths(name: str) -> set[str]:
    """The files the backends write for the family ``name``, relative to ``generated/``: the
    layout the emit stage renders and the write stage and the render cache accept, and
    nothing else. Here, the lowest stage that needs it, so that emit and write import it."""
    return {f"python/{name}.py", f"latex/{name}.tex"}


def render_key(derivation_file: str | os.PathLike) -> str:
    """The key of a family's rendered files: its entry's key, the emit version, the
    derivation file's folder name and raosym's version (both printed in the headers)."""
    path = Path(derivation_file)
    parts = (cache_key(path), emit_version(), path.resolve().parent.name, __version__)
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


def secret_path() -> Path:
    """Where the HMAC secret lives: ``$RAOSYM_CACHE_KEY``, else the user's config folder
    (``$XDG_CONFIG_HOME/raosym/cache-key``, by default ``~/.config/raosym/cache-key``)."""
    if os.environ.get("RAOSYM_CACHE_KEY"):
        return Path(os.environ["RAOSYM_CACHE_KEY"])
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "raosym" / "cache-key"


def load_secret(folder: Path) -> bytes | None:
    """The HMAC secret (created 0600 on first use), or None when it cannot be trusted: it
    sits inside the cache folder, others may read or write it, or it cannot be made."""
    path = secret_path()
    try:
        if _inside(path, folder):
            return None  # whoever can plant entries could then forge them
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(descriptor, "wb") as file:
                file.write(secrets.token_bytes(SECRET_BYTES))
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(descriptor, "rb") as file:
            status = os.fstat(file.fileno())
            secret = file.read()
    except OSError:
        return None
    private = status.st_uid == os.getuid() and not status.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    return secret if private and len(secret) >= SECRET_BYTES else None


def _inside(path: Path, folder: Path) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(folder).rstrip(os.sep) + os.sep)


@dataclasses.dataclass(frozen=True)
class Lookup:
    """The result of reading an entry: the Verified on a hit, else why it missed."""

    verified: Verified | None
    reason: str  # "hit", "absent", or what was wrong with the entry


class DerivationCache:
    """Verified results in ``folder``, one file per key, authenticated with the user's secret."""

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()

    @functools.cached_property
    def secret(self) -> bytes | None:
        if self.folder == Path(DEFAULT_FOLDER) and self.folder.is_symlink():
            return None  # a link shipped as .raosym-cache: see the module docstring
        return load_secret(self.folder)

    def entry_path(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def lookup(self, derivation_file: str | os.PathLike) -> Lookup:
        """The cached Verified of a derivation file, or a miss that says why."""
        path = Path(derivation_file)
        key = cache_key(path)
        if self.secret is None:
            if self.folder == Path(DEFAULT_FOLDER) and self.folder.is_symlink():
                return Lookup(None, f"disabled ({self.folder} is a symbolic link)")
            return Lookup(None, f"disabled (no private cache key at {secret_path()})")
        try:
            blob = _read_entry(self.entry_path(key))
        except FileNotFoundError:
            return Lookup(None, "absent")
        except _NotAnEntry as error:
            return Lookup(None, f"foreign ({error})")
        except OSError as error:
            return Lookup(None, f"unreadable ({error.strerror or error})")
        verified, reason = _decode(blob, key, self.secret)
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
            payload = transport.dumps(verified)
        except Exception:  # noqa: BLE001 - an unpicklable result is simply not cached
            return None
        return self._write(self.entry_path(key), b"verified", key, payload)

    def _write(self, target: Path, kind: bytes, key: str, payload: bytes) -> Path | None:
        if self.secret is None:
            return None
        blob = MAGIC + key.encode() + b"\n" + _mac(self.secret, kind, key, payload) + b"\n"
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

    def load_rendered(self, derivation_file: str | os.PathLike):
        """``(files, dropped)``: the files rendered from this family's entry by the current
        emit stage and the quantities its gate left out, or None (also when the entry names
        any file but the family's own, or is not of that shape)."""
        if self.secret is None:
            return None
        key = render_key(derivation_file)
        try:
            blob = _read_entry(self.folder / f"{key}.render")
        except (OSError, _NotAnEntry):
            return None
        payload, _ = _payload(blob, b"render", key, self.secret)
        if payload is None:
            return None
        try:
            entry = json.loads(payload.decode("utf-8"))
            files, dropped = entry["files"], entry["dropped"]
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return None
        if set(files) != family_paths(Path(derivation_file).stem):
            return None
        if not isinstance(dropped, list) or not all(
                isinstance(item, list) and len(item) == 2 and all(isinstance(t, str) for t in item)
                for item in dropped):
            return None
        return files, tuple(Unavailable(quantity, reason) for quantity, reason in dropped)

    def store_rendered(self, derivation_file: str | os.PathLike, files: dict[str, str],
                       dropped=()) -> Path | None:
        """Store a family's rendered files and the quantities the gate left out (plain JSON:
        nothing read back is executed)."""
        key = render_key(derivation_file)
        payload = json.dumps({"files": files,
                              "dropped": [[item.quantity, item.reason] for item in dropped]},
                             sort_keys=True).encode("utf-8")
        return self._write(self.folder / f"{key}.render", b"render", key, payload)


class _NotAnEntry(Exception):
    """The file at an entry's path is not something raosym wrote (see :func:`_read_entry`)."""


def _read_entry(path: Path) -> bytes:
    """The bytes of the regular file at ``path``; :class:`_NotAnEntry` for a symbolic link, a
    FIFO, a device or a file over :data:`MAX_ENTRY_BYTES`, without reading from it."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _NotAnEntry("a symbolic link, not a regular file") from None
        raise
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise _NotAnEntry("not a regular file")
        if status.st_size > MAX_ENTRY_BYTES:
            raise _NotAnEntry(f"{status.st_size} bytes, more than any entry")
        return file.read(MAX_ENTRY_BYTES + 1)


def _mac(secret: bytes, kind: bytes, key: str, payload: bytes) -> bytes:
    """The HMAC of an entry: its kind (an entry of one kind cannot pass as the other), its key
    and its payload."""
    message = kind + b"\0" + key.encode() + b"\0" + payload
    return hmac.new(secret, message, hashlib.sha256).hexdigest().encode()


def _payload(blob: bytes, kind: bytes, key: str, secret: bytes) -> tuple[bytes | None, str]:
    """The payload of an entry whose magic line, key and HMAC are right; never raises."""
    if not blob.startswith(MAGIC):
        return None, "foreign (not a raosym cache entry)"
    header = blob[len(MAGIC):]
    parts = header.split(b"\n", 2)
    if len(parts) != 3:
        return None, "corrupt (truncated header)"
    stored_key, mac, payload = parts
    if stored_key != key.encode():
        return None, "foreign (its key is not this file's key)"
    if not hmac.compare_digest(mac, _mac(secret, kind, key, payload)):
        return None, "foreign or corrupt (its HMAC does not match: not written with this user's key)"
    return payload, "ok"


def _decode(blob: bytes, key: str, secret: bytes) -> tuple[Verified | None, str]:
    """Authenticate an entry, then deserialize it; never raises."""
    payload, reason = _payload(blob, b"verified", key, secret)
    if payload is None:
        return None, reason
    try:
        verified = transport.loads(payload)
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
