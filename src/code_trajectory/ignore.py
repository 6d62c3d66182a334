"""Which paths of the work tree are recorded: the project's ignore rules plus our own.

:class:`RecordingPolicy` answers "is this path recorded?" in-process (with
``pathspec``'s gitignore implementation), for the watcher's events and the full
scan alike, so both apply one policy. Rules, highest precedence first:

1. never recorded, whatever any ignore file says: the shadow repository
   ``.trajectory/`` at the root, any ``.git`` directory or file (the project's own
   repository and those of nested repositories), and the secret deny list
   (:data:`code_trajectory.config.DEFAULT_DENY_PATTERNS` plus configured patterns);
2. the project's ignore rules, as ``git status`` in the project sees them (see
   gitignore(5)): ``.gitignore`` files in the path's directory and every parent up
   to the root (a deeper file overrides a shallower one; within a file the last
   matching pattern wins), then ``$GIT_DIR/info/exclude`` of the project's
   repository, then the user's global excludes file (``core.excludesFile``, by
   default ``$XDG_CONFIG_HOME/git/ignore``). A path inside an excluded directory is
   excluded and cannot be re-included, as in git.

Nested git repositories (a vendored checkout, with or without commits) are
recorded as ordinary files: their ``.gitignore`` files apply like any other
nested ``.gitignore``; their ``.git`` is never recorded. This differs from
``git add -A``, which would add a gitlink (or fail on a repository without
commits), and lets the trajectory follow edits an agent makes in vendored code.

Paths are relative to the project root, ``/``-separated, without a leading ``/``.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

SHADOW_DIR_NAME = ".trajectory"
GITIGNORE = ".gitignore"


@dataclass(frozen=True)
class _Rules:
    """Compiled gitignore patterns, last first: ``(regex, include, pattern text)``.

    Patterns are compiled by ``pathspec``; the evaluation is ours because we walk the
    tree level by level as git does: a match that only covers a parent directory of the
    path (``pathspec``'s ``ps_d`` group) does not decide the path (``pathspec`` alone
    lets ``!name`` re-include everything below a directory called ``name``, which git
    does not).
    """

    patterns: tuple[tuple[re.Pattern[str], bool, str, bool], ...]
    #: One regex per probe kind (plain, directory-only) that matches when any pattern might: most
    #: paths match none, and one search replaces a loop over every pattern.
    any_plain: re.Pattern[str] | None = None
    any_dir: re.Pattern[str] | None = None

    @classmethod
    def from_lines(cls, lines: list[str]) -> _Rules:
        spec = GitIgnoreSpec.from_lines(lines)
        compiled = [(p.regex, bool(p.include), p.pattern, p.pattern.rstrip().endswith("/"))  # type: ignore
                    for p in spec.patterns
                    if p.include is not None and getattr(p, "regex", None) is not None]

        def union(items: list[re.Pattern[str]]) -> re.Pattern[str] | None:
            if not items:
                return None
            return re.compile("|".join(f"(?:{r.pattern.replace('(?P<ps_d>', '(?:')})" for r in items))

        return cls(tuple(reversed(compiled)), union([c[0] for c in compiled if not c[3]]),
                   union([c[0] for c in compiled if c[3]]))

    def match(self, path: str, is_dir: bool) -> tuple[bool, str] | None:
        """``(excluded, pattern)`` of the last pattern deciding ``path``, or None.

        A directory is matched with a trailing ``/`` by directory-only patterns (``build/``)
        and without it by the others, so ``a/**`` does not take the directory ``a`` itself.
        """
        if not ((self.any_plain is not None and self.any_plain.match(path))
                or (is_dir and self.any_dir is not None and self.any_dir.match(path + "/"))):
            return None
        for regex, include, text, dir_only in self.patterns:
            if dir_only and not is_dir:
                continue
            probe = path + "/" if dir_only else path
            found = regex.match(probe)
            if found is None:
                continue
            if found.groupdict().get("ps_d") is not None and found.end() < len(probe):
                continue  # matched a parent directory of the path, not the path: git decides per level
            return include, text
        return None


@dataclass(frozen=True)
class _Source:
    """One file of patterns and the directory its patterns are relative to ('' for the root)."""

    label: str
    base: str
    spec: _Rules


def _read_lines(path: Path) -> list[str] | None:
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None
    except OSError:
        return None
    return data.decode("utf-8", "surrogateescape").splitlines()


def _spec(lines: list[str]) -> _Rules:
    return _Rules.from_lines(lines)


class RecordingPolicy:
    """Decides which paths under ``root`` are recorded in the shadow repository.

    Args:
        root: the project root (absolute).
        deny_patterns: secret patterns in gitignore syntax, matched at any depth,
            that no ignore rule can re-include.
        info_exclude: the project repository's ``info/exclude`` file, if any.
        global_excludes: the user's global excludes file, if any.

    Thread-safe: caches are guarded by a lock; :meth:`invalidate` drops them after an
    ignore file changed.
    """

    def __init__(self, root: Path, *, deny_patterns: tuple[str, ...] = (),
                 info_exclude: Path | None = None, global_excludes: Path | None = None) -> None:
        self.root = Path(root)
        self.deny_patterns = tuple(deny_patterns)
        self._deny = _spec([_anywhere(p) for p in self.deny_patterns])
        self.info_exclude = info_exclude
        self.global_excludes = global_excludes
        self._lock = threading.RLock()
        self._dir_sources: dict[str, tuple[_Source, ...]] = {}
        self._dir_verdict: dict[str, str | None] = {}
        self._base_sources = self._load_base_sources()

    def _load_base_sources(self) -> tuple[_Source, ...]:
        # lowest precedence first: global excludes, then info/exclude
        sources = []
        for label, path in (("global excludes file", self.global_excludes),
                            ("info/exclude", self.info_exclude)):
            if path is None:
                continue
            lines = _read_lines(path)
            if lines:
                sources.append(_Source(f"{label} {path}", "", _spec(lines)))
        return tuple(sources)

    def invalidate(self) -> None:
        """Forget cached ignore files and verdicts (call after any ignore file changed)."""
        with self._lock:
            self._dir_sources.clear()
            self._dir_verdict.clear()
            self._base_sources = self._load_base_sources()

    # -- sources -------------------------------------------------------------------------

    def _sources_for_dir(self, rel_dir: str) -> tuple[_Source, ...]:
        """Pattern sources that apply to entries of directory ``rel_dir``, lowest precedence first."""
        cached = self._dir_sources.get(rel_dir)
        if cached is not None:
            return cached
        if rel_dir == "":
            parent = self._base_sources
        else:
            parent = self._sources_for_dir(rel_dir.rpartition("/")[0])
        lines = _read_lines(self.root / rel_dir / GITIGNORE) if rel_dir else _read_lines(self.root / GITIGNORE)
        if lines:
            label = f"{rel_dir + '/' if rel_dir else ''}{GITIGNORE}"
            sources = parent + (_Source(label, rel_dir, _spec(lines)),)
        else:
            sources = parent
        self._dir_sources[rel_dir] = sources
        return sources

    # -- verdicts ------------------------------------------------------------------------

    def _builtin_reason(self, rel: str, name: str, is_dir: bool) -> str | None:
        if name == ".git":
            return "a .git directory or file is never recorded"
        if rel == SHADOW_DIR_NAME or (rel == name and name.startswith(SHADOW_DIR_NAME + ".corrupt-")):
            return "the shadow repository .trajectory/ (and damaged copies moved aside) are never recorded"
        found = self._deny.match(rel, is_dir)
        if found is not None and found[0]:
            return f"secret deny list pattern `{found[1]}`"
        return None

    def _own_reason(self, rel: str, is_dir: bool) -> str | None:
        """Why ``rel`` itself (ignoring its parents) is excluded, or None."""
        parent, _, name = rel.rpartition("/")
        builtin = self._builtin_reason(rel, name, is_dir)
        if builtin:
            return builtin
        for source in reversed(self._sources_for_dir(parent)):
            local = rel[len(source.base) + 1:] if source.base else rel
            found = source.spec.match(local, is_dir)
            if found is None:
                continue
            if found[0]:
                return f"ignored by `{found[1]}` in {source.label}"
            return None  # re-included by a negated pattern
        return None

    def _dir_reason(self, rel_dir: str) -> str | None:
        """Why directory ``rel_dir`` or one of its parents is excluded, or None (cached)."""
        if rel_dir == "":
            return None
        if rel_dir in self._dir_verdict:
            return self._dir_verdict[rel_dir]
        reason = self._dir_reason(rel_dir.rpartition("/")[0])
        if reason is None:
            reason = self._own_reason(rel_dir, True)
        else:
            reason = reason if reason.startswith("inside ") else f"inside {rel_dir.rpartition('/')[0]}/: {reason}"
        self._dir_verdict[rel_dir] = reason
        return reason

    def explain(self, rel: str, *, is_dir: bool | None = None) -> str | None:
        """Return why ``rel`` is not recorded, or None when it is recorded.

        Args:
            rel: path relative to the root, ``/``-separated.
            is_dir: whether the path is a directory; looked up on disk when None.
        """
        rel = rel.strip("/")
        if not rel:
            return None
        if is_dir is None:
            is_dir = _is_real_dir(self.root / rel)
        with self._lock:
            parent = rel.rpartition("/")[0]
            reason = self._dir_reason(parent)
            if reason is not None:
                return reason if reason.startswith("inside ") else f"inside {parent}/: {reason}"
            return self._own_reason(rel, is_dir)

    def is_recorded(self, rel: str, *, is_dir: bool | None = None) -> bool:
        """Return True when ``rel`` (relative to the root) is recorded (see :meth:`explain`)."""
        return self.explain(rel, is_dir=is_dir) is None

    def entry_excluded(self, parent_rel: str, name: str, is_dir: bool) -> bool:
        """Fast check used by the scanner for ``name`` in a directory known to be recorded."""
        rel = f"{parent_rel}/{name}" if parent_rel else name
        with self._lock:
            return self._own_reason(rel, is_dir) is not None

    @staticmethod
    def is_ignore_file(rel: str) -> bool:
        """True for paths whose change alters the rules (a ``.gitignore`` anywhere)."""
        return rel == GITIGNORE or rel.endswith("/" + GITIGNORE)


class SubtreePolicy:
    """The policy seen from the project subdirectory ``prefix``: for walks rooted there."""

    def __init__(self, policy: RecordingPolicy, prefix: str) -> None:
        self.policy = policy
        self.prefix = prefix

    def entry_excluded(self, parent_rel: str, name: str, is_dir: bool) -> bool:
        """Like :meth:`RecordingPolicy.entry_excluded`, with ``parent_rel`` relative to ``prefix``."""
        parent = f"{self.prefix}/{parent_rel}" if parent_rel else self.prefix
        return self.policy.entry_excluded(parent, name, is_dir)


def _is_real_dir(path: Path) -> bool:
    """True for a directory that is not a symlink; False for anything else, including names too long to stat."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def _anywhere(pattern: str) -> str:
    """A deny pattern matched at any depth: one with an inner ``/`` (``.docker/config.json``) gets ``**/``."""
    body = pattern[1:] if pattern.startswith("!") else pattern
    if "/" in body.rstrip("/") and not body.startswith(("/", "**/")):
        body = "**/" + body
    return ("!" if pattern.startswith("!") else "") + body


def default_global_excludes() -> Path:
    """git's default global excludes file: ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "git" / "ignore"
