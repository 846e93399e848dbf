"""A cache folder for the kernels where numba finds none (a read-only install run by a user
whose home is not writable: a container, a shared cluster).

numba keeps a cached function's machine code in the first folder it can write among
``$NUMBA_CACHE_DIR``, the ``__pycache__`` beside the source and the user's cache folder
(``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``); with none writable, making the function
raises ``RuntimeError: cannot cache function ...: no locator available``.
:func:`fasteval._jit.njit` then makes fasteval's kernels (never another library's
functions: numba's settings are left as they are) with their cache in a private folder of
this user's under the temporary folder (:func:`fallback_dir`), and where that cannot be had
either, or where the user's own ``NUMBA_CACHE_DIR`` is not writable (the user's choice
wins), without a cache: compiled in memory, in every process. The compile notice says
which, in its one line (:func:`notice`). Kernels compiled into the package's own
``__pycache__`` before it was made read-only (``fasteval warmup`` when an image is built)
are copied into the private folder (:func:`_seed`) and loaded from there.
"""

from __future__ import annotations

import inspect
import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any

from numba.core import config

_NO_LOCATOR = "no locator available"
"""Part of numba's message when it finds no cache folder for a function."""

state: dict[str, str | None] = {"where": None, "why": None}
"""``where``: the fallback folder in use, ``"memory"`` or None (numba's own choice);
``why``: the folders numba could not use, for the notice."""


def _user() -> str:
    """This user's id (or name where there are no ids), for the folder's name."""
    if hasattr(os, "geteuid"):
        return str(os.geteuid())
    import getpass

    return getpass.getuser()


def private_dir(path: str) -> str | None:
    """``path`` made (mode 0700) or kept when it already is this user's own folder, not a
    link and writable by no one else; None otherwise (another user's folder, in a shared
    temporary folder, must never hold code this process loads).

    Examples
    --------
    >>> import tempfile, os
    >>> d = os.path.join(tempfile.mkdtemp(), "kernels")
    >>> private_dir(d) == d, private_dir(d) == d
    (True, True)
    >>> os.chmod(d, 0o777)
    >>> private_dir(d) is None
    True
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass  # checked below: this user's own, private folder only
    except OSError:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022:
        return None
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return None
    try:
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return None
    return path


def fallback_dir() -> str | None:
    """The folder for the kernels' cache when numba finds none: ``fasteval-numba-<uid>``
    under :func:`tempfile.gettempdir` (made private to this user), chosen once per
    process; None when the user set ``NUMBA_CACHE_DIR`` (theirs wins) or no such folder
    can be had.

    Examples
    --------
    >>> fallback_dir() is None or os.path.basename(fallback_dir()).startswith("fasteval-numba-")
    True
    """
    if config.CACHE_DIR:
        return None
    path = os.path.join(tempfile.gettempdir(), f"fasteval-numba-{_user()}")
    return private_dir(path)


def make_cached(make: Callable[[Any], Any], func: Any, uncached: Callable[[Any], Any]) -> Any:
    """``make(func)`` (numba's decorator with ``cache=True``); where numba finds no cache
    folder, the same with the cache in :func:`fallback_dir`, or ``uncached(func)``
    (compiled in memory). The choice is kept in :data:`state` for :func:`notice`.

    Examples
    --------
    >>> import numba
    >>> f = make_cached(numba.njit(cache=True), lambda x: x + 1, numba.njit)  # no file
    >>> f(1), state["where"] is None or state["where"] != "memory"
    (2, True)
    """
    try:
        source = inspect.getfile(func)
    except TypeError:
        source = ""
    if not os.path.isfile(source):  # typed at a prompt, made by exec: no file to cache beside
        return uncached(func)
    if state["where"] is None:
        try:
            return make(func)
        except RuntimeError as exc:
            if _NO_LOCATOR not in str(exc):
                raise
        state["why"] = (f"NUMBA_CACHE_DIR={config.CACHE_DIR} is not writable" if config.CACHE_DIR
                        else "neither fasteval's folder nor the user's cache folder is writable")
        state["where"] = fallback_dir() or "memory"
    if state["where"] != "memory":
        _seed(state["where"], source)  # type: ignore[arg-type]
        saved = config.CACHE_DIR
        config.CACHE_DIR = state["where"]  # read when numba picks the function's cache folder
        try:
            return make(func)
        except RuntimeError as exc:
            if _NO_LOCATOR not in str(exc):
                raise
            state["where"] = "memory"
        finally:
            config.CACHE_DIR = saved
    return uncached(func)


_SEEDED: set[str] = set()
"""The package folders whose compiled kernels :func:`_seed` has copied in this process."""


def _seed(where: str, source: str) -> None:
    """Copy into ``where`` the compiled kernels that the read-only ``__pycache__`` beside
    ``source`` holds (``fasteval warmup`` run when the image was built), once per folder
    and process, each file where the copy is missing or older, so that they are loaded,
    not compiled again: numba loads no cache from a folder it cannot write.

    Examples
    --------
    >>> import tempfile
    >>> _seed(tempfile.mkdtemp(), os.path.join(tempfile.mkdtemp(), "none.py"))  # nothing there
    """
    import shutil

    pycache = os.path.join(os.path.dirname(source), "__pycache__")
    if pycache in _SEEDED:
        return
    _SEEDED.add(pycache)
    try:
        from numba.core.caching import _CacheLocator

        target = os.path.join(where, _CacheLocator.get_suitable_cache_subpath(source))
        names = sorted(n for n in os.listdir(pycache) if n.endswith((".nbi", ".nbc")))
        if names:
            os.makedirs(target, mode=0o700, exist_ok=True)
    except (OSError, ImportError, AttributeError):  # nothing to copy, or another numba
        return
    for name in names:
        src, dst = os.path.join(pycache, name), os.path.join(target, name)
        try:
            if os.path.exists(dst) and os.stat(dst).st_mtime >= os.stat(src).st_mtime:
                continue
            tmp = f"{dst}.{os.getpid()}.tmp"
            shutil.copy2(src, tmp)
            os.replace(tmp, dst)  # (another process may copy the same file: either is whole)
        except OSError:
            continue


def notice(line: str) -> str:
    """The compile notice ``line``, said for where the cache is: unchanged where numba
    chose its folder.

    Examples
    --------
    >>> notice("fasteval: compiling") if state["where"] is None else "fasteval: compiling"
    'fasteval: compiling'
    """
    where, why = state["where"], state["why"]
    if where is None:
        return line
    if where == "memory":
        head = line.split(";", 1)[0]
        return (f"{head}, in memory: {why} and no private folder could be made in "
                f"{tempfile.gettempdir()}, so every run compiles them again (set "
                "NUMBA_CACHE_DIR to a writable folder to keep them)")
    return f"{line}; {why}: they are cached in {where} (NUMBA_CACHE_DIR chooses another folder)"
