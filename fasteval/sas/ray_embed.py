"""Embedding on Ray Data (``fasteval.sas(..., engine="ray")``): texts in, unit vectors out.

The unique texts that need a vector (those not in the embedding cache) become a Ray dataset
of ``(i, text)`` rows, ``i`` the text's index in the job's dictionary of distinct texts,
longest texts first (each batch carries little padding). Two stages follow:

1. **tokenize** (CPU tasks): the model's fast tokenizer (its Rust backend, checked against
   the model's own ``preprocess`` on a probe, :class:`fasteval.sas.encode.FastTextTokenizer`)
   turns each batch into unpadded token ids (Arrow list columns), off the model's critical
   path: a GPU actor only pads them (one numpy assignment) and runs the forward pass;
2. **embed** (an actor pool, ``map_batches`` with a callable class): each actor loads the
   model once (``num_gpus=1`` per actor when the cluster has GPUs, CPU actors otherwise) and
   returns the ``i`` column with ``embedding`` (``FixedSizeList<float32>[dim]``, unit length).

The driver places each vector at its row ``i`` of the result: the same dictionary join as the
single-machine path. Ray Data's progress bars are off; no bar is drawn. A model whose tokenizer is not a plain fast text tokenizer is tokenized
inside the actors instead (``preprocess``), as on one machine.

The vectors equal the single-machine ones to float32 rounding, not bit for bit: batches are
cut differently (other texts share a batch, so the padded width differs) and the actors run
their own thread counts, which changes the order of the sums inside the matrix products.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from fasteval.errors import ParameterError

TEXTS_PER_BLOCK = 8192
"""Texts per input block of the Ray dataset (a tokenizer task each)."""


def _tokenize(batch, *, tok):
    """Token ids (and type ids when the model uses them) of a batch of texts, unpadded."""
    import pyarrow as pa

    t0 = time.perf_counter()
    texts = batch.column("text").to_pylist()
    backend = tok._backend()
    encode = getattr(backend, "encode_batch_fast", backend.encode_batch)
    encs = encode(texts)
    lengths = np.fromiter((len(e.ids) for e in encs), dtype=np.int32, count=len(encs))
    offsets = np.zeros(len(encs) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    ids = np.fromiter((t for e in encs for t in e.ids), dtype=np.int32, count=int(offsets[-1]))
    cols = {"i": batch.column("i"),
            "ids": pa.ListArray.from_arrays(pa.array(offsets), pa.array(ids))}
    if "token_type_ids" in tok._keys and not tok._zero_types:
        types = np.fromiter((t for e in encs for t in e.type_ids), dtype=np.int32, count=int(offsets[-1]))
        cols["types"] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(types))
    tok_s = np.zeros(len(encs), dtype=np.float64)
    if len(encs):
        tok_s[0] = time.perf_counter() - t0
    cols["tok_s"] = pa.array(tok_s)
    return pa.table(cols)


class Embedder:
    """A Ray actor's model: loaded once, then a forward pass per batch.

    Parameters
    ----------
    name, revision, precision, device : str
        What :func:`fasteval.sas.model.load_model` loads on the actor.
    keys : list of str or None
        The model's input tensors when the batches come tokenized (None: tokenize here).
    pad_id : int
        Padding token id.
    extra : dict
        Non-tensor features the model's ``preprocess`` adds.
    """

    def __init__(self, name: str, revision: str | None, precision: str, device: str,
                 keys: list[str] | None, pad_id: int, extra: dict) -> None:
        from fasteval.sas.model import load_model, resolve_device

        self.device = resolve_device(device)
        self.loaded = load_model(name, device=self.device, precision=precision, revision=revision)
        self.keys = keys
        self.pad_id = pad_id
        self.extra = extra

    def _features(self, batch) -> dict[str, Any]:
        import torch

        ids = batch.column("ids").combine_chunks()
        flat = ids.flatten().to_numpy().astype(np.int64)  # flatten: the slice's values only
        lengths = ids.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
        n = len(lengths)
        width = int(lengths.max()) if n else 0
        mask = np.arange(width, dtype=np.int64)[None, :] < lengths[:, None]
        padded = np.full((n, width), self.pad_id, dtype=np.int64)
        padded[mask] = flat
        out: dict[str, Any] = {}
        for key in self.keys or ():
            if key == "input_ids":
                out[key] = torch.from_numpy(padded)
            elif key == "attention_mask":
                out[key] = torch.from_numpy(mask.astype(np.int64))
            elif "types" in batch.column_names:
                types = np.zeros((n, width), dtype=np.int64)
                tcol = batch.column("types").combine_chunks()
                types[mask] = tcol.flatten().to_numpy().astype(np.int64)
                out[key] = torch.from_numpy(types)
            else:
                out[key] = torch.zeros((n, width), dtype=torch.int64)
        out.update(self.extra)
        return out

    def __call__(self, batch):
        import pyarrow as pa
        import torch

        from fasteval.sas.encode import _preprocess, _to_device, sentence_embeddings

        model = self.loaded.model
        cuda = self.device.startswith("cuda")
        t_tok = time.perf_counter()
        if self.keys is None:  # not a plain fast tokenizer: the model's own preprocess
            features = _preprocess(model, batch.column("text").to_pylist(), cuda)
        else:
            features = self._features(batch)
            if cuda:
                features = {k: (v.pin_memory() if hasattr(v, "pin_memory") else v) for k, v in features.items()}
        t_tok = time.perf_counter() - t_tok
        t0 = time.perf_counter()
        with torch.inference_mode():
            emb = sentence_embeddings(model, _to_device(features, self.device, cuda)).float()
            emb = torch.nn.functional.normalize(emb, p=2, dim=1).cpu().numpy()
        fwd = time.perf_counter() - t0
        n, dim = emb.shape
        fwd_s = np.zeros(n, dtype=np.float64)
        tok_s = batch.column("tok_s").to_numpy().copy() if "tok_s" in batch.column_names else np.zeros(n)
        if n:
            fwd_s[0] = fwd
            tok_s[0] += t_tok
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(emb).reshape(-1)), dim)
        return pa.table({"i": batch.column("i"), "embedding": vectors, "fwd_s": pa.array(fwd_s),
                         "tok_s": pa.array(tok_s)})


def ray_plan(device: Any, precision: str, ray_address: str | None = None) -> tuple[str, str, bool]:
    """``(actor device, precision, started)``: connect to (or start) Ray, then pick CUDA
    actors when the cluster has GPUs (unless ``device`` says ``"cpu"``)."""
    from fasteval.batch.ray_engine import ensure_ray, require_ray
    from fasteval.sas.model import resolve_precision

    if isinstance(device, list | tuple):
        raise ParameterError("device", 'one device kind with engine="ray" (cpu or cuda; Ray places '
                             "one actor per GPU)", device)
    ray = require_ray()
    started = ensure_ray(ray, ray_address)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if device is None:
        dev = "cuda" if gpus else "cpu"
    else:
        dev = str(device)
        if dev.startswith("cuda") and not gpus:
            raise ParameterError("device", "cpu (the Ray cluster has no GPU)", device)
        if dev.startswith("cuda"):
            dev = "cuda"  # each actor sees its own GPU as cuda:0
    return dev, resolve_precision(precision, dev), started


def embed_on_ray(loaded, texts: list[str], *, device: str, batch_size: int, stats=None,
                 actors: int | None = None):
    """Unit vectors ``(len(texts), dim)`` float32 of ``texts`` (distinct), embedded on Ray.

    Parameters
    ----------
    loaded : LoadedModel
        The model as loaded on the driver: its name (a local folder or a cached hub name,
        which every node must see), revision and precision tell the actors what to load.
    texts : list of str
        Texts to embed, each once.
    device : str
        ``"cuda"`` (one GPU per actor) or ``"cpu"`` (see :func:`ray_plan`).
    batch_size : int
        Texts per forward pass (and per tokenizer call).
    stats : EncodeStats, optional
        Gets the counts, the summed forward and tokenization seconds of all actors and the
        wall time (``extra["ray_actors"]``, ``extra["ray_tokenize_stage"]``).
    actors : int, optional
        Size of the actor pool (default: the cluster's GPUs, or its CPUs less one for the
        tokenizer tasks, at least one).

    Examples
    --------
    >>> from fasteval.sas.model import load_model
    >>> vecs = embed_on_ray(load_model(device="cpu"), ["a cat"], device="cpu", batch_size=8)  # doctest: +SKIP
    """
    import ray

    from fasteval.batch.ray_engine import quiet_data
    from fasteval.sas.encode import FastTextTokenizer, _embedding_dim, _texts_length_order

    if not isinstance(loaded.name, str) or loaded.revision.startswith("object-"):
        raise ParameterError("model", 'a model folder or a cached hub name with engine="ray" (each actor '
                             "loads the model itself)", loaded.name)
    dim = _embedding_dim(loaded.model)
    out = np.empty((len(texts), dim), dtype=np.float32)
    if not texts:
        return out
    t_start = time.perf_counter()
    order = _texts_length_order(texts)
    probe = [texts[i] for i in order[:3]] + [texts[i] for i in order[-3:]]
    fast = FastTextTokenizer.build(loaded.model, probe)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    cpus = int(ray.cluster_resources().get("CPU", 1))
    cuda = device.startswith("cuda")
    if actors is None:
        actors = max(1, gpus) if cuda else max(1, cpus - 1)
    restore = quiet_data(ray)
    try:
        ds = _pipeline(ray, loaded, texts, order, fast, device=device, batch_size=batch_size, actors=actors)
        fwd = tok = 0.0
        n_batches = 0
        for part in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            idx = part.column("i").to_numpy()
            vecs = part.column("embedding").combine_chunks()
            out[idx] = vecs.flatten().to_numpy(zero_copy_only=False).reshape(len(idx), dim)
            f = part.column("fwd_s").to_numpy()
            fwd += float(f.sum())
            n_batches += int((f > 0).sum())
            tok += float(part.column("tok_s").to_numpy().sum())
    finally:
        restore()
    if stats is not None:
        stats.forward_s += fwd
        stats.tokenize_s += tok
        stats.n_batches += n_batches
        stats.n_encoded += len(texts)
        stats.encode_wall_s += time.perf_counter() - t_start
        stats.extra["ray_actors"] = actors
        stats.extra["ray_tokenize_stage"] = fast is not None
        stats.extra["fast_tokenizer"] = fast is not None
    return out


def _pipeline(ray: Any, loaded, texts: list[str], order: np.ndarray, fast, *, device: str, batch_size: int,
              actors: int):
    """The Ray dataset of ``texts`` (longest first, ``TEXTS_PER_BLOCK`` a block), tokenized by
    CPU tasks when ``fast`` is a fast tokenizer, then embedded by a pool of ``actors``."""
    import pyarrow as pa

    table = pa.table({"i": pa.array(order.astype(np.int64)),
                      "text": pa.array([texts[i] for i in order], type=pa.large_string())})
    blocks = [table.slice(s, TEXTS_PER_BLOCK) for s in range(0, table.num_rows, TEXTS_PER_BLOCK)]
    ds = ray.data.from_arrow(blocks)
    keys = None
    pad_id, extra = 0, {}
    if fast is not None:
        ds = ds.map_batches(_tokenize, batch_format="pyarrow", batch_size=batch_size,
                            fn_kwargs={"tok": fast}, num_cpus=1)
        keys, pad_id, extra = fast._keys, fast._pad[0], fast._extra
    resources = {"num_gpus": 1} if device.startswith("cuda") else {"num_cpus": 1}
    return ds.map_batches(
        Embedder, batch_format="pyarrow", batch_size=batch_size, concurrency=actors,
        fn_constructor_kwargs={"name": loaded.name, "revision": loaded.revision or None,
                               "precision": loaded.precision, "device": device, "keys": keys,
                               "pad_id": pad_id, "extra": extra},
        **resources,
    )
