// code-trajectory ui: keyboard, pane loading, older pages, live updates, restore. No library, no build step.
// Every piece of HTML inserted here comes from this server's own templates (escaped server-side).
(() => {
  "use strict";
  const $ = (sel, root = document) => root.querySelector(sel);
  const csrf = $('meta[name="csrf"]').content;
  const rows = $("#rows");
  const pane = $("#pane");
  const more = $("#more");
  const banner = $("#banner");
  const dialog = $("#confirm");
  const live = $("#live");
  if (!rows) return; // the error page

  // the entry URL carries the token: it is in the cookie now, drop it from the address bar and history
  const entry = new URL(location.href);
  if (entry.searchParams.has("token")) {
    entry.searchParams.delete("token");
    history.replaceState(null, "", entry.pathname + entry.search + entry.hash);
  }

  const state = rows.dataset; // branch, q, path, view, tip, notes, points, cursor
  const query = (extra = {}) => {
    const p = new URLSearchParams();
    for (const k of ["branch", "q", "path", "view"]) if (state[k]) p.set(k, state[k]);
    for (const [k, v] of Object.entries(extra)) if (v) p.set(k, v);
    return p.toString();
  };
  const snaps = () => [...rows.querySelectorAll("li.snap")];
  const errorBox = (text) => {
    const div = document.createElement("div");
    div.className = "error";
    div.setAttribute("role", "alert");
    div.textContent = text;
    return div;
  };
  async function getJSON(url) {
    const r = await fetch(url, { headers: { Accept: "application/json" } });
    const data = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) { const e = new Error(data.error || r.statusText); e.status = r.status; throw e; }
    return data;
  }

  // -- selection and the pane ---------------------------------------------------------------------------------------
  function select(li, focus = true) {
    if (!li) return;
    const old = $("li.snap.selected", rows);
    if (old) { old.classList.remove("selected"); old.removeAttribute("aria-current"); }
    li.classList.add("selected");
    li.setAttribute("aria-current", "true");
    if (focus) $("a", li).focus({ preventScroll: true });
    li.scrollIntoView({ block: "nearest" });
  }
  let paneRequest = 0;
  async function loadPane(fragment, pageUrl, push) {
    const mine = ++paneRequest;
    pane.classList.add("loading");
    try {
      const r = await fetch(fragment, { headers: { Accept: "text/html" } });
      const html = await r.text();
      if (mine !== paneRequest) return;
      pane.innerHTML = html;
      pane.scrollTop = 0;
      if (push && pageUrl) history.pushState({ fragment }, "", pageUrl);
    } catch (err) {
      if (mine === paneRequest) pane.replaceChildren(errorBox("The server did not answer: " + err.message));
    } finally {
      if (mine === paneRequest) pane.classList.remove("loading");
    }
  }
  const openSnapshot = (oid, push = true) =>
    loadPane(`/fragment/snapshot/${oid}?${query()}`, `/?${query({ s: oid })}`, push);

  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const restore = e.target.closest("[data-restore]");
    if (restore) { e.preventDefault(); askRestore(restore); return; }
    const undo = e.target.closest("[data-undo]");
    if (undo) { e.preventDefault(); runRestore(requestOf(undo, true)); return; }
    if (e.target.closest("[data-dismiss]")) { banner.hidden = true; banner.replaceChildren(); return; }
    const row = e.target.closest("a.snap-link");
    if (row) { e.preventDefault(); const li = row.closest("li.snap"); select(li); openSnapshot(li.dataset.oid); return; }
    const link = e.target.closest("a[data-pane]");
    if (link) {
      e.preventDefault();
      if (link.dataset.view !== undefined) state.view = link.dataset.view === "unified" ? "" : link.dataset.view;
      loadPane(link.dataset.pane, link.href, true);
    }
  });
  window.addEventListener("popstate", () => {
    const here = new URL(location.href);
    const s = here.searchParams.get("s"), file = here.searchParams.get("file");
    if (file) loadPane(`/fragment/file?${query({ file })}`, null, false);
    else if (s) { select(rows.querySelector(`li.snap[data-oid="${CSS.escape(s)}"]`), false); openSnapshot(s, false); }
  });
  $("#branch")?.addEventListener("change", (e) => e.target.form.submit());

  // -- keyboard: ↑/↓ (or k/j) move through the snapshots, Enter opens, / goes to the text filter -----------------------
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea, dialog")) return;
    const inPane = pane.contains(document.activeElement) && document.activeElement !== pane;
    if (e.key === "/") { e.preventDefault(); $("#q").focus(); return; }
    if (inPane) return; // links and buttons of the pane keep their keys
    const list = snaps();
    if (!list.length) return;
    const current = $("li.snap.selected", rows);
    const i = current ? list.indexOf(current) : -1;
    if (e.key === "ArrowDown" || e.key === "j") {
      e.preventDefault();
      select(list[Math.min(i + 1, list.length - 1)]);
      if (i + 1 >= list.length - 5) loadMore();
    } else if (e.key === "ArrowUp" || e.key === "k") {
      e.preventDefault();
      select(list[Math.max(i - 1, 0)]);
    } else if (e.key === "Enter" && current) {
      e.preventDefault();
      openSnapshot(current.dataset.oid);
    }
  });

  // -- older pages ---------------------------------------------------------------------------------------------------
  let loadingMore = false;
  async function loadMore() {
    if (loadingMore || !state.cursor) return;
    loadingMore = true;
    const last = snaps().pop();
    try {
      const data = await getJSON(`/fragment/rows?${query({ cursor: state.cursor, prev: last && last.dataset.oid })}`);
      rows.insertAdjacentHTML("beforeend", data.html);
      $("#empty")?.remove();
      setCursor(data.next_cursor, data.scanned_out);
    } catch (err) {
      if (err.status === 409) await reloadList();
      else more.replaceChildren(document.createTextNode("Load older snapshots (failed: " + err.message + ")"));
    } finally {
      loadingMore = false;
    }
  }
  function setCursor(cursor, scannedOut) {
    state.cursor = cursor || "";
    more.hidden = !cursor;
    more.textContent = scannedOut ? "Search older snapshots" : "Load older snapshots";
  }
  more.addEventListener("click", loadMore);
  new IntersectionObserver((entries) => { if (entries.some((x) => x.isIntersecting)) loadMore(); },
    { root: $(".timeline"), rootMargin: "400px" }).observe(more);

  async function reloadList() {
    const data = await getJSON(`/fragment/rows?${query()}`);
    const open = $("li.snap.selected", rows)?.dataset.oid;
    rows.innerHTML = data.html;
    state.tip = data.tip || "";
    state.notes = data.notes || "";
    state.points = data.points || "";
    setCursor(data.next_cursor, data.scanned_out);
    if (open) { const li = rows.querySelector(`li.snap[data-oid="${CSS.escape(open)}"]`); if (li) select(li, false); }
  }

  // -- live: ask every 1.5 s what is new ---------------------------------------------------------------------------
  let polling = false;
  async function poll() {
    if (polling || document.hidden) return;
    polling = true;
    const top = $("li.snap", rows);
    try {
      const d = await getJSON(`/api/poll?${query({ tip: state.tip, notes: state.notes, points: state.points || "-", top: top && top.dataset.oid })}`);
      live.classList.remove("off");
      $("#live-text").textContent = "live";
      if (d.reload) { await reloadList(); return; }
      if (d.html) {
        const head = rows.firstElementChild;
        if (d.same_session && head && head.classList.contains("session-head")) head.remove();
        rows.insertAdjacentHTML("afterbegin", d.html);
        $("#empty")?.remove();
        for (const li of snaps().slice(0, d.count)) li.classList.add("fresh");
      }
      state.tip = d.tip;
      state.notes = d.notes;
      if (d.totals) $("#totals").innerHTML = d.totals;
      state.points = d.points_key;
      for (const [oid, html] of Object.entries(d.points || {})) {
        const slot = rows.querySelector(`li.snap[data-oid="${CSS.escape(oid)}"] .points-slot`);
        if (slot) slot.innerHTML = html;
      }
      for (const [oid, html] of Object.entries(d.marks || {})) {
        const slot = rows.querySelector(`li.snap[data-oid="${CSS.escape(oid)}"] .mark-slot`);
        if (slot) slot.innerHTML = html;
      }
    } catch (err) {
      live.classList.add("off");
      $("#live-text").textContent = err.status === 401 ? "signed out" : "offline";
    } finally {
      polling = false;
    }
  }
  setInterval(poll, 1500);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) poll(); });

  // -- diffs that load when opened ---------------------------------------------------------------------------------
  document.addEventListener("toggle", async (e) => {
    const d = e.target;
    if (!(d instanceof HTMLDetailsElement) || !d.open || !d.dataset.lazy || d.dataset.loaded) return;
    d.dataset.loaded = "1";
    const slot = $(".diff-slot", d);
    slot.textContent = "Loading…";
    try {
      const r = await fetch(d.dataset.lazy, { headers: { Accept: "text/html" } });
      slot.innerHTML = await r.text();
    } catch (err) {
      slot.replaceChildren(errorBox(err.message));
      delete d.dataset.loaded;
    }
  }, true);

  // -- restore: preview (dry run) in a dialog, then restore; the banner offers Undo ----------------------------------
  let pending = null;
  const requestOf = (el, undo = false) => ({
    snapshot: el.dataset.snapshot, paths: JSON.parse(el.dataset.paths || "null"), label: el.dataset.label || "", undo,
  });
  async function post(body) {
    const r = await fetch("/api/restore", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-Trajectory-CSRF": csrf },
      body: JSON.stringify(body),
    });
    const data = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) throw new Error(data.error || r.statusText);
    return data;
  }
  async function askRestore(button) {
    pending = requestOf(button);
    $(".what", dialog).textContent = pending.label;
    const preview = $(".preview", dialog);
    const ok = $("[data-confirm]", dialog);
    preview.textContent = "Checking what would change…";
    ok.disabled = true;
    dialog.showModal();
    try {
      const d = await post({ ...pending, dry_run: true });
      preview.innerHTML = d.html;
      ok.disabled = false;
      ok.focus();
    } catch (err) {
      preview.replaceChildren(errorBox(err.message));
    }
  }
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "ok" && pending) runRestore(pending);
    pending = null;
    dialog.returnValue = "";
  });
  async function runRestore(request) {
    banner.hidden = false;
    banner.textContent = request.undo ? "Undoing…" : "Restoring…";
    try {
      const d = await post({ ...request, dry_run: false });
      banner.innerHTML = d.html;
      poll();
    } catch (err) {
      banner.replaceChildren(errorBox(err.message));
    }
  }

  const opened = state.open && rows.querySelector(`li.snap[data-oid="${CSS.escape(state.open)}"]`);
  if (opened) select(opened, false);
  const later = $("[data-load]", pane); // the newest snapshot, fetched once the list is on screen
  if (later) loadPane(later.dataset.load, null, false);
})();
