"""Arrow list columns of any layout (lists, large lists, list views, fixed-size lists) as
offsets from 0 and their values, read from the logical lists.

pyarrow's cast of a list view to ``large_list`` gives wrong offsets (views in any order,
or even in order), so sizes come from ``list_value_length`` and values from ``flatten``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def is_list_like(type_: Any) -> bool:
    """Whether an Arrow type is a list of any layout.

    Examples
    --------
    >>> import pyarrow as pa
    >>> is_list_like(pa.list_view(pa.string())), is_list_like(pa.string())
    (True, False)
    """
    import pyarrow as pa

    return (pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_list_view(type_)
            or pa.types.is_large_list_view(type_) or pa.types.is_fixed_size_list(type_))


def list_offsets_values(arr: Any) -> tuple[np.ndarray, Any]:
    """``(offsets, values)`` of a list array: int64 offsets from 0 (a null list counts as
    empty) and the values of the lists in order.

    Examples
    --------
    >>> import pyarrow as pa
    >>> offsets, values = list_offsets_values(pa.array([["a"], ["b", "c"]], pa.list_view(pa.string())))
    >>> offsets.tolist(), values.to_pylist()
    ([0, 1, 3], ['a', 'b', 'c'])
    """
    import pyarrow.compute as pc

    sizes = np.asarray(pc.list_value_length(arr).fill_null(0), dtype=np.int64)
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets, arr.flatten()
