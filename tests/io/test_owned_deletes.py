"""fasteval removes only files it can prove it wrote: stale temporary files and folders
(:func:`fasteval.io.atomic.remove_stale`) by their exact name, owner and kind (never a link,
never a folder of other things), and judge cache entries
(:meth:`fasteval.judge.cache.ReplyCache.discard`) by their record."""

from __future__ import annotations

import os

from fasteval.io import atomic
from fasteval.judge.cache import ReplyCache

DEAD = 999_999_999  # a process id that cannot be alive


def _stale(path):
    os.utime(path, (0, 0), follow_symlinks=False)  # written long ago
    return path


def test_link_named_as_a_temporary_is_left_and_its_target_kept(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "results.csv"
    target.write_text("precious")
    folder = tmp_path / "out"
    folder.mkdir()
    link = folder / f".o.csv.{atomic._HOST}-{DEAD}-abcdefgh.tmp"
    link.symlink_to(target)
    _stale(link)
    dlink = folder / f".o.csv.{atomic._HOST}-{DEAD}-ijklmnop.tmp"
    dlink.symlink_to(outside, target_is_directory=True)
    _stale(dlink)
    assert atomic.remove_stale(folder, ".o.csv.", ".tmp", holds=("*.csv",)) == []
    assert link.is_symlink() and dlink.is_symlink() and target.read_text() == "precious"


def test_folder_named_as_a_temporary_is_removed_only_holding_what_its_writer_writes(tmp_path):
    ours = tmp_path / f"fasteval-parts-{atomic._HOST}-{DEAD}-abcdefgh"
    ours.mkdir()
    (ours / "0.arrow").write_bytes(b"x")
    (ours / "1-2.arrow").write_bytes(b"x")
    theirs = tmp_path / f"fasteval-parts-{atomic._HOST}-{DEAD}-ijklmnop"
    theirs.mkdir()
    (theirs / "0.arrow").write_bytes(b"x")
    (theirs / "thesis.tex").write_text("mine")
    nested = tmp_path / f"fasteval-parts-{atomic._HOST}-{DEAD}-qrstuvwx"
    (nested / "sub").mkdir(parents=True)
    for p in (ours, theirs, nested):
        _stale(p)
    removed = atomic.remove_stale(tmp_path, "fasteval-parts-", holds=("*.arrow",))
    assert removed == [ours] and not ours.exists()
    assert (theirs / "thesis.tex").read_text() == "mine" and (nested / "sub").is_dir()
    # without ``holds`` no folder is ever removed
    again = tmp_path / f"fasteval-parts-{atomic._HOST}-{DEAD}-yyyyyyyy"
    again.mkdir()
    _stale(again)
    assert atomic.remove_stale(tmp_path, "fasteval-parts-") == [] and again.is_dir()


def test_another_users_temporary_is_left(tmp_path, monkeypatch):
    left = tmp_path / f".o.csv.{atomic._HOST}-{DEAD}-abcdefgh.tmp"
    left.write_text("partial")
    _stale(left)
    monkeypatch.setattr(atomic.os, "getuid", lambda: os.stat(left).st_uid + 1)
    assert atomic.remove_stale(tmp_path, ".o.csv.", ".tmp") == [] and left.exists()


def test_judge_cache_discard_removes_only_its_own_record(tmp_path):
    cache = ReplyCache(tmp_path / "judge")
    key = cache.key({"model": "m"}, [{"role": "user", "content": "hi"}])
    cache.put(key, {"text": '{"score": 1}'})
    cache.discard(key)
    assert not cache.path(key).exists()
    # a file of the user's at that path (the folder is one they keep files in)
    cache.path(key).write_text("notes")
    cache.discard(key)
    assert cache.path(key).read_text() == "notes"
    # a record reached through a link, to a file or a folder out of the cache
    other = ReplyCache(tmp_path / "elsewhere")
    other.put(key, {"text": "{}"})
    cache.path(key).unlink()
    cache.path(key).symlink_to(other.path(key))
    cache.discard(key)
    assert cache.path(key).is_symlink() and other.get(key) is not None
    cache.path(key).unlink()
    cache.path(key).parent.rmdir()
    cache.path(key).parent.symlink_to(other.path(key).parent, target_is_directory=True)
    cache.discard(key)
    assert other.get(key) is not None
