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
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numba
from numba.core import types as nbtypes
from numba.core.runtime import rtsys


def _quick_load(self: Any, sig: Any, target_context: Any) -> Any:
    """``Cache.load_overload`` without ``target_context.refresh()`` (see the module docstring)."""
    rtsys.initialize(target_context)
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)
    return None  # the guard swallowed an I/O error: compile instead


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


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` (same arguments), with :func:`quick_loading` and
    :func:`one_signature` applied to the result.

    Examples
    --------
    >>> @njit(nogil=True)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21)
    42
    """
    if len(args) == 1 and callable(args[0]) and not options:
        return one_signature(quick_loading(numba.njit(args[0])))
    wrap = numba.njit(*args, **options)

    def decorate(func: Callable) -> Any:
        return one_signature(quick_loading(wrap(func)))

    return decorate
