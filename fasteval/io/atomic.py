"""Output files: complete or absent, never over an input, never over a device node.

* A **regular file** (or a path that does not exist yet) is written to a hidden temporary
  file beside it, ``.<name>.<host>-<pid>-<random>.tmp``, which is renamed onto the
  destination only when the writing succeeded. A symbolic link is written through: the
  file it points to is replaced, the link stays.
* **Standard output** (``-``, ``/dev/stdout``, ``/dev/fd/N``), **character devices**
  (``/dev/null``, a terminal), **FIFOs** and block devices are never renamed over: the
  output is written to a temporary file in the system temporary directory first and then
  copied to the destination, opened as it is (no new file, no truncation), so a failed
  job writes nothing there either.
* A directory, a socket, or a path below a regular file is refused with one line
  (:class:`fasteval.errors.OutputError`), as is a full disk (``ENOSPC``).
* :func:`check_outputs` refuses, before anything is read, an output that is one of the
  inputs (the same file by inode too: hard links, symbolic links, ``./run.txt``) or the
  same file as another output.

Stale temporary files
---------------------
A job that is killed hard (``SIGKILL``, power loss) cannot remove its temporary file. The
next output written to the same destination removes the temporary files of *that
destination* that were left by a process of this host that is no longer alive (checked
with ``kill(pid, 0)``) and that were last written before the current process loaded
this module. A concurrent job's temporary file is never touched: its process is alive.
The host tag (a hash of the host name) keeps a job from judging the files of another
machine on a shared file system. Temporary files named in the older way
(``.<name>.<random>.tmp``, no process id) are left alone, and so is anything not provably
a temporary of fasteval: another user's file, a symbolic link, a folder holding anything but
the files its writer puts there. The same rule removes the folders of partitioned jobs
(``fasteval-parts-<host>-<pid>-<random>`` in the temporary directory, ``*.arrow`` files
only, see :func:`fasteval.batch.driver.partition_chunks`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Literal

from fasteval.errors import OutputError, ParameterError

__all__ = [
    "STDOUT",
    "AtomicOutput",
    "atomic_open",
    "atomic_path",
    "check_outputs",
    "check_writable",
    "describe_os_error",
    "output_kind",
    "remove_stale",
    "temp_prefix",
    "temp_stem",
    "write_stdout",
]

STDOUT = "-"
"""The output name of standard output."""

OutputKind = Literal["fd", "stream", "file"]

_HOST = hashlib.blake2s(socket.gethostname().encode(), digest_size=3).hexdigest()
_FD_PATH = re.compile(r"/(?:dev|proc/self)/fd/(\d+)")
_STD_PATHS = {"/dev/stdout": 1, "/dev/stderr": 2}
_DISK_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_OS_ERROR_TEXT = re.compile(r"(?:os error|errno)\s*(\d+)", re.IGNORECASE)


_STARTED = time.time()
"""When this module was imported: temporary files of dead writers older than this are stale."""



def temp_prefix(stem: str) -> str:
    """Prefix of a temporary name that :func:`remove_stale` can judge: ``stem`` followed by
    this host's tag and this process's id.

    Examples
    --------
    >>> import os
    >>> temp_prefix(".out.csv.").endswith(f"-{os.getpid()}-")
    True
    """
    return f"{stem}{_HOST}-{os.getpid()}-"


_TEMP_TAIL = 6 + 1 + 10 + 1 + 8 + len(".tmp")
"""Bytes a temporary name adds after its stem: host tag, pid (at most 10 digits), the
random part and the suffix."""


def temp_stem(name: str, directory: str | os.PathLike[str]) -> str:
    """``.<name>.``, the stem of the temporary names of an output called ``name``, with
    ``name`` cut (whole characters, counted in bytes) so that a whole temporary name fits
    the file system's limit (255 bytes): an output whose own name nearly fills it can be
    written too.

    Examples
    --------
    >>> import tempfile
    >>> temp_stem("run.csv", tempfile.gettempdir())
    '.run.csv.'
    >>> len(temp_stem("x" * 250 + ".csv", tempfile.gettempdir())) + _TEMP_TAIL <= 255
    True
    """
    try:
        limit = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    room = max(limit - _TEMP_TAIL - 2, 1)
    name = name[:room]
    while len(os.fsencode(name)) > room:  # whole characters: a path polars takes as one
        name = name[:-1]
    return f".{name}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, another user's process
        return True
    return True


def remove_stale(directory: str | os.PathLike[str], stem: str, suffix: str = "", *,
                 holds: tuple[str, ...] = ()) -> list[Path]:
    """Remove the temporary files (or folders) ``<stem><host>-<pid>-<random><suffix>`` in
    ``directory`` that a dead process of this host left before this module was imported.

    Only what is provably a fasteval temporary is removed: a name of that exact pattern
    with this host's tag, owned by this user, never a symbolic link (nor anything through
    one), and a folder only when every entry in it is a regular file whose name matches
    one of ``holds`` (what the writer puts there), so a folder of anything else is left.

    Parameters
    ----------
    directory
        Where to look (not recursively).
    stem, suffix
        The fixed parts of the names (:func:`temp_prefix` gives ``stem`` + host + pid).
    holds
        Shell patterns (``"*.arrow"``) of the files a temporary folder of this kind holds;
        none: folders are never removed.

    Returns
    -------
    list of Path
        What was removed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> left = d / f".out.csv.{_HOST}-999999999-abcdefgh.tmp"   # a pid that cannot be alive
    >>> _ = left.write_text("partial")
    >>> os.utime(left, (0, 0))                                   # written long ago
    >>> [p.name == left.name for p in remove_stale(d, ".out.csv.", ".tmp")], left.exists()
    ([True], False)
    >>> kept = d / f".out.csv.{_HOST}-999999999-ijklmnop.tmp"    # a folder of other things
    >>> kept.mkdir(); _ = (kept / "notes.txt").write_text("mine")
    >>> os.utime(kept, (0, 0))
    >>> remove_stale(d, ".out.csv.", ".tmp", holds=("*.parquet",)), kept.exists()
    ([], True)
    """
    pattern = re.compile(re.escape(stem) + r"([0-9a-f]{6})-(\d+)-[a-z0-9_]{8}" + re.escape(suffix))
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.fullmatch(entry.name) if entry.name.startswith(stem) else None
        if m is None or m.group(1) != _HOST:
            continue
        pid = int(m.group(2))
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if st.st_mtime >= _STARTED or (pid != os.getpid() and _alive(pid)):
            continue
        if not _provably_temporary(entry, st, holds):
            continue
        path = Path(entry.path)
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed


def _provably_temporary(entry: os.DirEntry, st: os.stat_result, holds: tuple[str, ...]) -> bool:
    """Whether ``entry`` (named as a temporary of a dead writer) is one that fasteval
    wrote: this user's, a regular file, or a folder of regular files named as ``holds``
    says (no link, no subfolder)."""
    import fnmatch

    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    if stat.S_ISREG(st.st_mode):
        return True
    if not stat.S_ISDIR(st.st_mode) or not holds:
        return False
    try:
        inside = list(os.scandir(entry.path))
    except OSError:
        return False
    return all(e.is_file(follow_symlinks=False) and any(fnmatch.fnmatchcase(e.name, h) for h in holds)
               for e in inside)


def _fd_of(text: str) -> int | None:
    if text == STDOUT:
        return 1
    if text in _STD_PATHS:
        return _STD_PATHS[text]
    m = _FD_PATH.fullmatch(text)
    return int(m.group(1)) if m else None


def _first_non_directory(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` that is not a directory (None if all are)."""
    for parent in path.parents:
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            continue
        except OSError:
            return parent
        return None if stat.S_ISDIR(st.st_mode) else parent
    return None


def output_kind(path: str | os.PathLike[str]) -> OutputKind:
    """How an output is written: ``"fd"`` (standard output or another open descriptor),
    ``"stream"`` (a character/block device or a FIFO: written in place) or ``"file"`` (a
    regular file or a new path: temporary file, then rename).

    Raises
    ------
    OutputError
        The path is a directory, a socket, or lies below a regular file.

    Examples
    --------
    >>> output_kind("-"), output_kind("/dev/null"), output_kind("results.csv")
    ('fd', 'stream', 'file')
    """
    text = os.fspath(path)
    if _fd_of(text) is not None:
        return "fd"
    if not text:
        raise OutputError(text, "is empty; expected a file path (or - for standard output)")
    try:
        st = os.stat(text)
    except FileNotFoundError:
        if text.endswith(("/", os.sep)):  # the user means a folder: never a file of its name
            raise OutputError(text, "ends with a path separator, naming a directory; expected "
                                    "a file path (or - for standard output)") from None
        blocker = _first_non_directory(Path(text))
        if blocker is not None:
            raise OutputError(text, f"cannot be created: {str(blocker)!r} is a file, not a directory") from None
        return "file"
    except NotADirectoryError:
        blocker = _first_non_directory(Path(text))
        raise OutputError(text, f"cannot be created: {str(blocker)!r} is a file, not a directory") from None
    except OSError as exc:
        raise OutputError(text, f"cannot be examined: {describe_os_error(exc)}") from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise OutputError(text, "is a directory; expected a file path (or - for standard output)")
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode):
        return "stream"
    raise OutputError(text, "is a socket or another special file; expected a file, a device, a FIFO or -")


def describe_os_error(exc: BaseException) -> str:
    """The operating system's words for a failed read or write (``(disk full)`` added for
    ENOSPC), also when a writer (polars, pyarrow) only says ``os error N`` in its text.

    Examples
    --------
    >>> import errno
    >>> describe_os_error(OSError(errno.ENOSPC, "No space left on device"))
    'No space left on device (disk full)'
    """
    code = getattr(exc, "errno", None)
    if not isinstance(code, int):
        m = _OS_ERROR_TEXT.search(str(exc))
        code = int(m.group(1)) if m else None
    if isinstance(code, int) and code > 0:
        text = os.strerror(code)
        return f"{text} (disk full)" if code in _DISK_FULL else text
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _write_failure(exc: BaseException, tmp: Path) -> bool:
    """Whether ``exc``, raised while a writer filled ``tmp``, is the output failing (a full
    disk, an I/O error) rather than a problem of the data or a bug."""
    if isinstance(exc, OSError):
        name = exc.filename
        return name is None or os.fspath(name) == os.fspath(tmp) or _OS_ERROR_TEXT.search(str(exc)) is not None
    return type(exc).__module__.split(".")[0] in ("polars", "pyarrow") and _OS_ERROR_TEXT.search(str(exc)) is not None


class AtomicOutput:
    """One output being written: a temporary file now, the destination on :meth:`commit`.

    Parameters
    ----------
    path
        The destination (``-`` is standard output).

    Attributes
    ----------
    tmp : Path
        Where to write.
    kind : str
        See :func:`output_kind`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> out = AtomicOutput(d / "res.txt")
    >>> _ = out.tmp.write_text("42\\n")
    >>> (d / "res.txt").exists()
    False
    >>> out.commit()
    >>> (d / "res.txt").read_text()
    '42\\n'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.target = os.fspath(path)
        self.closed = False
        self.tmp: Path | None = None
        self._created: list[Path] = []
        _OPEN.add(self)  # before anything is made: an interrupted start is undone too
        try:
            self._start()
        except BaseException:
            self.abort()
            raise

    def _start(self) -> None:
        """Make the folders and the temporary file (see the class notes)."""
        self.kind = output_kind(self.target)
        if self.kind == "file":
            dest = Path(os.path.realpath(self.target))  # through symbolic links: the link stays
            self._created = _missing_folders(dest.parent)  # removed again if the output is not
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self._remove_created()
                raise OutputError(self.target, f"cannot be created: {describe_os_error(exc)}") from None
            self.dest = dest
            directory, name = dest.parent, dest.name
        else:
            self._created = []
            self.dest = Path(self.target)
            directory = Path(tempfile.gettempdir())
            name = "fasteval-" + ("stdout" if self.kind == "fd" else self.dest.name)
        stem = temp_stem(name, directory)
        remove_stale(directory, stem, ".tmp")
        try:
            fd, tmp = tempfile.mkstemp(prefix=temp_prefix(stem), suffix=".tmp", dir=directory)
        except OSError as exc:
            self._remove_created()
            raise OutputError(self.target, f"cannot be written: {describe_os_error(exc)}") from None
        self.tmp = Path(tmp)
        os.close(fd)

    def commit(self) -> None:
        """Put the output in place: rename the temporary file onto a regular destination, or
        copy it to a device, FIFO or descriptor. Raises :class:`OutputError` on failure
        (the temporary file is removed, a regular destination left as it was)."""
        if self.closed:
            return
        self.closed = True
        _OPEN.discard(self)
        try:
            if self.kind == "file":
                # mkstemp made it 0600: give it the mode a plain open() leaves, the existing
                # file's (a private 0600 output stays private), else 0666 less the umask
                try:
                    mode = stat.S_IMODE(os.stat(self.dest).st_mode)
                except FileNotFoundError:
                    mode = 0o666 & ~_umask()
                os.chmod(self.tmp, mode)
                os.replace(self.tmp, self.dest)
                return
            self._copy_out()
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()
            self._remove_created()
            if isinstance(exc, BrokenPipeError):
                raise
            raise OutputError(self.target, f"cannot be written: {describe_os_error(exc)}") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()

    def _copy_out(self) -> None:
        fd = _fd_of(self.target)
        with open(self.tmp, "rb") as src:
            if fd == 2:
                sys.stderr.flush()
            if fd == 1:
                sys.stdout.flush()
                buffer = getattr(sys.stdout, "buffer", None)
                if buffer is None:  # a text-only stand-in (tests): bytes as text
                    sys.stdout.write(src.read().decode())
                else:
                    shutil.copyfileobj(src, buffer, 1 << 20)
                    buffer.flush()
                sys.stdout.flush()
                return
            dst = fd if fd is not None else os.open(self.target, os.O_WRONLY)
            try:
                while block := src.read(1 << 20):
                    view = memoryview(block)
                    while view:
                        view = view[os.write(dst, view):]
            finally:
                if fd is None:
                    os.close(dst)

    def abort(self) -> None:
        """Drop the output: the temporary file is removed, the destination untouched, and the
        folders made for it are removed again when they are still empty."""
        if self.closed:
            return
        self.closed = True
        _OPEN.discard(self)
        if self.tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()
        self._remove_created()

    def _remove_created(self) -> None:
        """Remove the folders this output made, deepest first, while they are empty (another
        output may have put a file in one since)."""
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:
                return

    def failure(self, exc: BaseException) -> OutputError | None:
        """``exc`` (raised while the temporary file was written) as an :class:`OutputError`
        naming the destination when it is a write failure (a full disk...), else None."""
        if _write_failure(exc, self.tmp):
            return OutputError(self.target, f"cannot be written: {describe_os_error(exc)}")
        return None


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those above it that do not exist, deepest first (what ``mkdir(parents=True)``
    makes).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.relative_to(d).as_posix() for p in _missing_folders(d / "a" / "b")]
    ['a/b', 'a']
    """
    missing = []
    while not folder.exists() and not folder.is_symlink() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


_OPEN: set[AtomicOutput] = set()
"""The outputs of this process neither committed nor dropped yet (see :func:`abort_open`)."""


def abort_open() -> int:
    """Drop every output of this process that is neither committed nor dropped (its
    temporary file and the folders made for it removed); return how many.

    The ``fasteval`` command calls it as it ends: a signal that stops a job can arrive
    between the making of an output and the ``with`` block that would drop it (or inside
    code that loses the exception), and the process ends without running the block's
    cleanup. A library caller that stops a job its own way may call it too.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> out = AtomicOutput(d / "new" / "res.txt")
    >>> abort_open(), sorted(p.name for p in d.iterdir())
    (1, [])
    """
    left = list(_OPEN)
    for out in left:
        with contextlib.suppress(OSError):
            out.abort()
    return len(left)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path for the output ``path``; put it in place on success.

    A regular file (or a new path) is replaced by a rename, a device, FIFO or ``-`` (standard
    output) receives a copy (see the module notes). If the body raises (or the process
    dies), the destination is left untouched and the temporary file is removed (or, after
    a hard kill, left as a hidden ``.<name>.<host>-<pid>-<random>.tmp`` file that the next
    write to ``path`` removes). A write that fails for a full disk raises
    :class:`fasteval.errors.OutputError`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "out.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> (d / "out.txt").read_text()
    'done'
    """
    out = AtomicOutput(path)
    try:
        yield out.tmp
    except BaseException as exc:
        out.abort()
        failure = out.failure(exc)
        if failure is not None:
            raise failure from None
        raise
    out.commit()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: object) -> Iterator[IO]:
    """Open a temporary file for writing; it replaces (or is copied to) ``path`` only when
    the block succeeds. See :func:`atomic_path`. Text is written as UTF-8 (what the readers
    read) unless ``encoding`` says otherwise, whatever the locale.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_open(d / "a.csv") as fh:
    ...     _ = fh.write("x\\n1\\n")
    >>> (d / "a.csv").read_text()
    'x\\n1\\n'
    """
    if "b" not in mode:  # not the locale's encoding: ASCII (C locale) or Latin-1 elsewhere
        kwargs.setdefault("encoding", "utf-8")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:  # noqa: SIM115
        yield fh


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output and flush it; a failed write (a full disk) raises
    :class:`fasteval.errors.OutputError` (a closed pipe still raises ``BrokenPipeError``).

    Examples
    --------
    >>> write_stdout("map 0.25\\n")
    map 0.25
    """
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(STDOUT, f"cannot be written: {describe_os_error(exc)}") from None


def _identity(path: str) -> tuple:
    """(device, inode) of an existing file (through links), else its resolved path."""
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def check_outputs(
    outputs: Mapping[str, str | os.PathLike[str] | None],
    inputs: Iterable[object] = (),
) -> None:
    """Refuse outputs that would replace an input or each other, before anything is read.

    Parameters
    ----------
    outputs
        Option name (as the user wrote it, e.g. ``"-o/--output"``) -> output path or None.
    inputs
        Input paths (anything that is not a path, such as an in-memory table, is skipped;
        so is ``-``).

    Raises
    ------
    ParameterError
        An output is the same file as an input (same path, ``./`` spelling, symbolic or
        hard link) or as another output (two tables would overwrite each other).
        An output named by a name that is not valid UTF-8 (``o\\xe9.csv``: polars
        cannot write it).
    OutputError
        An output is a directory, a socket or lies below a regular file, or cannot be
        written (:func:`check_writable`: no permission, a read-only file system).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "run.txt").write_text("q1 Q0 d1 1 1.0 r\\n")
    >>> try:
    ...     check_outputs({"-o": f"{d}/./run.txt"}, [str(d / "run.txt")])
    ... except ParameterError as exc:
    ...     print(str(exc).replace(str(d), "D"))
    -o must be a file other than the input 'D/run.txt' (writing it would replace that input), got 'D/./run.txt'
    """
    ins: list[tuple[str, tuple]] = []
    for p in inputs:
        if isinstance(p, str | os.PathLike) and os.fspath(p) != STDOUT and os.path.exists(p):
            ins.append((os.fspath(p), _identity(os.fspath(p))))
    outs: list[tuple[str, str, tuple]] = []
    for option, p in outputs.items():
        if p is None:
            continue
        text = os.fspath(p)
        from fasteval.io._common import undecodable_name

        if undecodable_name(text):  # (polars writes by name, and cannot take that one)
            raise ParameterError(option, "a name that is valid UTF-8 (an output cannot be "
                                 "written under a name that is not)", text)
        kind = output_kind(text)
        if kind == "fd" or (kind == "stream" and stat.S_ISCHR(os.stat(text).st_mode)):
            continue  # a terminal, /dev/null, standard output: shared without harm
        ident = _identity(text)
        for name, other in ins:
            if other == ident:
                raise ParameterError(
                    option, f"a file other than the input {name!r} (writing it would replace that input)", text
                )
        for other_option, other_text, other in outs:
            if other == ident:
                raise ParameterError(
                    option, f"a file other than {other_option} {other_text!r} (one output would overwrite the other)",
                    text,
                )
        outs.append((option, text, ident))
    for _, text, _ in outs:
        check_writable(text)


def check_writable(path: str | os.PathLike[str]) -> None:
    """Make sure that ``path`` can be written, before the work whose result it takes: the
    temporary file an :class:`AtomicOutput` writes is made beside it (and the folders
    above it that are missing), then removed again, so nothing is left. A device, a FIFO
    or standard output is not opened (a FIFO would wait for its reader).

    Raises
    ------
    OutputError
        The output cannot be created there (no permission, a read-only file system, a
        full disk, a path below a file, a directory).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_writable(d / "new" / "out.csv"); sorted(d.iterdir())
    []
    >>> try:
    ...     check_writable("/proc/fasteval-out.csv")
    ... except OutputError as exc:
    ...     print(exc.target)
    /proc/fasteval-out.csv
    """
    if output_kind(path) != "file":
        return
    AtomicOutput(path).abort()


def _umask() -> int:
    """The process's umask, read without setting it where the system tells it (Linux's
    ``/proc/self/status``): ``os.umask`` can only read it by setting it, and for that moment
    other threads would create files with a umask of 0.

    Examples
    --------
    >>> 0 <= _umask() <= 0o777
    True
    """
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)  # elsewhere: a restrictive mask for that moment, never 0
    os.umask(mask)
    return mask
