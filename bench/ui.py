"""First paint and page weight of ``code-trajectory ui`` on a 10,000-snapshot history.

Usage::

    PYTHONPATH=src python bench/ui.py [--snapshots 10000] [--runs 5] [--keep DIR]

Builds a shadow repository of ``--snapshots`` commits in one ``git fast-import`` (the builder of
``tests/support/ui.py``: an import of 40 files, then snapshots touching one or two files, a session gap every
250), optionally writes the commit-graph that the recorder's maintenance keeps (``--commit-graph``), serves it, and
opens the page ``--runs`` times in headless Chromium (Debian's ``/usr/bin/chromium`` through Playwright), printing
per run: the server time of ``GET /`` (first page of 150 rows and the newest snapshot's diff), the browser's
first contentful paint, and the bytes transferred (HTML, CSS, JS, icon). Then it times an older page
(``/fragment/rows`` from the middle of the history), a live poll, and a text filter scanning the whole history.
Target: first paint <= 1 s. Medians are printed last; the machine is shared, so compare runs, not absolutes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent / "tests"))

from code_trajectory.ui.security import cookie_name
from support.ui import build_history, chromium_page, request, running_ui

PAINT = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const bytes = [nav, ...performance.getEntriesByType('resource')].reduce((n, e) => n + (e.transferSize || 0), 0);
  const body = [nav, ...performance.getEntriesByType('resource')].reduce((n, e) => n + (e.decodedBodySize || 0), 0);
  return {fcp: fcp ? fcp.startTime : null, ttfb: nav.responseStart - nav.requestStart, bytes, body,
          rows: document.querySelectorAll('li.snap').length};
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshots", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commit-graph", action="store_true", help="write the commit-graph first (as maintenance)")
    parser.add_argument("--keep", type=Path, help="build the history in this directory and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.keep or Path(tmp) / "project").resolve()
        root.mkdir(parents=True, exist_ok=True)
        if not (root / ".trajectory" / "HEAD").exists():
            started = time.perf_counter()
            oids = build_history(root, args.snapshots)
            print(f"built {len(oids):,} snapshots in {time.perf_counter() - started:.1f} s")
        if args.commit_graph:
            subprocess.run(["git", f"--git-dir={root / '.trajectory'}", "commit-graph", "write", "--reachable",
                            "--changed-paths"], check=True, capture_output=True)
        measure(root, args.runs)
    return 0


def measure(root: Path, runs: int) -> None:
    with running_ui(root) as ui, chromium_page(1400, 900) as (page, requested):
        cookie = {"Cookie": f"{cookie_name(ui.port)}={ui.token}"}
        server, paints, weights = [], [], []
        for i in range(runs):
            started = time.perf_counter()
            status, _, body = request(ui.port, "GET", "/", headers=cookie)
            server.append((time.perf_counter() - started) * 1000)
            page.goto(ui.entry_url if i == 0 else ui.url + "/", wait_until="load")
            page.wait_for_function("() => performance.getEntriesByName('first-contentful-paint').length > 0")
            figures = page.evaluate(PAINT)
            paints.append(figures["fcp"])
            weights.append((figures["bytes"], figures["body"]))
            print(f"run {i + 1}: server GET / {server[-1]:.0f} ms ({len(body):,} bytes), first contentful paint "
                  f"{figures['fcp']:.0f} ms, {figures['rows']} rows, transferred {figures['bytes']:,} bytes "
                  f"(decoded {figures['body']:,})")
        oids = page.evaluate("() => [...document.querySelectorAll('li.snap')].map(li => li.dataset.oid)")
        timed("older page (/fragment/rows from row 150)", ui.port, f"/fragment/rows?cursor={oids[-1]}&prev={oids[-2]}",
              cookie)
        timed("live poll, nothing new", ui.port, f"/api/poll?branch=main&tip={oids[0]}&notes=", cookie)
        timed("text filter, no match (scans 5,000)", ui.port, "/fragment/rows?q=no-such-text", cookie)
        timed("path filter (module_007)", ui.port, "/fragment/rows?path=module_007", cookie)
        timed("file history (module_007, all versions)", ui.port, "/fragment/file?file=src/pkg2/module_007.py", cookie)
        outside = [u for u in requested if not u.startswith(ui.url + "/")]
        print(f"median: server {statistics.median(server):.0f} ms, first contentful paint "
              f"{statistics.median(paints):.0f} ms, page weight {statistics.median(w[1] for w in weights):,.0f} bytes "
              f"decoded; requests outside the server: {len(outside)}")


def timed(label: str, port: int, target: str, headers: dict[str, str]) -> None:
    started = time.perf_counter()
    status, _, body = request(port, "GET", target, headers=headers)
    print(f"{label}: {(time.perf_counter() - started) * 1000:.0f} ms, status {status}, {len(body):,} bytes")


if __name__ == "__main__":
    raise SystemExit(main())
