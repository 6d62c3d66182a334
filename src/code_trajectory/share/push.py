"""``code-trajectory push``: the shadow history of this project, pushed to the project's git remote.

Each shadow branch ``refs/heads/shadow/<branch>`` goes to ``refs/trajectory/<author-id>/<branch>`` on
the remote, its data (named points, intent, test runs: :mod:`code_trajectory.share.data`) to
``refs/trajectory-data/<author-id>/<branch>``, and nothing else: the refspecs are built here, one per
ref, with an explicit destination, so no push can write under ``refs/heads``, ``refs/tags`` or any other author's
namespace. Only recorded commits go (secret files were never recorded: see the recorder's deny list; a token
pasted into an ordinary file stops the push: :mod:`code_trajectory.share.secret_scan`),
and with ``--consolidated`` only up to the last ``[CONSOLIDATE]`` commit of each branch, so the
snapshots since (every keystroke) stay local.

The steps: read the remote's refs (``git ls-remote``); decide per branch (new, fast-forward,
rewrite of our own earlier push after a consolidation, up to date, or refused because the remote
holds history this repository never had: another machine pushing under the same author id);
estimate what would be sent (``git rev-list --objects --disk-usage``, excluding what the remote
advertises and we have); then one ``git push --porcelain`` with a ``--force-with-lease`` per ref,
so a ref that moved since it was read is not overwritten. The push never changes a local ref: a
refused push loses nothing. How the network call finds credentials and why no hook runs:
:mod:`code_trajectory.share.transport`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from code_trajectory.core.errors import ConfigError, GitError, ProjectError, SecretInPushError, TrajectoryError
from code_trajectory.core.text import format_size
from code_trajectory.git.log import read_log
from code_trajectory.git.project import DETACHED_BRANCH, NO_GIT_BRANCH
from code_trajectory.git.shadow import ShadowRepo, branch_of_ref
from code_trajectory.recording.hooks import Consolidated
from code_trajectory.share import data as share_data
from code_trajectory.share import state as share_state
from code_trajectory.share.names import PUSH_PREFIX, UnsafeRefError, check_branch_name, check_ref_format, push_ref
from code_trajectory.share.secret_scan import ScanResult, findings_text, refusal, scan_outgoing
from code_trajectory.share.settings import ShareSettings
from code_trajectory.share.transport import PUSH_CONFIG, RemoteTarget, author_id, ls_remote, resolve_remote, run_network

log = logging.getLogger(__name__)

#: Candidates checked when looking for the last consolidation of a branch.
MAX_CONSOLIDATION_CANDIDATES = 50


@dataclass
class RefPush:
    """One branch's push.

    Attributes:
        branch: the project branch.
        local_ref: its shadow ref.
        remote_ref: ``refs/trajectory/<author-id>/<branch>``.
        new: the commit pushed (the tip, or the last consolidation with ``--consolidated``).
        old: what the remote held before, or None.
        status: ``new``, ``fast-forward``, ``rewrite`` (our own earlier push replaced after a consolidation),
            ``up to date``, ``refused`` (the remote holds history we never had), then ``rejected`` when the
            remote refused it.
        commits: commits the remote lacks (an estimate).
        reason: why it was refused or rejected.
    """

    branch: str
    local_ref: str
    remote_ref: str
    new: str
    old: str | None = None
    status: str = "new"
    commits: int = 0
    reason: str | None = None

    @property
    def sends(self) -> bool:
        """True when this ref is written on the remote."""
        return self.status in ("new", "fast-forward", "rewrite")


@dataclass
class PushReport:
    """What a push did or, for a dry run, would do (see :meth:`text`)."""

    target: RemoteTarget
    author_id: str
    dry_run: bool
    consolidated: bool
    refs: list[RefPush] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    objects: int = 0
    bytes: int = 0
    last_push: str | None = None
    #: The data refs beside the branches (``refs/trajectory-data/...``: named points, intent, test runs; see
    #: :mod:`code_trajectory.share.data`); ``branch`` is the branch they describe, ``reason`` what they hold.
    data: list[RefPush] = field(default_factory=list)
    #: The blobs to send, searched for secrets (:mod:`code_trajectory.share.secret_scan`).
    scan: ScanResult = field(default_factory=ScanResult)

    @property
    def sent(self) -> list[RefPush]:
        """Refs written (or, in a dry run, that would be written)."""
        return [r for r in self.refs if r.sends]

    @property
    def data_sent(self) -> list[RefPush]:
        """Data refs written (or, in a dry run, that would be written)."""
        return [d for d in self.data if d.sends]

    @property
    def noop(self) -> bool:
        """True when nothing needs to go: every shared branch and its data is already on the remote."""
        return not self.sent and not self.data_sent and not any(
            r.status in ("refused", "rejected") for r in self.refs + self.data)

    def text(self) -> str:
        """The report as markdown."""
        scope = "up to the last consolidation of each branch" if self.consolidated else "every snapshot"
        where = f"{self.target.describe()} as `{self.author_id}`"
        if self.dry_run:
            head = f"Dry run, nothing was written: would push to {where} ({scope}):"
        elif self.noop:
            since = f" (last push {self.last_push})" if self.last_push else ""
            head = (f"Nothing to push: {self.target.describe()} already has every shared branch of "
                    f"`{self.author_id}` at its local tip{since}." if self.refs
                    else f"Nothing to push to {where}: no shadow branch can be shared.")
        else:
            head = f"Pushed to {where} ({scope}):"
        lines = [head]
        for r in self.refs:
            detail = f"{r.status}, {r.commits} commit(s) to send, tip {r.new[:12]}" if r.sends else r.status
            if r.reason:
                detail += f": {r.reason}"
            lines.append(f"- `{r.branch}` → {r.remote_ref}: {detail}")
        for d in self.data:
            lines.append(f"- data of `{d.branch}` ({d.reason}) → {d.remote_ref}: {d.status}")
        lines += [f"- Not shared: {note}" for note in self.skipped]
        if self.scan.findings:
            lines.append(f"{'Would be refused' if self.dry_run else 'Sent with --allow-secrets'}: what holds a "
                         "secret:")
            lines += findings_text(self.scan)
        if self.sent or self.data_sent:
            verb = "Would send" if self.dry_run else "Sent"
            lines.append(f"{verb} about {self.objects} object(s) ({format_size(self.bytes)} on disk). Only "
                         f"refs/trajectory/{self.author_id}/* and refs/trajectory-data/{self.author_id}/* "
                         f"{'would be' if self.dry_run else 'were'} written on the remote; never refs/heads or "
                         "refs/tags.")
        return "\n".join(lines)


def require_shadow_repo(repo: ShadowRepo) -> None:
    """Raise :class:`ProjectError` when the project has no shadow repository yet (nothing to share)."""
    if not repo.exists():
        raise ProjectError(f"nothing is recorded for {repo.root} yet (no .trajectory/): start recording with "
                           f"`code-trajectory watch {repo.root}` or `code-trajectory checkpoint`")


def last_consolidation(repo: ShadowRepo, ref: str) -> str | None:
    """The newest ``[CONSOLIDATE]`` commit on the first-parent history of ``ref``, or None."""
    out = repo.git.text(["rev-list", "--first-parent", f"-n{MAX_CONSOLIDATION_CANDIDATES}", "-E",
                         "--grep=^Trajectory-Kind: consolidate$", r"--grep=^\[CONSOLIDATE\]", "--end-of-options",
                         ref, "--"])
    for oid in out.split():
        records = read_log(repo, [oid], limit=1, with_changes=False)
        if records and records[0].is_consolidation:
            return oid
    return None


def plan_push(repo: ShadowRepo, author: str, consolidated: bool) -> tuple[list[RefPush], list[str]]:
    """The refs a push would write, one per shareable shadow branch, and notes on the branches left out."""
    refs: list[RefPush] = []
    skipped: list[str] = []
    for local_ref, tip in sorted(repo.shadow_refs().items()):
        branch = branch_of_ref(local_ref)
        if branch in (DETACHED_BRANCH, NO_GIT_BRANCH) or branch.startswith("-"):
            skipped.append(f"shadow branch `{branch}` (snapshots without a project branch)")
            continue
        try:
            check_branch_name(branch)
        except UnsafeRefError as exc:
            skipped.append(f"shadow branch `{branch}` ({exc}; others could not pull it)")
            continue
        remote_ref = push_ref(author, branch)
        if not check_ref_format(remote_ref):
            skipped.append(f"shadow branch `{branch}` ({remote_ref} is not a valid ref name)")
            continue
        new = tip
        if consolidated:
            found = last_consolidation(repo, local_ref)
            if found is None:
                skipped.append(f"shadow branch `{branch}` (no [CONSOLIDATE] commit yet; run `code-trajectory "
                               "consolidate` first, or push without --consolidated)")
                continue
            new = found
        refs.append(RefPush(branch, local_ref, remote_ref, new))
    return refs, skipped


def local_commits(repo: ShadowRepo, oids: list[str]) -> set[str]:
    """The ids among ``oids`` that name commits present in the shadow repository."""
    unique = sorted(set(oids))
    if not unique:
        return set()
    out = repo.git.out(["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                       input="".join(f"{oid}\n" for oid in unique).encode())
    found = set()
    for line in out.decode("ascii", "replace").splitlines():
        oid, _, kind = line.partition(" ")
        if kind == "commit":
            found.add(oid)
    return found


def _rev_list(repo: ShadowRepo, options: list[str], wants: list[str], haves: set[str]) -> int:
    feed = "".join(f"{oid}\n" for oid in wants) + "".join(f"^{oid}\n" for oid in sorted(haves))
    text = repo.git.text(["rev-list", *options, "--stdin"], input=feed.encode())
    return int(text or 0)


def classify(repo: ShadowRepo, refs: list[RefPush], advertised: dict[str, str], haves: set[str]) -> None:
    """Set each ref's ``old``, ``status``, ``commits`` and ``reason`` against what the remote advertises (in place)."""
    for r in refs:
        r.old = advertised.get(r.remote_ref)
        if r.old == r.new:
            r.status = "up to date"
        elif r.old is None:
            r.status = "new"
        elif r.old in haves:
            r.status = "fast-forward" if _is_ancestor(repo, r.old, r.new) else "rewrite"
        else:
            r.status = "refused"
            r.reason = (f"the remote's {r.remote_ref} is at {r.old[:12]}, history this shadow repository never had "
                        "(another machine pushing under the same author id?); set a distinct `author_id` under "
                        "[share] in .trajectory/config.toml on one of them")
        if r.sends:
            r.commits = _rev_list(repo, ["--count"], [r.new], haves)


def push(root: Path, *, remote: str | None = None, dry_run: bool = False, consolidated: bool | None = None,
         interactive: bool = False, settings: ShareSettings | None = None, allow_secrets: bool = False) -> PushReport:
    """Push the project's shadow branches to ``refs/trajectory/<author-id>/<branch>`` on its git remote.

    Args:
        root: the project root.
        remote: the remote's name (default: see :func:`~code_trajectory.share.transport.resolve_remote`).
        dry_run: only report what would go (refs, object count and size); nothing is written anywhere.
        consolidated: push only up to the last consolidation of each branch (None: ``[share] consolidated``).
        interactive: git may prompt for a password on the terminal.
        settings: sharing settings (read from the config files when None).
        allow_secrets: send snapshots holding a secret (see :mod:`code_trajectory.share.secret_scan`) anyway.

    Returns:
        The report; :meth:`PushReport.noop` when the remote already had everything.

    Raises:
        ProjectError: nothing is recorded yet.
        SecretInPushError: an object to send (a file, a name, a message) or a ref's name holds a token-format secret
            (and not ``allow_secrets``): nothing was sent.
        InvalidArgumentError: not a git project, no such remote, or no author id.
        GitError: the remote cannot be reached, refused a ref, or holds foreign history under our refs; the
            message says which and that nothing local changed.
    """
    root = Path(root)
    settings = settings or ShareSettings.load(root)
    consolidated = settings.consolidated if consolidated is None else consolidated
    with ShadowRepo(root) as repo:
        require_shadow_repo(repo)
        target = resolve_remote(root, remote, settings)
        author = author_id(root, settings)
        with share_state.share_lock(repo.state_dir):
            refs, skipped = plan_push(repo, author, consolidated)
            data = share_state.load_state(repo.state_dir)
            previous = data["pushed"].get(target.name, {})
            report = PushReport(target, author, dry_run, consolidated, refs, skipped,
                                last_push=previous.get("time"))
            if not refs:
                return report
            advertised = ls_remote(repo.git, target, interactive=interactive)
            haves = local_commits(repo, list(advertised.values()))
            classify(repo, refs, advertised, haves)
            report.data = plan_data(repo, refs, advertised, consolidated)
            sent = report.sent + report.data_sent
            wants = [r.new for r in sent]
            if wants:
                report.objects = _rev_list(repo, ["--objects", "--count"], wants, haves)
                report.bytes = _rev_list(repo, ["--objects", "--disk-usage"], wants, haves)
                report.scan = scan_outgoing(repo, wants, haves, [r.remote_ref for r in sent if r.old is None],
                                            data=[d.new for d in report.data_sent])
            if dry_run:
                return report
            if report.scan.findings and not allow_secrets:
                raise SecretInPushError(refusal(report.scan, report.target.describe(),
                                                consolidated_helps=_consolidated_helps(repo, report)))
            failure = _send(repo, target, report, interactive) if report.sent or report.data_sent else None
            _record(repo, data, target, report)
            refused = [r for r in refs + report.data if r.status in ("refused", "rejected")]
            if failure is not None or refused:
                raise GitError(_failure_message(report, failure), args_=("push",),
                               stderr=failure or "")
            return report


def _consolidated_helps(repo: ShadowRepo, report: PushReport) -> bool:
    """Whether ``push --consolidated`` would leave out every snapshot of ``report.scan``: each branch sent has a
    consolidation, and no such snapshot is one of them or before one (a snapshot of the data refs counts as sent)."""
    if report.consolidated or any(f.where == "ref" for f in report.scan.findings):
        return False
    tips = [found for r in report.sent if (found := last_consolidation(repo, r.local_ref)) is not None]
    if len(tips) < len(report.sent):
        return False
    snapshots = {s for f in report.scan.findings for s in f.snapshots}
    if not snapshots or report.scan.more:
        return False
    for snapshot in snapshots:
        if not any(_is_ancestor(repo, snapshot, r.new) for r in report.sent):
            return False  # a data commit: its data goes with --consolidated too
        if any(_is_ancestor(repo, snapshot, tip) for tip in tips):
            return False
    return True


def _is_ancestor(repo: ShadowRepo, older: str, newer: str) -> bool:
    return repo.git.run(["merge-base", "--is-ancestor", older, newer], check=False).returncode == 0


def plan_data(repo: ShadowRepo, refs: list[RefPush], advertised: dict[str, str], consolidated: bool) -> list[RefPush]:
    """The data refs to push beside ``refs`` (classified): one per branch the remote has or gets, written now
    (:func:`code_trajectory.share.data.build_data_commit`); the current intent goes with the project's current
    branch, unless ``consolidated`` (the work since the last consolidation stays local)."""
    from code_trajectory.git.project import ProjectRepo

    project = ProjectRepo.discover(repo.root)
    current = project.current_branch() if project.is_git else None
    planned = []
    for r in refs:
        if not (r.sends or r.status == "up to date"):
            continue
        author = r.remote_ref[len(PUSH_PREFIX):].partition("/")[0]
        remote_ref = share_data.data_push_ref(author, r.branch)
        new, counts = share_data.build_data_commit(repo, r.branch, r.new,
                                                   intent=not consolidated and r.branch == current)
        old = advertised.get(remote_ref)
        status = "up to date" if old == new else "new" if old is None else "rewrite"
        held = f"{counts['points']} named point(s), {counts['runs']} test run(s)" + (", intent" if counts["intent"]
                                                                                      else "")
        planned.append(RefPush(r.branch, r.local_ref, remote_ref, new, old, status, reason=held))
    return planned


def _send(repo: ShadowRepo, target: RemoteTarget, report: PushReport, interactive: bool) -> str | None:
    """Run the one ``git push``; mark rejected refs; return git's error text when it failed, else None."""
    args = ["push", "--porcelain", "--no-verify", "--no-follow-tags", "--no-signed", "--recurse-submodules=no"]
    sent = report.sent + report.data_sent
    args += [f"--force-with-lease={r.remote_ref}:{r.old or ''}" for r in sent]
    args += [target.url] + [f"{r.new}:{r.remote_ref}" for r in sent]
    proc = run_network(repo.git, target, PUSH_CONFIG, args, interactive=interactive)
    results: dict[str, tuple[str, str]] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and len(parts[0]) == 1:
            results[parts[1].rpartition(":")[2]] = (parts[0], parts[2])
    for r in sent:
        flag, summary = results.get(r.remote_ref, ("!", "no answer from the remote"))
        if flag == "!":
            r.status, r.reason = "rejected", summary
    if proc.returncode == 0 and not any(r.status == "rejected" for r in sent):
        return None
    err = proc.stderr.decode("utf-8", "replace").strip()
    return err or f"git push exited with status {proc.returncode}"


def _record(repo: ShadowRepo, data: dict, target: RemoteTarget, report: PushReport) -> None:
    """Remember the refs now on the remote (pushed, or found up to date) in ``share.json``."""
    done = [r for r in report.refs if r.sends or r.status == "up to date"]
    if not done:
        return
    entry = data["pushed"].get(target.name)
    entry = entry if isinstance(entry, dict) else {}
    refs = entry.get("refs")
    if not isinstance(refs, dict):
        refs = {}
    data["pushed"][target.name], entry["refs"] = entry, refs
    now = share_state.now_iso()
    for r in done:
        old = refs.get(r.remote_ref) if isinstance(refs.get(r.remote_ref), dict) else None
        when = old["time"] if r.status == "up to date" and old and old.get("oid") == r.new else now
        refs[r.remote_ref] = {"branch": r.branch, "oid": r.new, "consolidated": report.consolidated, "time": when}
    entry.update(url=target.shown_url, author_id=report.author_id)
    if report.sent:
        entry["time"] = now
    share_state.save_state(repo.state_dir, data)


def _failure_message(report: PushReport, failure: str | None) -> str:
    problems = [f"{r.remote_ref}: {r.status}" + (f" ({r.reason})" if r.reason else "")
                for r in report.refs if r.status in ("refused", "rejected")]
    text = f"the push to {report.target.describe()} did not complete"
    if problems:
        text += ": " + "; ".join(problems)
    if failure:
        text += f". git said: {failure[:800]}"
    if failure and "shallow" in failure.lower():
        text += (". This shadow history was cut by the size cap (.trajectory/shallow) and the remote refuses "
                 "shallow pushes (receive.shallowUpdate)")
    elif any(r.status == "rejected" for r in report.refs):
        text += (". The remote may not accept refs outside refs/heads (ask its administrator to allow "
                 "refs/trajectory/*), or push through another remote with --remote NAME")
    pushed = [r.remote_ref for r in report.sent]
    if pushed:
        text += f". Pushed anyway: {', '.join(pushed)}"
    return text + ". Nothing was lost: your shadow history and local refs are unchanged."


def maybe_auto_push(root: Path) -> PushReport | None:
    """Push after a consolidation when ``[share] auto_push = true``; never raises.

    Called on a worker thread (it talks to the network) by :func:`push_after_consolidation` after each
    consolidation.

    Returns:
        The report, or None when auto push is off, the settings are unreadable, or the push failed
        (the failure is logged as a warning).
    """
    try:
        settings = ShareSettings.load(Path(root))
    except ConfigError as exc:
        log.warning("auto push skipped: %s", exc)
        return None
    if not settings.auto_push:
        return None
    try:
        report = push(Path(root), settings=settings)
    except TrajectoryError as exc:
        log.warning("auto push of %s failed: %s", root, exc)
        return None
    log.info("auto push: %s", report.text().splitlines()[0])
    return report


def push_after_consolidation(event: Consolidated) -> None:
    """The handler of :func:`code_trajectory.recording.hooks.on_consolidated` (registered by
    :mod:`code_trajectory.wiring`): when ``[share] auto_push = true`` (off by default), push the trajectory on a
    thread, since it goes over the network. Never raises: unreadable settings and failures are logged (see
    :func:`maybe_auto_push`)."""
    try:
        enabled = ShareSettings.load(event.root).auto_push
    except Exception as exc:  # noqa: BLE001 - a bad [share] table must not fail the consolidation
        log.warning("share settings unreadable, no auto push: %s", exc)
        return
    if enabled:
        threading.Thread(target=maybe_auto_push, args=(event.root,), name="trajectory-auto-push",
                         daemon=True).start()
