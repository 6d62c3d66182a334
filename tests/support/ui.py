"""Helpers of the ``ui`` tests: a synthetic shadow history built with ``git fast-import``, a UI server in a thread,
and a headless Chromium driven by Playwright (skipped with a reason when either is missing).

Imported as ``support.ui`` by the ``test_ui_*`` modules (``pythonpath`` puts ``tests`` on ``sys.path``) and by
``bench/ui.py``.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import os
import random
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def browser_missing_reason() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (pip install playwright; .ci/run installs it)"
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)"
    return None


# -- a synthetic history ---------------------------------------------------------------------------------------------


def build_history(root: Path, count: int, *, branch: str = "main", files: int = 40, seed: int = 7,
                  start: datetime | None = None, chunk: int = 0, between: Callable[[int], None] | None = None,
                  loose: bool = False, max_functions: int = 0) -> list[str]:
    """Write ``count`` snapshot commits on ``refs/heads/shadow/<branch>`` of ``root``'s shadow repository at once.

    The commits look like the recorder's: an import of ``files`` Python files, then snapshots changing one or two
    files (a line replaced, a function added) 20-120 s apart with a 3 h gap every 250 snapshots (a new session), a
    checkpoint every 97th and an intent on most; messages and trailers come from
    :func:`code_trajectory.git.messages.snapshot_message`. One ``git fast-import`` writes them (10,000 commits take
    about two seconds).

    For a long history as the recorder leaves it (``bench/history.py``): ``chunk`` snapshots per ``git fast-import``
    run (0: one run), each a pack of its own, ``between(snapshots written so far)`` called after each run (the
    caller's maintenance); ``loose`` leaves each run's objects loose, as the recorder writes a snapshot's few
    objects (``git.object_writer.LOOSE_MAX_OBJECTS``), for maintenance to pack (else one pack, deltas to depth 50);
    ``max_functions`` (0: no cap) caps the functions a file grows to: past it, an added function replaces the
    file's oldest added one, so files stop growing as real ones do.

    Returns:
        The commit ids, oldest first.
    """
    from code_trajectory.git import messages
    from code_trajectory.git.messages import FileChange
    from code_trajectory.git.shadow import ShadowRepo

    with ShadowRepo(root) as repo:
        repo.ensure()
    rng = random.Random(seed)
    names = [f"src/pkg{i % 5}/module_{i:03d}.py" for i in range(files)]
    contents = {name: [f"def f{n}(x):\n", f"    return x + {n}\n", "\n"] for n, name in enumerate(names)}
    when = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    intents = ["Parse the config file", "Fix the retry loop", "Add the export command", "Speed up the index",
               None, "Refactor the store"]
    out: list[bytes] = []
    oids: list[str] = []
    for i in range(count):
        changes: list[FileChange] = []
        kind, note = messages.KIND_SNAPSHOT, None
        if i == 0:
            kind = messages.KIND_IMPORT
            changes = [FileChange("A", n, added=3, deleted=0, counted=True) for n in names]
            touched = names
        else:
            when += timedelta(seconds=rng.randint(20, 120) if i % 250 else 3 * 3600)
            touched = sorted(rng.sample(names, rng.choice((1, 1, 2))))
            for name in touched:
                lines = contents[name]
                if rng.random() < 0.3:
                    if max_functions and len(lines) >= 3 * max_functions:
                        del lines[3:6]
                    lines += [f"def g{i}(y):\n", f"    return y * {i}\n", "\n"]
                    changes.append(FileChange("M", name, added=3, deleted=0, counted=True))
                else:
                    k = rng.randrange(len(lines) // 3) * 3 + 1
                    lines[k] = f"    return x + {i}\n"
                    changes.append(FileChange("M", name, added=1, deleted=1, counted=True))
            if i % 97 == 0:
                kind, note = messages.KIND_CHECKPOINT, f"checkpoint {i}"
        intent = intents[(i // 40) % len(intents)] if i else None
        message = messages.snapshot_message(when=when, intent=intent, branch=branch, changes=changes, kind=kind,
                                            note=note).encode()
        out.append(b"commit refs/heads/shadow/%s\nmark :%d\n" % (branch.encode(), i + 1))
        out.append(b"committer code-trajectory <code-trajectory@localhost> %d +0000\n" % int(when.timestamp()))
        out.append(b"data %d\n%s\n" % (len(message), message))
        if i and chunk and i % chunk == 0:  # a new fast-import run: it starts from the ref the last one wrote
            out.append(b"from refs/heads/shadow/%s^0\n" % branch.encode())
        elif i:
            out.append(b"from :%d\n" % i)
        for name in touched:
            body = "".join(contents[name]).encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(body), body))
        if i + 1 == count or (chunk and (i + 1) % chunk == 0):
            oids += _fast_import(root, out, first_mark=len(oids) + 1, loose=loose)
            out = []
            if between is not None:
                between(i + 1)
    subprocess.run(["git", f"--git-dir={root / '.trajectory'}", "symbolic-ref", "HEAD",
                    f"refs/heads/shadow/{branch}"], check=True, env=_git_env(), capture_output=True)
    return oids


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def _fast_import(root: Path, commands: list[bytes], *, first_mark: int, loose: bool) -> list[str]:
    """Run one ``git fast-import`` of ``commands`` (commits marked ``first_mark`` onwards); their ids, in order."""
    marks = root / ".trajectory" / "state" / "fast-import.marks"
    unpack = ["-c", f"fastimport.unpackLimit={2**31 - 1}"] if loose else []  # git-config(1): fewer objects: loose
    subprocess.run(["git", f"--git-dir={root / '.trajectory'}", *unpack, "fast-import", "--quiet", "--done",
                    f"--export-marks={marks}"], input=b"".join(commands) + b"done\n", check=True, env=_git_env(),
                   capture_output=True)
    by_mark = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    return [by_mark[f":{n}"] for n in range(first_mark, first_mark + len(by_mark))]


DEMO_V1 = '''"""Signing and checking tokens."""

import hmac


class Signer:
    def __init__(self, key: bytes) -> None:
        self.key = key

    def sign(self, value: str) -> str:
        mac = hmac.new(self.key, value.encode(), "sha256").hexdigest()
        return f"{value}.{mac}"
'''

DEMO_V2 = DEMO_V1 + '''
    def unsign(self, signed: str) -> str:
        value, _, mac = signed.rpartition(".")
        if not hmac.compare_digest(mac, self.sign(value).rpartition(".")[2]):
            raise ValueError("bad signature: <script>alert(1)</script>")
        return value
'''

DEMO_V3 = DEMO_V2.replace('''    def sign(self, value: str) -> str:
        mac = hmac.new(self.key, value.encode(), "sha256").hexdigest()''', '''    def sign(self, value: str, *, salt: str = "") -> str:
        """Return ``value.mac``; ``salt`` separates uses of one key."""
        mac = hmac.new(self.key, (salt + value).encode(), "sha256").hexdigest()''')


def record_demo(root: Path) -> dict[str, str]:
    """Record a small, realistic history of the ``project`` fixture with the real recorder.

    An import of the tree, then ``src/signing.py`` written in three steps under two intents, a test file, a
    checkpoint, and a green and a red test run. Returns ``{name: commit}`` for ``import``, ``v1``, ``v2``,
    ``tests``, ``checkpoint``.
    """
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder
    from code_trajectory.testruns import store
    from code_trajectory.testruns.model import TestRun
    from code_trajectory.testruns.scope import Scope

    commits: dict[str, str] = {}
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        commits["import"] = recorder.reconcile().commit
        recorder.intent.set("Sign session tokens")
        (root / "src" / "signing.py").write_text(DEMO_V1)
        commits["v1"] = recorder.record_paths(["src/signing.py"]).commit
        (root / "src" / "signing.py").write_text(DEMO_V2)
        commits["v2"] = recorder.record_paths(["src/signing.py"]).commit
        recorder.intent.set("Test the signer")
        (root / "tests" / "test_signing.py").write_text(
            "from src.signing import Signer\n\n\ndef test_roundtrip():\n    s = Signer(b'k')\n"
            "    assert s.unsign(s.sign('a')) == 'a'\n")
        commits["tests"] = recorder.record_paths(["tests/test_signing.py"]).commit
        store.record_run(recorder.repo, TestRun(command="pytest -q", outcome="failed", passed=2, failed=1,
                                                scope=Scope.full(),
                                                failures=[("tests/test_signing.py::test_roundtrip", "ValueError")],
                                                commit=commits["tests"], branch="main",
                                                started_at="2026-01-05T10:00:00+00:00"))
        (root / "src" / "signing.py").write_text(DEMO_V3)
        commits["checkpoint"] = recorder.checkpoint("salted signatures").commit
        store.record_run(recorder.repo, TestRun(command="pytest -q", outcome="passed", passed=3,
                                                commit=commits["checkpoint"], branch="main",
                                                started_at="2026-01-05T10:05:00+00:00", scope=Scope.full()))
    finally:
        recorder.close()
    return commits


def record_edit(root: Path, rel: str, text: str, *, intent: str | None = None) -> str:
    """Write ``rel`` and record it with the real recorder; returns the new snapshot's commit."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder

    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        if intent:
            recorder.intent.set(intent)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        snapshot = recorder.record_paths([rel])
        assert snapshot is not None, f"recording {rel} made no snapshot"
        return snapshot.commit
    finally:
        recorder.close()


# -- a server in a thread --------------------------------------------------------------------------------------------


@dataclass
class RunningUI:
    """A UI server running in a thread: its base URL, port, token and the app's state."""

    url: str
    port: int
    token: str
    server: object

    @property
    def entry_url(self) -> str:
        """The URL a user opens: the base URL with ``?token=``."""
        return f"{self.url}/?token={self.token}"


@contextlib.contextmanager
def running_ui(root: Path, **options) -> Iterator[RunningUI]:
    """Serve ``root``'s history on a free loopback port in a thread for the duration of the block."""
    from code_trajectory.ui.server import UIServer

    server = UIServer(root, port=0, **options)
    thread = threading.Thread(target=server.run, name="ui-server", daemon=True)
    thread.start()
    try:
        if not server.wait_started(15):
            raise RuntimeError("the UI server did not start within 15 s")
        yield RunningUI(server.base_url, server.port, server.token, server)
    finally:
        server.stop()
        thread.join(15)
        server.close()


def request(port: int, method: str, target: str, *, headers: dict[str, str] | None = None,
            body: bytes | None = None, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request to ``127.0.0.1:port``; returns ``(status, headers with lower-case names, body)``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        all_headers = {"Host": host or f"127.0.0.1:{port}", **(headers or {})}
        conn.request(method, target, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


# -- a browser -------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 900) -> Iterator[tuple[object, list[str]]]:
    """A Playwright page in Debian's headless Chromium; yields ``(page, every URL it requested)``."""
    from playwright.sync_api import sync_playwright

    requested: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            page.on("request", lambda r: requested.append(r.url))
            yield page, requested
            context.close()
        finally:
            browser.close()
