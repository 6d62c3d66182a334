"""Reading files that may have been planted (core/bounded_read.py) and replacing files that are links
(core/atomic.replace_file): a symlink, a FIFO, a device or an oversized file is refused, never followed, never
waited on."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from code_trajectory.core.atomic import new_file_mode, replace_file
from code_trajectory.core.bounded_read import drop_planted_cache, read_bounded, read_json, read_json_object


def test_a_regular_file_within_the_bound_is_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 100)
    assert read_bounded(tmp_path / "f", 100) == b"x" * 100
    assert read_bounded(tmp_path / "f", 99) is None


@pytest.mark.parametrize("planted", ["symlink-to-dev-zero", "symlink-to-file", "fifo", "directory", "missing",
                                     "socket-path-dev-null"])
def test_anything_but_a_regular_file_is_refused_at_once(tmp_path: Path, planted: str) -> None:
    path = tmp_path / "state.json"
    (tmp_path / "real.json").write_text('{"a": 1}')
    if planted == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif planted == "symlink-to-file":
        path.symlink_to(tmp_path / "real.json")
    elif planted == "fifo":
        os.mkfifo(path)  # no writer: a plain open() would block forever
    elif planted == "directory":
        path.mkdir()
    elif planted == "socket-path-dev-null":
        path = Path("/dev/null")
    assert read_bounded(path, 1 << 20) is None
    assert read_json_object(path) is None


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8", b"[1, 2]", b"{not json", b"[" * 100_000 + b"]" * 100_000,
                                     b"null"])
def test_read_json_object_takes_only_an_object(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "f.json").write_bytes(content)
    assert read_json_object(tmp_path / "f.json") is None


def test_read_json_gives_any_value_and_none_for_garbage(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "bad.json").write_text("[1,")
    assert read_json(tmp_path / "list.json") == [1, 2]
    assert read_json(tmp_path / "bad.json") is None
    assert read_json_object(tmp_path / "list.json") is None


def test_drop_planted_cache_removes_links_and_fifos_but_keeps_regular_files(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    cache.symlink_to("/dev/zero")
    os.mkfifo(f"{cache}-wal")
    Path(f"{cache}-shm").write_bytes(b"shared")
    target = tmp_path / "elsewhere"
    target.write_text("the user's")
    drop_planted_cache(cache)
    assert not os.path.lexists(cache) and not os.path.lexists(f"{cache}-wal")
    assert Path(f"{cache}-shm").read_bytes() == b"shared"
    (tmp_path / "link").symlink_to(target)
    drop_planted_cache(tmp_path / "link")
    assert target.read_text() == "the user's"  # the link goes, never what it points at


def test_replace_file_over_a_symlink_takes_no_mode_from_its_target(tmp_path: Path) -> None:
    target = tmp_path / "world-writable"
    target.write_text("x")
    target.chmod(0o666)
    link = tmp_path / "state.json"
    link.symlink_to(target)
    replace_file(link, "{}")
    assert not link.is_symlink() and link.read_text() == "{}"
    assert stat.S_IMODE(link.stat().st_mode) == new_file_mode()
    assert target.read_text() == "x"


def test_new_file_mode_is_what_open_gives_a_new_file(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert new_file_mode() == 0o640
        fd = os.open(tmp_path / "probe", os.O_CREAT | os.O_WRONLY, 0o666)
        os.close(fd)
        assert stat.S_IMODE((tmp_path / "probe").stat().st_mode) == new_file_mode()
    finally:
        os.umask(old)


def test_a_symlink_is_followed_only_when_asked_and_must_still_lead_to_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "dotfiles-ignore").write_text("*.log\n")
    (tmp_path / "ignore").symlink_to(tmp_path / "dotfiles-ignore")
    (tmp_path / "zero").symlink_to("/dev/zero")
    assert read_bounded(tmp_path / "ignore", 100) is None
    assert read_bounded(tmp_path / "ignore", 100, follow_symlinks=True) == b"*.log\n"
    assert read_bounded(tmp_path / "zero", 100, follow_symlinks=True) is None
