"""The file-name and directory-name filters of compiled gitignore rules never change a verdict: they only skip the
search of paths no pattern can decide (issue 29: the walk of a 500,000-file import matches the secret deny list
against every name, and the ignore rules against each of its 25,000 directories)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from code_trajectory.core.config import DEFAULT_DENY_PATTERNS
from code_trajectory.recording.gitignore import Rules, anywhere

PATTERN_SETS = [
    [anywhere(p) for p in DEFAULT_DENY_PATTERNS],
    ["*.log", "!keep.log", "/build", "docs/*.md", "a/**/b?.txt", " lead", "x*y*z", "node_modules/", "*.tmp"],
    ["!important.env", "*.env", "dir/sub/", "**/deep/file.c", "q?.py"],
    ["sub/", "!a/b/", "*/deep/", "/build/", "**/node_modules/", "x*/"],  # directories only
    ["a/**/", "*.bin"],  # a directory-only last component of ** : no directory filter
    ["data/**", "*.bin"],  # a last component of ** : no filter
    ["[abc].txt", "*.o"],  # a bracket expression: no filter
    ["trailing.txt  ", "*.c"],  # trailing spaces: no filter
    ["foo\\ ", "*.h"],  # an escape: no filter
]

NAMES = ["keep.log", "x.log", "build", "README.md", "b1.txt", "bb.txt", " lead", "lead", "xAyBz", "xyz", "node_modules",
         "t.tmp", "a.env", "important.env", "file.c", "q1.py", "q12.py", "data", "k.bin", "a.txt", "d.txt", "x.o",
         "trailing.txt", "foo ", "foo", ".env", ".env.local", "id_rsa.pub", "config.json", "x.pem", "mod1.py",
         "odd\nname.key", "\udcff.key", "sub", "deep", "x.h"]
DIRS = ["", "a", "a/b", "docs", "dir/sub", "x/deep", ".docker", "build", "data", "node_modules/pkg"]


@pytest.mark.parametrize("lines", PATTERN_SETS)
def test_the_name_filter_gives_the_verdict_of_every_pattern(lines: list[str]) -> None:
    rules = Rules.from_lines(lines)
    unfiltered = dataclasses.replace(rules, file_names=None, dir_names=None)
    for directory, name in itertools.product(DIRS, NAMES):
        path = f"{directory}/{name}" if directory else name
        for is_dir in (False, True):
            assert rules.match(path, is_dir) == unfiltered.match(path, is_dir), (lines, path, is_dir)


def test_the_filter_is_there_for_simple_patterns_only() -> None:
    assert Rules.from_lines([anywhere(p) for p in DEFAULT_DENY_PATTERNS]).file_names is not None
    assert Rules.from_lines(["*.log", "!keep.log", "build/"]).file_names is not None
    for odd in (["data/**"], ["[abc].txt"], ["trailing  "], ["foo\\ "]):
        assert Rules.from_lines(odd).file_names is None, odd
    assert Rules.from_lines(["only/dirs/"]).file_names is not None  # nothing decides a file
    assert Rules.from_lines(["only/dirs/"]).match("only/dirs", False) is None
    assert Rules.from_lines(["only/dirs/", "*.log"]).dir_names is not None
    assert Rules.from_lines(["only/dirs/"]).match("only/dirs", True) == (True, "only/dirs/")
    assert Rules.from_lines(["a/**/"]).dir_names is None and Rules.from_lines(["a/**"]).dir_names is None
