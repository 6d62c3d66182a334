"""Going back: put files (or the whole project) back as a snapshot had them, safely, so it can be undone.

:func:`restore`:

1. refuses while the project's git is in the middle of a merge, rebase, cherry-pick or revert (unless
   ``force``), and resolves the snapshot reference (:mod:`code_trajectory.git.snapshots`);
2. takes the **safety snapshot**: the state right now, recorded and named ``before restore ...``, so that
   restoring it undoes the restore exactly;
3. checks the plan before writing anything (:mod:`code_trajectory.restore.plan`): a snapshot holding a path git
   would refuse (``.git``, ``.trajectory`` in any spelling, a gitlink) is refused; a file whose content was not
   recorded (over the size cap) is left as it is and named in the answer; a name too long, a directory in the
   way, a directory not writable or a full disk stop the restore before its first write;
4. writes what differs, atomically (:mod:`code_trajectory.restore.apply`); a whole-project restore also removes
   recorded files created after the snapshot, never anything unrecorded (``.git``, ignored files, secrets);
   a save that lands after the safety snapshot is recorded before its file is overwritten, so it is not lost.
   All or nothing: when a write still fails, what was written or removed is put back as the safety snapshot has
   it, and the error names those files and the snapshot; a journal (:mod:`code_trajectory.git.worktemp`) lets
   the next open clear the temporary files of a restore that was killed;
5. records the result as one ``[RESTORE]`` snapshot naming its source, holding the recorder's write lock
   throughout, so the watcher does not see a burst of ordinary saves.

A dry run writes nothing and answers with the diff that would be applied.
"""

from __future__ import annotations

import bisect
import fnmatch
import os
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError, ProjectError, StorageError
from code_trajectory.git import messages, trees, worktemp
from code_trajectory.git.pathcheck import unsafe_reason
from code_trajectory.git.points import AUTO_RESTORE, name_point
from code_trajectory.git.snapshots import resolve_snapshot
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.project import confine
from code_trajectory.recording.session import ProjectSession
from code_trajectory.restore.apply import (
    UNREADABLE,
    PartialWriteError,
    current_oid,
    put_back,
    remove_entry,
    write_entries,
)
from code_trajectory.restore.plan import blob_sizes, check_writable, not_recorded, refuse_unsafe
from code_trajectory.restore.result import RestoreResult, describe, failure_message, planned_diff

#: Files written from which the stat cache is loaded to skip re-reading unchanged files before overwriting them
#: (loading it costs about what hashing 200 small files does).
VOUCH_FROM_FILES = 200
_GLOB = set("*?[")
#: Rounds of recording a file saved while the restore ran, then writing it, before it is left as the user's (a file
#: saved again during each round is still being written by someone).
LATE_ROUNDS = 3


def git_in_progress(session: ProjectSession) -> str | None:
    """The operation the project's git is in the middle of (``a merge``, ``a rebase``...), or None."""
    git_dir = session.recorder.project.git_dir
    if git_dir is None:
        return None
    for name, what in (("MERGE_HEAD", "a merge"), ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or am"),
                       ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert")):
        if (git_dir / name).exists():
            return what
    return None


def confined(root: Path, patterns: list[str] | None) -> list[str] | None:
    """``patterns`` (files, directories or globs relative to ``root``) checked once: each file or directory made a
    ``/``-separated path relative to the root (:func:`~code_trajectory.project.confine`, once per name: it resolves
    symlinks, the cost of a restore naming 20,000 files), each glob left as it is; None or empty gives None (the
    whole project).

    Raises:
        InvalidArgumentError, PathOutsideProjectError: not a list of strings, a glob with ``..``, a leading ``/`` or
            a NUL byte, or a path leaving the project.
    """
    if not patterns:
        return None
    if isinstance(patterns, str) or not all(isinstance(p, str) for p in patterns):
        raise InvalidArgumentError("paths must be a list of files, directories or globs relative to the project")
    checked = []
    for pattern in patterns:
        if _GLOB & set(pattern):
            if pattern.startswith("/") or ".." in pattern.split("/") or "\0" in pattern:
                raise InvalidArgumentError(f"glob {pattern!r} must be relative to the project, without '..'")
            checked.append(pattern)
        else:
            checked.append(confine(root, pattern))
    return checked


#: Recorded paths up to which a restore naming a missing file says the closest ones (``difflib`` over every path:
#: about a second at 100,000); past it only the files of the same name elsewhere are said.
SIMILAR_FROM_AT_MOST = 20_000


def _did_you_mean(pattern: str, ordered: list[str]) -> str:
    """``"; did you mean `a.py`, `b/a.py`?"``: the recorded paths ``pattern`` (no glob) probably meant, as ``file``
    says them (:func:`~code_trajectory.history.narrative.similar_paths`), or ``""``."""
    if _GLOB & set(pattern):
        return ""
    from code_trajectory.history.narrative import similar_paths

    name = pattern.rpartition("/")[2]
    close = (similar_paths(pattern, ordered) if len(ordered) <= SIMILAR_FROM_AT_MOST
             else [c for c in ordered if c.rpartition("/")[2] == name][:5])
    return f"; did you mean {', '.join(f'`{messages.display_path(c)}`' for c in close)}?" if close else ""


def select(patterns: list[str] | None, candidates: set[str], *, strict: bool = True) -> set[str]:
    """The recorded paths that ``patterns`` (as :func:`confined` gives them) name.

    A file or directory is looked up in the sorted candidates (a restore naming 20,000 files compared each with
    every candidate before: minutes); ``strict=False`` passes over a pattern that names none of them.

    Raises:
        InvalidArgumentError: (``strict``) a pattern names nothing recorded.
    """
    if not patterns:
        return set(candidates)
    ordered = sorted(candidates)
    chosen: set[str] = set()
    for pattern in patterns:
        if _GLOB & set(pattern):
            found = {c for c in candidates if fnmatch.fnmatchcase(c, pattern)}
        else:
            under = pattern + "/"
            found = {pattern} & candidates
            at = bisect.bisect_left(ordered, under)
            while at < len(ordered) and ordered[at].startswith(under):
                found.add(ordered[at])
                at += 1
        if not found and strict:
            raise InvalidArgumentError(f"{pattern!r} names no file recorded in the snapshot or now"
                                       + _did_you_mean(pattern, ordered))
        chosen |= found
    return chosen


def _named_paths(patterns: list[str] | None) -> list[str] | None:
    """The files and directories ``patterns`` (as :func:`confined` gives them) name, or None for the whole project
    or when a pattern is a glob (whose matches need a scan of the work tree)."""
    if not patterns or any(_GLOB & set(p) for p in patterns):
        return None
    return patterns


def restore(target: ProjectSession | Path, snapshot: str, paths: list[str] | None = None, *,
            dry_run: bool = False, force: bool = False) -> RestoreResult:
    """Restore ``paths`` (or the whole project) from ``snapshot``; see the module docstring.

    Args:
        target: the project's open session (the server's, so its watcher is coordinated), or its root.
        snapshot: a snapshot reference (commit id, checkpoint message, ``~N``, a time).
        paths: files, directories or globs relative to the project root; None or empty for everything recorded.
        dry_run: only say what would change.
        force: restore even while the project's git is in the middle of a merge, rebase or cherry-pick.

    Raises:
        InvalidArgumentError: a bad reference or path (nothing is written).
        ProjectError: the project's git is mid-operation and ``force`` is not set.
        StorageError: a file could not be written (the safety snapshot still holds the state before).
    """
    if isinstance(target, ProjectSession):
        return _restore(target, snapshot, paths, dry_run=dry_run, force=force)
    from code_trajectory.core.config import TrajectorySettings

    root = Path(target)
    session = ProjectSession(root, TrajectorySettings.load(root), create=False)
    try:
        return _restore(session, snapshot, paths, dry_run=dry_run, force=force)
    finally:
        session.close()


def _restore(session: ProjectSession, snapshot: str, paths: list[str] | None, *, dry_run: bool,
             force: bool) -> RestoreResult:
    session.check_alive()
    if not isinstance(dry_run, bool) or not isinstance(force, bool):
        raise InvalidArgumentError("dry_run and force must be true or false")
    busy = git_in_progress(session)
    if busy and not force:
        raise ProjectError(f"the project's git is in the middle of {busy}: finish or abort it first (restoring "
                           "now would mix with its changes), or pass force=true")
    recorder, repo, branch = session.recorder, session.recorder.repo, session.branch
    tip = recorder.latest_commit(branch)
    resolved = resolve_snapshot(repo, snapshot, tip)
    result = RestoreResult(resolved.commit, resolved.how, dry_run=dry_run, scope=list(paths or []))
    if tip is not None and repo.git.run(["merge-base", "--is-ancestor", resolved.commit, tip],
                                        check=False).returncode != 0:
        holders = repo.git.text(["for-each-ref", "--format=%(refname:strip=3)", "--contains", resolved.commit,
                                 "refs/heads/shadow/"]).split()
        result.other_branch = holders[0] if holders else "(no branch: a squashed or dropped snapshot)"
    named = confined(session.root, paths)  # each name confined once: it resolves symlinks
    scope = _named_paths(named)  # None: the whole project, or globs
    target_entries = trees.list_files(repo, repo.commit_tree_oid(resolved.commit), scope)
    matching = {p: target_entries[p] for p in select(named, set(target_entries), strict=False)}
    if tip is not None and any(unsafe_reason(p, e.mode) for p, e in matching.items()):
        # a name git checks out here (a backslash on Linux) that the restore leaves as it is does not refuse it:
        # the project's own `back\slash` made every whole-project restore fail; one it must write still does (below)
        recorded = trees.list_files(repo, repo.commit_tree_oid(tip), scope)
        matching = {p: e for p, e in matching.items() if recorded.get(p) != e or unsafe_reason(p, e.mode) is None}
    refuse_unsafe(matching, resolved.commit)
    current_tree: str | None  # None: nothing recorded yet, every target file is new
    with recorder.writing():
        if dry_run:
            current_tree = recorder.work_tree_tree()
        else:
            note = f"safety snapshot before restoring {resolved.commit[:12]}"
            if scope is None:  # the whole project, or globs: the work tree is scanned
                safety = recorder.checkpoint(note, kind=messages.KIND_SNAPSHOT)
            else:  # files and directories named: only they can be overwritten, so only they are recorded first
                safety = recorder.record_paths(scope, kind=messages.KIND_SNAPSHOT, note=note)
            result.safety_snapshot = safety.commit if safety else recorder.latest_commit(branch)
            current_tree = repo.commit_tree_oid(result.safety_snapshot) if result.safety_snapshot else None
        current = trees.list_files(repo, current_tree, scope)
        chosen = select(named, set(target_entries) | set(current))
        writes = sorted(p for p in chosen if p in target_entries and target_entries[p] != current.get(p))
        removes = sorted(p for p in chosen if p not in target_entries and p in current
                         and unsafe_reason(p, current[p].mode) is None)  # a hand-built history: never touched
        # what is there now was recorded as a size note only when it was over the cap: only those blobs are read
        cap = session.settings.max_file_bytes
        big_now = {p: current[p] for p in writes + removes if p in current and _size_on_disk(session.root, p) > cap}
        sizes = blob_sizes(repo, {target_entries[p].oid for p in writes} | {e.oid for e in big_now.values()})
        kept = not_recorded(repo, big_now, sizes)
        if dry_run:  # a restore tells the snapshot's notes from the blobs it reads to write them
            kept |= not_recorded(repo, {p: target_entries[p] for p in writes}, sizes)
        writes, removes = [p for p in writes if p not in kept], [p for p in removes if p not in kept]
        unsaved = _unrecorded_now(session.root, writes, removes, current, target_entries)
        writes, removes = [p for p in writes if p not in unsaved], [p for p in removes if p not in unsaved]
        result.written, result.removed, result.not_recorded = writes, removes, sorted(kept)
        result.kept_unrecorded = sorted(unsaved)
        refuse_unsafe({p: target_entries[p] for p in writes}, resolved.commit)  # changed since the tip, after all
        check_writable(session.root, {p: target_entries[p] for p in writes}, removes, sizes)
        if dry_run:  # the diff is the answer of a dry run; a restore's answer lists the files
            result.diff = planned_diff(repo, current_tree, repo.commit_tree_oid(resolved.commit),
                                       set(writes) | set(removes), session.settings.token_budget)
        if not dry_run and (writes or removes):
            if result.safety_snapshot:  # named only when the restore changes something: a no-op names nothing
                name_point(repo, result.safety_snapshot, f"before restore of {resolved.commit[:12]}"
                           f"{messages.how_named(resolved.commit, resolved.how)}", branch, automatic=AUTO_RESTORE)
            _apply(session, result, target_entries, current)
            written: dict[str, TreeEntry | None] = {rel: target_entries[rel] for rel in result.written}
            written.update((rel, None) for rel in result.removed)
            done = recorder.record_entries(written, kind=messages.KIND_RESTORE,
                                           restored_from=(resolved.commit, resolved.how))
            result.commit = done.commit if done else None
    result.text = describe(result, session.settings.token_budget)
    return result


def _size_on_disk(root: Path, rel: str) -> int:
    """The size of the file at ``rel`` (not following a link), -1 when there is none."""
    try:
        return os.lstat(root / rel).st_size
    except OSError:
        return -1


def _apply(session: ProjectSession, result: RestoreResult, target: dict[str, TreeEntry],
           current: dict[str, TreeEntry]) -> None:
    """Remove ``result.removed`` and write ``result.written`` as ``target`` has them, all or nothing: on a failure
    what was done is put back as ``current`` (the safety snapshot's entries) has it.

    Raises:
        StorageError: a write failed; the message names the files put back and the safety snapshot.
    """
    recorder, repo, root = session.recorder, session.recorder.repo, session.root
    writes, removes = result.written, result.removed
    before = dict(current)
    try:
        journal = worktemp.begin(repo.git_dir, {p.rpartition("/")[0] for p in writes + removes},
                                 result.safety_snapshot, result.source)
    except OSError as exc:
        raise StorageError(f"cannot start the restore: its journal cannot be written in {repo.git_dir}: {exc}. "
                           "Nothing was written") from exc
    done: list[str] = []
    unrecorded: list[str] = []
    notes: list[str] = []
    present: list[str] = []  # in no snapshot but holding the target's content already: not written
    try:
        for rel in removes:
            now = current_oid(root, rel)
            if now not in (current[rel].oid, None):  # a save landed after the safety snapshot: keep it first
                secured = _secure(session, [rel]) if now != UNREADABLE else {}
                if rel not in secured or current_oid(root, rel) != secured[rel].oid:  # or saved again: left alone
                    unrecorded.append(rel)
                    continue
                result.saved_first.append(rel)
                before.update(secured)
            remove_entry(root, rel)
            done.append(rel)
        late = write_entries(repo, root, [(rel, target[rel]) for rel in writes], current, journal,
                             vouch=recorder.unchanged_checker() if len(writes) > VOUCH_FROM_FILES else None,
                             notes=notes, unrecorded=unrecorded, present=present)
        if notes:  # the snapshot's content was not recorded: the file is left as it is
            result.not_recorded = sorted(set(result.not_recorded) | set(notes))
        not_done = {*late, *notes, *unrecorded, *present}
        done.extend(p for p in writes if p not in not_done)
        for _round in range(LATE_ROUNDS):  # saves that landed after the safety snapshot: recorded, then overwritten
            if not late:
                break
            secured = _secure(session, late)
            result.saved_first.extend(p for p in late if p in secured and p not in result.saved_first)
            before.update(secured)
            again = write_entries(repo, root, [(rel, target[rel]) for rel in late], secured, journal,
                                  unrecorded=unrecorded, present=present)
            not_done = {*again, *unrecorded, *present}
            done.extend(p for p in late if p not in not_done)
            late = again
        unrecorded += late  # still being saved: left as the user's
    except Exception as exc:
        failed = exc.failed if isinstance(exc, PartialWriteError) else None
        if isinstance(exc, PartialWriteError):
            already = set(done)
            done.extend(p for p in exc.done if p not in already)
        not_back = put_back(repo, root, done[::-1], before, journal)  # last first: a directory replaced by a file
        raise StorageError(failure_message(result, exc, failed, done, not_back)) from exc
    finally:
        worktemp.end(repo.git_dir, journal)
    left = {*notes, *unrecorded}
    result.written = [p for p in writes if p not in left and p not in present]
    result.removed = [p for p in removes if p not in left]
    result.saved_first = [p for p in result.saved_first if p not in left]
    result.kept_unrecorded = sorted(set(result.kept_unrecorded) | set(unrecorded))


def _secure(session: ProjectSession, paths: list[str]) -> dict[str, TreeEntry]:
    """Record ``paths`` (saved after the safety snapshot) and return their recorded entries: a path left out was
    not recorded (ignored or a secret now, unreadable), so what it holds is in no snapshot."""
    session.recorder.record_paths(paths)
    return _recorded(session, paths)


def _unrecorded_now(root: Path, writes: list[str], removes: list[str], current: dict[str, TreeEntry],
                    target: dict[str, TreeEntry]) -> set[str]:
    """Of ``writes`` and ``removes`` (paths relative to ``root``), those whose file now is in no snapshot: one the
    safety snapshot (``current``) does not hold but that is there with other content than the restore's
    (``target``), and one that is there but cannot be read (the safety snapshot kept its last recorded content)."""
    found = set()
    for rel in [*writes, *removes]:
        path = root / rel
        if rel not in current:
            if current_oid(root, rel) not in (None, target[rel].oid if rel in target else None):
                found.add(rel)
        elif not path.is_symlink() and path.is_file() and not os.access(path, os.R_OK):
            found.add(rel)
    return found


def _recorded(session: ProjectSession, paths: list[str]) -> dict[str, TreeEntry]:
    """The entries of ``paths`` in the branch's latest snapshot."""
    tip = session.recorder.latest_commit(session.branch)
    return trees.list_files(session.recorder.repo, session.recorder.repo.commit_tree_oid(tip), paths) if tip else {}


