"""Shared machinery of the evaluators: Haystack component protocol and serialization.

Evaluator classes derive from :class:`HaystackComponent`.  They stay plain Python
classes (importing them does not import Haystack, which takes seconds), yet a
``haystack.Pipeline`` accepts their instances: Haystack asks a component for a
``run`` method and for ``__haystack_input__`` / ``__haystack_output__`` sockets,
and this mixin builds those sockets on first access, importing Haystack only then.

Serialization uses Haystack's shape, ``{"type": "<module>.<Class>",
"init_parameters": {...}}``.  The ``type`` names the module
``fasteval.evaluators.haystack``, which registers every fasteval evaluator in
Haystack's component registry when a pipeline file is loaded (pass
``allowed_modules=["fasteval"]`` to ``Pipeline.loads`` / ``Pipeline.from_dict``:
Haystack only deserializes classes from trusted modules).

Examples
--------
>>> class Echo(HaystackComponent):
...     _output_types = {"text": str}
...     def __init__(self, upper: bool = False) -> None:
...         self.upper = upper
...     def run(self, text: str) -> dict:
...         return {"text": text.upper() if self.upper else text}
...     def _init_parameters(self) -> dict:
...         return {"upper": self.upper}
>>> data = Echo(upper=True).to_dict()
>>> data["init_parameters"]
{'upper': True}
>>> Echo.from_dict(data).run("a")
{'text': 'A'}
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from typing import Any, ClassVar

from fasteval.errors import InputError

__all__ = [
    "HaystackComponent",
    "HAYSTACK_MODULE",
    "register_with_haystack",
    "serialized_type",
]

HAYSTACK_MODULE = "fasteval.evaluators.haystack"

_registered: set[type] = set()


def serialized_type(cls: type) -> str:
    """The ``type`` string written by ``to_dict`` for an evaluator class.

    Examples
    --------
    >>> serialized_type(HaystackComponent)
    'fasteval.evaluators.haystack.HaystackComponent'
    """
    return f"{HAYSTACK_MODULE}.{cls.__name__}"


def register_with_haystack(*classes: type) -> None:
    """Add evaluator classes to Haystack's component registry (imports Haystack).

    Each class is registered under its own module path and under
    :func:`serialized_type`, so ``Pipeline.from_dict`` finds it either way.
    """
    from haystack.core.component.component import component

    for cls in classes:
        component.registry[serialized_type(cls)] = cls
        component.registry[f"{cls.__module__}.{cls.__name__}"] = cls
        _registered.add(cls)


def _haystack_type(tp: Any, haystack_document: type) -> Any:
    """Replace fasteval's Document by Haystack's inside a type annotation."""
    from fasteval.evaluators.documents import Document

    if tp is Document:
        return haystack_document
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args:
        return tp
    new_args = tuple(_haystack_type(a, haystack_document) for a in args)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[new_args]  # noqa: UP007
    if origin is typing.Literal:
        return tp
    try:
        return origin[new_args if len(new_args) > 1 else new_args[0]]
    except TypeError:
        return tp


class HaystackComponent:
    """Mixin making a plain class usable as a Haystack component and serializable.

    Subclasses define ``run`` (with annotations), ``_output_types`` (name -> type)
    and ``_init_parameters()`` (what ``__init__`` needs to rebuild the object).
    """

    _output_types: ClassVar[dict[str, Any]] = {}

    # -- serialization ---------------------------------------------------------------
    def _init_parameters(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Serialize to Haystack's shape: ``{"type": ..., "init_parameters": {...}}``."""
        return {"type": serialized_type(type(self)), "init_parameters": self._init_parameters()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Rebuild an evaluator from :meth:`to_dict` output (or a Haystack pipeline file).

        Raises ``InputError`` when ``type`` does not name this class.
        """
        if not isinstance(data, dict) or "type" not in data:
            raise InputError(f"expected a dict with a 'type' key, got {data!r}", source="from_dict")
        accepted = {serialized_type(cls), f"{cls.__module__}.{cls.__name__}", f"fasteval.evaluators.{cls.__name__}"}
        if data["type"] not in accepted:
            raise InputError(
                f"type must be one of {sorted(accepted)}, got {data['type']!r}", source="from_dict"
            )
        params = data.get("init_parameters") or {}
        if not isinstance(params, dict):
            raise InputError(f"init_parameters must be a dict, got {params!r}", source="from_dict")
        return cls(**params)

    # -- Haystack component protocol (built lazily) ------------------------------------
    @classmethod
    def _haystack_socket_types(cls) -> tuple[dict[str, tuple[Any, Any]], dict[str, Any]]:
        """``({input: (type, default or inspect.Parameter.empty)}, {output: type})``."""
        from haystack import Document as HaystackDocument

        hints = typing.get_type_hints(cls.run)
        inputs: dict[str, tuple[Any, Any]] = {}
        for name, param in inspect.signature(cls.run).parameters.items():
            if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            tp = _haystack_type(hints.get(name, Any), HaystackDocument)
            inputs[name] = (tp, param.default)
        outputs = {k: _haystack_type(v, HaystackDocument) for k, v in cls._output_types.items()}
        return inputs, outputs

    def _build_haystack_sockets(self) -> None:
        from haystack.core.component.sockets import Sockets
        from haystack.core.component.types import InputSocket, OutputSocket

        cls = type(self)
        if cls not in _registered:
            register_with_haystack(cls)
        inputs, outputs = cls._haystack_socket_types()
        in_sockets = {}
        for name, (tp, default) in inputs.items():
            kwargs: dict[str, Any] = {"name": name, "type": tp}
            if default is not inspect.Parameter.empty:
                kwargs["default_value"] = default
            in_sockets[name] = InputSocket(**kwargs)
        out_sockets = {name: OutputSocket(name=name, type=tp) for name, tp in outputs.items()}
        self.__dict__["__haystack_input__"] = Sockets(self, in_sockets, InputSocket)
        self.__dict__["__haystack_output__"] = Sockets(self, out_sockets, OutputSocket)

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes that normal lookup did not find.
        if name in ("__haystack_input__", "__haystack_output__"):
            if "haystack" not in sys.modules:
                # Haystack asks for sockets only after it is imported; don't import it for others.
                raise AttributeError(name)
            self._build_haystack_sockets()
            return self.__dict__[name]
        if name == "__haystack_supports_async__":
            return False
        if name == "__haystack_added_to_pipeline__":
            return None
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._init_parameters().items())
        return f"{type(self).__name__}({params})"
