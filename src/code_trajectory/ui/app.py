"""The routes of the page (Starlette) and the Jinja2 templates they fill.

========================================  ===========================================================================
``GET /``                                 the page: timeline of ``branch`` (filters ``q``, ``path``), and the
                                          snapshot ``s`` or the file ``file`` opened beside it (``view`` = ``unified``
                                          or ``split``)
``GET /fragment/rows``                    JSON ``{html, next_cursor, scanned_out, tip, notes}``: a page of rows
                                          (from ``cursor``, below the row ``prev``)
``GET /fragment/snapshot/{oid}``          HTML of a snapshot's pane
``GET /fragment/file``                    HTML of a file's pane (``path``)
``GET /fragment/diff/{oid}``              HTML of one file's diff in a snapshot (``file``; ``symbols=1``: its
                                          changed symbols first)
``GET /api/poll``                         JSON: new rows since ``tip``, new test verdicts since ``notes``, named
                                          points since ``points``
``POST /api/restore``                     JSON in ``{snapshot, paths, dry_run}``, out ``{outcome, html}``
``GET /static/…``                         the stylesheet, the script, the icon, the highlighting CSS
========================================  ===========================================================================

The ``file`` query value is decoded as UTF-8 with ``surrogateescape`` (and encoded back the same way), so a file
name that is not valid UTF-8 survives the round trip; any other value that is not UTF-8 is refused (400). Errors become a message on the page (or ``{"error": ...}``) with a status:
400 bad input, 404 unknown, 409 history rewritten, 500 anything else (the traceback goes to
the server's log on stderr, never to the page).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from code_trajectory.core.errors import InvalidArgumentError, TrajectoryError
from code_trajectory.git.messages import display_path
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.project import confine
from code_trajectory.ui import actions, render
from code_trajectory.ui.data import Filters, History, HistoryChangedError, NotFoundError
from code_trajectory.ui.security import TokenGuard, csrf_value

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
VIEWS = ("unified", "split")
#: Longest filter text accepted, characters.
MAX_FILTER_CHARS = 500


@dataclass(frozen=True)
class State:
    """What the page shows: branch, filters, diff view; encoded in every URL it links to."""

    branch: str
    filters: Filters
    view: str

    def url(self, route: str = "/", /, **extra: str | None) -> str:
        """``route`` with this state's query (empty values left out) plus ``extra`` (None drops a key)."""
        params: dict[str, str | None] = {"branch": self.branch, "q": self.filters.text, "path": self.filters.path,
                                         "view": "" if self.view == "unified" else self.view}
        params.update(extra)
        query = urlencode([(k, v) for k, v in params.items() if v], encoding="utf-8", errors="surrogateescape")
        return route + ("?" + query if query else "")

    def with_view(self, view: str) -> State:
        """This state with another diff view."""
        return State(self.branch, self.filters, view)


#: Query parameters that name a recorded file, which git stores as bytes: decoded with ``surrogateescape``, so a file
#: name that is not UTF-8 survives the round trip (its links carry it so). Every other value (the path and text
#: filters, the branch, cursors, ids) must be UTF-8 text: the page shows it.
BYTES_PARAMS = frozenset({"file"})


def query_args(request: Request) -> dict[str, str]:
    """The query string as ``{name: last value}``, %-decoded as UTF-8 (``surrogateescape`` for :data:`BYTES_PARAMS`).

    Raises:
        InvalidArgumentError: a name, or a value outside :data:`BYTES_PARAMS`, is not UTF-8 once %-decoded
            (``?q=%ff``): the page answers 400.
    """
    raw = request.scope.get("query_string", b"").decode("latin-1")
    args = dict(parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="surrogateescape"))
    for name, value in args.items():
        for text in (name,) if name in BYTES_PARAMS else (name, value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                shown = name.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
                raise InvalidArgumentError(f"the query parameter {shown!r} is not UTF-8 once %-decoded; "
                                           "percent-encode the UTF-8 bytes of the text (e.g. %C3%A9 for é)") from None
    return args


def _text(args: dict[str, str], name: str) -> str:
    value = args.get(name, "").strip()
    if len(value) > MAX_FILTER_CHARS or "\0" in value:
        raise InvalidArgumentError(f"{name} must be at most {MAX_FILTER_CHARS} characters, without NUL bytes")
    return value


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    env.filters["path"] = display_path
    env.filters["hm"] = lambda t: t.strftime("%H:%M:%S")
    env.filters["day"] = lambda t: t.strftime("%a %-d %b %Y")
    env.filters["iso"] = lambda t: t.isoformat(timespec="seconds")
    env.filters["short"] = lambda oid: (oid or "")[:10]
    env.filters["signed"] = lambda n: "" if n is None else f"{n:,}"
    env.globals["split_rows"] = render.split_rows
    return env


class Page:
    """The application: routes over one project's :class:`~code_trajectory.ui.data.History`.

    Args:
        root: the project root.
        repo: its shadow repository (closed by :meth:`close`).
        gap_seconds: the session gap, seconds.
        csrf: the CSRF value the page's POSTs carry (see :mod:`.security`).
        default_branch: the branch shown when the URL names none; None: the project's current branch when it has
            snapshots, else the branch recorded last (looked up on each request, so a checkout is followed).
    """

    def __init__(self, root: Path, repo: ShadowRepo, gap_seconds: float, csrf: str,
                 default_branch: str | None = None) -> None:
        self.root = root
        self.repo = repo
        self.history = History(repo, gap_seconds)
        self.default_branch = default_branch
        self.project = ProjectRepo.discover(root)
        self.csrf = csrf
        self.env = _environment()
        self.warmed = threading.Event()
        self._warming = False

    def start_warm_up(self) -> None:
        """Run :meth:`warm_up` on a daemon thread (:meth:`close` waits for it)."""
        self._warming = True
        threading.Thread(target=self.warm_up, name="ui-warm-up", daemon=True).start()

    def warm_up(self) -> None:
        """Compile the templates, load Pygments' lexer table and read the shown branch's sessions now rather than
        on the first request (:attr:`warmed` is set when done, also after a failure: the request then does it)."""
        try:
            for name in self.env.list_templates(extensions=["html"]):
                self.env.get_template(name)
            render.warm_up()
            tip = self.history.tip(self.current_branch())
            if tip is not None:
                self.history.index(tip)  # the whole chain's sessions: the one part of the first page that grows
        except Exception as exc:  # noqa: BLE001 - a warm-up failure only leaves the work to the first request
            logging.getLogger(__name__).warning("UI warm-up incomplete: %s", exc)
        finally:
            self.warmed.set()

    #: Longest wait of :meth:`close` for a running warm-up, seconds.
    WARM_UP_JOIN_SECONDS = 10.0

    def close(self) -> None:
        """Stop the shadow repository's git processes, once a warm-up that runs has finished (it would start
        ``cat-file`` again after the close, and that process would outlive the page)."""
        if self._warming:
            self.warmed.wait(self.WARM_UP_JOIN_SECONDS)
        self.repo.close()

    # -- helpers -----------------------------------------------------------------------------------------------------

    def current_branch(self) -> str:
        """The branch shown when the URL names none (see the class docstring)."""
        if self.default_branch:
            return self.default_branch
        current = self.project.current_branch()
        if self.history.tip(current) is not None:
            return current
        branches = self.history.branches()
        return branches[0] if branches else current

    def state(self, args: dict[str, str]) -> State:
        branch = args.get("branch") or self.current_branch()
        view = args.get("view") or "unified"
        if view not in VIEWS:
            raise InvalidArgumentError(f"view must be one of {', '.join(VIEWS)}")
        return State(branch, Filters(path=_text(args, "path"), text=_text(args, "q")), view)

    def html(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        text = self.env.get_template(template).render(csrf=self.csrf, project=self.root.name, **context)
        return HTMLResponse(text, status_code=status)

    def fragment(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    # -- routes ------------------------------------------------------------------------------------------------------

    def index(self, request: Request) -> Response:
        args = query_args(request)
        state = self.state(args)
        page = self.history.timeline(state.branch, state.filters)
        pane: tuple[str, object] | None = None  # (kind, what the template shows in the side pane)
        file_path = args.get("file")
        if file_path:
            pane = ("file", self.history.file(state.branch, file_path))
        elif args.get("s"):
            pane = ("snapshot", self.history.snapshot(args["s"], state.branch, state.filters.path))
        elif page.rows:  # the newest snapshot, loaded by the script right after the list is painted
            pane = ("later", page.rows[0].oid)
        branches = self.history.branches()
        if state.branch not in branches:
            branches.insert(0, state.branch)
        return self.html("page.html", state=state, page=page, pane=pane, branches=branches)

    def rows(self, request: Request) -> Response:
        args = query_args(request)
        state = self.state(args)
        page = self.history.timeline(state.branch, state.filters, cursor=args.get("cursor") or None,
                                     prev=args.get("prev") or None)
        html = self.fragment("rows.html", rows=page.rows, state=state)
        return JSONResponse({"html": html, "next_cursor": page.next_cursor, "scanned_out": page.scanned_out,
                             "tip": page.tip or "", "notes": page.notes or "", "points": page.points_key})

    def snapshot(self, request: Request) -> Response:
        state = self.state(query_args(request))
        view = self.history.snapshot(request.path_params["oid"], state.branch, state.filters.path)
        return HTMLResponse(self.fragment("snapshot.html", snap=view, state=state))

    def file(self, request: Request) -> Response:
        args = query_args(request)
        state = self.state(args)
        path = args.get("file") or ""
        if not path:
            raise InvalidArgumentError("file must name a path relative to the project root")
        view = self.history.file(state.branch, confine(self.root, path))  # as get_file_trajectory: git never sees
        # a path outside the project (its error named the project's path in git's words)
        return HTMLResponse(self.fragment("file.html", fv=view, state=state))

    def diff(self, request: Request) -> Response:
        args = query_args(request)
        state = self.state(args)
        diff, symbols = self.history.file_diff(request.path_params["oid"], args.get("file", ""))
        return HTMLResponse(self.fragment("diff.html", diff=diff, state=state,
                                          symbols=symbols if args.get("symbols") else None))

    def poll(self, request: Request) -> Response:
        args = query_args(request)
        state = self.state(args)
        update = self.history.updates(state.branch, args.get("tip") or None, args.get("notes") or None,
                                      state.filters, args.get("top") or None,
                                      None if "points" not in args else args["points"].strip("-"))  # "-": none yet
        body: dict[str, Any] = {"tip": update.tip or "", "notes": update.notes or "", "reload": update.reload,
                                "same_session": update.same_session, "count": len(update.rows), "html": ""}
        if update.rows:
            body["html"] = self.fragment("rows.html", rows=update.rows, state=state)
        if update.total is not None:
            body["totals"] = self.fragment("totals.html", total=update.total, sessions=update.session_count)
        body["points_key"] = update.points_key
        if update.points is not None:  # a point named while nothing changed adds no row: its marker comes here
            body["points"] = {oid: self.fragment("points.html", users=[p for p in found if p.automatic is None],
                                                 auto=[p for p in found if p.automatic is not None])
                              for oid, found in update.points.items()}
        if update.marks is not None:
            body["marks"] = {oid: self.fragment("mark.html", mark=mark) for oid, mark in update.marks.items()}
        return JSONResponse(body)

    async def restore(self, request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise InvalidArgumentError("a restore request is JSON (Content-Type: application/json)")
        try:
            payload = json.loads(await request.body())
        except ValueError:
            raise InvalidArgumentError("the restore request is not valid JSON") from None
        if not isinstance(payload, dict):
            raise InvalidArgumentError("the restore request must be a JSON object")
        snapshot, paths = actions.check_request(payload.get("snapshot"), payload.get("paths"))
        dry_run = payload.get("dry_run", False) is True
        outcome = await run_in_threadpool(actions.restore, self.root, snapshot, paths, dry_run=dry_run)
        template = "restore_preview.html" if dry_run else "restore_done.html"
        html = self.fragment(template, outcome=outcome, undo=bool(payload.get("undo")),
                             label=str(payload.get("label", ""))[:200])
        return JSONResponse({"outcome": outcome.to_json(), "html": html})

    def highlight_css(self, request: Request) -> Response:
        return Response(render.stylesheet(), media_type="text/css")

    # -- errors ------------------------------------------------------------------------------------------------------

    def error(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, NotFoundError):
            status = 404
        elif isinstance(exc, HistoryChangedError):
            status = 409
        elif isinstance(exc, InvalidArgumentError):
            status = 400
        elif isinstance(exc, TrajectoryError):
            status = 409
        else:
            status = 500
        message = str(exc) if status != 500 else "internal error: see the log of `code-trajectory ui` (stderr)"
        path = request.url.path
        if path.startswith("/api/") or path == "/fragment/rows":
            return JSONResponse({"error": message}, status_code=status)
        if path.startswith("/fragment/"):
            return HTMLResponse(Markup('<div class="error" role="alert">{}</div>').format(message), status_code=status)
        return self.html("error.html", status=status, message=message, back="/")


def create_app(root: Path, *, token: str, port: int, gap_seconds: float,
               default_branch: str | None = None) -> tuple[TokenGuard, Page]:
    """Build the ASGI application serving ``root``'s history, behind the token guard.

    Args:
        root: the project root (it has a shadow repository).
        token: the server's token; port: the port it listens on (see :class:`~.security.TokenGuard`).
        gap_seconds: the session gap, seconds.
        default_branch: the branch shown when the URL names none (None: see :class:`Page`).

    Returns:
        ``(application, page)``: the guarded application and its :class:`Page` (close it when the server stops).
    """
    page = Page(root, ShadowRepo(root), gap_seconds, csrf_value(token), default_branch)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        try:
            yield
        finally:
            page.close()

    routes = [
        Route("/", page.index),
        Route("/fragment/rows", page.rows),
        Route("/fragment/snapshot/{oid}", page.snapshot),
        Route("/fragment/file", page.file),
        Route("/fragment/diff/{oid}", page.diff),
        Route("/api/poll", page.poll),
        Route("/api/restore", page.restore, methods=["POST"]),
        Route("/static/highlight.css", page.highlight_css),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={Exception: page.error, TrajectoryError: page.error})
    return TokenGuard(app, token=token, port=port), page

