"""Who may use the page: token, cookie, Host, Origin and CSRF checks, headers, loopback only, no tracebacks."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from code_trajectory.ui import data
from code_trajectory.ui.security import CSRF_HEADER, cookie_name, csrf_value
from support.ui import record_demo, request, running_ui


@pytest.fixture
def ui(project: Path):
    commits = record_demo(project)
    with running_ui(project) as running:
        running.commits = commits
        yield running


def cookie_of(ui) -> str:
    return f"{cookie_name(ui.port)}={ui.token}"


def restore_body(ui) -> bytes:
    return json.dumps({"snapshot": ui.commits["v1"], "paths": ["src/signing.py"], "dry_run": True}).encode()


def test_listens_on_loopback_only(ui) -> None:
    assert ui.server.socket.getsockname()[0] == "127.0.0.1"
    try:
        outside = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    except OSError:
        outside = set()
    for address in outside - {"127.0.0.1"}:
        if address.startswith("127."):
            continue
        with pytest.raises(OSError):
            socket.create_connection((address, ui.port), timeout=2).close()


def test_nothing_without_the_token(ui) -> None:
    for target in ("/", "/static/app.js", "/fragment/rows", f"/fragment/snapshot/{ui.commits['v1']}",
                   "/api/poll?branch=main", "/nope"):
        status, headers, body = request(ui.port, "GET", target)
        assert status == 401, target
        assert ui.commits["v1"][:10].encode() not in body and b"Signer" not in body
        assert "content-security-policy" in headers
    status, _, _ = request(ui.port, "GET", "/?token=" + "x" * 43)
    assert status == 401
    status, _, _ = request(ui.port, "GET", "/", headers={"Cookie": f"{cookie_name(ui.port)}=wrong"})
    assert status == 401
    status, _, _ = request(ui.port, "GET", "/", headers={"Cookie": f"{cookie_name(ui.port + 1)}={ui.token}"})
    assert status == 401  # a cookie of another server (another port) is not ours


def test_token_url_sets_a_strict_http_only_cookie(ui) -> None:
    status, headers, body = request(ui.port, "GET", "/?token=" + ui.token)
    assert status == 200 and ui.commits["checkpoint"].encode() in body
    cookie = headers["set-cookie"]
    assert cookie.startswith(cookie_of(ui) + ";")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert ui.token.encode() not in body  # the page carries the CSRF value, never the token
    assert csrf_value(ui.token).encode() in body
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "no-referrer"
    status, _, _ = request(ui.port, "GET", "/", headers={"Cookie": cookie_of(ui)})
    assert status == 200


def test_other_hosts_are_refused(ui) -> None:
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host."""
    for host in (f"evil.example:{ui.port}", "127.0.0.1", f"127.0.0.1:{ui.port + 1}", f"[::1]:{ui.port}"):
        status, _, _ = request(ui.port, "GET", "/?token=" + ui.token, host=host)
        assert status == 403, host
        status, _, _ = request(ui.port, "GET", "/", headers={"Cookie": cookie_of(ui)}, host=host)
        assert status == 403, host
    status, _, _ = request(ui.port, "GET", "/", headers={"Cookie": cookie_of(ui)}, host=f"localhost:{ui.port}")
    assert status == 200


def test_posts_need_cookie_csrf_header_and_our_origin(ui) -> None:
    json_type = {"Content-Type": "application/json"}
    good = {**json_type, "Cookie": cookie_of(ui), CSRF_HEADER: csrf_value(ui.token)}
    status, _, _ = request(ui.port, "POST", "/api/restore", headers=json_type, body=restore_body(ui))
    assert status == 401  # no cookie
    status, _, _ = request(ui.port, "POST", "/api/restore?token=" + ui.token, headers=json_type,
                           body=restore_body(ui))
    assert status == 401  # the token in the URL does not authorise a POST
    status, _, body = request(ui.port, "POST", "/api/restore", headers={**json_type, "Cookie": cookie_of(ui)},
                              body=restore_body(ui))
    assert status == 403 and CSRF_HEADER.encode() in body  # the cookie alone (what a CSRF would have) is not enough
    status, _, _ = request(ui.port, "POST", "/api/restore", headers={**good, CSRF_HEADER: "0" * 64},
                           body=restore_body(ui))
    assert status == 403
    status, _, _ = request(ui.port, "POST", "/api/restore", headers={**good, "Origin": "https://evil.example"},
                           body=restore_body(ui))
    assert status == 403
    status, _, _ = request(ui.port, "POST", "/api/restore", headers={**good, "Sec-Fetch-Site": "cross-site"},
                           body=restore_body(ui))
    assert status == 403
    status, _, _ = request(ui.port, "POST", "/api/restore", headers={**good, "Origin": ui.url},
                           body=restore_body(ui))
    assert status != 403 and status != 401  # through: 200 with the service, 501 without it
    status, _, _ = request(ui.port, "GET", "/api/restore", headers={"Cookie": cookie_of(ui)})
    assert status == 405


def test_bad_requests_are_messages_not_tracebacks(ui, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = {"Cookie": cookie_of(ui)}
    status, _, body = request(ui.port, "GET", "/fragment/snapshot/zzz", headers=headers)
    assert status == 404 and b"not a snapshot id" in body
    status, _, body = request(ui.port, "GET", "/?view=sideways", headers=headers)
    assert status == 400 and b"view must be one of" in body
    for target in ("/?q=%ff", "/?view=%c3%28", "/fragment/rows?q=a%ffb", "/fragment/rows?cursor=%ff",
                   f"/fragment/diff/{ui.commits['v1']}?symbols=%fe", "/api/poll?tip=%ff", "/?%ff=1", "/?file%ff=1",
                   "/?branch=%ff", "/?path=%ff", "/fragment/rows?path=%ff", "/api/poll?branch=%ff"):
        status, _, body = request(ui.port, "GET", target, headers=headers)
        assert status == 400 and b"not UTF-8" in body and b"Traceback" not in body, (target, status, body[:200])
    # a file name may be bytes that are not UTF-8 (test_ui_paths.py): never a 500 for it either
    for target in ("/fragment/file?file=%ff", f"/fragment/diff/{ui.commits['v1']}?file=%fe", "/?file=%ff"):
        status, _, body = request(ui.port, "GET", target, headers=headers)
        assert status < 500 and b"Traceback" not in body, (target, status, body[:200])
    for outside in ("../../etc/passwd", "/etc/passwd", "src/../../x"):  # refused before git sees them, in our words
        status, _, body = request(ui.port, "GET", f"/fragment/file?file={outside}", headers=headers)
        assert status == 400 and b"outside the project" in body and b"repository" not in body, (outside, body)
    status, _, body = request(ui.port, "GET", "/fragment/rows?cursor=" + "e" * 40, headers=headers)
    assert status == 409 and json.loads(body)["error"].startswith("the history changed")
    post = {**headers, CSRF_HEADER: csrf_value(ui.token), "Content-Type": "application/json"}
    status, _, body = request(ui.port, "POST", "/api/restore", headers=post, body=b"{not json")
    assert status == 400 and b"not valid JSON" in body
    status, _, body = request(ui.port, "POST", "/api/restore", headers=post,
                              body=json.dumps({"snapshot": "HEAD~1"}).encode())
    assert status == 400 and b"40 hexadecimal" in body
    status, _, body = request(ui.port, "POST", "/api/restore", headers=post,
                              body=json.dumps({"snapshot": ui.commits["v1"], "paths": ["../etc/passwd"]}).encode())
    assert status == 400

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals at /home/someone")

    monkeypatch.setattr(data.History, "timeline", boom)
    status, _, body = request(ui.port, "GET", "/", headers=headers)
    assert status == 500 and b"internal error" in body
    assert b"Traceback" not in body and b"secret internals" not in body
