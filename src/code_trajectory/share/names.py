"""Ref names of shared trajectories: author ids, the pushed and pulled namespaces, and what a remote may send.

A project's shadow branch ``refs/heads/shadow/<branch>`` is pushed to the project's remote as
``refs/trajectory/<author-id>/<branch>`` (:data:`PUSH_PREFIX`) and pulled by others into their own
shadow repository as ``refs/remotes-trajectory/<author-id>/<branch>`` (:data:`PULL_PREFIX`).

An author id is a user's ``user.email`` (or ``[share] author_id``) put in one canonical form by
:func:`sanitize_author_id`: lower case, only ``a-z 0-9 . _ @ + -``, no ``..``, at most
:data:`MAX_AUTHOR_CHARS` characters, never a word git gives a meaning to (``refs``, ``heads``, ``HEAD``...).

Names read from a remote are untrusted: :func:`parse_remote_ref` accepts only
``refs/trajectory/<canonical author id>/<branch>`` with a branch name that is a plain git branch
name (no ``..``, no ``HEAD`` component, nothing that decodes to a path step through percent-encoding
or Unicode compatibility forms, no control or invisible characters, at most :data:`MAX_BRANCH_BYTES`
bytes); :func:`check_ref_format` has git confirm a name before anything is written.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from urllib.parse import unquote

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.text import escaped, invisible
from code_trajectory.git.gitcmd import base_env, git_executable

#: Where pushed trajectories live on the remote: ``refs/trajectory/<author-id>/<branch>``.
PUSH_PREFIX = "refs/trajectory/"
#: Where pulled trajectories live in the shadow repository (read-only copies).
PULL_PREFIX = "refs/remotes-trajectory/"
#: Longest author id, characters.
MAX_AUTHOR_CHARS = 64
#: Longest branch name accepted from a remote, bytes of UTF-8.
MAX_BRANCH_BYTES = 200
#: Author ids that would read as one of git's own namespaces or names.
RESERVED_AUTHORS = frozenset({"refs", "heads", "tags", "remotes", "head", "notes", "shadow", "trajectory",
                              "remotes-trajectory", "fetch_head", "orig_head", "stash"})

_NOT_AUTHOR_CHAR = re.compile(r"[^a-z0-9._@+-]+")
#: Characters git never allows in a ref name (git-check-ref-format(1)), besides control characters.
_GIT_FORBIDDEN = set(" ~^:?*[\\\x7f")


class UnsafeRefError(ValueError):
    """A ref name from a remote that is not a well-formed shared trajectory (the message says why)."""


def sanitize_author_id(raw: str) -> str:
    """Return the canonical author id for ``raw`` (an email or a configured id).

    The result is lower case, keeps only ``a-z 0-9 . _ @ + -`` (every other run becomes ``-``),
    has no ``..``, no leading ``.``/``-``, no trailing ``.``/``-`` or ``.lock``, and at most
    :data:`MAX_AUTHOR_CHARS` characters, so ``refs/trajectory/<id>/x`` passes ``git check-ref-format``.
    Applying it twice gives the same result.

    Raises:
        InvalidArgumentError: nothing usable is left, or the id is reserved (e.g. ``refs``).
    """
    text = unicodedata.normalize("NFKC", str(raw or "")).strip().lower()
    previous = None
    while text != previous:
        previous = text
        text = _NOT_AUTHOR_CHAR.sub("-", text)
        text = re.sub(r"\.{2,}", ".", text)
        text = re.sub(r"-{2,}", "-", text)
        text = text[:MAX_AUTHOR_CHARS].strip(".-")
        if text.endswith(".lock"):
            text = text[:-len(".lock")]
    if not text or text == "@" or text in RESERVED_AUTHORS:
        raise InvalidArgumentError(
            f"{raw!r} cannot be used as an author id for shared trajectories; set a distinct id with "
            "`author_id = \"you@example.com\"` under [share] in .trajectory/config.toml, or `git config user.email`")
    return text


def push_ref(author_id: str, branch: str) -> str:
    """The remote ref a branch is pushed to: ``refs/trajectory/<author_id>/<branch>``."""
    return f"{PUSH_PREFIX}{author_id}/{branch}"


def pulled_ref(author_id: str, branch: str) -> str:
    """The local read-only ref a pulled trajectory is kept under: ``refs/remotes-trajectory/<author_id>/<branch>``."""
    return f"{PULL_PREFIX}{author_id}/{branch}"


def split_pulled_ref(ref: str) -> tuple[str, str]:
    """Inverse of :func:`pulled_ref`: ``(author_id, branch)``.

    Raises:
        ValueError: ``ref`` is not under :data:`PULL_PREFIX` with both parts.
    """
    if not ref.startswith(PULL_PREFIX):
        raise ValueError(f"{ref} is not a pulled trajectory")
    author, sep, branch = ref[len(PULL_PREFIX):].partition("/")
    if not sep or not author or not branch:
        raise ValueError(f"{ref} is not a pulled trajectory")
    return author, branch


def _unshown(ch: str) -> bool:
    """A character a name from a remote may not hold: an invisible one (:func:`~code_trajectory.core.text.invisible`:
    control, format such as bidi overrides and zero-width ones, separators), a line break, a space, or one Python
    does not print (private-use, unassigned, a lone surrogate)."""
    return invisible(ch) or ch in " \n" or not ch.isprintable()


def check_branch_name(branch: str) -> None:
    """Check a branch name received from a remote (the part after the author id).

    Raises:
        UnsafeRefError: the name breaks a rule of the module docstring; the message says which.
    """
    try:
        size = len(branch.encode("utf-8"))
    except UnicodeEncodeError:
        raise UnsafeRefError("branch name is not valid UTF-8") from None
    if size > MAX_BRANCH_BYTES:
        raise UnsafeRefError(f"branch name is {size} bytes long (at most {MAX_BRANCH_BYTES})")
    bad = next((ch for ch in branch if _unshown(ch) or ch in _GIT_FORBIDDEN), None)
    if bad is not None:
        raise UnsafeRefError(f"branch name holds the character {bad!r} (U+{ord(bad):04X})")
    if "@{" in branch or branch == "@":
        raise UnsafeRefError("branch name holds '@{' or is '@'")
    if branch.startswith(("refs/", "-")):
        raise UnsafeRefError("branch name starts with 'refs/' or '-' (it would read as another ref or an option)")
    for part in branch.split("/"):
        if not part or part.startswith(".") or part.endswith((".", ".lock")) or ".." in part:
            raise UnsafeRefError(f"branch name has a bad component {part!r} (empty, '.', '..', or '.lock')")
        if part == "HEAD":
            raise UnsafeRefError("branch name has a component 'HEAD' (not a branch)")
    decoded = unicodedata.normalize("NFKC", unquote(branch))
    if decoded != branch:
        parts = decoded.split("/")
        if ("\\" in decoded or decoded.count("/") != branch.count("/") or any(p in ("", ".", "..") for p in parts)
                or ".." in decoded or any(_unshown(ch) for ch in decoded)):
            raise UnsafeRefError(f"branch name decodes (percent-encoding or Unicode compatibility forms) to "
                                 f"{decoded!r}, a path step or separator")


def parse_remote_ref(name: str) -> tuple[str, str]:
    """Split a remote ref ``refs/trajectory/<author-id>/<branch>`` after checking it.

    Args:
        name: the ref name as the remote advertised it (decoded from UTF-8 with ``surrogateescape``).

    Returns:
        ``(author_id, branch)``.

    Raises:
        UnsafeRefError: the name is not a well-formed shared trajectory (see the module docstring).
    """
    if not name.startswith(PUSH_PREFIX):
        raise UnsafeRefError(f"not under {PUSH_PREFIX}")
    if len(name) > len(PUSH_PREFIX) + MAX_AUTHOR_CHARS + 1 + MAX_BRANCH_BYTES:
        raise UnsafeRefError(f"name is {len(name)} characters long")
    author, sep, branch = name[len(PUSH_PREFIX):].partition("/")
    if not sep or not author or not branch:
        raise UnsafeRefError("expected refs/trajectory/<author-id>/<branch>")
    try:
        canonical = sanitize_author_id(author)
    except InvalidArgumentError:
        raise UnsafeRefError(f"author id {author!r} is empty or reserved") from None
    if canonical != author:
        raise UnsafeRefError(f"author id {author!r} is not in canonical form ({canonical!r})")
    check_branch_name(branch)
    return author, branch


def check_ref_format(ref: str) -> bool:
    """True when git accepts ``ref`` as a full ref name (``git check-ref-format``, run without any config)."""
    if not ref or "\0" in ref or ref.startswith("-"):
        return False
    try:
        proc = subprocess.run([git_executable(), "check-ref-format", ref], env=base_env(isolate_config=True),
                              capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def display(name: str, limit: int = 120) -> str:
    """A name from a remote made safe to print: the characters it may not hold but the space escaped as answers
    escape them (:func:`~code_trajectory.core.text.escaped`: ``\\x09``, ``\\u202e``), clipped to ``limit``."""
    text = "".join(escaped(ch) if _unshown(ch) and ch != " " else ch for ch in name)
    return text if len(text) <= limit else text[:limit - 1] + "…"
