"""Which recorded paths may be written into a work tree: git's own rules for dangerous names, for ``.git`` and
our shadow repository ``.trajectory`` alike.

A snapshot is data anyone can build (``git mktree``) or pull from a teammate, so a path read from one is checked
before anything is written, as git checks an index entry before checking it out (git's ``verify_path`` in
``read-cache.c``, ``is_ntfs_dotgit`` and ``is_ntfs_dot_generic`` in ``path.c``, ``is_hfs_dotgit`` in ``utf8.c``;
``core.protectNTFS`` and ``core.protectHFS`` both on, as git does on any platform that may share a work tree).
A path is refused when any ``/``-separated component:

* is empty, ``.`` or ``..``, or holds a backslash or a NUL byte (a backslash is a directory separator on
  Windows: git refuses it with ``core.protectNTFS``);
* names ``.git`` or ``.trajectory`` as any file system could read it: in any case (``.GIT``), with trailing dots
  or spaces (``.git.``, NTFS drops them), followed by an NTFS stream (``.git::$INDEX_ALLOCATION``), as an 8.3
  short name (``GIT~1``, ``TRAJEC~1`` to ``~9``, and Windows' hashed form ``TRxxxx~N``), or with code points HFS+
  ignores when comparing names (``.g\\u200cit``);
* or the entry is a gitlink (a submodule's commit, mode ``160000``): there is no file to write;
* or it is a symlink named ``.gitmodules``, ``.gitattributes``, ``.gitignore`` or ``.mailmap`` (git refuses
  those, ``verify_path``: git would read them through the link).

Standard library only; no git process is run.
"""

from __future__ import annotations

import functools
import re

from code_trajectory.git.tree_format import MODE_SYMLINK

#: The names a work tree must never receive, lower case, without the leading dot: git's repository and ours
#: (:data:`code_trajectory.core.paths.SHADOW_DIR_NAME`; not configurable).
PROTECTED = ("git", "trajectory")
#: Files git reads from the work tree and refuses as symlinks (read-cache.c, verify_path: ``is_*_dotgitmodules``,
#: ``dotgitattributes``, ``dotgitignore``, ``dotmailmap``).
NO_SYMLINK = ("gitmodules", "gitattributes", "gitignore", "mailmap")
MODE_GITLINK = "160000"
#: Code points HFS+ ignores when comparing file names (git's utf8.c, ``next_hfs_char``).
HFS_IGNORED = frozenset([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])


def _short_names(name: str) -> re.Pattern[str]:
    """The 8.3 short names Windows may give ``.<name>``: its first 6 letters (or fewer) then ``~1`` to ``~9``, or
    its first 2 letters, 4 hex digits of a hash and ``~N`` (git's ``is_ntfs_dot_generic``, which hard-codes the
    hash for its own names; ours is not known, so any 4 hex digits are refused)."""
    return re.compile(rf"(?:{re.escape(name[:6])}~[1-9]|{re.escape(name[:2])}[0-9a-f]{{4}}~[1-9])[. ]*(?::.*)?",
                      re.IGNORECASE | re.DOTALL)


_NTFS = {name: (re.compile(rf"\.{re.escape(name)}[. ]*(?::.*)?", re.IGNORECASE | re.DOTALL), _short_names(name))
         for name in (*PROTECTED, *NO_SYMLINK)}


def _hfs_fold(component: str) -> str:
    """``component`` as HFS+ compares it: ignorable code points dropped, ASCII letters lower-cased (git's
    ``is_hfs_dot_generic`` folds only ASCII)."""
    return "".join(c for c in component if ord(c) not in HFS_IGNORED).translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def is_dot_name(component: str, name: str) -> bool:
    """True when ``component`` (one path component) is ``.<name>`` to NTFS or HFS+ (see the module docstring).

    ``name`` is lower case, without the dot (``git``, ``trajectory``, ``gitmodules``).
    """
    if name in _NTFS:
        long_form, short_form = _NTFS[name]
    else:
        long_form = re.compile(rf"\.{re.escape(name)}[. ]*(?::.*)?", re.IGNORECASE | re.DOTALL)
        short_form = _short_names(name)
    if long_form.fullmatch(component) or short_form.fullmatch(component):
        return True
    return _hfs_fold(component) == "." + name


@functools.lru_cache(maxsize=4096)
def _component_reason(component: str) -> str | None:
    """Why one path component must never be written, or None (cached: directory names repeat)."""
    if component in ("", ".", ".."):
        return f"it has a {component or 'empty'!r} component"
    if "\\" in component or "\0" in component:
        return "it holds a backslash or a NUL byte (a directory separator or a terminator on some systems)"
    lower = component.lower()
    if component.isascii() and "~" not in component and "git" not in lower and "trajectory" not in lower:
        return None  # none of the forms below can match
    for name in PROTECTED:
        if is_dot_name(component, name):
            return (f"{component!r} is .{name} to some file system (git's verify_path rules): writing it could "
                    f"change the {'project repository' if name == 'git' else 'shadow repository'}")
    return None


def unsafe_reason(path: str, mode: str | None = None) -> str | None:
    """Why the recorded ``path`` (relative to the project root, ``/``-separated) must not be written, or None.

    ``mode`` is the tree entry's mode as git writes it (``100644``, ``120000``, ``160000``...), when known.
    """
    if mode == MODE_GITLINK:
        return "it is a gitlink (a submodule's commit), not a file"
    if not path or path.startswith("/"):
        return "it is not a path relative to the project root"
    components = path.split("/")
    for component in components:
        reason = _component_reason(component)
        if reason is not None:
            return reason
    if mode == MODE_SYMLINK:
        for name in NO_SYMLINK:
            if is_dot_name(components[-1], name):
                return f"it is a symlink named .{name}, which git refuses (git would read it through the link)"
    return None
