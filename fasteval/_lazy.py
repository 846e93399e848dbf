"""Lazy package exports: a name is imported from its module on first access."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module-level ``__getattr__`` and ``__dir__`` that import ``exports`` on demand.

    Parameters
    ----------
    package : str
        The package's name, for error messages.
    namespace : dict
        The package's ``globals()``; a resolved name is cached there.
    exports : dict
        Public name -> module that defines it.

    Examples
    --------
    >>> ns = {}
    >>> getattr_, dir_ = lazy_exports("demo", ns, {"sqrt": "math"})
    >>> getattr_("sqrt")(9.0), "sqrt" in ns
    (3.0, True)
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        imported = importlib.import_module(module)
        # a subpackage of the export's own name (fasteval.compare, fasteval.sas) is a
        # callable module: the package itself, so that its other names stay reachable
        # (fasteval.compare.topic_set_size) and it still calls as the function
        value = imported if module == f"{package}.{name}" else getattr(imported, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


class LazyModule:
    """A module imported on its first attribute access (thread-safe: Python's import lock).

    For a module that imports numba: a caller holding one can be imported, and can run its
    other work, before numba is.

    Examples
    --------
    >>> m = LazyModule("json")
    >>> m.dumps([1])
    '[1]'
    """

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        if attr in LazyModule.__slots__:  # unset (a copy being built): not the module's
            raise AttributeError(attr)
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
