"""``njit`` for fasteval's kernels: numba's, with cached machine code loaded without
numba's one-off registry setup.

When numba loads a cached function it first calls ``target_context.refresh()``, which
imports and registers every lowering implementation numba has (arrays, random numbers,
typed containers, ...): about 0.15-0.3 s, once per process, paid by the first kernel a
job calls. None of it is needed to load machine code that is already compiled: the code
links against numba's runtime (NRT) and helper symbols only, which are installed here
(``rtsys.initialize``), and a parallel kernel starts its thread pool itself when it is
loaded. A cache miss still compiles through numba's compiler, which does the full setup
first, so only loading is changed, and only for the dispatchers made here (never another
library's). Where numba lacks the internals used (another version), the dispatcher is
left as numba made it.

Two more one-off costs of the first load are deferred the same way:

* numba's extensions (the ``numba_extensions`` entry points, found by scanning every
  installed distribution's metadata: 30-40 ms) are registered before numba compiles, on a
  cache miss, rather than before every first call;
* a cached function's environment names the module its code came from, and numba imports
  that module to rebuild it. For numba's own implementations inlined into a kernel (the
  ``np.zeros`` of ``numba.np.arrayobj``, which imports half of numba's array support:
  50-100 ms) the module is not imported: their environment is rebuilt without the module's
  globals, which only object-mode code reads (the constants, which compiled code does read,
  are restored as numba restores them). An environment of any other module is rebuilt as
  numba does it.

A kernel made here that numba compiles (not in the cache yet) is recorded
(:func:`compiled`), and the first one in a process prints one line on stderr saying that
kernels are being compiled, once (:func:`fasteval.progress.note`: not under a command's
``--quiet`` nor with ``FASTEVAL_QUIET=1``): a first run that compiles for seconds does not
wait in silence.

Where numba finds no folder to cache a kernel in (a read-only install run by a user whose
home is not writable), :func:`njit` makes it with its cache in a private temporary folder,
or compiles it in memory (:mod:`fasteval._cache_dir`), and the compile notice says
so; a cache file that cannot be written leaves the kernel compiled in memory.
"""

from __future__ import annotations

import contextlib
import re
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numba
from numba.core import entrypoints
from numba.core import environment as nbenv
from numba.core import event as nbevent
from numba.core import types as nbtypes
from numba.core.runtime import rtsys


def _quick_load(self: Any, sig: Any, target_context: Any) -> Any:
    """``Cache.load_overload`` without ``target_context.refresh()`` (see the module docstring)."""
    rtsys.initialize(target_context)
    cres = None
    with _numba_modules_not_imported(), self._guard_against_spurious_io_errors():
        cres = self._load_overload(sig, target_context)
    if cres is None:  # not cached (or an I/O error): numba compiles next, extensions first
        entrypoints.init_all()
    return cres


_REBUILD_ENV = getattr(nbenv, "_rebuild_env", None)
"""numba's ``_rebuild_env``, which unpickling a cached environment calls."""


def _rebuild_env(modname: Any, consts: Any, env_name: Any) -> Any:
    """numba's ``_rebuild_env``, except for a numba module not imported yet (see the module
    docstring)."""
    env = nbenv.lookup_environment(env_name)
    if env is not None:
        return env
    if not (isinstance(modname, str) and modname.startswith("numba.") and modname not in sys.modules):
        return _REBUILD_ENV(modname, consts, env_name)  # type: ignore[misc]
    env = nbenv.Environment({"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    nbenv.Environment._memo[env_name] = env
    return env


@contextlib.contextmanager
def _numba_modules_not_imported() -> Iterator[None]:
    """Unpickle environments with :func:`_rebuild_env` inside the block. Cache loads run
    under numba's compiler lock, so no other compilation or load sees the swap."""
    if _REBUILD_ENV is None or not all(hasattr(nbenv, n) for n in ("lookup_environment", "Environment")):
        yield
        return
    nbenv._rebuild_env = _rebuild_env
    try:
        yield
    finally:
        nbenv._rebuild_env = _REBUILD_ENV


def _save_or_skip(self: Any, sig: Any, data: Any) -> None:
    """``Cache.save_overload``; a cache folder that cannot take the file (full, removed,
    made read-only since) leaves the compiled code in memory only, never fails the job."""
    with contextlib.suppress(OSError):
        type(self).save_overload(self, sig, data)


def _init_on_miss(self: Any) -> None:
    """``Dispatcher._compilation_chain_init_hook``, deferred to a cache miss (:func:`_quick_load`)."""


def quick_loading(dispatcher: Any) -> Any:
    """Make ``dispatcher`` load its cached code with :func:`_quick_load`; return it.

    Examples
    --------
    >>> import numba
    >>> f = quick_loading(numba.njit(lambda x: x + 1))  # no cache: left as it is
    >>> f(1)
    2
    """
    cache = getattr(dispatcher, "_cache", None)
    if (
        cache is not None
        and hasattr(cache, "_load_overload")
        and hasattr(cache, "_guard_against_spurious_io_errors")
        and hasattr(rtsys, "initialize")
    ):
        cache.load_overload = types.MethodType(_quick_load, cache)
        if hasattr(type(cache), "save_overload"):
            cache.save_overload = types.MethodType(_save_or_skip, cache)
        if hasattr(dispatcher, "_compilation_chain_init_hook") and hasattr(entrypoints, "init_all"):
            dispatcher._compilation_chain_init_hook = types.MethodType(_init_on_miss, dispatcher)
    return dispatcher


def _plain_call_template(self: Any, args: Any, kws: Any) -> Any:
    """``Dispatcher.get_call_template`` with literal argument types made plain (see
    :func:`one_signature`)."""
    args = tuple(nbtypes.unliteral(a) for a in args)
    kws = {k: nbtypes.unliteral(v) for k, v in kws.items()}
    return type(self).get_call_template(self, args, kws)


def one_signature(dispatcher: Any) -> Any:
    """Make calls to ``dispatcher`` from other kernels compile it for the plain types of
    their arguments, not for each constant: by default numba types a constant argument
    (``_count_below(lab, s, e, k, 0, 2147483647)``) as a literal and compiles one
    specialisation per value; five call sites of one function with different constants
    cost five compilations (seconds on a first run) for the same machine code. Returns
    ``dispatcher``; one without the method is left as it is.

    Examples
    --------
    >>> import numba
    >>> inner = one_signature(numba.njit(lambda x, k: x + k))
    >>> outer = numba.njit(lambda x: inner(x, 1) + inner(x, 2))
    >>> outer(1), len(inner.signatures)
    (5, 1)
    """
    if hasattr(dispatcher, "get_call_template"):
        dispatcher.get_call_template = types.MethodType(_plain_call_template, dispatcher)
    return dispatcher


_COMPILED: list[str] = []
"""The kernels made here that this process compiled, one entry per signature."""

NOTICE = ("fasteval: compiling numba kernels ({name} first); this happens once: later runs "
          "load them from numba's cache ('fasteval warmup' compiles them all ahead)")
"""The line printed on stderr when a process compiles its first kernel."""


def compiled() -> list[str]:
    """Names (``module.function``) of the kernels made by :func:`njit` that this process
    compiled rather than loaded from numba's cache, in order, one per signature: empty
    after ``fasteval warmup`` for any command.

    Examples
    --------
    >>> @njit
    ... def plus_one(x):
    ...     return x + 1
    >>> before = len(compiled())
    >>> plus_one(1), [n.rsplit(".", 1)[-1] for n in compiled()[before:]]
    (2, ['plus_one'])
    """
    return list(_COMPILED)


def _kernel_name(dispatcher: Any) -> str:
    """``module.qualname`` of a dispatcher's function, letters, digits, ``_ . < >`` only."""
    func = getattr(dispatcher, "py_func", None)
    name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
    return re.sub(r"[^\w.<>]", "?", name, flags=re.ASCII)[:200]


class _CompileListener(nbevent.Listener):
    """Records the compilations of kernels made by :func:`njit` (numba's ``numba:compile``
    event, which fires on a cache miss only) and prints :data:`NOTICE` at the first."""

    def on_start(self, event: Any) -> None:
        dispatcher = (event.data or {}).get("dispatcher")
        if not getattr(dispatcher, "_fasteval_kernel", False):
            return  # another library's function
        name = _kernel_name(dispatcher)
        _COMPILED.append(name)
        if len(_COMPILED) == 1:
            from fasteval.progress import note

            line = NOTICE.format(name=name)
            fallback = sys.modules.get("fasteval._cache_dir")
            note(line if fallback is None else fallback.notice(line))

    def on_end(self, event: Any) -> None:
        """Nothing to do when it ends."""


if hasattr(nbevent, "register") and hasattr(nbevent, "Listener"):
    nbevent.register("numba:compile", _CompileListener())


def _ours(dispatcher: Any) -> Any:
    """``dispatcher`` marked as one of fasteval's kernels (see :func:`compiled`)."""
    with contextlib.suppress(AttributeError, TypeError):
        dispatcher._fasteval_kernel = True
    return one_signature(quick_loading(dispatcher))


JIT = {"cache": True, "error_model": "numpy", "nogil": True}
"""The options of the scoring kernels: ``@njit(**JIT)``."""

JIT_DISABLED: bool = bool(getattr(numba.config, "DISABLE_JIT", False))
"""numba's ``NUMBA_DISABLE_JIT`` (its debugging switch, which coverage tools set too): the
kernels made by :func:`njit` are then the plain Python functions, run by the interpreter
(slowly: small inputs only)."""


def py_func(kernel: Any) -> Callable:
    """The Python function behind ``kernel``: its ``py_func`` for a numba dispatcher or a
    kernel made with numba's JIT disabled (``NUMBA_DISABLE_JIT=1``), else ``kernel``. Code
    that reads a kernel's Python source or calls it from Python goes through here.

    Examples
    --------
    >>> @njit
    ... def three():
    ...     return 3
    >>> py_func(three)(), py_func(py_func(three)) is py_func(three)
    (3, True)
    """
    return getattr(kernel, "py_func", kernel)


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` (same arguments), with :func:`quick_loading` and
    :func:`one_signature` applied to the result, whose compilations are recorded
    (:func:`compiled`).

    Examples
    --------
    >>> @njit(nogil=True)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21)
    42
    """
    if JIT_DISABLED:  # the Python functions, with the compiled kernels' arithmetic
        from fasteval._interpret import interpreted

        if len(args) == 1 and callable(args[0]):
            return interpreted(args[0])
        return lambda func: interpreted(func, options.get("error_model", "python"))
    if len(args) == 1 and callable(args[0]) and not options:
        return _ours(numba.njit(args[0]))
    wrap = numba.njit(*args, **options)
    if not options.get("cache"):
        return lambda func: _ours(wrap(func))
    uncached = numba.njit(*args, **{**options, "cache": False})

    def decorate(func: Callable) -> Any:
        return _ours(_made_cached(wrap, func, uncached))

    return decorate


def _made_cached(wrap: Callable, func: Callable, uncached: Callable) -> Any:
    """``wrap(func)`` (numba's decorator with ``cache=True``); where numba finds no folder
    to cache in, as :func:`fasteval._cache_dir.make_cached` makes it (in a
    private temporary folder, or compiled in memory), never numba's ``RuntimeError``."""
    fallback = sys.modules.get("fasteval._cache_dir")
    if fallback is None:
        try:
            return wrap(func)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
        from fasteval import _cache_dir as fallback
    return fallback.make_cached(wrap, func, uncached)
