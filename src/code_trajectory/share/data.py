"""What travels beside a shared branch: its named points, its author's current intent and its test runs.

Snapshots carry their intent in their messages (``Trajectory-Intent``), but named points (annotated tags,
:mod:`code_trajectory.git.points`), the intent set since the last snapshot (``state/intent.json``) and test runs
(git notes, :mod:`code_trajectory.testruns.store`) live outside the commits, so ``push`` sends them as *data*: for
each pushed branch ``refs/trajectory/<author-id>/<branch>``, a ref ``refs/trajectory-data/<author-id>/<branch>``
(:data:`DATA_PUSH_PREFIX`) names a commit without parents whose tree holds JSON files only:

* ``points.json``: ``[{"commit", "message", "branch", "time"}]``, the named points on the pushed history;
* ``intent.json``: ``{"intent", "set_at", "branch"}``, the current intent (only for the project's current branch, and
  never with ``--consolidated``, which keeps the work since the last consolidation local);
* ``tests.json``: ``[run]``, the test runs recorded on pushed snapshots (a run is :class:`TestRun`'s JSON; the runs
  come from the exporters registered with :func:`code_trajectory.share.hooks.on_export_test_runs`: testruns', registered by
  :mod:`code_trajectory.wiring`).

The data commit has a fixed identity and the pushed snapshot's date, so the same data gives the same commit and a
push with nothing new sends nothing. ``pull`` fetches it into ``refs/remotes-trajectory-data/<author-id>/<branch>``
(:data:`DATA_PULL_PREFIX`).

Pulled data is untrusted (:func:`read_shared`): it is read with ``git cat-file`` only, never checked out or run; the
ref must name a commit whose tree holds only the names above as regular blobs of at most :data:`MAX_FILE_BYTES`;
every value is type-checked and clipped (:data:`MAX_TEXT_CHARS`, :data:`MAX_POINTS`, :data:`MAX_RUNS`, control and
invisible characters removed), and a point or run must name a commit of the pulled history itself.
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from code_trajectory.core.when import parse_stored_time
from code_trajectory.git import points as named_points
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.recording.intent import IntentStore
from code_trajectory.share.hooks import exported_test_runs
from code_trajectory.share.names import PULL_PREFIX, split_pulled_ref

log = logging.getLogger(__name__)

#: Where the data of a pushed branch lives on the remote: ``refs/trajectory-data/<author-id>/<branch>``.
DATA_PUSH_PREFIX = "refs/trajectory-data/"
#: Where pulled data is kept in the shadow repository.
DATA_PULL_PREFIX = "refs/remotes-trajectory-data/"
POINTS_FILE, INTENT_FILE, TESTS_FILE = "points.json", "intent.json", "tests.json"
DATA_FILES = (POINTS_FILE, INTENT_FILE, TESTS_FILE)
#: Largest data file read back, bytes (a test run keeps a 4 KiB output tail: 2,000 runs fit).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Named points, test runs kept per branch (the newest).
MAX_POINTS = 1000
MAX_RUNS = 2000
#: Longest text value kept from pulled data, characters (a test run's output tail is 4,096 bytes).
MAX_TEXT_CHARS = 4096
#: Longest list inside a value (a run's failing tests) and deepest nesting kept from pulled data.
MAX_LIST_ITEMS = 200
MAX_DEPTH = 3
#: Pulled data sets kept parsed in memory.
CACHE_SIZE = 64


@dataclass(frozen=True)
class SharedPoint:
    """A named point of a shared history: the snapshot ``commit``, its ``message``, ``branch`` and ``time`` (UTC)."""

    commit: str
    message: str
    branch: str | None
    time: datetime | None


@dataclass(frozen=True)
class SharedIntent:
    """An author's current intent when they pushed: ``text``, when it was set (UTC) and on which ``branch``."""

    text: str
    set_at: datetime | None
    branch: str | None

    def describe(self) -> str:
        """``"Fix login" (set 2026-11-25 17:06 UTC)``."""
        when = f" (set {self.set_at.strftime('%Y-%m-%d %H:%M')} UTC)" if self.set_at else ""
        return f"\"{self.text}\"{when}"


@dataclass(frozen=True)
class SharedData:
    """The data of one shared branch (empty when there is none)."""

    points: tuple[SharedPoint, ...] = ()
    intent: SharedIntent | None = None
    test_runs: tuple[dict, ...] = field(default=())


EMPTY = SharedData()


# -- names --------------------------------------------------------------------------------------------


def data_push_ref(author_id: str, branch: str) -> str:
    """``refs/trajectory-data/<author_id>/<branch>``: the data beside ``refs/trajectory/<author_id>/<branch>``."""
    return f"{DATA_PUSH_PREFIX}{author_id}/{branch}"


def data_pulled_ref(author_id: str, branch: str) -> str:
    """``refs/remotes-trajectory-data/<author_id>/<branch>``: pulled data beside the pulled trajectory."""
    return f"{DATA_PULL_PREFIX}{author_id}/{branch}"


def data_ref_of_source(source_ref: str) -> str | None:
    """The pulled data ref beside a pulled trajectory ``refs/remotes-trajectory/<a>/<b>``; None for our own refs."""
    try:
        author, branch = split_pulled_ref(source_ref)
    except ValueError:
        return None
    return data_pulled_ref(author, branch)


def source_ref_of_data(data_ref: str) -> str | None:
    """Inverse of :func:`data_ref_of_source` (None for a ref outside :data:`DATA_PULL_PREFIX`)."""
    if not data_ref.startswith(DATA_PULL_PREFIX):
        return None
    return PULL_PREFIX + data_ref[len(DATA_PULL_PREFIX):]


# -- writing (push) -----------------------------------------------------------------------------------


def _json_blob(repo: ShadowRepo, value: Any) -> str:
    return repo.write_blob(json.dumps(value, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode())


def build_data_commit(repo: ShadowRepo, branch: str, commit: str, *, intent: bool) -> tuple[str, dict[str, int]]:
    """Write the data of a pushed branch whose pushed snapshot is ``commit``; return ``(data commit, counts)``.

    Args:
        repo: our shadow repository.
        branch: the project branch.
        commit: the snapshot pushed for it (its tip, or its last consolidation).
        intent: include the current intent (``state/intent.json``), if one is set.

    Returns:
        The commit id (the same data gives the same id) and ``{"points": n, "runs": n, "intent": 0 or 1}``.

    Raises:
        GitError, StorageError: the objects cannot be written.
    """
    reachable = set(repo.git.text(["rev-list", commit]).split())
    points = [{"commit": p.commit, "message": p.message, "branch": p.branch, "time": p.time.isoformat()}
              for p in named_points.points(repo) if p.commit in reachable][:MAX_POINTS]
    runs = sorted(exported_test_runs(repo, reachable), key=lambda r: str(r.get("started_at") or ""), reverse=True)[:MAX_RUNS]
    entries: dict[bytes, TreeEntry] = {}
    entries[POINTS_FILE.encode()] = TreeEntry("100644", _json_blob(repo, points))
    entries[TESTS_FILE.encode()] = TreeEntry("100644", _json_blob(repo, runs))
    store = IntentStore(repo.state_dir)
    text = store.get() if intent else None
    if text:
        set_at = store.set_at()
        entries[INTENT_FILE.encode()] = TreeEntry("100644", _json_blob(
            repo, {"intent": text, "set_at": set_at.isoformat() if set_at else None, "branch": branch}))
    tree = repo.write_tree(entries)
    stamp = repo.git.text(["show", "-s", "--format=%ct", commit]) or "0"
    data = repo.commit_tree(tree, [], f"Trajectory data of {branch}\n\nnamed points, intent and test runs of "
                            f"{commit}\n", when=(int(stamp), "+0000"))
    return data, {"points": len(points), "runs": len(runs), "intent": 1 if text else 0}


# -- reading (pulled, untrusted) ----------------------------------------------------------------------

_cache: OrderedDict[tuple[str, str, str], SharedData] = OrderedDict()
_cache_lock = threading.Lock()


def _clean_text(value: Any, limit: int = MAX_TEXT_CHARS) -> str | None:
    """A string from pulled data without control or invisible characters (newlines and tabs kept), clipped."""
    if not isinstance(value, str):
        return None
    text = "".join(ch for ch in value[:limit * 2] if ch in "\n\t" or unicodedata.category(ch)[0] not in "C")
    return text[:limit]


def clean_value(value: Any, depth: int = 0) -> Any:
    """A JSON value from pulled data made safe to hold and print: strings cleaned and clipped, lists cut at
    :data:`MAX_LIST_ITEMS`, nesting below :data:`MAX_DEPTH` dropped (None), numbers kept when finite."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 2 ** 53 else None
    if isinstance(value, float):
        return value if value == value and abs(value) < 1e300 else None
    if isinstance(value, str):
        return _clean_text(value)
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, list):
        return [clean_value(v, depth + 1) for v in value[:MAX_LIST_ITEMS]]
    if isinstance(value, dict):
        return {k[:100]: clean_value(v, depth + 1) for k, v in list(value.items())[:MAX_LIST_ITEMS]
                if isinstance(k, str)}
    return None


def _read_json(repo: ShadowRepo, tree: dict, name: str) -> Any:
    entry = tree.get(name.encode())
    if entry is None:
        return None
    if entry.mode != "100644":
        log.warning("ignoring shared data %s: not a regular file (mode %s)", name, entry.mode)
        return None
    size = repo.git.run(["cat-file", "-s", entry.oid], check=False)
    if size.returncode != 0 or int(size.stdout.strip() or 0) > MAX_FILE_BYTES:
        log.warning("ignoring shared data %s: missing or over %d bytes", name, MAX_FILE_BYTES)
        return None
    obj = repo.read_object(entry.oid)
    if obj is None or obj[0] != "blob":
        return None
    try:
        return json.loads(obj[1].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        log.warning("ignoring shared data %s: not JSON", name)
        return None


def _points(value: Any, history: set[str]) -> tuple[SharedPoint, ...]:
    found = []
    for item in value[:MAX_POINTS] if isinstance(value, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("commit"), str) or item["commit"] not in history:
            continue
        message = _clean_text(item.get("message"), 500)
        if not message or not message.strip():
            continue
        branch = _clean_text(item.get("branch"), 200)
        found.append(SharedPoint(item["commit"], " ".join(message.split()), branch,
                                 parse_stored_time(item.get("time"))))
    epoch = datetime.min.replace(tzinfo=UTC)
    return tuple(sorted(found, key=lambda p: p.time or epoch, reverse=True))


def _intent(value: Any) -> SharedIntent | None:
    if not isinstance(value, dict):
        return None
    text = _clean_text(value.get("intent"), 500)
    if not text or not text.strip():
        return None
    return SharedIntent(" ".join(text.split()), parse_stored_time(value.get("set_at")),
                        _clean_text(value.get("branch"), 200))


def _runs(value: Any, history: set[str]) -> tuple[dict, ...]:
    runs = []
    for item in value[:MAX_RUNS] if isinstance(value, list) else ():
        if isinstance(item, dict) and isinstance(item.get("commit"), str) and item["commit"] in history:
            cleaned = clean_value(item)
            if isinstance(cleaned, dict):
                runs.append(cleaned)
    return tuple(runs)


def read_shared(repo: ShadowRepo, source_ref: str) -> SharedData:
    """The pulled data beside ``source_ref`` (a ``refs/remotes-trajectory/...`` ref), checked as the module
    docstring says; :data:`EMPTY` for our own branches, a source pulled without data, or data that is not valid
    (logged). Never raises for bad data; parsed sets are cached by the data and source commits."""
    data_ref = data_ref_of_source(source_ref)
    if data_ref is None:
        return EMPTY
    return _read_at(repo, data_ref, repo.resolve(data_ref), repo.resolve(source_ref))


def _read_at(repo: ShadowRepo, data_ref: str, data: str | None, tip: str | None) -> SharedData:
    """:func:`read_shared` once the data ref's and the source's commits are known (None: missing)."""
    if data is None or tip is None:
        return EMPTY
    key = (str(repo.git_dir), data, tip)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    parsed = _parse(repo, data, tip, data_ref)
    with _cache_lock:
        _cache[key] = parsed
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return parsed


def _parse(repo: ShadowRepo, data: str, tip: str, data_ref: str) -> SharedData:
    try:
        obj = repo.read_object(data)
        if obj is None or obj[0] != "commit" or b"\nparent " in obj[1].split(b"\n\n", 1)[0]:
            log.warning("ignoring %s: not a data commit", data_ref)
            return EMPTY
        tree = repo.read_tree(repo.commit_tree_oid(data))
        unknown = [n for n in tree if n.decode("utf-8", "replace") not in DATA_FILES]
        if unknown:
            log.warning("ignoring %s: unexpected entries %s", data_ref, [n[:60] for n in unknown[:5]])
            return EMPTY
        history = set(repo.git.text(["rev-list", tip]).split())
        return SharedData(_points(_read_json(repo, tree, POINTS_FILE), history),
                          _intent(_read_json(repo, tree, INTENT_FILE)),
                          _runs(_read_json(repo, tree, TESTS_FILE), history))
    except Exception as exc:  # noqa: BLE001 - damaged pulled data is left out, never fails a read
        log.warning("ignoring %s: %s", data_ref, exc)
        return EMPTY


def all_pulled(repo: ShadowRepo) -> list[SharedData]:
    """The data of every pulled source that has some (two ``for-each-ref`` calls, whatever the number of sources;
    the pull leaves only commits under both namespaces)."""
    data_refs = repo.refs_under(DATA_PULL_PREFIX)
    if not data_refs:
        return []
    sources = repo.refs_under(PULL_PREFIX)
    found = [_read_at(repo, data_ref, oid, sources.get(source_ref_of_data(data_ref) or ""))
             for data_ref, oid in sorted(data_refs.items())]
    return [d for d in found if d is not EMPTY]


def pulled_test_runs(repo: ShadowRepo, commits: Iterable[str] | None = None) -> dict[str, list[dict]]:
    """``{commit: [run as a JSON object]}`` from every pulled source (only ``commits`` when given), oldest first."""
    wanted = set(commits) if commits is not None else None
    result: dict[str, list[dict]] = {}
    for shared in all_pulled(repo):
        for run in shared.test_runs:
            commit = run["commit"]
            if wanted is None or commit in wanted:
                bucket = result.setdefault(commit, [])
                if run not in bucket:
                    bucket.append(run)
    for runs in result.values():
        runs.sort(key=lambda r: str(r.get("started_at") or ""))
    return result


def point_marks(repo: ShadowRepo, commits: list[str]) -> dict[str, str]:
    """``{commit: 'named point "x"'}`` for the listed commits that a pulled source named (the marks provider of
    :func:`code_trajectory.history.hooks.on_commit_marks`, registered by :mod:`code_trajectory.wiring`)."""
    wanted = set(commits)
    if not wanted:
        return {}
    names: dict[str, list[str]] = {}
    for shared in all_pulled(repo):
        for p in reversed(shared.points):  # oldest first
            if p.commit in wanted and p.message not in names.setdefault(p.commit, []):
                names[p.commit].append(p.message)
    return {c: "named point " + ", ".join(f"\"{n}\"" for n in found[:5]) for c, found in names.items() if found}


def resolve_shared_point(repo: ShadowRepo, source_ref: str, name: str) -> str | None:
    """The commit a pulled source named ``name`` (exact message, the newest wins), or None."""
    return next((p.commit for p in read_shared(repo, source_ref).points if p.message == name.strip()), None)


def points_section(shared: SharedData, limit: int = 20) -> str | None:
    """``## Named points`` of a shared trajectory (newest first), or None when it has none."""
    if not shared.points:
        return None
    lines = ["## Named points (newest first)"]
    for p in shared.points[:limit]:
        when = p.time.strftime("%Y-%m-%d %H:%M UTC") if p.time else "?"
        lines.append(f"- \"{p.message}\" on `{p.commit[:12]}` ({when})")
    if len(shared.points) > limit:
        lines.append(f"- ... and {len(shared.points) - limit} more")
    return "\n".join(lines)
