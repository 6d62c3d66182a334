"""Sharing a journal through any git remote: fetch, rebase, push.

``code-trajectory journal sync [--remote URL]`` runs :func:`sync_journal`:

1. ``--remote URL`` sets the journal's ``origin`` (kept in its git config, so
   later syncs need no flag). Any URL git can push to works; a shared remote
   must be a bare repository (``git init --bare``), as for any push.
2. Fetch the branch (``main`` unless HEAD names another) from ``origin``.
3. Integrate, holding the journal's write lock:

   * nothing local, or local is behind: fast-forward;
   * remote is behind: nothing to integrate;
   * diverged: replay each local commit, oldest first, on top of the remote
     branch (a rebase done with plumbing, never touching a work tree). A journal
     commit changes a section file in one of two ways, and each replays
     without a textual merge:

     - entry-only (only the ``<!-- entry count -->`` comment changed): the file
       keeps the remote overview and gets the count recomputed from the new
       history ("resolve by counting actual commits"), so concurrent entries
       never conflict;
     - overview change: applied when the remote did not change that overview
       since the common base (or changed it to the same text). When both sides
       changed it differently, the remote overview is kept, the local entry is
       still replayed (no entry is lost), and the conflict is *reported*: the
       local overview stays reachable under ``refs/journal-conflicts/<path>.md``,
       ``journal_read`` shows it next to the current one, and the model merges
       them (``journal_synthesize_conflict``) and writes the result with
       ``journal_write``, which clears the conflict.

   Authors and author dates of replayed entries are preserved (search and
   listings use the author date, so an entry keeps its age).
4. Push the result (never forced). If someone pushed in between, the push is
   rejected and the loop starts again from the fetch (at most 5 rounds).

Fetch and push run with the user's git configuration (credential helpers,
``url.*.insteadOf``, SSH settings); every other git call is isolated as usual.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from code_trajectory.core.errors import GitError, InvalidArgumentError, JournalError
from code_trajectory.core.secrets import url_without_credentials
from code_trajectory.git.gitcmd import Git, split_z
from code_trajectory.git.object_sizes import new_object_sizes
from code_trajectory.journal.model import _hidden
from code_trajectory.journal.repository import MAX_SECTION_BYTES
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.text import (
    ID_SHA_LEN,
    MAX_ENTRY_CHARS,
    SUFFIX,
    render_section,
    split_message,
    strip_entry_count,
    work_context_of,
)

REMOTE = "origin"
MAX_ROUNDS = 5
#: Largest commit a sync takes, bytes: an entry's message (:data:`~.text.MAX_ENTRY_CHARS` characters, 4 bytes each
#: at most in UTF-8, and a summary) with its headers.
MAX_COMMIT_BYTES = 4 * MAX_ENTRY_CHARS + 64 * 1024
#: Most new commit bytes (the entries' messages, summed) one sync takes: 100 entries of the largest size an entry can
#: be (86.4 MB). An agent's entry is 0.5-5 KB, so this is 17,000 or more real entries, years of a team's journal; a
#: remote holding more new text than that was filled by hand (300 messages of 800 KB, each within
#: :data:`MAX_COMMIT_BYTES`, took the first ``journal search`` 96 s and 1.15 GB and grew its cache to 541 MB). Only
#: messages count: a section file is read one at a time, and each is bounded by its own limit.
MAX_SYNC_BYTES = 100 * MAX_COMMIT_BYTES
_BRANCH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,100}$")


@dataclass
class SyncReport:
    """What a sync did (see :meth:`as_dict`)."""

    remote: str
    url: str
    branch: str
    action: str = "up-to-date"
    received: int = 0
    replayed: int = 0
    pushed: bool = False
    head: str | None = None
    conflicts: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"remote": self.remote, "url": self.url, "branch": self.branch, "action": self.action,
                "received": self.received, "replayed": self.replayed, "pushed": self.pushed,
                "head": self.head[:ID_SHA_LEN] if self.head else None, "conflicts": self.conflicts}

    def text(self) -> str:
        lines = [f"Journal synced with {self.remote} ({self.url}), branch {self.branch}: {self.action}; "
                 f"received {self.received} commit(s), replayed {self.replayed} local commit(s), "
                 f"{'pushed' if self.pushed else 'nothing to push'}."]
        for c in self.conflicts:
            lines.append(
                f"\nOverview conflict in section {c['section']!r}: the remote overview was kept and the local one "
                f"(commit {c['local_commit']}) is pending. Merge them: `code-trajectory journal read "
                f"{shlex.quote(c['section'])}` shows both (an agent's journal_synthesize_conflict can draft the "
                f"merge); `code-trajectory journal write {shlex.quote(c['section'])} --overview-file FILE` with the "
                "merged overview resolves it.")
        return "\n".join(lines)


def sync_journal(store: JournalStore, remote: str | None = None, branch: str | None = None) -> SyncReport:
    """Fetch, rebase and push the journal (see the module docstring).

    Args:
        store: the journal.
        remote: a URL to set as ``origin`` first, or None to use the configured one.
        branch: the branch to share; default the journal's current branch.

    Raises:
        InvalidArgumentError: a bad URL or branch name.
        JournalError: no remote configured, or fetch/push failed for another reason than a race.
    """
    store.ensure()
    git = store.git
    if remote is not None:
        remote = remote.strip()
        if not remote or remote.startswith("-") or any(ch in remote for ch in "\n\r\x00"):
            raise InvalidArgumentError(f"bad remote URL {remote!r}")
        if git.run(["remote", "get-url", REMOTE], check=False).returncode == 0:
            git.run(["remote", "set-url", REMOTE, remote])
        else:
            git.run(["remote", "add", REMOTE, remote])
    proc = git.run(["remote", "get-url", REMOTE], check=False)
    if proc.returncode != 0:
        raise JournalError("the journal has no remote yet: run `code-trajectory journal sync --remote URL` "
                           "(a bare git repository every teammate can push to)")
    url = proc.stdout.decode("utf-8", "replace").strip()
    branch = branch or store.branch()
    if not _BRANCH_RE.match(branch) or ".." in branch or branch.endswith((".lock", "/", ".")):
        raise InvalidArgumentError(f"bad branch name {branch!r}")
    net = Git(store.git_dir, store.root, isolated=False)
    tracking = f"refs/remotes/{REMOTE}/{branch}"
    report = SyncReport(remote=REMOTE, url=url_without_credentials(url), branch=branch)
    conflicts: dict[str, dict] = {}

    with store.lock():
        for _round in range(MAX_ROUNDS):
            remote_head = _fetch(net, store, branch, tracking)
            local = store.head()
            if remote_head is not None and remote_head != local:
                _check_sizes(store, local, remote_head)
            new_head = local
            if remote_head is None:
                report.action = "published" if local else "nothing to share"
            elif local is None or local == remote_head or store._is_ancestor(local, remote_head):
                if local != remote_head:
                    report.received += _count(store, local, remote_head)
                    if not store.cas_head(local, remote_head, "journal sync: fast-forward"):
                        continue
                    store.refresh_worktree(local, remote_head)
                    report.action = "fast-forward"
                new_head = remote_head
            elif store._is_ancestor(remote_head, local):
                report.action = "local ahead"
            else:
                report.received += _count(store, local, remote_head)
                commits = store.git.text(["rev-list", "--reverse", "--topo-order", "--no-merges",
                                          f"{remote_head}..{local}"]).split()
                new_head = remote_head
                for commit in commits:
                    new_head = _replay(store, commit, new_head, conflicts)
                report.replayed += len(commits)
                if not store.cas_head(local, new_head, "journal sync: rebase"):
                    continue
                store.refresh_worktree(local, new_head)
                report.action = "rebased"
            report.head = new_head
            if new_head is None or new_head == remote_head:
                break
            if _push(net, new_head, branch):
                report.pushed = True
                break
        else:
            raise JournalError(f"the remote branch {branch} kept moving during {MAX_ROUNDS} sync rounds; "
                               "try again")
        for section, conflict in conflicts.items():
            store.set_conflict(section, conflict.pop("_commit"))
    report.conflicts = list(conflicts.values())
    return report


def _fetch(net: Git, store: JournalStore, branch: str, tracking: str) -> str | None:
    proc = net.run(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", REMOTE,
                    f"+refs/heads/{branch}:{tracking}"], check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in err.lower() or "could not find remote ref" in err.lower():
            return None  # an empty remote: nothing to fetch yet
        raise JournalError(f"git fetch from the journal's remote failed: {err}")
    out = store.git.run(["rev-parse", "-q", "--verify", tracking + "^{commit}"], check=False)
    return out.stdout.decode().strip() or None if out.returncode == 0 else None


def _check_sizes(store: JournalStore, local: str | None, remote_head: str) -> None:
    """Refuse what the fetch brought when a commit or file is larger than code-trajectory ever writes (an entry's
    message, a section file), or when the new commits sum to more than :data:`MAX_SYNC_BYTES`: anyone who can push
    to the remote can put a 200 MB message there (2 MB packed), and reading it took ``journal search`` past 10 GB of
    memory. Sizes come from ``cat-file --batch-check``; nothing is read.

    Raises:
        JournalError: naming the object and its size (or the total); the journal is left as it was.
    """
    total = commits = 0
    for oid, kind, size in new_object_sizes(store.git, [remote_head], [local] if local else []):
        limit = {"commit": MAX_COMMIT_BYTES, "blob": MAX_SECTION_BYTES}.get(kind)
        if limit is not None and size > limit:
            raise JournalError(f"the journal's remote holds a {kind} ({oid[:ID_SHA_LEN]}) of {size:,} bytes, "
                               f"more than code-trajectory ever writes ({limit:,}); nothing was taken from it. "
                               "Remove it from the remote (or sync with another remote)")
        if kind == "commit":
            total, commits = total + size, commits + 1
    if total > MAX_SYNC_BYTES:
        raise JournalError(f"the journal's remote holds {commits:,} new commits of {total:,} bytes in all, more than "
                           f"one sync takes ({MAX_SYNC_BYTES:,}: {MAX_SYNC_BYTES // MAX_COMMIT_BYTES} entries of the "
                           "largest size); nothing was taken from it. Remove the oversized entries from the remote "
                           "(or sync with another remote)")


def _push(net: Git, head: str, branch: str) -> bool:
    proc = net.run(["push", "--quiet", "--porcelain", REMOTE, f"{head}:refs/heads/{branch}"], check=False)
    if proc.returncode == 0:
        return True
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if any(s in text for s in ("non-fast-forward", "fetch first", "[rejected]", "stale info")):
        return False  # raced with another push: fetch and replay again
    raise JournalError(f"git push to the journal's remote failed: {text.strip()}")


def _count(store: JournalStore, local: str | None, remote_head: str) -> int:
    rng = remote_head if local is None else f"{local}..{remote_head}"
    return int(store.git.text(["rev-list", "--count", "--no-merges", rng]) or 0)


def _replay(store: JournalStore, commit: str, onto: str, conflicts: dict[str, dict]) -> str:
    """Re-create ``commit`` on top of ``onto`` (see the module docstring); returns the new sha."""
    git = store.git
    parents = git.text(["rev-list", "--parents", "-n1", commit]).split()[1:]
    parent = parents[0] if parents else None
    diff_args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--no-commit-id"]
    changed_raw = git.out(diff_args + ([parent, commit] if parent else ["--root", commit]))
    changed = [c.decode("utf-8", "replace") for c in split_z(changed_raw)]
    message = git.out(["show", "-s", "--no-notes", "--format=%B", commit]).decode("utf-8", "replace")
    meta = git.text(["show", "-s", "--format=%an%x00%ae%x00%at", commit]).split("\x00")
    files: dict[str, str | None] = {}
    for file in changed:
        ours_new = store.blob_text(commit, file)
        if not file.endswith(SUFFIX) or _hidden(file) or ours_new is None:
            files[file] = ours_new
            continue
        section = file[: -len(SUFFIX)]
        ours_old = strip_entry_count(store.blob_text(parent, file) or "") if parent else ""
        theirs_raw = store.blob_text(onto, file)
        theirs = strip_entry_count(theirs_raw or "")
        mine = strip_entry_count(ours_new)
        if mine == ours_old:  # entry-only
            overview = theirs if theirs_raw is not None else mine
        elif theirs_raw is None or theirs in (ours_old, mine):
            overview = mine
        else:
            overview = theirs
            text, _ = split_message(message)
            conflicts[section] = {"section": section, "remote_version": theirs, "local_version": mine,
                                  "local_commit": commit[:ID_SHA_LEN], "work_context": work_context_of(text),
                                  "_commit": commit}
        files[file] = render_section(overview, store.count_entries(section, onto) + 1)
    name, email, ts = (meta + ["", "", "0"])[:3]
    env = {**store.author_env(), "GIT_AUTHOR_NAME": name or "unknown", "GIT_AUTHOR_EMAIL": email,
           "GIT_AUTHOR_DATE": f"@{int(ts or 0)} +0000"}
    try:
        return store.commit_files(onto, files, message, env=env)
    except GitError as exc:
        raise JournalError(f"cannot replay journal commit {commit[:ID_SHA_LEN]}: {exc}") from exc
