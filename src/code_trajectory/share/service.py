"""Reading shared trajectories: which sources exist, which ref a source names, and what ``status`` shows.

A *source* is a history the narratives can read:

* ours: a shadow branch, named by its branch (``main``, ``feature/x``) or as
  ``<our author id>/<branch>``; ref ``refs/heads/shadow/<branch>``;
* pulled: another user's branch, named ``<author-id>/<branch>`` (``alice@example.com/feature-x``);
  ref ``refs/remotes-trajectory/<author-id>/<branch>``, written only by ``code-trajectory pull``.

Everything here is read-only and never contacts a remote.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError, TrajectoryError
from code_trajectory.core.secrets import url_without_credentials
from code_trajectory.git.log import read_log
from code_trajectory.git.shadow import SHADOW_REF_PREFIX, ShadowRepo, branch_of_ref
from code_trajectory.git.snapshots import Resolved, resolve_snapshot
from code_trajectory.share.data import points_section, read_shared, resolve_shared_point
from code_trajectory.share.names import PULL_PREFIX, display, pulled_ref, sanitize_author_id, split_pulled_ref
from code_trajectory.share.settings import ShareSettings
from code_trajectory.share.state import load_state

log = logging.getLogger(__name__)

#: Longest source name accepted from a caller, characters.
MAX_SOURCE_CHARS = 400
#: Sources listed at most by :func:`sources_text`.
MAX_LISTED = 100
#: Commits read back from a source's tip to find its latest intent.
INTENT_LOOKBACK = 20


@dataclass(frozen=True)
class Source:
    """One readable history.

    Attributes:
        name: what to pass as ``source`` (``main``, ``alice@example.com/feature-x``).
        ref: the ref it reads.
        ours: True for our own shadow branches.
        author_id: the author id of a pulled source, None for ours.
        branch: the project branch.
        tip: the commit at the ref.
        time: time of the last commit.
        intent: the latest recorded intent among the last commits, or None.
        subject: first line of the last commit.
        pulled_from: the remote a pulled source came from (from ``share.json``), or None.
    """

    name: str
    ref: str
    ours: bool
    author_id: str | None
    branch: str
    tip: str
    time: datetime | None
    intent: str | None
    subject: str
    pulled_from: str | None = None


def _own_author(root: Path) -> str | None:
    from code_trajectory.share.transport import author_id

    try:
        return author_id(root, ShareSettings.load(root))
    except TrajectoryError:
        return None


def source_names(repo: ShadowRepo) -> list[str]:
    """Names of every source, ours first (branch names), then pulled ones (``author-id/branch``)."""
    ours = [branch_of_ref(ref) for ref in sorted(repo.shadow_refs())]
    pulled = [ref[len(PULL_PREFIX):] for ref in sorted(repo.refs_under(PULL_PREFIX))]
    return ours + pulled


def resolve_source(repo: ShadowRepo, source: str) -> str:
    """The ref to read for ``source`` (see the module docstring for the names).

    A name ``<author-id>/<branch>`` is tried first as a pulled source (the author-id part sanitized as
    when pushing, so ``Alice@Example.com/main`` finds ``alice@example.com/main``), then as our own
    (``<our author id>/<branch>``); any name is then tried as one of our branches. Full ref names under
    ``refs/heads/shadow/`` and ``refs/remotes-trajectory/`` are accepted as they are.

    Args:
        repo: the shadow repository.
        source: the source's name.

    Returns:
        A full ref name (``refs/remotes-trajectory/...`` or ``refs/heads/shadow/...``) that exists.

    Raises:
        InvalidArgumentError: the name is empty, malformed, or names no source; the message lists the sources.
    """
    if not isinstance(source, str) or not source.strip():
        raise InvalidArgumentError("source must name a trajectory, e.g. 'alice@example.com/main'; "
                                   "list_trajectories lists them")
    name = source.strip()
    if len(name) > MAX_SOURCE_CHARS or any(not ch.isprintable() for ch in name):
        raise InvalidArgumentError(f"source {display(name)} is not a trajectory name; list_trajectories lists them")
    candidates: list[str] = []
    if name.startswith((PULL_PREFIX, SHADOW_REF_PREFIX)):
        candidates.append(name)
    author, sep, branch = name.partition("/")
    if sep and author and branch:
        try:
            canonical = sanitize_author_id(author)
        except InvalidArgumentError:
            canonical = None
        if canonical is not None:
            candidates.append(pulled_ref(canonical, branch))
            if canonical == _own_author(repo.root):
                candidates.append(SHADOW_REF_PREFIX + branch)
    candidates.append(SHADOW_REF_PREFIX + name)
    existing = set(repo.shadow_refs()) | set(repo.refs_under(PULL_PREFIX))
    for ref in candidates:
        if ref in existing:  # an exact ref name: never a revision expression such as main~2
            return ref
    names = source_names(repo)
    shown = ", ".join(names[:50]) + (f" and {len(names) - 50} more" if len(names) > 50 else "")
    raise InvalidArgumentError(f"no trajectory named {display(name)}; available: {shown or 'none yet'} "
                               "(`code-trajectory pull` fetches teammates' trajectories)")


def _summary(repo: ShadowRepo, ref: str) -> tuple[datetime | None, str | None, str]:
    records = read_log(repo, [ref], limit=INTENT_LOOKBACK, first_parent=True, with_changes=False)
    shared = read_shared(repo, ref).intent
    if not records:
        return None, shared.text if shared else None, ""
    intent = shared.text if shared else next((r.intent for r in records if r.intent), None)
    return records[0].time, intent, records[0].subject


def source_intent(repo: ShadowRepo, ref: str) -> str | None:
    """The intent of the trajectory at ``ref`` (a ref :func:`resolve_source` returned), for its session summary: the
    current intent its author shared with the last push, else the latest intent recorded on its snapshots; None
    when it has none."""
    shared = read_shared(repo, ref).intent
    try:
        author = split_pulled_ref(ref)[0]
    except ValueError:
        author = "its author"
    if shared is not None:
        return f"{shared.describe()}, {author}'s, shared with the last push"
    records = read_log(repo, [ref], limit=INTENT_LOOKBACK, first_parent=True, with_changes=False)
    found = next((r for r in records if r.intent), None)
    if found is None:
        return None
    return (f"\"{_one_line(found.intent)}\" (the latest on {author}'s snapshots, "
            f"{found.time.strftime('%Y-%m-%d %H:%M')})")


def points_text(repo: ShadowRepo, source: str) -> str | None:
    """``## Named points`` of the pulled trajectory ``source`` (see :func:`read_shared`), or None when it has none.

    Raises:
        InvalidArgumentError: no such source (the message lists them).
    """
    return points_section(read_shared(repo, resolve_source(repo, source)))


def resolve_in_source(repo: ShadowRepo, source: str, text: str) -> Resolved:
    """The snapshot ``text`` names in the trajectory ``source``: one of its named points (exact message, newest
    first), else as :func:`code_trajectory.git.snapshots.resolve_snapshot` resolves it against its newest snapshot
    (``~N``, a commit id, a checkpoint note on its snapshots, a time). A name that would resolve to one of our own
    named points outside that trajectory is refused, never answered with our data.

    Raises:
        InvalidArgumentError: no such source, or the reference names none of its snapshots.
    """
    ref = resolve_source(repo, source)
    tip = repo.resolve(ref)
    if isinstance(text, str):
        named = resolve_shared_point(repo, ref, text)
        if named is not None:
            return Resolved(named, f"named point \"{text.strip()}\" of `{source}`")
    found = resolve_snapshot(repo, text, tip)
    if found.how.startswith("checkpoint") and tip is not None and repo.git.run(
            ["merge-base", "--is-ancestor", found.commit, tip], check=False).returncode != 0:
        names = [p.message for p in read_shared(repo, ref).points[:10]]
        listed = "; ".join(f'"{n}"' for n in names) or "none shared"
        raise InvalidArgumentError(f"{text!r} names none of the snapshots of `{source}` (it is one of your own named "
                                   f"points); its named points: {listed}")
    return found


def list_sources(repo: ShadowRepo) -> list[Source]:
    """Every source: our shadow branches, then pulled ones, each with its last commit's time and latest intent."""
    pulled_from: dict[str, str] = {}
    for remote, entry in load_state(repo.state_dir)["pulled"].items():
        if isinstance(entry, dict) and isinstance(entry.get("refs"), dict):
            pulled_from.update({ref: remote for ref in entry["refs"]})
    sources = []
    for ref, oid in sorted(repo.shadow_refs().items()):
        branch = branch_of_ref(ref)
        sources.append(Source(branch, ref, True, None, branch, oid, *_summary(repo, ref)))
    for ref, oid in sorted(repo.refs_under(PULL_PREFIX).items()):
        try:
            author, branch = split_pulled_ref(ref)
        except ValueError:
            continue
        sources.append(Source(f"{author}/{branch}", ref, False, author, branch, oid, *_summary(repo, ref),
                              pulled_from=pulled_from.get(ref)))
    return sources


def _one_line(text: str | None, limit: int = 120) -> str:
    return display(" ".join((text or "").split()), limit)


def sources_text(repo: ShadowRepo) -> str:
    """:func:`list_sources` as markdown, at most :data:`MAX_LISTED` sources."""
    sources = list_sources(repo)
    if not sources:
        return "No trajectories yet: nothing is recorded, and nothing was pulled (`code-trajectory pull`)."
    lines = [f"# Trajectories ({len(sources)})"]
    for s in sources[:MAX_LISTED]:
        whose = "ours" if s.ours else f"pulled from {s.pulled_from}" if s.pulled_from else "pulled"
        when = s.time.strftime("%Y-%m-%d %H:%M") if s.time else "no commits"
        intent = f"; intent: {_one_line(s.intent)}" if s.intent else ""
        lines.append(f"- `{display(s.name)}` ({whose}): last snapshot {when}{intent}")
    if len(sources) > MAX_LISTED:
        lines.append(f"- ... and {len(sources) - MAX_LISTED} more")
    lines.append("Pass a name as `source` to read that history.")
    return "\n".join(lines)


def share_status_lines(root: Path) -> list[str]:
    """Markdown bullets for ``code-trajectory status``: what is shared where, and what was pulled.

    For each remote pushed to: its URL, the author id, the last push time, and per ref its tip
    against the local shadow branch. Then what was pulled from where. Reads ``share.json`` and the
    shadow repository only; never contacts a remote, never creates anything.

    Returns:
        Lines starting with ``- `` (nested lines with ``  - ``); ``[]`` when the project has no shadow repository.
    """
    repo = ShadowRepo(Path(root))
    try:
        if not repo.exists():
            return []
        try:
            auto = "on" if ShareSettings.load(Path(root)).auto_push else "off"
        except TrajectoryError as exc:
            auto = f"unknown ({exc})"
        data = load_state(repo.state_dir)
        lines: list[str] = []
        pushed = {k: v for k, v in data["pushed"].items() if isinstance(v, dict)}
        if not pushed:
            lines.append(f"- Sharing: nothing pushed yet (auto_push {auto}); `code-trajectory push` shares this "
                         "history through the project's git remote")
        for remote, entry in sorted(pushed.items()):
            url = url_without_credentials(str(entry.get("url", "?")))  # a state file written before: as stored
            lines.append(f"- Shared to `{remote}` ({url}) as `{entry.get('author_id', '?')}`: "
                         f"last push {entry.get('time', 'never')} (auto_push {auto})")
            refs = entry.get("refs")
            for ref, info in sorted(refs.items() if isinstance(refs, dict) else ()):
                if isinstance(info, dict):
                    lines.append(f"  - {ref}: {_compare(repo, info)}")
        for remote, entry in sorted(data["pulled"].items()):
            if isinstance(entry, dict):
                refs = sorted(entry.get("refs") or {})
                names = ", ".join(f"`{display(r[len(PULL_PREFIX):], 80)}`" for r in refs[:10])
                more = f" and {len(refs) - 10} more" if len(refs) > 10 else ""
                lines.append(f"- Pulled from `{remote}` at {entry.get('time', '?')}: {len(refs)} source(s)"
                             + (f": {names}{more}" if refs else ""))
        return lines
    finally:
        repo.close()


def _compare(repo: ShadowRepo, info: dict) -> str:
    """The pushed tip against the local shadow branch, in words."""
    pushed = str(info.get("oid", ""))
    branch = str(info.get("branch", ""))
    scope = " (consolidated only)" if info.get("consolidated") else ""
    local = repo.resolve_ref(SHADOW_REF_PREFIX + branch) if branch else None
    head = f"at {pushed[:12]}{scope}, pushed {info.get('time', '?')}"
    if local is None:
        return f"{head}; the local shadow branch `{branch}` is gone"
    if local == pushed:
        return f"{head}; up to date with the local tip"
    ahead = repo.git.run(["rev-list", "--count", f"{pushed}..{local}"], check=False)
    if ahead.returncode == 0 and repo.git.run(["merge-base", "--is-ancestor", pushed, local],
                                              check=False).returncode == 0:
        return f"{head}; local `{branch}` is {ahead.stdout.decode().strip()} commit(s) ahead"
    return f"{head}; local `{branch}` ({local[:12]}) was rewritten since (consolidation): push again"
