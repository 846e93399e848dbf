"""Loading cached kernels (``fasteval._jit``): what a load skips, and what a
compilation still gets.

Each case runs fresh interpreters with their own numba cache folder: the first compiles
and writes the cache, the second loads from it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

KERNEL = textwrap.dedent('''
    import numpy as np
    from fasteval._jit import njit

    @njit(cache=True)
    def cumulative(x):
        out = np.zeros(x.shape[0] + 1)  # numba.np.arrayobj's np.zeros, inlined
        for i in range(x.shape[0]):
            if x[i] < 0:
                raise ValueError("negative value")
            out[i + 1] = out[i] + x[i]
        return out
''')

PROBE = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba.core import entrypoints, environment
    import kernel_module
    before = "numba.np.arrayobj" in sys.modules
    values = kernel_module.cumulative(np.array([1.0, 2.0, 3.5])).tolist()
    try:
        kernel_module.cumulative(np.array([1.0, -1.0]))
        raised = None
    except ValueError as exc:
        raised = str(exc)
    from fasteval import _jit
    print(json.dumps({
        "values": values,
        "raised": raised,
        "extensions_initialised": entrypoints._already_initialized,
        "arrayobj_before": before,
        "arrayobj": "numba.np.arrayobj" in sys.modules,
        "rebuild_env_restored": environment._rebuild_env is _jit._REBUILD_ENV,
        "hits": sum(kernel_module.cumulative.stats.cache_hits.values()),
    }))
''')


def _probe(folder: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"),
           "PYTHONPATH": os.pathsep.join([str(folder), *sys.path])}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, cwd=folder, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_cached_load_defers_numba_setup_and_a_compilation_still_gets_it(tmp_path):
    (tmp_path / "kernel_module.py").write_text(KERNEL)
    compiled = _probe(tmp_path)
    loaded = _probe(tmp_path)
    for result in (compiled, loaded):
        assert result["values"] == [0.0, 1.0, 3.0, 6.5]
        assert result["raised"] == "negative value"  # the constants of the environment
        assert result["rebuild_env_restored"] is True
        assert result["arrayobj_before"] is False
    # compiling: numba's extensions are registered first, its array module imported
    assert compiled["hits"] == 0
    assert compiled["extensions_initialised"] is True
    assert compiled["arrayobj"] is True
    # loading the same machine code: neither
    assert loaded["hits"] == 1
    assert loaded["extensions_initialised"] is False
    assert loaded["arrayobj"] is False
