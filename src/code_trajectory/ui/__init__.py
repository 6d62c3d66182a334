"""``code-trajectory ui``: a local timeline page of the shadow history, served on 127.0.0.1 only.

Modules, one job each:

* :mod:`.commands` — the CLI command (``ui_arguments`` / ``ui``): finds the project, prints the URL, opens the browser.
* :mod:`.server` — :class:`~.server.UIServer`: binds the loopback socket, runs uvicorn, stops cleanly.
* :mod:`.security` — the token, its cookie, the Host/Origin checks and the security headers (ASGI middleware).
* :mod:`.app` — the Starlette routes and the Jinja2 templates.
* :mod:`.data` — queries of the shadow history for the page (timeline pages, sessions, snapshots, file histories).
* :mod:`.views` — the plain data those queries return and the templates render.
* :mod:`.render` — unified and side-by-side diffs highlighted with Pygments, server-side.
* :mod:`.actions` — the adapter to the restore service (issue 13).

Nothing here is imported by the other front ends; Starlette, uvicorn, Jinja2 and Pygments load only for ``ui``.
"""
