"""Batched model calls: length-sorted batches, tokenization overlapped with the forward passes.

Background threads tokenize upcoming batches (the Rust tokenizer releases the GIL) and pin their
tensors, so the device receives the next batch while it computes the current one. Timings go
into an :class:`EncodeStats`; on CUDA the forward time is measured with CUDA events (GPU time).
"""

from __future__ import annotations

import inspect
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fasteval.progress import Progress, is_terminal
from fasteval.sas.model import LoadedModel, default_prompt


@dataclass
class EncodeStats:
    """Counters and timings of one scoring job (seconds unless named otherwise)."""

    n_rows: int = 0
    n_pairs: int = 0
    n_texts: int = 0
    n_unique_texts: int = 0
    n_unique_pairs: int = 0
    n_encoded: int = 0
    n_batches: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    forward_s: float = 0.0
    tokenize_s: float = 0.0
    encode_wall_s: float = 0.0
    total_s: float = 0.0
    device: str = ""
    precision: str = ""
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain dictionary (for JSON reports)."""
        out = {k: v for k, v in self.__dict__.items() if k != "extra"}
        out.update(self.extra)
        return out


def _texts_length_order(texts: list[str]) -> np.ndarray:
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    return np.argsort(-lengths, kind="stable")


def _to_device(features: dict[str, Any], device: str, non_blocking: bool) -> dict[str, Any]:
    return {k: (v.to(device, non_blocking=non_blocking) if hasattr(v, "to") else v) for k, v in features.items()}


def sentence_embeddings(model: Any, features: dict[str, Any]) -> Any:
    """The model's sentence embeddings of a tokenized batch, cut to its ``truncate_dim`` when
    it has one (as sentence-transformers' ``encode`` cuts them, before any normalization)."""
    emb = model(features)["sentence_embedding"]
    dim = getattr(model, "truncate_dim", None)
    return emb[..., :dim] if dim else emb


def _preprocess(model: Any, batch: list, pin: bool) -> dict[str, Any]:
    prompt = default_prompt(model)
    prep = getattr(model, "preprocess", None)
    if prompt is None:
        features = (prep or model.tokenize)(batch)
    elif prep is not None and "prompt" in inspect.signature(prep).parameters:
        features = prep(batch, prompt=prompt)  # sentence-transformers >= 6: as its encode does
    else:
        # older sentence-transformers' encode: the prompt is put before each text, and its
        # length (without the closing special token) is handed to pooling
        features = (prep or model.tokenize)([prompt + text for text in batch])
        prompt_ids = (prep or model.tokenize)([prompt]).get("input_ids")
        if prompt_ids is not None:
            features["prompt_length"] = prompt_ids.shape[-1] - 1
    if pin:
        features = {k: (v.pin_memory() if hasattr(v, "pin_memory") else v) for k, v in features.items()}
    return features


_PROBE_TEXTS = ("  Leading and trailing spaces, Mixed Case.  ", "\tA tab and a line break\n", "")
"""Texts :meth:`FastTextTokenizer.build` always checks besides the caller's."""


class FastTextTokenizer:
    """Tokenize plain texts with the Rust backend of the model's fast tokenizer.

    sentence-transformers' ``preprocess`` spends most of its time in Python per call; the
    backend's ``encode_batch`` releases the GIL and spreads a batch over the cores. Each thread
    gets its own copy of the backend (one object must not be used by two threads at once).
    :meth:`build` returns None when the model is not a plain text bi-encoder, when it puts a
    default prompt before the texts (:func:`default_prompt`), or when the result differs from
    ``preprocess`` on a probe batch; the caller then uses ``preprocess``.
    """

    _KNOWN = {"input_ids", "attention_mask", "token_type_ids"}

    def __init__(self, backend_json: str, max_length: int, pad_id: int, pad_token: str,
                 keys: list[str], extra: dict[str, Any]) -> None:
        import threading

        self._json = backend_json
        self._max_length = max_length
        self._pad = (pad_id, pad_token)
        self._keys = keys
        self._extra = extra
        self._zero_types = False
        self._local = threading.local()

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (sent to Ray tasks): the per-thread backends are rebuilt where used."""
        return {k: v for k, v in self.__dict__.items() if k != "_local"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import threading

        self.__dict__.update(state)
        self._local = threading.local()

    @classmethod
    def build(cls, model: Any, probe: list[str]) -> FastTextTokenizer | None:
        try:
            first = model[0]
            tok = first.tokenizer
            backend = tok.backend_tokenizer
            if getattr(first, "unpad_inputs", False) or getattr(tok, "padding_side", "right") != "right":
                return None
            if default_prompt(model) is not None:  # the model's own preprocess puts it in
                return None
            max_length = getattr(model, "max_seq_length", None) or tok.model_max_length
            prep = getattr(model, "preprocess", None) or model.tokenize
            # texts that show what the model's preprocess does besides its backend (older
            # sentence-transformers strip each text, which changes a BPE tokenizer's tokens)
            probe = [*probe, *_PROBE_TEXTS]
            ref = prep(probe)
            keys = [k for k, v in ref.items() if hasattr(v, "dtype")]
            if not set(keys) <= cls._KNOWN or "input_ids" not in keys:
                return None
            extra = {k: v for k, v in ref.items() if not hasattr(v, "dtype")}
            fast = cls(backend.to_str(), int(max_length), int(tok.pad_token_id), str(tok.pad_token),
                       keys, extra)
            if "token_type_ids" in ref:
                fast._zero_types = not bool(ref["token_type_ids"].any())
            mine = fast(probe)
            for key in keys:
                if not bool((mine[key] == ref[key]).all()) or mine[key].shape != ref[key].shape:
                    return None
            return fast
        except Exception:  # noqa: BLE001 - any surprise: use the model's own preprocess
            return None

    def _backend(self):
        backend = getattr(self._local, "backend", None)
        if backend is None:
            from tokenizers import Tokenizer

            backend = Tokenizer.from_str(self._json)
            backend.enable_truncation(self._max_length, strategy="longest_first")
            backend.no_padding()  # padded below with numpy: fewer Python objects per batch
            self._local.backend = backend
        return backend

    def __call__(self, texts: list[str]) -> dict[str, Any]:
        import itertools

        import torch

        backend = self._backend()
        encode = getattr(backend, "encode_batch_fast", backend.encode_batch)
        encs = encode(texts)
        n = len(encs)
        id_lists = [e.ids for e in encs]
        lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=n)
        width = int(lengths.max()) if n else 0
        total = int(lengths.sum())
        mask = np.arange(width, dtype=np.int64)[None, :] < lengths[:, None]
        ids = np.full((n, width), self._pad[0], dtype=np.int64)
        ids[mask] = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.int64, count=total)
        out: dict[str, Any] = {}
        for key in self._keys:
            if key == "input_ids":
                out[key] = torch.from_numpy(ids)
            elif key == "attention_mask":
                # unpadded single texts attend to every token they have
                out[key] = torch.from_numpy(mask.astype(np.int64))
            elif self._zero_types:  # single texts: one segment, type 0 (checked on the probe)
                out[key] = torch.zeros((n, width), dtype=torch.int64)
            else:
                types = np.zeros((n, width), dtype=np.int64)
                types[mask] = np.fromiter(
                    itertools.chain.from_iterable(e.type_ids for e in encs), dtype=np.int64, count=total
                )
                out[key] = torch.from_numpy(types)
        out.update(self._extra)
        return out


def _prefetched(model: Any, items: list, batch_size: int, pin: bool, workers: int, depth: int,
                fast: FastTextTokenizer | None = None):
    """Yield (start, stop, features, tokenize_seconds) in order, tokenizing ahead in threads."""
    if fast is None and workers > 1:
        workers = 1  # the model's own tokenizer object is not safe in two threads at once

    def job(start: int) -> tuple[int, int, dict, float]:
        t0 = time.perf_counter()
        stop = min(start + batch_size, len(items))
        if fast is not None:
            features = fast(items[start:stop])
            if pin:
                features = {k: (v.pin_memory() if hasattr(v, "pin_memory") else v)
                            for k, v in features.items()}
        else:
            features = _preprocess(model, items[start:stop], pin)
        return start, stop, features, time.perf_counter() - t0

    starts = list(range(0, len(items), batch_size))
    if workers <= 0:
        for start in starts:
            yield job(start)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fasteval-tok") as pool:
        pending: deque = deque()
        nxt = 0
        while nxt < len(starts) and len(pending) < depth:
            pending.append(pool.submit(job, starts[nxt]))
            nxt += 1
        while pending:
            result = pending.popleft().result()
            if nxt < len(starts):
                pending.append(pool.submit(job, starts[nxt]))
                nxt += 1
            yield result


def encode_texts(loaded: LoadedModel, texts: list[str], *, batch_size: int, stats: EncodeStats | None = None,
                 progress: bool | None = None, workers: int | None = None, keep_on_device: bool = False,
                 fast_tokenizer: bool = True) -> Any:
    """Embed ``texts`` (already unique) with a bi-encoder; return L2-normalized float32 vectors.

    Texts are sorted by length (longest first) so each batch carries little padding; the rows
    of the result follow the order of ``texts``.

    Parameters
    ----------
    loaded : LoadedModel
        A bi-encoder from :func:`fasteval.sas.model.load_model`.
    texts : list of str
        Texts to embed, each once.
    batch_size : int
        Texts per forward pass.
    stats : EncodeStats, optional
        Filled with batch counts and forward / tokenization times.
    progress : bool, optional
        Progress on stderr (:class:`fasteval.progress.Progress`: after two seconds, a bar on
        a terminal, plain lines elsewhere); False: none.
    workers : int, optional
        Tokenization threads running ahead of the model (default 3 on CUDA, 1 on CPU; 0
        tokenizes inline). Each thread has its own tokenizer copy.
    keep_on_device : bool
        Return a torch tensor on the model's device instead of a numpy array.
    fast_tokenizer : bool
        Tokenize with the fast tokenizer's Rust backend directly (checked against the model's
        own ``preprocess`` on a probe batch; falls back to it when they differ).

    Returns
    -------
    numpy.ndarray or torch.Tensor
        ``(len(texts), dim)`` float32, unit length.

    Examples
    --------
    >>> from fasteval.sas.model import load_model
    >>> vecs = encode_texts(load_model(device="cpu"), ["a cat", "a dog"], batch_size=8)  # doctest: +SKIP
    >>> vecs.shape  # doctest: +SKIP
    (2, 384)
    """
    import torch

    stats = stats if stats is not None else EncodeStats()
    model = loaded.model
    device = loaded.device
    dim = _embedding_dim(model)
    cuda = device.startswith("cuda")
    out = torch.empty((len(texts), dim), dtype=torch.float32, device=device if cuda else "cpu")
    if not texts:
        return out if keep_on_device else out.cpu().numpy()
    order = _texts_length_order(texts)
    items = [texts[i] for i in order]
    order_t = torch.from_numpy(order)
    if cuda:
        order_t = order_t.to(device)
    workers = (3 if cuda else 1) if workers is None else workers
    fast = FastTextTokenizer.build(model, items[:3] + items[-3:]) if fast_tokenizer else None
    stats.extra["fast_tokenizer"] = fast is not None
    events: list[tuple[Any, Any]] = []
    bar = Progress(len(items), "embedding", "texts", enabled=progress)
    t_start = time.perf_counter()
    model.eval()
    with torch.inference_mode():
        for start, stop, features, tok_s in _prefetched(model, items, batch_size, cuda, workers, 8, fast):
            stats.tokenize_s += tok_s
            emb = _timed_forward(model, _to_device(features, device, cuda), cuda, events, stats)
            out[order_t[start:stop]] = emb.float()
            stats.n_batches += 1
            bar.update(stop - start)
    out = torch.nn.functional.normalize(out, p=2, dim=1)
    if cuda:
        torch.cuda.synchronize(device)
        stats.forward_s += sum(a.elapsed_time(b) for a, b in events) / 1000.0
    bar.close()
    stats.n_encoded += len(texts)
    stats.encode_wall_s += time.perf_counter() - t_start
    return out if keep_on_device else out.cpu().numpy()


def _timed_forward(model: Any, features: dict[str, Any], cuda: bool, events: list[tuple[Any, Any]],
                   stats: EncodeStats) -> Any:
    """The sentence embeddings of one batch; its forward time is added to ``stats`` (on CUDA,
    a pair of CUDA events appended to ``events``, read once the device is synchronized)."""
    if cuda:
        import torch

        ev0 = torch.cuda.Event(enable_timing=True)
        ev1 = torch.cuda.Event(enable_timing=True)
        ev0.record()
        emb = sentence_embeddings(model, features)
        ev1.record()
        events.append((ev0, ev1))
        return emb
    t0 = time.perf_counter()
    emb = sentence_embeddings(model, features)
    stats.forward_s += time.perf_counter() - t0
    return emb


def _embedding_dim(model: Any) -> int:
    for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        fn = getattr(model, name, None)
        if fn is not None:
            dim = fn()
            if dim:
                return int(dim)
    probe = model.encode(["dimension probe"], convert_to_numpy=True)
    return int(probe.shape[-1])


def predict_pairs(loaded: LoadedModel, pairs: list[tuple[str, str]], *, batch_size: int,
                  stats: EncodeStats | None = None, progress: bool | None = None) -> np.ndarray:
    """Score (prediction, gold) pairs, each once, with a cross-encoder; float32 in input order.

    The cross-encoder's own activation (``predict``'s default) is applied; pairs are sorted by
    length before batching.

    Examples
    --------
    >>> from fasteval.sas.model import load_model
    >>> predict_pairs(load_model("cross-model-dir"), [("a", "b")], batch_size=8)  # doctest: +SKIP
    array([0.51], dtype=float32)
    """
    stats = stats if stats is not None else EncodeStats()
    if not pairs:
        return np.zeros(0, dtype=np.float32)
    lengths = np.fromiter((len(a) + len(b) for a, b in pairs), dtype=np.int64, count=len(pairs))
    order = np.argsort(-lengths, kind="stable")
    ordered = [pairs[i] for i in order]
    # the cross-encoder draws its own tqdm bar, at once: only on a terminal and for a long
    # job, unless asked for
    show = progress is True or (progress is None and len(pairs) >= 2048 and is_terminal(sys.stderr))
    t0 = time.perf_counter()
    scores = loaded.model.predict(
        ordered, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=show
    )
    elapsed = time.perf_counter() - t0
    stats.forward_s += elapsed
    stats.encode_wall_s += elapsed
    stats.n_batches += -(-len(pairs) // batch_size)
    scores = np.asarray(scores, dtype=np.float32).reshape(len(pairs), -1)
    if scores.shape[1] != 1:  # a classifier (NLI labels...): no one similarity score to take
        from fasteval.errors import ParameterError

        raise ParameterError(
            "model", "a cross-encoder with one output per pair (num_labels=1)",
            f"{loaded.name} with {scores.shape[1]} outputs",
        )
    scores = scores[:, 0]
    out = np.empty(len(pairs), dtype=np.float32)
    out[order] = scores
    return out


def encode_multi_process(loaded: LoadedModel, texts: list[str], devices: list[str], *,
                         batch_size: int, stats: EncodeStats | None = None) -> np.ndarray:
    """Embed on several devices through sentence-transformers' multi-process pool.

    Examples
    --------
    >>> encode_multi_process(lm, ["a", "b"], ["cuda:0", "cuda:1"], batch_size=1024)  # doctest: +SKIP
    """
    stats = stats if stats is not None else EncodeStats()
    if not texts:
        return np.zeros((0, _embedding_dim(loaded.model)), dtype=np.float32)
    order = _texts_length_order(texts)
    items = [texts[i] for i in order]
    t0 = time.perf_counter()
    pool = loaded.model.start_multi_process_pool(devices)
    try:
        emb = loaded.model.encode(
            items, pool=pool, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True
        )
    finally:
        loaded.model.stop_multi_process_pool(pool)
    elapsed = time.perf_counter() - t0
    stats.forward_s += elapsed
    stats.encode_wall_s += elapsed
    stats.n_encoded += len(texts)
    out = np.empty_like(np.asarray(emb, dtype=np.float32))
    out[order] = emb
    return out

