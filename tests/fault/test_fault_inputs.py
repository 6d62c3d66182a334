"""Bad input: every MCP tool with generated arguments, the CLI with bad argv, and the tree's oddities.

(a) A hypothesis property test calls every tool ``list_tools()`` returns with arguments
    generated from its ``input_schema``: the right types (with out-of-range, huge and
    negative numbers, NaN/inf, ``..``, absolute paths, NUL bytes, leading ``-``,
    1,000-character names, surrogate-escaped non-UTF-8 text), wrong types, ``None``,
    deeply nested objects, missing required and unknown extra arguments — through one
    in-memory client on a configured project (``configure_project`` only ever gets paths
    under the test's temp dir, or relative/garbage strings and wrong types). Every call
    must return a result (no exception); every error must be ``isError`` with a
    non-empty message that is not the generic crash text (``failed unexpectedly``, or a
    bare ``Error executing tool X``); no ERROR is logged; the server answers
    ``get_session_summary`` afterwards. ``CT_INPUT_EXAMPLES`` (default 2,000) is the number of
    generated calls, shared evenly by the tools (one hypothesis run per tool).
(b) The CLI (``python -m code_trajectory``) with bad argv exits 2 with one
    ``code-trajectory: error:`` line on stderr and no traceback.
(c) A tree with a non-UTF-8 name, a 1,000-character path, a 255-byte component, a
    binary file, a 200 MB sparse file, a symlink loop, a symlink to /etc, a FIFO and a
    UNIX socket: a reconcile succeeds, each is recorded or skipped as documented, and
    ``get_file_trajectory`` answers on each without a crash.

Product bugs these tests found were fixed; their regression tests are at the end. The
property test would count inputs hitting a still-known bug (``KNOWN_BUGS``, now empty)
instead of failing on them, and reports the count.
"""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git.oversize import OVERSIZE_MARKER
from code_trajectory.history import service as history_service
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.recording.session import ProjectSession
from code_trajectory.server import build_server
from support import write
from support.fault_report import report, run_git

EXAMPLES = int(os.environ.get("CT_INPUT_EXAMPLES", "2000"))  # in all, shared by the tools
GENERIC_CRASH = re.compile(r"failed unexpectedly|^Error executing tool \S+?:?\s*$", re.DOTALL)

LONG_NAME = "n" * 1000
LONG_PATH = "/".join(["d" * 199] * 5) + "/f.txt"  # 1,000+ characters, each component < 255 bytes
SURROGATES = os.fsdecode(b"caf\xe9-\xff\xfe.txt")
NASTY_STRINGS = [
    "", " ", "\t\n", ".", "..", "../..", "../../etc/passwd", "/etc/passwd", "/", "//", "/..", "a\x00b", "\x00",
    "-", "-rf", "--help", "--", "-n 5", LONG_NAME, LONG_PATH, "a" * 255, "a" * 256, SURROGATES, "\udcff",
    "~", "~/x", "src/../../x", "src/app.py", "src/app.py/", "./src/app.py", "src//app.py", "src/./app.py",
    "src", "escape", "escape/x.py", "loop", "loop/x", ".trajectory", ".trajectory/HEAD", ".git", ".git/HEAD",
    ".env", "a\nb", "*", "?", "[", "%s%n%x", "${HOME}", "$(touch pwned)", "'; DROP TABLE x; --", "ünïcödé",
    "🙂", "\u202egnp.exe", "C:\\Windows\\x", "file:///etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "\\..\\..",
    "a" * 10_000, "x: y", "decision", "project-alpha/api-design", "project-alpha/api-design#abc123", "#", "a#b",
]
NUMBERS = [-(10**30), -(2**63), -(2**31), -1001, -1, 0, 1, 2, 5, 49, 50, 51, 199, 200, 201, 255, 256, 999, 1000,
           1001, 2**31, 2**63, 2**64, 10**30, 10**300]
FLOATS = [-1.0, -0.0, 0.0, 0.5, 1e-300, 1e300, math.inf, -math.inf, math.nan]

#: Known product bugs: (name, predicate on the answer text). Empty: the ones found were fixed, and each
#: keeps its regression test below (the ENAMETOOLONG one: test_*_with_a_1000_character_name).
KNOWN_BUGS: list[tuple[str, re.Pattern[str]]] = []


def nested(depth: int) -> object:
    value: object = "bottom"
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


garbage = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from(NUMBERS), st.floats(), st.sampled_from(FLOATS),
    st.text(max_size=30), st.sampled_from(NASTY_STRINGS),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=10)), max_size=5),
    st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.integers(), st.text(max_size=8)), max_size=4),
    st.integers(min_value=1, max_value=200).map(nested),  # the SDK client serialises at most ~250 levels
)
strings = st.one_of(st.text(max_size=40), st.sampled_from(NASTY_STRINGS),
                    st.text(alphabet=st.characters(codec="utf-8"), min_size=200, max_size=1200),
                    st.binary(max_size=30).map(os.fsdecode))


def valid_typed(schema: dict, defs: dict) -> st.SearchStrategy:
    """Values of the schema's type (in and out of its range)."""
    if "$ref" in schema:
        schema = {**defs[schema["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in schema.items() if k != "$ref"}}
    if "anyOf" in schema:
        return st.one_of(*[valid_typed(s, defs) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), st.sampled_from(schema["enum"]), strings)
    kind = schema.get("type")
    if kind == "string":
        return strings
    if kind == "integer":
        return st.one_of(st.integers(0, 300), st.integers(), st.sampled_from(NUMBERS))
    if kind == "number":
        return st.one_of(st.floats(), st.sampled_from(FLOATS), st.integers(-5, 10**6))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(valid_typed(schema.get("items", {}), defs), max_size=6)
    return garbage


@st.composite
def arguments(draw, tool, path_choices: list[str]) -> dict:
    schema = tool.input_schema
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    args: dict[str, object] = {}
    for name, prop in schema.get("properties", {}).items():
        if not draw(st.booleans() if name not in required else st.sampled_from([True] * 9 + [False])):
            continue  # an optional argument left out, or (1 in 10) a required one missing
        if tool.name == "configure_project" and name == "path":
            # never a real directory outside the test's temp dir: only temp paths, relative text, wrong types
            value = draw(st.one_of(st.sampled_from(path_choices),
                                   st.sampled_from(NASTY_STRINGS).filter(lambda s: not s.startswith(("/", "~"))),
                                   st.text(max_size=30).filter(lambda s: not s.lstrip().startswith(("/", "~"))),
                                   st.one_of(st.none(), st.integers(), st.lists(st.text(max_size=3), max_size=2))))
        else:
            value = draw(garbage if draw(st.integers(0, 5)) == 0 else valid_typed(prop, defs))  # 1 in 6 wrong type
        args[name] = value
    if draw(st.integers(0, 4)) == 0:  # unknown extra arguments
        extra = draw(st.dictionaries(st.text(min_size=1, max_size=12), garbage, min_size=1, max_size=3))
        args.update({k: v for k, v in extra.items() if k not in args})
    return args


class ErrorLogs(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("code_trajectory", "mcp")):
            exc = record.exc_info[1] if record.exc_info else None
            detail = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
            self.records.append(f"{record.name}: {record.getMessage()[:300]}{str(detail)[:300]}")


def answer_text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.slow
def test_every_tool_answers_generated_arguments_without_crashing(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other, "notes.txt", "another project\n")
    (project / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "outside").mkdir()
    (project / "loop").symlink_to("loop")
    afile = write(tmp_path, "afile.txt", "not a directory\n")
    path_choices = [str(project), str(project) + "/", str(project) + "/.", str(other), str(afile),
                    str(tmp_path / "missing"), str(tmp_path / "missing") + "\x00x", str(project / "loop"),
                    str(project / "escape")]
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    tried: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    known: Counter[str] = Counter()
    handler = ErrorLogs()
    logging.getLogger().addHandler(handler)
    started = time.monotonic()
    try:
        with anyio.from_thread.start_blocking_portal("asyncio") as portal:
            with portal.wrap_async_context_manager(Client(build_server(service))) as client:
                first = portal.call(client.call_tool, "configure_project", {"path": str(project)})
                assert not first.is_error, answer_text(first)
                tools = portal.call(client.list_tools).tools
                assert len(tools) >= 19
                for tool in tools:  # every tool at least once, with no arguments at all
                    if tool.name != "configure_project":
                        tried[tool.name] += 1
                        result = portal.call(client.call_tool, tool.name, {})
                        assert not (result.is_error and GENERIC_CRASH.search(answer_text(result))), tool.name

                def property_for(tool):  # one hypothesis run per tool: every tool gets its share of examples
                    @settings(max_examples=max(10, EXAMPLES // len(tools)), deadline=None, database=None,
                              suppress_health_check=list(HealthCheck))
                    @given(args=arguments(tool, path_choices))
                    def call_tool(args: dict) -> None:
                        tried[tool.name] += 1
                        result = portal.call(client.call_tool, tool.name, args)
                        text = answer_text(result)
                        if not result.is_error:
                            assert text.strip() or result.structured_content is not None, (tool.name, args)
                            return
                        errors[tool.name] += 1
                        for name, pattern in KNOWN_BUGS:
                            if pattern.search(text):
                                known[name] += 1
                                return
                        assert text.strip(), (tool.name, args)
                        assert not GENERIC_CRASH.search(text), (tool.name, args, text[:500])

                    return call_tool

                for tool in tools:
                    property_for(tool)()
                again = portal.call(client.call_tool, "configure_project", {"path": str(project)})
                assert not again.is_error, answer_text(again)
                summary = portal.call(client.call_tool, "get_session_summary", {})
                assert not summary.is_error and "Session" in answer_text(summary), answer_text(summary)
    finally:
        logging.getLogger().removeHandler(handler)
        service.close()
    elapsed = time.monotonic() - started
    unexpected_logs = list(handler.records)
    total = sum(tried.values())
    report("inputs_mcp", f"inputs (MCP): {total} generated tool calls over {len(tried)} tools, "
                         f"{sum(errors.values())} tool errors, {len(unexpected_logs)} unexpected exceptions, "
                         f"{sum(known.values())} hits of known bugs ({elapsed:.1f} s)",
           inputs_tried=total, tools=len(tried), per_tool=dict(tried), tool_errors=dict(errors),
           known_bug_hits=dict(known), unexpected_exceptions=len(unexpected_logs), seconds=round(elapsed, 1))
    assert not unexpected_logs, unexpected_logs[:5]
    assert set(tried) == {t.name for t in tools}, "every listed tool must have been called"


# -- (b) the CLI with bad argv -------------------------------------------------------------------------------

def run_cli(args: list[str | bytes], cwd: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full_env.update(env)
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=full_env,
                          capture_output=True, timeout=120)


#: (argv, expected exit status, text expected in the output). Status 2 cases must print exactly one line
#: ``code-trajectory: error: ...`` on stderr; status 0 cases are valid requests about odd names.
CLI_CASES: list[tuple[list[str | bytes], int, str]] = [
    (["file", "../../etc/passwd"], 2, "outside the project"),
    (["file", "/etc/passwd"], 2, "outside the project"),
    (["file", "{outside}/x.py"], 2, "outside the project"),
    (["file", "escape/x.py"], 2, "symlink"),
    (["file", "src/../../x.py"], 2, "outside the project"),
    (["file", "."], 2, "project root"),
    (["file", ""], 2, "filepath"),
    (["file", "src/app.py", "--depth", "0"], 2, "between 1 and"),
    (["file", "src/app.py", "--depth", "-5"], 2, "between 1 and"),
    (["file", "src/app.py", "--depth", "99999999999"], 2, "between 1 and"),
    (["log", "--limit", "-1"], 2, "between 1 and"),
    (["log", "--limit", "0"], 2, "between 1 and"),
    (["log", "--limit", "99999999999"], 2, "between 1 and"),
    (["test-history", "--limit", "-1"], 2, "between 1 and"),
    (["log", "--project", "{afile}"], 2, "not a directory"),
    (["log", "--project", "{missing}"], 2, "does not exist"),
    (["file", "src/app.py", "--project", "{missing}"], 2, "does not exist"),
    (["status", "--project", "{missing}"], 2, ""),
    (["log", "--project", "/"], 2, "file system root"),
    (["log", "--project", os.fsencode("{missing}") + b"/\xff\xfe"], 2, "does not exist"),
    (["intent", ""], 2, "non-empty"),
    (["intent", "   "], 2, "non-empty"),
    (["consolidate", " "], 2, "intent"),
    # valid requests about odd names: a file called -rf, a non-UTF-8 name (argv bytes, surrogate-escaped)
    (["file", "--", "-rf"], 0, "No such file exists"),
    (["file", b"caf\xe9-\xff.txt"], 0, "No such file exists"),
    (["file", "--", "-" + LONG_PATH], 0, "No such file exists"),
    (["file", "a" * 255], 0, "No such file exists"),
]


def expand(arg: str | bytes, names: dict[str, str]) -> str | bytes:
    if isinstance(arg, bytes):
        return arg.replace(b"{missing}", os.fsencode(names["missing"]))
    return arg.format(**names) if "{" in arg else arg


@pytest.mark.slow
def test_cli_rejects_bad_arguments_with_one_error_line(project: Path, tmp_path: Path) -> None:
    (project / "escape").symlink_to(tmp_path, target_is_directory=True)
    names = {"outside": str(tmp_path / "elsewhere"), "afile": str(project / "src" / "app.py"),
             "missing": str(tmp_path / "missing-dir")}
    assert run_cli(["checkpoint"], project).returncode == 0
    failures = []
    for argv, status, needle in CLI_CASES:
        args = [expand(a, names) for a in argv]
        proc = run_cli(args, project)
        err = proc.stderr.decode("utf-8", "replace")
        out = proc.stdout.decode("utf-8", "replace")
        problems = []
        if proc.returncode != status:
            problems.append(f"exit {proc.returncode}, expected {status}")
        if "Traceback" in err or "Traceback" in out:
            problems.append("traceback")
        if status == 2:
            if not (err.startswith("code-trajectory: error: ") and err.count("\n") == 1):
                problems.append("stderr is not one `code-trajectory: error:` line")
            if out:
                problems.append("stdout not empty")
            if needle not in err:
                problems.append(f"{needle!r} not in stderr")
        elif needle not in out:
            problems.append(f"{needle!r} not in stdout")
        if problems:
            failures.append(f"{argv!r}: {', '.join(problems)}\n  stderr: {err[-400:]!r}")
    report("inputs_cli", f"inputs (CLI): {len(CLI_CASES)} bad command lines, {len(failures)} failures",
           cli_cases=len(CLI_CASES), failures=len(failures))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("argv", [["log", "--limit", "abc"], ["file", "-rf"], ["intent"], ["no-such-command"],
                                  ["checkpoint", "-m"]], ids=["limit-abc", "file-rf", "missing-arg", "command",
                                                              "option-without-value"])
def test_cli_usage_errors_are_one_line(project: Path, argv: list[str]) -> None:
    proc = run_cli(argv, project)
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert err.startswith("code-trajectory: error: ") and err.count("\n") == 1, err


def test_cli_non_utf8_intent_under_a_utf8_locale(project: Path) -> None:
    proc = run_cli(["intent", b"caf\xe9"], project, PYTHONIOENCODING="utf-8")
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert proc.returncode in (0, 2)
    if proc.returncode == 2:
        assert err.startswith("code-trajectory: error: ") and err.count("\n") == 1


LONG_NAME_BUG = (
    "product bug: a path component longer than NAME_MAX (255 bytes) makes Path.is_dir()/exists() raise "
    "OSError(ENAMETOOLONG) in RecordingPolicy.explain (src/code_trajectory/ignore.py:237, reached from "
    "ProjectSession.file_trajectory, service.py:318, also `(self.root / rel).exists()` there): the MCP tool answers "
    "'get_file_trajectory failed unexpectedly (OSError: [Errno 36] File name too long ...)' and the CLI `file` "
    "command dies with a traceback (exit 1) instead of a clear error or a 'no such file' answer")


def test_cli_file_with_a_1000_character_name(project: Path) -> None:
    proc = run_cli(["file", LONG_NAME], project)
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err[-300:]
    assert proc.returncode in (0, 2)


def test_get_file_trajectory_with_a_1000_character_name(project: Path) -> None:
    session = ProjectSession(project, TrajectorySettings.load(project))
    try:
        session.start()
        history_service.file_trajectory(session, LONG_NAME)  # an answer, or a TrajectoryError with a message
    except Exception as exc:  # noqa: BLE001
        from code_trajectory.core.errors import TrajectoryError

        assert isinstance(exc, TrajectoryError), repr(exc)
    finally:
        session.close()


def test_a_path_longer_than_any_the_system_opens_is_refused_in_words(project: Path) -> None:
    # a 50 MB filepath took 4 s, then "git log -z failed to run: [Errno 7] Argument list too long"
    session = ProjectSession(project, TrajectorySettings.load(project))
    try:
        session.start()
        for path in ("a" * 5_000_000, "é" * 2049):
            with pytest.raises(InvalidArgumentError, match="no path in a project is longer than 4096 bytes"):
                history_service.file_trajectory(session, path)
        with pytest.raises(InvalidArgumentError, match="no file name can hold"):  # was a UnicodeEncodeError
            history_service.file_trajectory(session, "src/\ud800.py")
    finally:
        session.close()


# -- (c) the tree's oddities ---------------------------------------------------------------------------------

def test_odd_files_are_recorded_or_skipped_and_every_query_answers(project: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    raw_name = os.fsdecode(b"latin1-\xe9-\xff.txt")
    long_path = "/".join(["L" * 199] * 5) + "/deep.txt"  # 1,000+ characters, components < 255 bytes
    name_255 = "c" * 251 + ".txt"
    assert len(long_path) >= 1000 and len(os.fsencode(name_255)) == 255
    write(project, raw_name, "not utf-8 name\n")
    write(project, long_path, "deep\n")
    write(project, name_255, "255 bytes\n")
    binary = bytes(range(256)) * 64 + b"\0\xff\0"
    write(project, "bin/blob.dat", binary)
    with open(project / "huge.bin", "wb") as f:
        f.truncate(200 * 1024 * 1024)  # sparse: no disk used
    (project / "loop").symlink_to("loop")
    (project / "etc-link").symlink_to("/etc")
    os.mkfifo(project / "fifo")
    monkeypatch.chdir(project)  # AF_UNIX paths are limited to 108 bytes: bind a relative name
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind("sock")
    monkeypatch.chdir(tmp_path)
    recorded = {raw_name: "100644", long_path: "100644", name_255: "100644", "bin/blob.dat": "100644",
                "huge.bin": "100644", "loop": "120000", "etc-link": "120000"}
    skipped = ["fifo", "sock"]
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    answers: dict[str, str] = {}
    try:
        with anyio.from_thread.start_blocking_portal("asyncio") as portal:
            with portal.wrap_async_context_manager(Client(build_server(service))) as client:
                configured = portal.call(client.call_tool, "configure_project", {"path": str(project)})
                assert not configured.is_error, answer_text(configured)
                assert service.project().wait_started(60)
                assert service.project().import_error is None, service.project().import_error
                checkpoint = portal.call(client.call_tool, "checkpoint", {"message": "odd files"})
                assert not checkpoint.is_error, answer_text(checkpoint)
                for rel in [*recorded, *skipped]:
                    result = portal.call(client.call_tool, "get_file_trajectory", {"filepath": rel})
                    text = answer_text(result)
                    assert text.strip() and not GENERIC_CRASH.search(text), (rel, text[:300])
                    answers[rel] = ("error: " if result.is_error else "") + text
                summary = portal.call(client.call_tool, "get_session_summary", {})
                assert not summary.is_error
    finally:
        service.close()
        sock.close()

    listing = run_git("--git-dir=.trajectory", "ls-tree", "-r", "-z", "--full-tree", "refs/heads/shadow/main",
                      cwd=project).stdout
    entries = {}
    for record in listing.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            entries[os.fsdecode(path)] = meta.split()
    for rel, mode in recorded.items():
        assert rel in entries, f"{rel[:60]!r} was not recorded"
        assert entries[rel][0].decode() == mode, rel[:60]
    for rel in skipped:
        assert rel not in entries, f"{rel} must be skipped"

    def blob(rel: str) -> bytes:
        return run_git("--git-dir=.trajectory", "cat-file", "blob", entries[rel][2].decode(), cwd=project).stdout

    assert blob("huge.bin").startswith(OVERSIZE_MARKER) and b"size: 209715200 bytes" in blob("huge.bin")
    assert blob("bin/blob.dat") == binary
    assert blob("loop") == b"loop" and blob("etc-link") == b"/etc"
    assert blob(raw_name) == b"not utf-8 name\n"
    assert blob(long_path) == b"deep\n"
    # answers: recorded files show their history; the FIFO and the socket are "not recorded"; the two links
    # are recorded as links, and a query through them is refused with a message (it would resolve outside / loop)
    for rel in [raw_name, long_path, name_255, "bin/blob.dat", "huge.bin"]:
        assert answers[rel].startswith("# Trajectory of"), (rel[:60], answers[rel][:300])
    assert "not stored: 200.0 MiB" in answers["huge.bin"] or "content not recorded" in answers["huge.bin"], \
        answers["huge.bin"][:600]
    for rel in skipped:
        assert "No snapshot on this shadow branch has recorded this path" in answers[rel], answers[rel][:300]
    for rel in ["loop", "etc-link"]:
        assert answers[rel].startswith("# Trajectory of") or (
            answers[rel].startswith("error: ") and ("symlink" in answers[rel] or "resolve" in answers[rel])), \
            (rel, answers[rel][:300])
    report("inputs_tree", f"inputs (tree): {len(recorded) + len(skipped)} odd files, reconcile ok, "
                          f"{len(answers)} get_file_trajectory answers, 0 crashes",
           odd_files=len(recorded) + len(skipped), recorded=len(recorded), skipped=len(skipped),
           link_answers={rel: answers[rel][:120] for rel in ["loop", "etc-link"]})


@pytest.mark.parametrize("link, target", [("etc-link", "/etc"), ("loop", "loop")])
def test_a_symlink_that_escapes_or_loops_is_recorded_but_its_history_refused(project: Path, link: str,
                                                                             target: str) -> None:
    """Documented choice (README, tool reference): the link itself is recorded (its target string, never
    followed), but a path from a client that resolves outside the project or loops gets a clear tool error, as
    issues 2 and 4 ask for "symlinks that escape"."""
    from code_trajectory.core.errors import InvalidArgumentError

    (project / link).symlink_to(target)
    session = ProjectSession(project, TrajectorySettings.load(project))
    try:
        snap = session.start()
        assert any(c.path == link for c in snap.changes)  # recorded, as a link
        with pytest.raises(InvalidArgumentError) as refused:
            history_service.file_trajectory(session, link)
    finally:
        session.close()
    assert "symlink" in str(refused.value).lower() or "loop" in str(refused.value).lower()
