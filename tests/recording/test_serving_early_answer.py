"""The opening request answered before the SDK is imported (:mod:`code_trajectory.early_answer`), on real pipes.

Each test plays the client on one pipe (what ``serve`` reads) and reads what ``serve`` would write on another;
what the SDK would be given is read back through :meth:`EarlyAnswer.stdin`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

import pytest

from code_trajectory import early_answer, early_store
from code_trajectory.early_answer import AnswerCache, EarlyAnswer, ShippedAnswers

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "client", "version": "1"}}}
RESULT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": False}},
          "serverInfo": {"name": "code-trajectory", "version": "0.1.0"}, "instructions": "call tools"}


class Wire:
    """The client's end of ``serve``'s stdin and stdout, as pipes."""

    def __init__(self) -> None:
        self.server_in, self.client_out = os.pipe()
        self.client_in, self.server_out = os.pipe()

    def send(self, data: bytes, *, close: bool = False) -> None:
        os.write(self.client_out, data)
        if close:
            os.close(self.client_out)

    def answer(self, cache: AnswerCache) -> EarlyAnswer:
        """Run the early reader on what was sent (it returns once its decision is made)."""
        early = EarlyAnswer(self.server_in, self.server_out, cache)
        early.read_first()
        assert early.decided.is_set()
        return early

    def written(self) -> list[dict]:
        """What ``serve`` wrote to the client so far (JSON lines)."""
        os.set_blocking(self.client_in, False)
        try:
            data = os.read(self.client_in, 1 << 20)
        except BlockingIOError:
            data = b""
        return [json.loads(line) for line in data.splitlines()]


def line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


@pytest.fixture
def cache(tmp_path: Path) -> AnswerCache:
    return AnswerCache(tmp_path / "cache" / "opening-answers.json")


def test_a_first_start_leaves_the_answer_to_the_sdk_and_keeps_it(cache: AnswerCache) -> None:
    wire = Wire()
    wire.send(line(INITIALIZE) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    early = wire.answer(cache)
    assert wire.written() == []  # nothing kept yet: the SDK answers
    assert early.awaits(1) and not early.awaits(2) and not early.awaits(True)
    assert early.take_answer(1, RESULT) is False  # the SDK's answer is sent, and kept
    assert not early.awaits(1)
    assert cache.get(early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])) == RESULT


def test_the_next_start_answers_at_once_and_the_sdk_still_reads_every_byte(cache: AnswerCache) -> None:
    key = early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])
    cache.put(key, RESULT)
    wire = Wire()
    opening = line({**INITIALIZE, "id": "first"})
    wire.send(opening)
    early = wire.answer(cache)
    assert wire.written() == [{"jsonrpc": "2.0", "id": "first", "result": RESULT}]  # the request's own id
    later = line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    wire.send(later, close=True)
    stdin = early.stdin()
    assert stdin.read() == (opening + later).decode()  # the SDK handles the opening request as always
    assert early.take_answer("first", RESULT) is True  # its own answer is left out: the client has one
    assert early.take_answer("first", RESULT) is False  # once


def test_an_answer_kept_by_another_build_is_replaced_by_the_sdks(cache: AnswerCache,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    key = early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])
    cache.put(key, {**RESULT, "instructions": "stale"})
    wire = Wire()
    wire.send(line(INITIALIZE))
    early = wire.answer(cache)
    assert wire.written()[0]["result"]["instructions"] == "stale"
    with caplog.at_level(logging.WARNING, logger="code_trajectory.server"):
        assert early.take_answer(1, RESULT) is True  # the client had an answer: the SDK's is not sent twice
    assert "kept by another build" in caplog.text and "the next start sends the SDK's" in caplog.text
    assert cache.get(key) == RESULT


def test_an_upgraded_client_is_answered_from_the_answer_its_last_version_was_given(cache: AnswerCache) -> None:
    """The SDK's answer does not depend on the client's name or version, and clients update themselves often
    (Claude Code): the key leaves them aside, in ``initialize``'s ``clientInfo`` and in the 2026-07-28 envelope."""
    build = early_answer.build_key()
    cache.put(early_answer.request_key(build, "initialize", INITIALIZE["params"]), RESULT)
    wire = Wire()
    wire.send(line({**INITIALIZE, "params": {**INITIALIZE["params"],
                                             "clientInfo": {"name": "client", "version": "2", "title": "C"}}}))
    wire.answer(cache)
    assert wire.written() == [{"jsonrpc": "2.0", "id": 1, "result": RESULT}]
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"}}
    discover = {"_meta": meta}
    upgraded = {"_meta": {**meta, "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.2.0"}}}
    key = early_answer.request_key(build, "server/discover", discover)
    assert key is not None and early_answer.request_key(build, "server/discover", upgraded) == key
    other_capabilities = {"_meta": {**meta, "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}}
    assert early_answer.request_key(build, "server/discover", other_capabilities) != key


@pytest.mark.parametrize("client_info", [None, "claude", {"name": "claude"}, {"name": 1, "version": "1"}, []])
def test_a_client_named_in_a_shape_the_sdk_refuses_is_left_to_the_sdk(cache: AnswerCache, client_info: object) -> None:
    """Only a request the SDK would accept is answered early: a ``clientInfo`` without string ``name`` and
    ``version`` gets the SDK's error, not an answer kept for a well-formed one."""
    build = early_answer.build_key()
    cache.put(early_answer.request_key(build, "initialize", INITIALIZE["params"]), RESULT)
    params = {k: v for k, v in INITIALIZE["params"].items() if k != "clientInfo"}
    if client_info is not None:
        params["clientInfo"] = client_info
    assert early_answer.request_key(build, "initialize", params) is None
    wire = Wire()
    wire.send(line({**INITIALIZE, "params": params}))
    early = wire.answer(cache)
    assert wire.written() == [] and not early.awaits(1)
    assert early.take_answer(1, RESULT) is False  # the SDK's answer (an error here) goes out as it is


def test_other_parameters_or_another_build_are_another_key(cache: AnswerCache,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    build = early_answer.build_key()
    key = early_answer.request_key(build, "initialize", INITIALIZE["params"])
    other_capabilities = {**INITIALIZE["params"], "capabilities": {"roots": {"listChanged": True}}}
    assert early_answer.request_key(build, "initialize", other_capabilities) != key
    other_version = {**INITIALIZE["params"], "protocolVersion": "2025-11-25"}
    assert early_answer.request_key(build, "initialize", other_version) != key
    assert early_answer.request_key(build, "server/discover", INITIALIZE["params"]) != key
    monkeypatch.setattr(early_store, "__version__", "99.0")
    assert early_answer.build_key() != build
    cache.put(key, RESULT)
    wire = Wire()
    wire.send(line(INITIALIZE))
    wire.answer(cache)
    assert wire.written() == []


@pytest.mark.parametrize("first", [
    b"not json\n",
    line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    line({**INITIALIZE, "id": True}),
    line({**INITIALIZE, "id": None}),
    line({**INITIALIZE, "jsonrpc": "1.0"}),
    json.dumps(INITIALIZE).encode(),  # no newline: stdin ended within the line
    b"\xef\xbb\xbf" + line(INITIALIZE),  # JSON to json.loads(bytes), not to the SDK (UTF-8 text, no BOM)
    (json.dumps(INITIALIZE) + "\n").encode("utf-16-le"),
], ids=["not-json", "notification", "other-method", "bool-id", "null-id", "not-2.0", "unterminated", "utf-8-bom",
        "utf-16"])
def test_anything_but_an_opening_request_goes_to_the_sdk_untouched(cache: AnswerCache, first: bytes) -> None:
    key = early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])
    cache.put(key, RESULT)
    wire = Wire()
    wire.send(first, close=True)
    early = wire.answer(cache)
    assert wire.written() == []
    assert early.sent_result is None
    assert early.stdin().buffer.read() == first


def test_a_first_line_without_end_is_given_whole_to_the_sdk(cache: AnswerCache) -> None:
    wire = Wire()
    huge = b"x" * (early_answer.FIRST_LINE_LIMIT + 10)
    early = EarlyAnswer(wire.server_in, wire.server_out, cache)
    reader = threading.Thread(target=early.read_first)
    reader.start()
    written = 0
    while written < len(huge):  # the pipe holds 64 KiB: the reader drains it
        written += os.write(wire.client_out, huge[written:written + 65536])
    reader.join(timeout=60)
    assert early.decided.is_set() and early.opening_key == ""
    os.write(wire.client_out, b"\n")
    os.close(wire.client_out)
    assert early.stdin().buffer.read() == huge + b"\n"


@pytest.mark.parametrize("content", [b"", b"not json", b"[]", b'{"answers": []}', b'{"answers": {"k": 3}}',
                                     b'{"answers": {"k": {"result": "text"}}}'])
def test_a_cache_file_of_any_other_shape_is_empty(cache: AnswerCache, content: bytes) -> None:
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(content)
    assert cache.get("k") is None
    cache.put("k", RESULT)  # and is rewritten whole
    assert cache.get("k") == RESULT


@pytest.mark.parametrize("used", ["9" * 400, "Infinity", "NaN", "true"])
def test_a_kept_answer_used_at_a_time_that_is_no_finite_number_is_the_oldest(cache: AnswerCache, used: str) -> None:
    """A hand-edited file: an integer too large for a float made keeping any answer raise OverflowError (from the
    SDK's answer to a request answered early: the client had it twice, the second an error), ``Infinity`` made every
    later entry infinite."""
    cache.path.parent.mkdir(parents=True)
    cache.path.write_text('{"answers": {"odd": {"result": {"n": 0}, "used": ' + used + "}}}")
    cache.put("k", RESULT)
    kept = json.loads(cache.path.read_text())["answers"]
    assert list(kept) == ["k", "odd"] and cache.get("k") == RESULT  # the newest first
    cache.touch("odd")  # used long ago: now the newest
    assert list(json.loads(cache.path.read_text())["answers"]) == ["odd", "k"]


@pytest.mark.parametrize("value", ["NaN", "-Infinity", '"\\ud800"'])
def test_a_kept_answer_strict_json_cannot_carry_is_left_to_the_sdk_and_replaced(cache: AnswerCache, value: str) -> None:
    """A hand-edited file: Python reads ``NaN`` and a lone surrogate's escape, a client's parser refuses the line (the
    SDK's client dropped the answer and asked again 10 s later)."""
    key = early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])
    cache.put(key, RESULT)
    cache.path.write_text(cache.path.read_text().replace('"instructions":', f'"odd":{value},"instructions":'))
    wire = Wire()
    wire.send(line(INITIALIZE))
    early = wire.answer(cache)
    assert wire.written() == []  # the SDK answers
    assert early.take_answer(1, RESULT) is False
    assert cache.get(key) == RESULT


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = AnswerCache(blocker / "cache" / "opening-answers.json")  # its directory cannot be made
    cache.put("k", RESULT)
    assert cache.get("k") is None


def test_the_cache_keeps_the_latest_entries(cache: AnswerCache) -> None:
    for n in range(early_answer.CACHE_ENTRIES + 3):
        cache.put(f"k{n}", {"n": n})
    kept = json.loads(cache.path.read_text())["answers"]
    assert len(kept) == early_answer.CACHE_ENTRIES
    assert f"k{early_answer.CACHE_ENTRIES + 2}" in kept and "k0" not in kept


def test_a_non_blocking_stdin_loses_no_byte_and_is_waited_for(cache: AnswerCache) -> None:
    """A client may hand over its pipe in non-blocking mode: a read with nothing there yet is waited out, and the
    part of the first line read before it still reaches the SDK (it was dropped, and the SDK's next read failed with
    BlockingIOError: a traceback and exit status 1 from the real ``serve``)."""
    key = early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])
    cache.put(key, RESULT)
    wire = Wire()
    os.set_blocking(wire.server_in, False)
    opening, later = line(INITIALIZE), line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    wire.send(opening[:20])

    def send_the_rest() -> None:  # later than the reads it is waited for (a delay, not a timing assertion)
        for part in (opening[20:], later):
            time.sleep(0.3)
            wire.send(part)

    threading.Thread(target=send_the_rest, daemon=True).start()
    early = EarlyAnswer(wire.server_in, wire.server_out, cache)
    early.read_first()
    assert wire.written() == [{"jsonrpc": "2.0", "id": 1, "result": RESULT}]
    stdin = early.stdin()
    assert stdin.readline() == opening.decode()
    assert stdin.readline() == later.decode()  # waited for, not an error


def test_keeping_an_answer_waits_for_no_disk_flush(cache: AnswerCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's answer to the opening request is sent once it is kept: an fsync there (two, 4-11 ms on this machine,
    far more on a busy disk) delayed the first start's answer for a file that only saves time."""
    def no_fsync(fd: int) -> None:
        raise OSError("fsync called")

    monkeypatch.setattr(os, "fsync", no_fsync)
    cache.put("k", RESULT)
    assert cache.get("k") == RESULT


def test_an_answer_used_at_every_start_is_kept_before_newer_ones(cache: AnswerCache,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cache.put("daily", RESULT)
    clock = [json.loads(cache.path.read_text())["answers"]["daily"]["used"]]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    for n in range(early_answer.CACHE_ENTRIES - 1):  # other clients' answers, written later
        clock[0] += 1
        cache.put(f"k{n}", {"n": n})
    clock[0] += early_store.TOUCH_SECONDS + 1
    cache.touch("daily")  # used again: now the newest
    for n in range(early_answer.CACHE_ENTRIES - 1, early_answer.CACHE_ENTRIES + 2):
        clock[0] += 1
        cache.put(f"k{n}", {"n": n})
    assert cache.get("daily") == RESULT and cache.get("k0") is None


def test_servers_keeping_answers_at_once_keep_every_one(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "opening-answers.json"
    writers = [threading.Thread(target=AnswerCache(path).put, args=(f"k{n}", {"n": n})) for n in range(8)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert sorted(json.loads(path.read_text())["answers"]) == [f"k{n}" for n in range(8)]


def test_a_cache_lock_held_elsewhere_is_waited_for_once(cache: AnswerCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's answer waits for it to be kept: with the lock held by another process (stopped, a stalled disk),
    every answer of a real ``serve`` came LOCK_SECONDS late (4 answers 8 s); after the first wait, none is kept."""
    from filelock import FileLock

    monkeypatch.setattr(early_store, "LOCK_SECONDS", 0.05)
    cache.path.parent.mkdir(parents=True)
    with FileLock(str(cache.path) + ".lock"):  # another descriptor: flock holds against it as against a process
        cache.put("k1", RESULT)
    cache.put("k2", RESULT)
    assert cache.get("k1") is None and cache.get("k2") is None
    assert AnswerCache(cache.path).put("k3", RESULT) is None and AnswerCache(cache.path).get("k3") == RESULT


def test_a_first_start_sends_the_shipped_answer_of_its_build_and_keeps_the_sdks(cache: AnswerCache,
                                                                                tmp_path: Path) -> None:
    """Nothing kept yet (a new install or home): the answer shipped for the request's protocol version goes out at
    once when it was recorded with this build and SDK (:class:`ShippedAnswers`), and the SDK's equal answer is kept;
    shipped by another build, or for another version or a request of another shape, nothing goes out early."""
    shipped = tmp_path / "opening_answers.json"
    marked = {**RESULT, "instructions": "shipped"}
    shipped.write_text(json.dumps({"build": early_answer.shipped_build(),
                                   "answers": {"initialize 2025-06-18": marked}}))
    wire = Wire()
    wire.send(line(INITIALIZE))
    early = EarlyAnswer(wire.server_in, wire.server_out, cache, ShippedAnswers(shipped))
    early.read_first()
    assert wire.written() == [{"jsonrpc": "2.0", "id": 1, "result": marked}]
    assert early.take_answer(1, marked) is True
    assert cache.get(early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])) == marked
    for params in ({**INITIALIZE["params"], "protocolVersion": "2025-11-25"},
                   {k: v for k, v in INITIALIZE["params"].items() if k != "capabilities"}):
        assert ShippedAnswers(shipped).get("initialize", params) is None
    shipped.write_text(json.dumps({"build": {**early_answer.shipped_build(), "mcp": "0.0.1"},
                                   "answers": {"initialize 2025-06-18": marked}}))
    assert ShippedAnswers(shipped).get("initialize", INITIALIZE["params"]) is None


TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
TOOLS = {"tools": [{"name": "get_session_summary", "inputSchema": {"type": "object"}}]}


def opening_key() -> str:
    key = early_answer.request_key(early_answer.build_key(), "initialize", INITIALIZE["params"])
    assert key is not None
    return key


def list_key(message: dict) -> str:
    key = early_answer.request_key(early_answer.listing_build_key(), message["method"], message.get("params"),
                                   opening_key())
    assert key is not None
    return key


def pumped(wire: Wire, cache: AnswerCache) -> tuple[EarlyAnswer, threading.Thread]:
    """The reader of ``serve`` (:meth:`EarlyAnswer.serve_wire`) on ``wire``, on a thread, its first line decided."""
    early = EarlyAnswer(wire.server_in, wire.server_out, cache)
    reader = threading.Thread(target=early.serve_wire, daemon=True)
    reader.start()
    assert early.decided.wait(10)
    return early, reader


def until(condition, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_list_asked_before_the_sdk_reads_is_answered_from_the_answer_kept_and_the_sdk_reads_every_byte_in_order(
        cache: AnswerCache) -> None:
    cache.put(opening_key(), RESULT)
    cache.put(list_key(TOOLS_LIST), TOOLS)
    wire = Wire()
    initialized = line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x", "arguments": {}}})
    wire.send(line(INITIALIZE) + initialized + line(TOOLS_LIST)[:20])  # the list request comes in two pieces
    early, reader = pumped(wire, cache)
    wire.send(line(TOOLS_LIST)[20:] + call)
    until(lambda: len(early.prefix) == len(line(INITIALIZE) + initialized + line(TOOLS_LIST) + call), "all read")
    assert wire.written() == [{"jsonrpc": "2.0", "id": 1, "result": RESULT}, {"jsonrpc": "2.0", "id": 2, "result": TOOLS}]
    wire.send(b"", close=True)
    assert early.stdin().read() == (line(INITIALIZE) + initialized + line(TOOLS_LIST) + call).decode()
    reader.join(10)
    assert early.awaits(2) and not early.awaits(3)  # a tool call waits for the SDK
    assert early.take_answer(2, TOOLS) is True and early.take_answer(2, TOOLS) is False  # its own answer: once
    assert early.take_answer(1, RESULT) is True


def test_a_list_asked_once_the_sdk_reads_is_the_sdks_to_answer_and_its_answer_is_kept(cache: AnswerCache) -> None:
    cache.put(opening_key(), RESULT)
    wire = Wire()
    wire.send(line(INITIALIZE))
    early, reader = pumped(wire, cache)
    stdin = early.stdin()
    assert stdin.readline() == line(INITIALIZE).decode()  # the SDK reads: nothing more is answered early
    cache.put(list_key(TOOLS_LIST), {"tools": []})
    wire.send(line(TOOLS_LIST))
    assert stdin.readline() == line(TOOLS_LIST).decode()
    assert wire.written() == [{"jsonrpc": "2.0", "id": 1, "result": RESULT}]
    assert early.take_answer(2, TOOLS) is False  # sent as the SDK gives it, and kept for the next start
    assert cache.get(list_key(TOOLS_LIST)) == TOOLS
    wire.send(b"", close=True)
    assert stdin.read() == ""
    reader.join(10)


def test_a_listen_request_is_acknowledged_from_the_kept_acknowledgement_naming_it_and_the_sdks_is_dropped_once(
        cache: AnswerCache) -> None:
    cache.put(opening_key(), RESULT)
    listen = {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
              "params": {"notifications": {"toolsListChanged": True}}}
    honored = {"notifications": {"toolsListChanged": True}}
    cache.put(list_key(listen), honored)
    wire = Wire()
    wire.send(line(INITIALIZE) + line(listen), close=True)
    early, reader = pumped(wire, cache)
    reader.join(10)
    ack = {"notifications": {"toolsListChanged": True},
           "_meta": {"io.modelcontextprotocol/subscriptionId": "listen:0"}}
    assert wire.written()[1] == {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack}
    assert not early.awaits("listen:0")  # the subscription's own end (its result) goes out as the SDK sends it
    other = {**ack, "_meta": {"io.modelcontextprotocol/subscriptionId": "listen:1"}}
    assert early.take_acknowledgement(other) is False
    assert early.take_acknowledgement(ack) is True and early.take_acknowledgement(ack) is False
    assert cache.get(list_key(listen)) == honored


def test_without_an_opening_request_first_no_later_line_is_answered(cache: AnswerCache) -> None:
    cache.put(list_key(TOOLS_LIST), TOOLS)
    wire = Wire()
    wire.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + line(TOOLS_LIST), close=True)
    early, reader = pumped(wire, cache)
    reader.join(10)
    assert wire.written() == [] and not early.awaits(2)


def test_a_long_line_ends_the_looking_and_every_byte_still_reaches_the_sdk_in_order(cache: AnswerCache) -> None:
    cache.put(opening_key(), RESULT)
    cache.put(list_key(TOOLS_LIST), TOOLS)
    long_call = line({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "x", "arguments": {"text": "y" * (5 << 20)}}})
    wire = Wire()
    wire.send(line(INITIALIZE))
    early, reader = pumped(wire, cache)
    sender = threading.Thread(target=wire.send, args=(long_call + line(TOOLS_LIST),), kwargs={"close": True})
    sender.start()
    data = early.stdin().read()
    sender.join(10)
    reader.join(10)
    assert data == (line(INITIALIZE) + long_call + line(TOOLS_LIST)).decode()
    assert wire.written() == [{"jsonrpc": "2.0", "id": 1, "result": RESULT}]  # the list after it: the SDK's


@pytest.mark.parametrize("end", [b"\r", b"\r\n"])
def test_lines_ended_as_the_sdk_reads_them_are_answered_and_reach_it_untouched(cache: AnswerCache, end: bytes) -> None:
    """The SDK reads the client's stream as text with universal newlines: a line ended by ``\\r`` alone is a line. The
    first one waited for a ``\\n`` that never came (a real ``serve`` answered nothing until stdin closed; without the
    early answer the SDK answered at once)."""
    cache.put(opening_key(), RESULT)
    cache.put(list_key(TOOLS_LIST), TOOLS)
    wire = Wire()
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    sent = b"".join(line(message).replace(b"\n", end) for message in [INITIALIZE, initialized, TOOLS_LIST])
    wire.send(sent[:-1])
    early, reader = pumped(wire, cache)
    wire.send(sent[-1:])
    answers: list[dict] = []
    until(lambda: answers.extend(wire.written()) or len(answers) == 2, "both answered")
    assert answers == [{"jsonrpc": "2.0", "id": 1, "result": RESULT}, {"jsonrpc": "2.0", "id": 2, "result": TOOLS}]
    wire.send(b"", close=True)
    assert early.stdin().buffer.read() == sent  # every byte, as sent
    reader.join(10)


def test_a_failure_to_keep_the_sdks_answer_never_sends_a_second_answer(cache: AnswerCache,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The client had an answer to the request answered early: whatever fails while the SDK's is kept or compared,
    the SDK's answer is still dropped (not sent as a second answer, an error), and nothing is raised."""
    cache.put(opening_key(), RESULT)
    wire = Wire()
    wire.send(line(INITIALIZE))
    early = wire.answer(cache)

    def broken(*_args: object) -> None:
        raise RuntimeError("the cache cannot be kept")

    monkeypatch.setattr(AnswerCache, "put", broken)
    monkeypatch.setattr(AnswerCache, "touch", broken)
    assert early.take_answer(1, {**RESULT, "instructions": "another"}) is True


def test_the_cache_file_is_parsed_once_while_it_stays_the_same(cache: AnswerCache,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A start asks for about six answers: the file is parsed once for them, and again once it was rewritten."""
    cache.put("a", {"n": 1})
    cache.put("b", {"n": 2})
    parsed = []
    real = early_store.read_json_object
    monkeypatch.setattr(early_store, "read_json_object", lambda *args: parsed.append(1) or real(*args))
    fresh = AnswerCache(cache.path)
    assert [fresh.get("a"), fresh.get("b"), fresh.get("c")] == [{"n": 1}, {"n": 2}, None] and len(parsed) == 1
    fresh.put("c", {"n": 3})
    assert fresh.get("c") == {"n": 3} and fresh.get("a") == {"n": 1}
    assert len(parsed) == 2  # the rewritten file, once (put took the entries parsed before)
