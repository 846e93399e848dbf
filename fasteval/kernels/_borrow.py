"""Reference-count-free views of arrays, for kernels that pass arrays to many small calls.

numba counts references to an array's buffer with atomic updates. A kernel that hands its
arrays to a helper once per query (or takes a per-thread row of a scratch array) makes two
of them per call; with two threads on the same counts the cache line moves between cores
on every call, which costs more than the helper's work. ``borrow`` returns a view whose
buffer has no owner to count (the array's data pointer, shape and strides in a new array
structure without a memory-info pointer, as ``numba.carray`` makes one), so those calls
cost nothing extra. Only for a kernel's own arguments, which its caller owns for the whole
call: never for an array the kernel allocates itself, which numba may release while a
parallel loop still uses the view (allocate scratch in a caller and pass it in).

The structure is built here rather than by ``numba.carray``: that function's
implementation keeps an environment in ``numba.np.arrayobj``, so loading a cached kernel
that used it imports that module, some 40 ms of every job's start.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import intrinsic

from fasteval._jit import JIT_DISABLED, njit


@intrinsic
def _unowned(typingctx, arr):
    """``arr``'s data, shape and strides in an array structure with no memory-info
    pointer (nothing to count), C layout."""
    if not isinstance(arr, types.Array):
        return None
    sig = arr.copy(layout="C")(arr)

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        context.populate_array(view, data=src.data, shape=src.shape, strides=src.strides,
                               itemsize=src.itemsize, meminfo=None)
        return view._getvalue()

    return sig, codegen


@njit(cache=True, inline="always")
def borrow(a):
    """A view of C-contiguous ``a`` without a reference count (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> borrow(np.arange(3)).tolist()
    [0, 1, 2]
    """
    if not a.flags.c_contiguous:
        raise ValueError("borrow needs a C-contiguous array")
    return _unowned(a)


if JIT_DISABLED:  # NUMBA_DISABLE_JIT=1: an intrinsic has no Python form; the array is its own view

    def borrow(a):  # type: ignore[no-redef]  # noqa: F811
        """``a`` itself (numba's JIT is disabled: nothing counts references)."""
        if not a.flags.c_contiguous:
            raise ValueError("borrow needs a C-contiguous array")
        return a
