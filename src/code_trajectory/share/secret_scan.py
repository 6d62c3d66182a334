"""What a push would send, scanned for secrets first: a token pasted into ``app.py``, recorded, then removed is still
in a snapshot, and the remote must not get it; nor a token in a file's name (``ghp_….txt``: in the snapshot's trees
and its message) or a branch's (in the ref's name and every snapshot's ``Trajectory-Branch``).

Only the objects the remote lacks are read (``git rev-list --objects`` of the commits to send, minus those the remote
advertises and we have: blobs, and the trees and commits, whose names and messages are small): an incremental push
scans what it adds, and the names of the refs it writes. Each is searched by
:func:`code_trajectory.core.secrets.token_format_matcher` (token formats only: a key block, ``sk-ant-…``,
``ghp_…``, an AWS key pair; not ``password = …``, which ordinary code is full of), one RE2 pass in C over its bytes,
read from one ``git cat-file --batch`` in chunks of :data:`CHUNK_BYTES` (a large blob is never held whole). The
snapshots and paths of the blobs and trees found come from one ``git log --raw -t`` of the same range, run only then;
a path or ref name is shown redacted (:func:`code_trajectory.core.secrets.redact`), never the secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from code_trajectory.core.errors import StorageError
from code_trajectory.core.secrets import redact, token_format_kind, token_format_matcher
from code_trajectory.git.blob_stream import stream_blobs
from code_trajectory.git.gitcmd import split_z
from code_trajectory.git.shadow import ShadowRepo

#: Bytes of a blob searched at a time, and the bytes of the previous chunk searched again with the next (a secret
#: across the cut is found whole: token formats are far shorter; a key block without its end still matches).
CHUNK_BYTES = 8 << 20
OVERLAP_BYTES = 64 << 10
#: Secret-holding blobs a scan names at most (the push is refused at the first; the rest only make the answer longer).
MAX_FINDINGS = 20
#: Paths and snapshots named per finding at most.
SHOWN_SNAPSHOTS = 5
#: Snapshots adding one blob listed at most.
MAX_SNAPSHOTS = 100


@dataclass
class Finding:
    """A blob the push would send that holds a secret.

    Attributes:
        blob: the blob's id (the tree's, for a name; the first commit's, for messages; the ref, for a ref name).
        kind: the secret's format (``Anthropic or OpenAI key``, ``AWS key pair``, a detect-secrets plugin name).
        paths: the paths it is recorded under in ``snapshots`` (for a name: the directories listing it, ``""`` the
            top one).
        snapshots: the commits to send that add it, newest first.
        where: ``content`` (a file's), ``name`` (a file or directory name: a tree), ``message`` (the messages of
            ``snapshots``, one finding per kind) or ``ref`` (the name of a ref written).
    """

    blob: str
    kind: str
    paths: list[str] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)
    where: str = "content"


@dataclass
class ScanResult:
    """What :func:`scan_outgoing` read and found."""

    blobs: int = 0
    bytes: int = 0
    findings: list[Finding] = field(default_factory=list)
    #: True when more blobs (or trees) than :data:`MAX_FINDINGS` hold a secret (only the first are named).
    more: bool = False
    #: The data commits among what is sent (:mod:`code_trajectory.share.data`): named as a branch's shared data,
    #: never as snapshots, where a finding's ``snapshots`` hold them.
    data: set[str] = field(default_factory=set)


def scan_outgoing(repo: ShadowRepo, wants: list[str], haves: set[str], refs: list[str] | None = None,
                  data: Iterable[str] = ()) -> ScanResult:
    """Search the objects reachable from ``wants`` and not from ``haves`` (what the push sends), and the names of
    the ``refs`` it creates (those the remote has already are not new), for token formats; ``data``: the data
    commits among ``wants`` (:attr:`ScanResult.data`)."""
    result = ScanResult(data=set(data))
    for ref in refs or ():
        match = token_format_matcher().search(ref.encode())
        if match is not None:
            result.findings.append(Finding(ref, token_format_kind(match.group(0)), where="ref"))
    if not wants:
        return result
    feed = ("".join(f"{oid}\n" for oid in wants) + "".join(f"^{oid}\n" for oid in sorted(haves))).encode()
    listed = repo.git.out(["rev-list", "--objects", "--no-object-names", "--stdin"], input=feed).split()
    if not listed:
        return result
    checked = repo.git.out(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                           input=b"\n".join(listed) + b"\n")
    objects, types = [], {}
    for line in checked.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("blob", "tree", "commit"):
            objects.append((parts[0], int(parts[2])))
            types[parts[0]] = parts[1]
    found: dict[str, Finding] = {}
    messages: dict[str, Finding] = {}
    for oid, size, kind in _search(repo, objects):
        if types[oid] == "blob":
            result.blobs += 1
            result.bytes += size
        if kind is None:
            continue
        if types[oid] == "commit":  # a branch's name is in each of its messages: one finding per kind
            snapshots = messages.setdefault(kind, Finding(oid, kind, where="message")).snapshots
            if len(snapshots) < MAX_SNAPSHOTS:
                snapshots.append(oid)
            continue
        where = "content" if types[oid] == "blob" else "name"
        if sum(f.where == where for f in found.values()) == MAX_FINDINGS:
            result.more = True
        else:
            found[oid] = Finding(oid, kind, where=where)
    if found:
        _locate(repo, feed, found)
    result.findings += [*_merge_names(found.values()), *messages.values()]
    return result


def _merge_names(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` with those of names in the same directories merged (each snapshot writes the directory anew)."""
    merged: dict[tuple[str, tuple[str, ...]], Finding] = {}
    kept = []
    for f in findings:
        first = merged.setdefault((f.kind, tuple(f.paths)), f) if f.where == "name" else f
        if first is f:
            kept.append(f)
        else:
            first.snapshots += [s for s in f.snapshots if s not in first.snapshots][:MAX_SNAPSHOTS - len(first.snapshots)]
    return kept


def _search(repo: ShadowRepo, blobs: list[tuple[str, int]]) -> Iterator[tuple[str, int, str | None]]:
    """``(oid, size, kind of the first secret found or None)`` of each object (blob, tree or commit), read from one
    ``cat-file --batch``."""
    if not blobs:
        return
    matcher = token_format_matcher()
    with stream_blobs(repo, [oid for oid, _ in blobs], (b"blob", b"tree", b"commit")) as entries:
        for oid, size, stream in entries:
            kind = None
            tail = b""
            left = size
            while left:
                data = stream.read(min(left, CHUNK_BYTES))
                if not data:
                    raise StorageError(f"blob {oid} could not be read from the shadow repository")
                left -= len(data)
                if kind is None:
                    window = tail + data
                    match = matcher.search(window)
                    if match is not None:
                        kind = token_format_kind(match.group(0))
                    tail = window[-OVERLAP_BYTES:]
            yield oid, size, kind


def _locate(repo: ShadowRepo, feed: bytes, found: dict[str, Finding]) -> None:
    """Fill in each finding's paths and the snapshots adding it: one ``git log --raw -t`` of the commits sent (a
    top-level tree, which no raw entry names, is found by the commit's ``%T``)."""
    out = repo.git.out(["log", "--no-renames", "--raw", "-t", "-z", "--no-abbrev", "-m", "--root",
                        "--format=%x01%H %T", "--stdin"], input=feed)
    commit = ""
    path_next = False  # the token after a raw entry is its path
    pending: Finding | None = None
    for token in split_z(out):
        if path_next:
            path_next = False
            if pending is not None:
                path = token.decode("utf-8", "replace")
                if path not in pending.paths:
                    pending.paths.append(path)
                if commit not in pending.snapshots and len(pending.snapshots) < MAX_SNAPSHOTS:
                    pending.snapshots.append(commit)
            continue
        text = token.lstrip(b"\n")
        if text.startswith(b"\x01"):
            commit, _, top = text[1:].decode("ascii", "replace").strip().partition(" ")
            tree = found.get(top)
            if tree is not None and commit not in tree.snapshots and len(tree.snapshots) < MAX_SNAPSHOTS:
                tree.snapshots.append(commit)
                if "" not in tree.paths:
                    tree.paths.append("")
        elif text.startswith(b":"):
            fields = text.split()
            path_next = True
            pending = found.get(fields[3].decode("ascii", "replace")) if len(fields) >= 5 else None


def findings_text(result: ScanResult) -> list[str]:
    """One markdown line per finding: where (a path or ref name redacted), the snapshots adding it (at most
    :data:`SHOWN_SNAPSHOTS`), the kind."""
    lines = []
    for f in result.findings:
        if f.where == "ref":
            lines.append(f"- the ref name {redact(f.blob)}: {f.kind}")
        elif f.where == "message":
            lines.append(f"- the message of {_commits(result, f.snapshots, 'of ')}: {f.kind}")
        else:
            paths = ", ".join((f"`{redact(p)}/`" if p else "the top directory") if f.where == "name"
                              else f"`{redact(p)}`" for p in f.paths[:SHOWN_SNAPSHOTS])
            where = f"a file or directory name in {paths or f'tree {f.blob[:12]}'}" if f.where == "name" \
                else paths or f"blob {f.blob[:12]}"
            lines.append(f"- {where} in {_commits(result, f.snapshots, 'in ')}: {f.kind}")
    if result.more:
        lines.append(f"- and more: only the first {MAX_FINDINGS} blobs (and directories) holding a secret are named")
    return lines


def _ids(commits: list[str]) -> str:
    shown = ", ".join(c[:12] for c in commits[:SHOWN_SNAPSHOTS])
    return shown + (f" and {len(commits) - SHOWN_SNAPSHOTS} more" if len(commits) > SHOWN_SNAPSHOTS else "")


def _commits(result: ScanResult, commits: list[str], again: str) -> str:
    """``commits`` named for what they are: ``snapshot(s) ID, ...`` and ``the shared data (...) ID`` (a data commit
    is no snapshot); ``again``: the preposition repeated before the second (``of``, ``in``)."""
    snapshots = [c for c in commits if c not in result.data]
    data = [c for c in commits if c in result.data]
    parts = [f"snapshot(s) {_ids(snapshots) or '(none listed)'}"] if snapshots or not data else []
    if data:
        parts.append(f"{again if parts else ''}the shared data (named points, intent, test runs) {_ids(data)}")
    return " and ".join(parts)


def refusal(result: ScanResult, where: str, *, consolidated_helps: bool) -> str:
    """The message of a push refused because of ``result``: what holds which secret, and what to do."""
    commits = {s for f in result.findings for s in f.snapshots}
    count, data = len(commits - result.data), len(commits & result.data)
    what = " and ".join(filter(None, [f"{count} snapshot(s)" if count else "",
                                      f"the shared data of {data} branch(es)" if data else ""])) or "the ref names"
    text = [f"nothing was pushed to {where}: a secret is in {what} it would send (token formats: private key, API "
            "key, access token):", *findings_text(result),
            "The remote never got them, but your local shadow history (.trajectory/) keeps them, and deleting the "
            "line does not remove it from those snapshots: if the secret is real, revoke or rotate it."]
    if consolidated_helps:
        text.append("Each branch's last consolidation comes before them: `code-trajectory push --consolidated` "
                    "shares the history up to it.")
    text.append("To send them anyway (an example or revoked key, a test fixture): "
                "`code-trajectory push --allow-secrets`.")
    return "\n".join(text)
