"""core.atomic.replace_file: content, modes, links, and no temporary file left behind on failure."""

from __future__ import annotations

import os
import stat

import pytest

from code_trajectory.core import atomic
from code_trajectory.core.atomic import is_temp_name, replace_file


def test_creates_and_replaces_content(tmp_path):
    target = tmp_path / "state.json"
    replace_file(target, "first é")
    assert target.read_text("utf-8") == "first é"
    replace_file(target, b"second")
    assert target.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["state.json"]


def test_mode_kept_or_given(tmp_path):
    target = tmp_path / "config.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    replace_file(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    replace_file(target, "newer", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh"
    umask = os.umask(0o022)
    try:
        replace_file(fresh, "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


def test_symlink_at_target_is_replaced_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(outside)
    replace_file(link, "new", mode=0o600)
    assert not link.is_symlink() and link.read_text() == "new"
    assert outside.read_text() == "keep"


def test_long_target_name_uses_short_temp_name(tmp_path):
    target = tmp_path / ("n" * 250)
    replace_file(target, "x")
    assert target.read_text() == "x"


def test_failed_rename_leaves_target_and_no_temp(tmp_path):
    target = tmp_path / "occupied"
    target.mkdir()
    (target / "child").write_text("in the way")
    with pytest.raises(OSError):
        replace_file(target, "data")  # rename(2) of a file over a non-empty directory fails
    assert sorted(os.listdir(tmp_path)) == ["occupied"]
    assert (target / "child").read_text() == "in the way"


def test_failed_write_leaves_old_content_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_text("old")

    def disk_full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", disk_full)
    with pytest.raises(OSError, match="No space"):
        replace_file(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["state.json"]


def test_missing_directory_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        replace_file(tmp_path / "absent" / "file", "x")


def test_temp_name_shape():
    assert is_temp_name(".ct-0123456789ab.tmp")
    assert not is_temp_name(".ct-0123.tmp")
    assert not is_temp_name("state.json")
