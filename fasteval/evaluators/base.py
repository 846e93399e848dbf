"""Shared machinery of the evaluators: Haystack component protocol and serialization.

Evaluator classes derive from :class:`HaystackComponent`.  They stay plain Python
classes (importing them does not import Haystack, which takes seconds), yet a
``haystack.Pipeline`` accepts their instances: Haystack asks a component for a
``run`` method and for ``__haystack_input__`` / ``__haystack_output__`` sockets,
and this mixin builds those sockets on first access, importing Haystack only then.

Serialization uses Haystack's shape, ``{"type": "<module>.<Class>",
"init_parameters": {...}}``, with the class's real module as ``type`` (what
``haystack.core.serialization.default_from_dict`` checks).  Every evaluator class
is put in Haystack's component registry as soon as both exist: at class creation
when Haystack is already imported, otherwise the moment Haystack's component module
finishes importing (a one-shot import hook), so ``Pipeline.loads`` finds the classes
whatever the import order.  Haystack only deserializes classes from trusted modules:
pass ``allowed_modules=["fasteval"]`` to ``Pipeline.loads`` / ``Pipeline.from_dict``.
Files written by earlier versions name ``fasteval.evaluators.haystack.<Class>``; those
still load.

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
>>> data["type"] == f"{Echo.__module__}.Echo"
True
>>> Echo.from_dict(data).run("a")
{'text': 'A'}
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import inspect
import sys
import threading
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
"""Module named by the ``type`` of files written before the classes' own modules were used."""

_HAYSTACK_COMPONENT_MODULE = "haystack.core.component.component"
_HAYSTACK_MODULES = {  # class name -> module in haystack.components.evaluators
    "DocumentMAPEvaluator": "document_map",
    "DocumentMRREvaluator": "document_mrr",
    "DocumentNDCGEvaluator": "document_ndcg",
    "DocumentRecallEvaluator": "document_recall",
    "AnswerExactMatchEvaluator": "answer_exact_match",
    "SASEvaluator": "sas_evaluator",
    "LLMEvaluator": "llm_evaluator",
    "FaithfulnessEvaluator": "faithfulness",
    "ContextRelevanceEvaluator": "context_relevance",
}
_components: list[type] = []  # every HaystackComponent subclass, in creation order
_registered: set[type] = set()
_lock = threading.RLock()


def serialized_type(cls: type) -> str:
    """The ``type`` string written by ``to_dict``: the class's module and name.

    The same string as Haystack's ``generate_qualified_class_name``, so Haystack's
    ``default_from_dict`` accepts it.

    Examples
    --------
    >>> serialized_type(HaystackComponent)
    'fasteval.evaluators.base.HaystackComponent'
    """
    return f"{cls.__module__}.{cls.__name__}"


def _type_names(cls: type) -> list[str]:
    """Every ``type`` string that names ``cls``: its own, and the legacy module's."""
    return [serialized_type(cls), f"{HAYSTACK_MODULE}.{cls.__name__}"]


def register_with_haystack(*classes: type) -> None:
    """Add evaluator classes to Haystack's component registry (imports Haystack).

    Each class is registered under its module path and under the legacy
    ``fasteval.evaluators.haystack.<Class>``, so ``Pipeline.from_dict`` finds it either way.
    Without haystack-ai: a :class:`~fasteval.errors.MissingExtraError` (an ``ImportError``)
    saying ``pip install ".[haystack]"``, before any class is registered.
    """
    from fasteval.errors import require_extra

    require_extra("haystack", "registering evaluators with Haystack")
    from haystack.core.component.component import component

    _register_in(component.registry, classes)


def _register_in(registry: dict[str, type], classes: typing.Iterable[type]) -> None:
    with _lock:
        for cls in classes:
            for name in _type_names(cls):
                registry[name] = cls
            _registered.add(cls)


def _haystack_registry() -> dict[str, type] | None:
    """Haystack's component registry when its module is fully imported, else None."""
    module = sys.modules.get(_HAYSTACK_COMPONENT_MODULE)
    component = getattr(module, "component", None) if module is not None else None
    registry = getattr(component, "registry", None)
    return registry if isinstance(registry, dict) else None


def _on_haystack_loaded(module: types.ModuleType) -> None:
    registry = getattr(getattr(module, "component", None), "registry", None)
    if isinstance(registry, dict):
        with _lock:
            _register_in(registry, list(_components))


class _RegisteringLoader(importlib.abc.Loader):
    """Runs Haystack's own loader, then registers fasteval's classes; gives the module back
    its real loader."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = self.inner
        if module.__spec__ is not None:
            module.__spec__.loader = self.inner
        self.inner.exec_module(module)
        _on_haystack_loaded(module)


class _HaystackImportHook(importlib.abc.MetaPathFinder):
    """Waits for Haystack's component module and wraps its loader (see the module docstring)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _HAYSTACK_COMPONENT_MODULE:
            return None
        _remove_hook()
        for finder in list(sys.meta_path):
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if callable(find_spec) else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


_hook = _HaystackImportHook()


def _remove_hook() -> None:
    with _lock:
        if _hook in sys.meta_path:
            sys.meta_path.remove(_hook)


def _track(cls: type) -> None:
    """Remember ``cls`` and register it with Haystack now or when Haystack is imported."""
    with _lock:
        _components.append(cls)
        registry = _haystack_registry()
        if registry is not None:
            _register_in(registry, [cls])
        elif _HAYSTACK_COMPONENT_MODULE not in sys.modules and _hook not in sys.meta_path:
            sys.meta_path.insert(0, _hook)


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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _track(cls)

    # -- serialization ---------------------------------------------------------------
    def _init_parameters(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Serialize to Haystack's shape: ``{"type": ..., "init_parameters": {...}}``."""
        return {"type": serialized_type(type(self)), "init_parameters": self._init_parameters()}

    @classmethod
    def _accepted_types(cls) -> set[str]:
        """``type`` strings :meth:`from_dict` accepts for this class: its own, the legacy
        module's, the package's, and Haystack's class of the same name."""
        accepted = {*_type_names(cls), f"fasteval.evaluators.{cls.__name__}"}
        if cls.__name__ in _HAYSTACK_MODULES:
            accepted.add(f"haystack.components.evaluators.{_HAYSTACK_MODULES[cls.__name__]}.{cls.__name__}")
        return accepted

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Rebuild an evaluator from :meth:`to_dict` output (or a Haystack pipeline file).

        Raises ``InputError`` when ``type`` does not name this class.
        """
        if not isinstance(data, dict) or "type" not in data:
            raise InputError(f"expected a dict with a 'type' key, got {data!r}", source="from_dict")
        accepted = cls._accepted_types()
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
