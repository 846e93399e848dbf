"""The vendored test data is byte-identical to its sources (MANIFEST.json sizes and sha256,
taken of the original bytes; big files are stored gzipped and checked decompressed), and
each licence lies beside the data it covers."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests._data import CONFORMANCE, REALRUNS, data_file, read_bytes, trec_eval_file

# In the source corpus but used by no test, so not stored here (see tests/data/README.md).
NOT_VENDORED = {
    "trec_eval/qrels-302.test",
    "trec_eval/prefs.rank20",
    "ir_measures/compat.qrels",
    "ir_measures/compat.run",
}


def _resolve(root, path: str):
    if root == CONFORMANCE and path.startswith("trec_eval/"):
        return trec_eval_file(path.removeprefix("trec_eval/"))  # may be datasets/trec's copy
    return data_file(root, path)


def _entries():
    for root in (CONFORMANCE, REALRUNS):
        for entry in json.loads((root / "MANIFEST.json").read_text())["files"]:
            if entry["path"] not in NOT_VENDORED:
                yield pytest.param(root, entry, id=f"{root.name}/{entry['path']}")


ENTRIES = list(_entries())


def test_manifests_are_complete() -> None:
    assert len(ENTRIES) == 49 + 9  # 53 conformance files less the four above; 9 realruns files


@pytest.mark.parametrize(("root", "entry"), ENTRIES)
def test_file_matches_manifest(root, entry: dict) -> None:
    path = _resolve(root, entry["path"])
    # stored gzipped here (name + .gz): check the original bytes; ranx's own .gz files as is
    data = path.read_bytes() if path.name == entry["path"].split("/")[-1] else read_bytes(path)
    assert len(data) == entry["bytes"]
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]


def test_licences_beside_their_data() -> None:
    for root in (CONFORMANCE, REALRUNS):
        dirs = {e["path"].split("/")[0] for e in json.loads((root / "MANIFEST.json").read_text())["files"]}
        for d in dirs:
            assert any((root / d / n).is_file() for n in ("LICENSE", "LICENSE.md", "LICENSE.txt")), d
