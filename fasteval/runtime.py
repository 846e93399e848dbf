"""Process-wide settings for a process that evaluates: opt in with :func:`configure_process`.

The library never changes its process on its own. The ``fasteval`` command calls
:func:`configure_process` because it owns its process; a script, a notebook or a service
that evaluates many large runs can opt in the same way, as the first thing after
``import fasteval`` (which imports none of polars, numpy or numba).

What it sets, each only where the environment does not already hold a value of the user's:

* the allocators keep freed memory for reuse: glibc's malloc (no ``mmap`` for large blocks,
  trimming only above 2 GiB free, see :func:`_keep_freed_memory`), which Arrow's buffers then
  use too (``ARROW_DEFAULT_MEMORY_POOL=system``), and polars' jemalloc
  (``_RJEM_MALLOC_CONF``: freed pages are returned after 10 s rather than polars' 0.5 s).
  Otherwise every evaluation of a large run faults in and zeroes its memory again: on the
  100k-query benchmark (9.6 M rows, 2 cores) the kernel's page-fault handling was about a
  fifth of the process's CPU time;
* numpy does not ask for transparent huge pages (``NUMPY_MADVISE_HUGEPAGE=0``): where the
  kernel compacts memory to find them, one large array can stall for most of a second;
* OpenMP threads wait passively (``OMP_WAIT_POLICY=PASSIVE``) instead of spinning, and there
  is no BLAS thread pool (``OPENBLAS_NUM_THREADS=1``; no kernel here calls BLAS), which leaves
  the cores to the parquet reader that runs beside the kernels;
* numba's import-time probes of optional packages are answered "not installed"
  (:func:`_skip_blas_probe`), for numba only: the BLAS probe (with scipy installed it imports
  ``scipy.linalg``, a quarter of a second, for ``np.dot`` support that no kernel here uses),
  the scipy version check (``import scipy``, 20 ms) and, when there is no
  ``.numba_config.yaml`` in the working directory for numba to read, ``import yaml``
  (25 ms).

The peak resident memory is unchanged (the same blocks are live at the peak); memory freed
after an evaluation stays with the process for the next one.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import warnings

_POLARS_JEMALLOC = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What ``import polars`` puts in ``_RJEM_MALLOC_CONF`` when it is unset (polars 1.x, 2.x)."""

_JEMALLOC = "dirty_decay_ms:10000,muzzy_decay_ms:10000"

_ENVIRONMENT = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "OPENBLAS_NUM_THREADS": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "NUMPY_MADVISE_HUGEPAGE": "0",
}

_NUMBA_PROBES = (
    # (modules, the numba function that imports them, its file)
    (("scipy", "scipy.linalg", "scipy.linalg.cython_blas"), "_check_blas", "numba/np/arraymath.py"),
    (("scipy",), "_ensure_critical_deps", "numba/__init__.py"),  # a version check only
    (("yaml",), "<module>", "numba/core/config.py"),  # to read .numba_config.yaml
)
"""Imports numba makes only to probe for an optional package (see :func:`_skip_blas_probe`)."""

_PROBED = frozenset(m for mods, _, _ in _NUMBA_PROBES for m in mods)


def configure_process() -> dict[str, str]:
    """Tune this process for evaluating large runs, as the ``fasteval`` command does.

    Call it once, before polars, numpy or numba are imported (right after
    ``import fasteval``). Settings that the environment already holds are kept. A
    library must not call it: the settings are the whole process's.

    Returns
    -------
    dict
        The settings in effect afterwards: the environment variables above, and
        ``"malloc"``: ``"keep freed memory"`` (glibc), or ``"unchanged"`` (not glibc, or
        ``MALLOC_MMAP_MAX_``/``MALLOC_TRIM_THRESHOLD_`` set by the user).

    Warns
    -----
    RuntimeWarning
        When polars was imported before: its allocator has read its settings already, so
        freed memory still goes back to the system after 0.5 s.

    Examples
    --------
    >>> import fasteval
    >>> settings = fasteval.configure_process()  # doctest: +SKIP
    >>> settings["OMP_WAIT_POLICY"]  # doctest: +SKIP
    'PASSIVE'
    """
    late = "polars" in sys.modules
    if os.environ.get("_RJEM_MALLOC_CONF", _POLARS_JEMALLOC) == _POLARS_JEMALLOC:
        # unset, or polars' own default inherited from a parent process that imported polars
        os.environ["_RJEM_MALLOC_CONF"] = _JEMALLOC
    for name, value in _ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    if "numpy" in sys.modules and os.environ["NUMPY_MADVISE_HUGEPAGE"] == "0":
        _numpy_no_hugepages()  # numpy reads the variable at import: tell it directly
    if "pyarrow" in sys.modules and os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system":
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())
    kept = _keep_freed_memory()
    _skip_blas_probe()
    if late:
        warnings.warn(
            "configure_process() was called after polars was imported: polars' allocator "
            "keeps its own settings (call it right after 'import fasteval', before polars)",
            RuntimeWarning,
            stacklevel=2,
        )
    settings = {name: os.environ[name] for name in (*_ENVIRONMENT, "_RJEM_MALLOC_CONF")}
    settings["malloc"] = "keep freed memory" if kept else "unchanged"
    return settings


def _numpy_no_hugepages() -> None:
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    setter = getattr(core.multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)


def _keep_freed_memory() -> bool:
    """Ask glibc's malloc to serve large arrays from its heap and keep freed memory there
    (why: the module's docstring). By default an allocation over 32 MiB is a fresh ``mmap``
    and its release a ``munmap``; without ``mmap`` for large blocks and with a high trim
    threshold, freed blocks are reused instead. Skipped when the C library is not glibc or
    when ``MALLOC_MMAP_MAX_``/``MALLOC_TRIM_THRESHOLD_`` are set in the environment.
    Returns whether the settings are in effect.
    """
    if "MALLOC_MMAP_MAX_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
    mallopt(m_mmap_max, 0)
    mallopt(m_trim_threshold, 2**31 - 1)  # a C int: trim only above 2 GiB free at the top
    mallopt(m_top_pad, 64 << 20)  # (setting the same values again changes nothing)
    return True


def _skip_blas_probe() -> None:
    """Make the packages of numba's import-time probes (``_NUMBA_PROBES``) unimportable for
    those probes, and only for them: numba then goes on as without the package (no BLAS; no
    scipy version to check; no yaml, which numba imports only to read a
    ``.numba_config.yaml``, so yaml is left alone where such a file is in the working
    directory). The finder looks for the probing function on the importing thread's stack,
    so every other import of scipy or yaml is untouched."""
    if not any(isinstance(f, _NoBlasForNumbaProbe) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoBlasForNumbaProbe())


class _NoBlasForNumbaProbe(importlib.abc.MetaPathFinder):
    """Meta-path finder behind :func:`_skip_blas_probe`."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201
        if fullname in _PROBED and _in_numba_probe(fullname):
            raise ImportError(f"fasteval: numba's probe for {fullname} skipped (not used here)")
        return None


def _in_numba_probe(fullname: str) -> bool:
    """Whether ``fullname`` is imported by one of numba's probes (``_NUMBA_PROBES``)."""
    if fullname == "yaml" and os.path.exists(".numba_config.yaml"):
        return False
    wanted = [(name, file) for mods, name, file in _NUMBA_PROBES if fullname in mods]
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename.replace("\\", "/")
        if any(code.co_name == name and filename.endswith(file) for name, file in wanted):
            return True
        frame = frame.f_back
    return False
