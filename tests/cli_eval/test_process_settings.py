"""What the ``fasteval`` console entry point sets for its own process (and only there)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest


def _run(code: str) -> str:
    # a fresh environment: this process imported polars, which sets _RJEM_MALLOC_CONF
    env = {k: v for k, v in os.environ.items() if k not in (
        "_RJEM_MALLOC_CONF", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS", "ARROW_DEFAULT_MEMORY_POOL",
        "NUMPY_MADVISE_HUGEPAGE")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="needs scipy installed")
def test_blas_probe_skipped_only_for_numba():
    got = _run(
        "import sys\n"
        "from fasteval.runtime import _skip_blas_probe\n"
        "_skip_blas_probe()\n"
        "import numba.np.arraymath as am\n"
        "print(am._HAVE_BLAS, 'scipy.linalg' in sys.modules)\n"
        "import scipy.linalg.cython_blas\n"  # any later import works as usual
        "print(hasattr(scipy.linalg, 'cython_blas'))\n"
    )
    assert got.split() == ["False", "False", "True"]


def test_blas_probe_untouched_without_the_entry_point():
    if importlib.util.find_spec("scipy") is None:
        pytest.skip("needs scipy installed")
    assert _run("import numba.np.arraymath as am; print(am._HAVE_BLAS)") == "True"


def test_console_settings_leave_the_environment_choice():
    # the command (main) runs under the settings; console_main then ends the process
    got = _run(
        "import os\n"
        "os.environ['OMP_WAIT_POLICY'] = 'ACTIVE'\n"
        "import fasteval.cli as c\n"
        "def main():\n"
        "    print(os.environ['OMP_WAIT_POLICY'], os.environ['OPENBLAS_NUM_THREADS'], "
        "os.environ['_RJEM_MALLOC_CONF'], os.environ['ARROW_DEFAULT_MEMORY_POOL'], "
        "os.environ['NUMPY_MADVISE_HUGEPAGE'])\n"
        "    import numpy as np\n"
        "    a = np.ones(50_000_000); del a; b = np.ones(50_000_000)\n"  # heap reuse works
        "    print(int(b.sum()))\n"
        "    return 0\n"
        "c.main = main\n"
        "c.console_main()\n"
        "print('not reached')\n"
    )
    assert got.splitlines() == ["ACTIVE 1 dirty_decay_ms:10000,muzzy_decay_ms:10000 system 0",
                                "50000000"]


def test_polars_default_inherited_from_a_parent_is_replaced():
    import polars  # noqa: F401 - sets _RJEM_MALLOC_CONF in this process, as a parent would

    from fasteval.runtime import _POLARS_JEMALLOC

    assert os.environ["_RJEM_MALLOC_CONF"].startswith(_POLARS_JEMALLOC)
    code = ("import os, fasteval.cli as c\n"
            "c.main = lambda: print(os.environ['_RJEM_MALLOC_CONF']) or 0\nc.console_main()\n")
    for given, want in ((_POLARS_JEMALLOC, "dirty_decay_ms:10000,muzzy_decay_ms:10000"),
                        ("dirty_decay_ms:0", "dirty_decay_ms:0")):  # a user's own choice stays
        env = {**os.environ, "_RJEM_MALLOC_CONF": given}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == want


def test_exit_status_and_flushed_output():
    """console_main ends the process at once with the command's status, output flushed."""
    code = ("import sys, fasteval.cli as c\n"
            "c.main = lambda: (sys.stdout.write('x' * 100000), sys.stderr.write('err'), 3)[-1]\n"
            "c.console_main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 3
    assert out.stdout == "x" * 100000 and out.stderr == "err"


def test_configure_process_opt_in_for_the_api():
    """The API's opt-in gives a script the command's settings, before polars is imported."""
    got = _run(
        "import os, sys, warnings\n"
        "os.environ['OPENBLAS_NUM_THREADS'] = '4'\n"  # a user's own choice stays
        "import fasteval\n"
        "assert 'polars' not in sys.modules\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('error')\n"
        "    s = fasteval.configure_process()\n"
        "    again = fasteval.configure_process()\n"  # idempotent
        "import polars\n"
        "print(s == again, s['OMP_WAIT_POLICY'], s['OPENBLAS_NUM_THREADS'], s['malloc'])\n"
        "print(os.environ['_RJEM_MALLOC_CONF'])\n"
        "print(sum(type(f).__name__ == '_NoBlasForNumbaProbe' for f in sys.meta_path))\n"
        "import numpy as np\n"
        "a = np.ones(50_000_000); del a; b = np.ones(50_000_000)\n"
        "print(int(b.sum()))\n"
    )
    lines = got.splitlines()
    assert lines[0] == "True PASSIVE 4 keep freed memory"
    # polars puts its default first and appends ours: jemalloc takes the last value
    assert lines[1].endswith("dirty_decay_ms:10000,muzzy_decay_ms:10000")
    assert lines[2:] == ["1", "50000000"]


def test_configure_process_after_polars_warns_and_still_sets_the_rest():
    got = _run(
        "import os, warnings, numpy, pyarrow as pa, polars\n"
        "import fasteval\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    s = fasteval.configure_process()\n"
        "print(len(w), w[0].category.__name__, 'before polars' in str(w[0].message))\n"
        "print(s['NUMPY_MADVISE_HUGEPAGE'], pa.default_memory_pool().backend_name)\n"
    )
    assert got.splitlines() == ["1 RuntimeWarning True", "0 system"]


def test_the_library_alone_sets_nothing():
    got = _run(
        "import os, sys, fasteval\n"
        "before = dict(os.environ)\n"
        "fasteval.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0, 'b': 0.5}}, 'map')\n"
        "print(before == {k: v for k, v in os.environ.items() if k != '_RJEM_MALLOC_CONF'}, "
        "os.environ.get('OMP_WAIT_POLICY'), "
        "any(type(f).__name__ == '_NoBlasForNumbaProbe' for f in sys.meta_path))\n"
    )
    assert got == "True None False"
