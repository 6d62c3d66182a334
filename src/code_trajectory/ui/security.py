"""Who may use the page: a random token, its cookie, Host and Origin checks, and the security headers.

The design, against the two neighbours of a loopback server — another user of the machine, who can connect to
127.0.0.1 too, and a web page open in the same browser, which can make the browser send requests to it:

* The server listens on 127.0.0.1 only; every request must name ``127.0.0.1:PORT`` or ``localhost:PORT`` as its
  ``Host`` (else 403), so a DNS-rebinding page (``evil.example`` resolving to 127.0.0.1) is refused.
* The URL printed (and opened) carries a random token (256 bits): ``/?token=…``. A GET with the right token is
  answered and sets the token as an ``HttpOnly; SameSite=Strict`` cookie named after the port (cookies do not tell
  ports apart); the page then drops the token from the address bar (``history.replaceState``). Every later request
  must carry that cookie (else 401); a wrong token is 401 too. ``SameSite=Strict`` keeps the browser from sending
  the cookie with any request a foreign page starts. (No redirect: a redirect after a cross-site navigation, e.g.
  from a terminal link, would itself count as cross-site and lose the strict cookie.)
* A request that changes something is a POST and must also carry, in the ``X-Trajectory-CSRF`` header, a second
  value derived from the token (HMAC-SHA256) that only the page's own HTML contains (a ``<meta>`` tag); a foreign
  page can neither read it nor set a custom header without a CORS preflight, which this server never grants. Its
  ``Origin`` (when sent) must be this server and ``Sec-Fetch-Site`` (when sent) ``same-origin``; else 403.
* Every answer carries a strict Content-Security-Policy (only this server's scripts, styles and images; no inline
  script; no framing), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and
  ``Cache-Control: no-store``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.requests import cookie_parser

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Query parameter carrying the token in the URL that is printed and opened.
TOKEN_PARAM = "token"
#: Header carrying the CSRF value on state-changing requests.
CSRF_HEADER = "X-Trajectory-CSRF"
#: Methods that never change anything (no CSRF value needed).
SAFE_METHODS = frozenset({"GET", "HEAD"})

CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
                           "frame-ancestors 'none'")
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


def new_token() -> str:
    """A fresh random token: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def csrf_value(token: str) -> str:
    """The CSRF value of ``token`` (hex HMAC-SHA256): what the page's POSTs carry in :data:`CSRF_HEADER`."""
    return hmac.new(token.encode(), b"code-trajectory ui csrf", hashlib.sha256).hexdigest()


def cookie_name(port: int) -> str:
    """The cookie holding the token of the server on ``port`` (browsers share cookies across ports)."""
    return f"code_trajectory_ui_{port}"


def allowed_hosts(port: int) -> frozenset[str]:
    """The ``Host`` header values accepted: ``127.0.0.1:PORT`` and ``localhost:PORT``."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode("utf-8", "surrogateescape"), b.encode())


class TokenGuard:
    """ASGI middleware enforcing the rules of the module docstring in front of ``app``.

    Args:
        app: the application to protect.
        token: the token of this server (see :func:`new_token`).
        port: the port the server listens on (for the Host, Origin and cookie-name checks).
    """

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.csrf = csrf_value(token)
        self.port = port
        self.hosts = allowed_hosts(port)
        self.origins = frozenset(f"http://{host}" for host in self.hosts)
        self.cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets here
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self.check(scope)
        if refusal is not None:
            await self._refuse(scope, send, *refusal)
            return
        set_cookie = None
        if any(key == TOKEN_PARAM for key, _ in parse_qsl(scope.get("query_string", b"").decode("latin-1"))):
            set_cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k, v) for k, v in SECURITY_HEADERS if k not in names]
                if set_cookie is not None:
                    message["headers"].append((b"set-cookie", set_cookie))
            await send(message)

        await self.app(scope, receive, secured)

    def check(self, scope: Scope) -> tuple[int, str] | None:
        """Return ``(status, reason)`` when the request must be refused, None when it may go through."""
        headers = Headers(scope=scope)
        if headers.get("host") not in self.hosts:
            return 403, (f"this server answers only to http://127.0.0.1:{self.port} and http://localhost:{self.port} "
                         "(Host header refused)")
        method = scope["method"]
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == TOKEN_PARAM]
        if given:
            if method not in SAFE_METHODS or not _same(given[-1], self.token):
                return 401, "wrong token: open the URL printed by `code-trajectory ui`"
            return None
        cookies = cookie_parser(headers.get("cookie", ""))
        if not _same(cookies.get(self.cookie), self.token):
            return 401, "this page needs the URL printed by `code-trajectory ui` (it carries a token)"
        if method in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, "cross-origin request refused"
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return 403, "cross-site request refused"
        if not _same(headers.get(CSRF_HEADER.lower()), self.csrf):
            return 403, f"missing or wrong {CSRF_HEADER} header"
        return None

    async def _refuse(self, scope: Scope, send: Send, status: int, reason: str) -> None:
        accept = Headers(scope=scope).get("accept", "")
        if scope["path"].startswith("/api/") or "application/json" in accept:
            body = json.dumps({"error": reason}).encode()
            await self._send_plain(send, status, body, content_type=b"application/json")
            return
        title = "Not authorised" if status == 401 else "Refused"
        page = (f"<!doctype html><html lang=en><meta charset=utf-8><title>{title}</title>"
                f"<h1>{title}</h1><p>{_escape(reason)}</p></html>")
        await self._send_plain(send, status, page.encode(), content_type=b"text/html; charset=utf-8")

    @staticmethod
    async def _send_plain(send: Send, status: int, body: bytes, *, content_type: bytes) -> None:
        headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
