"""Reference-count-free views of arrays, for kernels that pass arrays to many small calls.

numba counts references to an array's buffer with atomic updates. A kernel that hands its
arrays to a helper once per query (or takes a per-thread row of a scratch array) makes two
of them per call; with two threads on the same counts the cache line moves between cores
on every call, which costs more than the helper's work. ``borrow`` returns a view whose
buffer has no owner to count (``numba.carray`` on the data pointer), so those calls cost
nothing extra. Only for a kernel's own arguments, which its caller owns for the whole call:
never for an array the kernel allocates itself, which numba may release while a parallel
loop still uses the view (allocate scratch in a caller and pass it in).
"""

from __future__ import annotations

from numba import carray, njit
from numba.core import types
from numba.extending import intrinsic


@intrinsic
def _data_ptr(typingctx, arr):
    """The data pointer of a contiguous array."""
    sig = types.CPointer(arr.dtype)(arr)

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return sig, codegen


@njit(cache=True, inline="always")
def borrow(a):
    """A view of C-contiguous ``a`` without a reference count (see the module docstring)."""
    if not a.flags.c_contiguous:
        raise ValueError("borrow needs a C-contiguous array")
    return carray(_data_ptr(a), a.shape)
