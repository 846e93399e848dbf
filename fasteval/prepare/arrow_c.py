"""A polars text column's Arrow buffers through the Arrow C stream interface, without pyarrow.

polars exports a series as an ``ArrowArrayStream`` (``Series.__arrow_c_stream__``, the
Arrow PyCapsule interface): C structures whose buffers are polars' own memory, shared, not
copied. Reading them with ctypes gives the kernels the same string views that
``Series.to_arrow()`` gives, without importing pyarrow, some 50-60 ms of every command's
start. The structures are those of the Arrow C data interface
(https://arrow.apache.org/docs/format/CDataInterface.html); a string-view array (format
``"vu"``) has the buffers validity, views (16 bytes per value), the variadic data buffers,
and last an int64 array of those data buffers' sizes.

The exported array is released (its ``release`` callback, which drops polars' references)
when the last numpy view of its buffers is gone: each view's base holds it.
"""

from __future__ import annotations

import ctypes
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int64, c_void_p
from typing import Any

import numpy as np


class _ArrowSchema(Structure):
    _fields_ = [("format", c_char_p), ("name", c_char_p), ("metadata", c_char_p),
                ("flags", c_int64), ("n_children", c_int64), ("children", c_void_p),
                ("dictionary", c_void_p), ("release", c_void_p), ("private_data", c_void_p)]


class _ArrowArray(Structure):
    _fields_ = [("length", c_int64), ("null_count", c_int64), ("offset", c_int64),
                ("n_buffers", c_int64), ("n_children", c_int64), ("buffers", POINTER(c_void_p)),
                ("children", c_void_p), ("dictionary", c_void_p), ("release", c_void_p),
                ("private_data", c_void_p)]


class _ArrowArrayStream(Structure):
    _fields_ = [("get_schema", CFUNCTYPE(c_int, c_void_p, POINTER(_ArrowSchema))),
                ("get_next", CFUNCTYPE(c_int, c_void_p, POINTER(_ArrowArray))),
                ("get_last_error", CFUNCTYPE(c_char_p, c_void_p)),
                ("release", c_void_p), ("private_data", c_void_p)]


_RELEASE_SCHEMA = CFUNCTYPE(None, POINTER(_ArrowSchema))
_RELEASE_ARRAY = CFUNCTYPE(None, POINTER(_ArrowArray))

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, c_char_p]


class _Exported:
    """Owns one exported array; releases it when collected (see the module docstring)."""

    def __init__(self, array: _ArrowArray) -> None:
        self.array = array
        # bound now: a module's globals may already be gone when this is collected at exit
        self._release = _RELEASE_ARRAY
        self._byref = ctypes.byref

    def __del__(self) -> None:
        if self.array.release:
            self._release(self.array.release)(self._byref(self.array))


class _Buffer:
    """``nbytes`` bytes at ``address`` as a numpy array's base; keeps ``owner`` alive."""

    def __init__(self, owner: _Exported, address: int, nbytes: int) -> None:
        self.owner = owner
        self.__array_interface__ = {"data": (address, True), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}


_EMPTY = np.zeros(0, dtype=np.uint8)
_EMPTY.flags.writeable = False


def _bytes(owner: _Exported, address: int | None, nbytes: int) -> np.ndarray:
    """Read-only bytes (polars' memory is shared, never written here)."""
    if nbytes == 0 or not address:
        return _EMPTY
    return np.asarray(_Buffer(owner, address, nbytes))


def string_view_batches(series: Any) -> list[tuple[np.ndarray, list[np.ndarray]]] | None:
    """Each batch of ``series``'s Arrow export as ``(views, data_buffers)``: the values'
    16-byte views (an ``(n, 16)`` uint8 array, zero-copy, the batch's offset applied) and its
    data buffers (uint8, zero-copy). None when the export is not a string-view array (the
    caller converts another way).

    Examples
    --------
    >>> import polars as pl
    >>> [(views.shape, [len(d) for d in datas]) for views, datas in
    ...  string_view_batches(pl.Series(["short", "a value past twelve bytes"]))]
    [((2, 16), [25])]
    >>> string_view_batches(pl.Series([1, 2])) is None
    True
    """
    export = getattr(series, "__arrow_c_stream__", None)
    if export is None:
        return None
    capsule = export()
    address = _capsule_pointer(capsule, b"arrow_array_stream")
    stream = _ArrowArrayStream.from_address(address)
    schema = _ArrowSchema()
    if stream.get_schema(address, ctypes.byref(schema)) != 0:
        return None
    try:
        if schema.format != b"vu":
            return None
    finally:
        if schema.release:
            _RELEASE_SCHEMA(schema.release)(ctypes.byref(schema))
    batches = []
    while True:
        array = _ArrowArray()
        if stream.get_next(address, ctypes.byref(array)) != 0:
            return None
        if not array.release:  # the end of the stream
            break
        owner = _Exported(array)
        n_data = array.n_buffers - 3  # validity, views, the data buffers, their sizes
        if n_data < 0:
            return None
        sizes = (c_int64 * n_data).from_address(array.buffers[array.n_buffers - 1]) if n_data else ()
        stop = array.offset + array.length
        views = _bytes(owner, array.buffers[1], 16 * stop).reshape(-1, 16)[array.offset:stop]
        datas = [_bytes(owner, array.buffers[2 + i], int(sizes[i])) for i in range(n_data)]
        batches.append((views, datas))
    return batches
