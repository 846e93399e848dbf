"""On-disk embedding cache: parquet shards keyed by model and text hash.

Layout: ``<cache_dir>/<model key>/part-<n>.parquet`` with two columns, ``key``
(``fixed_size_binary(16)``, BLAKE2b of the UTF-8 text) and ``embedding``
(``fixed_size_list<float32>[dim]``). The model key hashes the model's name, revision and
precision (the revision of a local folder is a fingerprint of its files, that of a hub model
the snapshot's commit; a model object passed in adds a digest of its weights), so two models,
two revisions of one, or a model saved again or trained further never share vectors. Each call that embeds
new texts appends one shard, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import numpy as np

from fasteval.errors import FastevalError


def text_keys(texts: list[str]) -> list[bytes]:
    """BLAKE2b-128 digests of the texts' UTF-8 bytes.

    Examples
    --------
    >>> [len(k) for k in text_keys(["a", "b"])]
    [16, 16]
    """
    blake = hashlib.blake2b
    return [blake(t.encode("utf-8", "surrogatepass"), digest_size=16).digest() for t in texts]


class EmbeddingCache:
    """Embeddings of texts for one model, stored as parquet shards in a folder.

    Parameters
    ----------
    cache_dir : str or path
        Root folder; created when missing.
    model_key : str
        Key of the model (name, revision, precision), e.g. ``LoadedModel.cache_key``.
    model_name : str
        Human-readable name, written to ``model.json`` beside the shards.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> cache = EmbeddingCache(tempfile.mkdtemp(), "k1", "demo")
    >>> cache.store(["a"], np.ones((1, 2), dtype=np.float32))
    >>> found, vecs = cache.lookup(["a", "b"])
    >>> found.tolist(), vecs.tolist()
    ([True, False], [[1.0, 1.0]])
    """

    def __init__(self, cache_dir, model_key: str, model_name: str = "") -> None:
        self.root = Path(cache_dir).expanduser()
        self.folder = self.root / model_key
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = f"cache_dir {str(self.root)!r}: cannot create the cache folder ({exc.strerror or exc})"
            raise FastevalError(msg) from exc
        meta = self.folder / "model.json"
        if not meta.exists():
            meta.write_text(json.dumps({"model": model_name, "key": model_key}) + "\n")
        self._table = None

    def _load(self):
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._table is None:
            parts = sorted(self.folder.glob("part-*.parquet"))
            tables = []
            for part in parts:
                try:
                    tables.append(pq.read_table(part))
                except (OSError, pa.ArrowInvalid) as exc:
                    msg = f"embedding cache {str(part)!r} is unreadable ({exc}); delete that file"
                    raise FastevalError(msg) from exc
            self._table = pa.concat_tables(tables) if tables else None
        return self._table

    def __len__(self) -> int:
        table = self._load()
        return 0 if table is None else table.num_rows

    def lookup(self, texts: list[str], keys: list[bytes] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Return (found mask, float32 vectors of the found texts in order)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        table = self._load()
        keys = text_keys(texts) if keys is None else keys
        if table is None or not keys:
            return np.zeros(len(keys), dtype=bool), np.zeros((0, 0), dtype=np.float32)
        query = pa.array(keys, type=pa.binary(16))
        where = pc.index_in(query, value_set=table.column("key").combine_chunks())
        found = where.is_valid().to_numpy(zero_copy_only=False)
        rows = where.drop_null().to_numpy()
        emb = table.column("embedding").combine_chunks()
        dim = emb.type.list_size
        flat = emb.values.to_numpy(zero_copy_only=False).reshape(-1, dim)
        return found, np.ascontiguousarray(flat[rows], dtype=np.float32)

    def check_writable(self) -> None:
        """Make sure a shard can be written here, before the texts it would hold are
        embedded (:func:`fasteval.io.atomic.check_writable`: a temporary file made and
        removed again); a cache shared read-only still serves a job whose texts it holds.

        Raises
        ------
        FastevalError
            The folder cannot be written, naming it.

        Examples
        --------
        >>> import tempfile
        >>> EmbeddingCache(tempfile.mkdtemp(), "k1").check_writable()
        """
        from fasteval.errors import OutputError
        from fasteval.io.atomic import check_writable

        try:
            check_writable(self.folder / "write-check")
        except OutputError as exc:
            raise FastevalError(f"cache_dir {str(self.root)!r}: the cache folder {str(self.folder)!r} "
                                f"{exc.problem}; expected a folder the embeddings can be kept in "
                                "(or no cache_dir)") from None

    def store(self, texts: list[str], vectors: np.ndarray, keys: list[bytes] | None = None) -> None:
        """Append the texts' vectors as one new shard (atomic write)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from fasteval.io.atomic import atomic_path

        if not texts:
            return
        keys = text_keys(texts) if keys is None else keys
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = vectors.shape[1]
        emb = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)
        table = pa.table({"key": pa.array(keys, type=pa.binary(16)), "embedding": emb})
        with atomic_path(self.folder / f"part-{uuid.uuid4().hex}.parquet") as tmp:
            pq.write_table(table, tmp)
        self._table = None
