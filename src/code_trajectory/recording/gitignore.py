"""gitignore(5) pattern files, compiled: the building blocks of the recording policy.

Patterns are translated to regular expressions by ``pathspec``'s gitignore implementation; the evaluation is
ours, level by level as git walks a tree (see :class:`Rules`). Paths are ``/``-separated, without a leading ``/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from code_trajectory.core.bounded_read import PATTERN_FILE_LIMIT, read_bounded


@dataclass(frozen=True)
class Rules:
    """Compiled gitignore patterns, last first: ``(regex source, include, pattern text, directory-only)``.

    A match that only covers a parent directory of the path (``pathspec``'s ``ps_d`` group) does
    not decide the path: git decides each level of a path on its own (``pathspec`` alone lets
    ``!name`` re-include everything below a directory called ``name``, which git does not).

    Each pattern's own regex is compiled when a path first needs it (:meth:`match` asks them only of a path
    :attr:`any_plain` or :attr:`any_dir` matched): compiling the ~190 patterns of the secret deny list one by one
    (``GitIgnoreSpec.from_lines``) at every start, before ``serve`` answers ``initialize`` (issue 29), made this
    method take 42-47 ms of CPU for that list instead of 21-24 ms (medians of 15, 2026-11-27).
    """

    patterns: tuple[tuple[str, bool, str, bool], ...]
    #: One regex per probe kind (plain, directory-only) that matches when any pattern might: most
    #: paths match none, and one search replaces a loop over every pattern.
    any_plain: re.Pattern[str] | None = None
    any_dir: re.Pattern[str] | None = None
    #: Matches (``fullmatch``) every file name (the last component of a path) that some pattern could decide,
    #: and more (:func:`_name_filter`); None when a pattern's last component is not simple enough to tell.
    #: Most names are not, and the test costs a fraction of :attr:`any_plain`'s search of the whole path.
    file_names: re.Pattern[str] | None = None
    #: The same for directory names, from every pattern (a directory-only one without its ``/``): a pattern decides
    #: a directory by its last component too, level by level (a match of a parent only does not count, see
    #: :meth:`match`). The walk asks it of every directory: 25,000 paths at an import, each otherwise searched by
    #: :attr:`any_plain` and :attr:`any_dir` (0.25 s of its first pass, sampled 2026-11-26).
    dir_names: re.Pattern[str] | None = None
    #: Each pattern's regex, compiled at its first use (regex source -> compiled).
    compiled: dict[str, re.Pattern[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_lines(cls, lines: list[str]) -> Rules:
        """Compile the lines of a gitignore file (blank lines and comments are dropped)."""
        compiled: list[tuple[str, bool, str, bool]] = []
        for line in lines:
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)
            if include is not None and isinstance(regex, str):
                compiled.append((regex, bool(include), line, line.rstrip().endswith("/")))

        def union(items: list[str]) -> re.Pattern[str] | None:
            if not items:
                return None
            return re.compile("|".join(f"(?:{r.replace('(?P<ps_d>', '(?:')})" for r in items))

        return cls(tuple(reversed(compiled)), union([c[0] for c in compiled if not c[3]]),
                   union([c[0] for c in compiled if c[3]]), _name_filter([c[2] for c in compiled if not c[3]]),
                   _name_filter([c[2].rstrip("/") if c[3] else c[2] for c in compiled]))

    def match(self, path: str, is_dir: bool) -> tuple[bool, str] | None:
        """``(excluded, pattern)`` of the last pattern deciding ``path``, or None when none does.

        ``path`` is relative to the directory of the pattern file. A directory is matched with a
        trailing ``/`` by directory-only patterns (``build/``) and without it by the others, so
        ``a/**`` does not take the directory ``a`` itself.
        """
        names = self.dir_names if is_dir else self.file_names
        if names is not None and names.fullmatch(path.rpartition("/")[2]) is None:
            return None
        if not ((self.any_plain is not None and self.any_plain.match(path))
                or (is_dir and self.any_dir is not None and self.any_dir.match(path + "/"))):
            return None
        for regex, include, text, dir_only in self.patterns:
            if dir_only and not is_dir:
                continue
            probe = path + "/" if dir_only else path
            pattern = self.compiled.get(regex)
            if pattern is None:
                pattern = self.compiled[regex] = re.compile(regex)
            found = pattern.match(probe)
            if found is None:
                continue
            if found.groupdict().get("ps_d") is not None and found.end() < len(probe):
                continue  # matched a parent directory of the path, not the path: git decides per level
            return include, text
        return None


#: Characters a pattern's last component may hold for :func:`_name_filter` to translate it (besides ``*`` and ``?``).
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+@~,=%#$&'(){};^ ")


def _name_filter(patterns: list[str]) -> re.Pattern[str] | None:
    """A regex that fully matches every file name that one of ``patterns`` (gitignore lines, negations included,
    none directory-only) could decide for a file, or None when one of them is beyond this translation.

    A pattern decides a file by its last component matching the file's name (gitignore(5): ``*``, ``?`` and
    bracket expressions never match ``/``; a pattern without a slash matches the name at any depth, one with a
    slash matches the whole path, its last component the name). So the last component alone, with ``*`` as ``.*``
    and ``?`` as ``.`` (a name holds no ``/``), matches a superset of the names the pattern decides. A last
    component of ``**`` (anything below), or holding a bracket expression or an escape, or a pattern ending in
    white space (which git and ``pathspec`` drop unless escaped), gives up (None)."""
    alternatives = []
    for text in patterns:
        body = text[1:] if text.startswith("!") else text
        last = body.rpartition("/")[2]
        if (not last or last == "**" or last != last.rstrip()
                or not all(c in _PLAIN or c in "*?" for c in last)):
            return None
        alternatives.append("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in last))
    # those that begin with ``*`` (``*.pem``, ``*.key``...) share one ``.*``: matched in one pass over a name, not one
    # a pattern (an import screens 500,000 names: 0.26 -> 0.10 s with the default deny patterns)
    suffixes = sorted({a[2:] for a in alternatives if a.startswith(".*")})
    alternatives = [a for a in alternatives if not a.startswith(".*")]
    if suffixes:
        alternatives.append(".*(?:" + "|".join(suffixes) + ")")
    return re.compile("|".join(f"(?:{a})" for a in alternatives) if alternatives else "(?!)", re.DOTALL)


@dataclass(frozen=True)
class Source:
    """One file of patterns and how a project path is turned into the path its patterns see.

    Attributes:
        label: how :meth:`RecordingPolicy.explain` names the file.
        base: the project directory holding the file (``""``: the root, or a file outside the
            project); only paths below it are matched.
        lead: prepended to the path relative to ``base``: the project root's path relative to the
            file's directory (``packages/app/`` for ``repo/.gitignore``), ``""`` inside the project.
        rules: the compiled patterns.
    """

    label: str
    base: str
    lead: str
    rules: Rules

    def local(self, rel: str) -> str:
        """``rel`` (relative to the project root, below ``base``) as seen from the file's directory."""
        return self.lead + (rel[len(self.base) + 1:] if self.base else rel)


def read_lines(path: Path, *, follow_symlinks: bool = False) -> list[str] | None:
    """The lines of a pattern file, or None when it cannot be read (missing, a directory, no permission), is a
    symlink (unless ``follow_symlinks``: the user's global excludes file and ``info/exclude``; git follows no
    in-tree ``.gitignore`` symlink) or not a regular file, or larger than
    :data:`~code_trajectory.core.bounded_read.PATTERN_FILE_LIMIT` (see :func:`~code_trajectory.core.bounded_read.read_bounded`)."""
    data = read_bounded(path, PATTERN_FILE_LIMIT, follow_symlinks=follow_symlinks)
    if data is None:
        return None
    return data.decode("utf-8", "surrogateescape").splitlines()


def anywhere(pattern: str) -> str:
    """A deny pattern matched at any depth: one with an inner ``/`` (``.docker/config.json``) gets ``**/``."""
    body = pattern[1:] if pattern.startswith("!") else pattern
    if "/" in body.rstrip("/") and not body.startswith(("/", "**/")):
        body = "**/" + body
    return ("!" if pattern.startswith("!") else "") + body
