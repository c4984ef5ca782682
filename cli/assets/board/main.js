// The board's page: the token, reading the board (when the token is given, when the stream
// reconnects after the page missed changes, when the database comes back), applying what
// changed since (on every live change, after the person's own, every 30 s), the header,
// "Needs attention" (attention.js), the view switch, "New list", the 1 s tick (countdowns and
// ages only: nothing is rebuilt), and the announcements of changes.
//
// Each render is measured: performance.getEntriesByName("board:render")[0].duration (ms; the
// last render's); the mark "board:shown" is when the first board was on the page (its
// startTime: ms since the navigation began).

import { hooks, tokenFromPage, useToken, forgetToken, currentToken, request, Unauthorized } from "./api.js";
import { liveHooks, startStream, stopStream, checkReadiness, watchReadiness } from "./live.js";
import { $, show, setText } from "./dom.js";
import { STATUS_DONE, statusWord, duration, listWords } from "./format.js";
import { store, setBoard, applyChanges, applyTodos, conversations, elapsed } from "./store.js";
import { readUrl, writeUrl, wireFilters, fillListOptions, listValue, filtering, archivedShown } from "./filters.js";
import { renderView, wireViews } from "./views.js";
import { search, searching, settle } from "./search.js";
import { renderAttention, tickAttention, wireAttention } from "./attention.js";
import { showLease } from "./todo.js";
import { refreshDetail, wireDetail } from "./detail.js";
import { actionHooks, createList } from "./actions.js";
import { showSelection, wireBulk } from "./bulk.js";
import { announce, wireToast } from "./notices.js";
import * as focus from "./focus.js";

let inFlight = null;       // the read under way (of the board, or of its changes)
let inFlightKind = null;   // its kind: "board" or "changes"
let again = null;          // the read asked for meanwhile: "board" or "changes"
let refreshTimer = null;
let loadError = null;      // why the last read failed (shown until one succeeds)
let focusNext = null;      // a selector to focus once a render shows it (a new list's add box) ...
let focusNextUntil = 0;    // ... within 5 s

// ---- the token -------------------------------------------------------------------------------

function showTokenForm(message) {
  stopStream();
  forgetToken();
  store.board = null;
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  show($("board"), false);
  show($("signout"), false);
  show($("viewer"), false);
  show($("readonly"), false);
  show($("token-panel"), true);
  $("token-message").textContent = message || "";
  $("tenant").textContent = "…";
  $("updated").textContent = "";
  $("token-input").focus();
}

function start(t) {
  useToken(t);
  store.board = null;
  store.cursor = null;
  store.errors.clear();
  store.busy.clear();
  show($("board"), false);   // until this token's board is read
  show($("token-panel"), false);
  show($("signout"), true);
  stopStream();
  refresh();
  startStream();
}

const unauthorized = () => showTokenForm("token refused");
hooks.unauthorized = unauthorized;
hooks.failed = checkReadiness;

// ---- reading the board -----------------------------------------------------------------------

/** How many todos of each list the board reads first; the rest come a page at a time as the
 *  person scrolls to them (views.js). */
const PER_LIST = 30;

/** Reads the board whole. */
const refresh = () => read("board");

/** Applies what changed since the last read (the whole board when nothing was read yet). */
const catchUp = () => read(store.cursor && store.board ? "changes" : "board");

/** One read at a time: a read asked for meanwhile runs after it (a whole read wins; after a
 *  whole read, the changes since it are enough). */
async function read(kind) {
  if (!currentToken()) return;
  if (inFlight) {
    const wanted = kind === "board" && inFlightKind === "board" ? "changes" : kind;
    if (again !== "board") again = wanted;
    return;
  }
  const token = currentToken();
  inFlightKind = kind === "board" || !store.cursor ? "board" : "changes";
  inFlight = (async () => {
    try {
      if (kind === "board" || !store.cursor) await readBoard(token);
      else await readChanges(token);
      loadError = null;
    } catch (e) {
      if (e instanceof Unauthorized) return;
      loadError = e.message;
      $("updated").textContent = "could not load the board: " + loadError;
    }
  })();
  try { await inFlight; } finally {
    inFlight = null;
    const next = again;
    again = null;
    if (next) read(next);
  }
}

async function readBoard(token) {
  const data = await request("GET", "/v1/board?per_list=" + PER_LIST);
  if (currentToken() !== token) return;   // signed out, or another token since
  const before = store.board ? new Map(store.byId) : null;
  const newest = newestId();
  setBoard(data);
  render();
  if (searching()) search(render, true);
  if (before) announceChanges(before, store.byId.keys(), newest);
  refreshDetail();
}

/** Todos to read with the next changes whether they changed or not: those whose lease the page
 *  saw run out (a renewal records no event). */
const also = new Set();

async function readChanges(token) {
  const since = store.cursor;
  const ids = [...also].slice(0, 200);
  for (const id of ids) also.delete(id);
  const data = await request("GET", "/v1/board/changes?since=" + encodeURIComponent(since)
    + (ids.length ? "&also=" + ids.join(",") : ""));
  if (currentToken() !== token || store.cursor !== since) return;
  if (data.reload) { again = "board"; return; }
  const newest = newestId();
  const { changed, was } = applyChanges(data);
  render(changed);
  if (searching() && (data.todos || []).length) search(render, true);
  announceChanges(was, (data.todos || []).map((t) => t.id), newest);
  if ((data.todos || []).length) refreshDetail();
}

function scheduleRefresh(ms) {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(catchUp, ms);
}

/** Renders what the store holds: the header, the filters' lists, Needs attention, the view
 *  (of the list view, only the lists in `changed` when given: their keys). */
function render(changed) {
  if (!store.board) return;
  performance.clearMarks("board:render-start");
  performance.clearMeasures("board:render");   // the last render's only
  performance.mark("board:render-start");
  const b = store.board;
  show($("board"), true);
  $("tenant").textContent = b.tenant || "?";
  document.title = (b.tenant ? b.tenant + " · " : "") + "pg_todos board";
  const viewer = b.viewer || {};
  $("viewer").textContent = viewer.label ? "signed in as " + viewer.label : "";
  show($("viewer"), Boolean(viewer.label));
  show($("readonly"), !store.person);
  show($("new-list"), store.person);
  fillListOptions(conversations());
  renderAttention();
  let shown = 0;
  focus.keeping(() => { shown = renderView(changed); });
  showSelection();
  $("filter-count").textContent = countWords(shown);
  $("omitted").textContent = b.conversations_omitted ? b.conversations_omitted + " more lists not shown." : "";
  tick();
  performance.measure("board:render", "board:render-start");
  // the first board shown since the page was opened: from navigation to here
  if (!performance.getEntriesByName("board:shown").length) performance.mark("board:shown");
  if (focusNext && Date.now() < focusNextUntil) {
    const e = document.querySelector(focusNext);
    if (e) { focusNext = null; e.focus(); }
  }
}

/** What the filters show: "showing 3 matching todos", "showing 12 archived todos", … */
function countWords(shown) {
  const total = store.byId.size;
  const s = store.search;
  return !filtering() ? total + " todos read"
    : s && s.error ? "could not search: " + s.error
    : searching() && !s ? "searching…"
    : "showing " + shown + (!s ? " of " + total + " todos read"
                            : s.more ? " (the first 200 " + (archivedShown() ? "archived todos)" : "matches)")
                            : (archivedShown() ? " archived todo" : " matching todo") + (shown === 1 ? "" : "s"));
}

/** The largest todo id the page holds (a larger one is new, a smaller one not shown before
 *  came back from the archive). */
function newestId() {
  let n = 0;
  for (const id of store.byId.keys()) if (id > n) n = id;
  return n;
}

/** Says what changed since the last read: "#12 completed by agent-3" (three at most, then a
 *  count), of the todos `ids` against what they were (`before`: id -> {todo, conversation}),
 *  `newest` the largest id held before. */
function announceChanges(before, ids, newest) {
  const said = [];
  let more = 0;
  for (const id of ids) {
    const now = store.byId.get(id);
    if (!now) continue;
    const { todo: t, conversation } = now;
    const old = before.get(id);
    let words = null;
    // a todo not shown before: new, or (an older id) back from the archive
    if (!old) words = "#" + id + (id > newest ? " added to " : " back in ") + listWords(conversation);
    else if (old.todo.status !== t.status) words = "#" + id + " " + (STATUS_DONE[t.status] || statusWord(t.status));
    if (!words) continue;
    if (said.length < 3) said.push(words + (t.updated_by ? " by " + t.updated_by : ""));
    else more++;
  }
  if (said.length) announce(said.join("; ") + (more ? "; and " + more + " more changes" : ""));
}

// ---- every second: countdowns and ages -------------------------------------------------------

let lapseRefreshAt = 0;

function tick() {
  if (!store.board) return;
  const e = elapsed(), now = Date.now();
  let lapsedNow = false;
  for (const s of document.querySelectorAll("[data-role=lease]")) {
    if (!showLease(s, now)) continue;
    lapsedNow = true;
    const row = s.closest(".todo[data-todo-id]");
    if (row) also.add(Number(row.dataset.todoId));
  }
  for (const s of document.querySelectorAll("#views [data-role=ago]")) {
    if (s.dataset.ago !== undefined) setText(s, "updated " + duration(Number(s.dataset.ago) + e) + " ago");
  }
  tickAttention();
  for (const [id, er] of store.errors) {
    if (er.until > now) continue;
    store.errors.delete(id);
    document.querySelectorAll('.todo[data-todo-id="' + id + '"] [data-role=error]').forEach((x) => x.remove());
  }
  setText($("updated"), "updated " + (e < 5 ? "just now" : duration(e) + " ago")
    + (loadError ? " · could not refresh: " + loadError : ""));
  // A lease that runs out writes nothing, so no event comes: ask the server once it lapses.
  if (lapsedNow && now - lapseRefreshAt > 3000) { lapseRefreshAt = now; scheduleRefresh(700); }
}

// ---- the header's and toolbar's controls -----------------------------------------------------

/** The view switch: a tab list (arrows move between the tabs, and select them). */
function wireTabs() {
  const tabs = [$("tab-list"), $("tab-board")];
  const mark = () => {
    for (const t of tabs) {
      const on = t.dataset.view === store.view;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
    }
  };
  const select = (view, focusIt) => {
    store.view = view;
    mark();
    if (focusIt) tabs.find((t) => t.dataset.view === view).focus();
    writeUrl();
    render();
  };
  for (const t of tabs) {
    t.addEventListener("click", () => select(t.dataset.view, false));
    t.addEventListener("keydown", (ev) => {
      const i = tabs.indexOf(t);
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      select(tabs[(to + tabs.length) % tabs.length].dataset.view, true);
    });
  }
  mark();   // the view the address asked for
}

/** "New list": a name, then `create_list`; the new (empty) list shows with its add form focused. */
function wireNewList() {
  const toggle = $("new-list-toggle"), form = $("new-list-form"), input = $("new-list-name"), err = $("new-list-error");
  const open = (on) => {
    show(form, on);
    toggle.setAttribute("aria-expanded", on ? "true" : "false");
    if (on) input.focus();
    else { err.textContent = ""; show(err, false); }
  };
  toggle.addEventListener("click", () => open(form.classList.contains("hidden")));
  $("new-list-cancel").addEventListener("click", () => { open(false); toggle.focus(); });
  form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { open(false); toggle.focus(); } });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const name = input.value.trim();
    if (!name) { input.focus(); return; }
    show(err, false);
    const r = await createList(name);
    if (!r) return;
    if (r.error) { err.textContent = r.error.message; show(err, true); return; }
    const made = (r.data && r.data.list) || name;
    input.value = "";
    open(false);
    if (store.filters.list && store.filters.list !== listValue(made)) {
      store.filters.list = "";
      $("filter-list").value = "";
      writeUrl();
    }
    if (store.view !== "list") $("tab-list").click();
    focusNext = 'form.add[data-conversation="' + CSS.escape(made) + '"] input[name=subject]';
    focusNextUntil = Date.now() + 5000;
    await catchUp();   // (it brings the new list: made on the board, it holds no todo yet)
    announce("List " + made + " made");
  });
}

// ---- start -----------------------------------------------------------------------------------

readUrl();
$("token-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const t = $("token-input").value.trim();
  if (!t) return;
  $("token-input").value = "";
  start(t);
});
$("signout").addEventListener("click", () => showTokenForm(""));
focus.wireSkipLink();
wireAttention();
wireTabs();
wireFilters(() => { render(); search(render); });
wireNewList();
wireViews(render);
wireDetail();
wireBulk(render);
wireToast();

actionHooks.changed = (result) => {
  const data = result && result.data;
  const todos = data && (data.todo ? [data.todo] : data.todos);
  for (const t of todos || []) settle(t);   // (a todo put back leaves the archived todos shown)
  if (todos && todos.length && store.board) render(applyTodos(todos).changed);
  else render();
  catchUp();
};
liveHooks.connected = () => scheduleRefresh(0);   // (a whole read when none was made)
liveHooks.changed = () => scheduleRefresh(100);
liveHooks.unauthorized = unauthorized;
liveHooks.ready = () => refresh();
liveHooks.database = (up) => announce(up ? "The database is back." : "The database is unavailable.");

setInterval(tick, 1000);
// Attention that grows with time alone (no heartbeat, blocked for long): asked again now and then.
setInterval(() => { if (currentToken() && document.visibilityState !== "hidden") catchUp(); }, 30000);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && currentToken()) catchUp();
});
// Leaving the page closes its event stream at once: a browser holds at most 6 connections to
// a host, and streams of pages left behind (or kept in the back/forward cache) would take them
// until the service drops them. Coming back from that cache opens it again.
window.addEventListener("pagehide", () => stopStream());
window.addEventListener("pageshow", (ev) => {
  if (ev.persisted && currentToken()) { startStream(); catchUp(); }
});
window.addEventListener("hashchange", () => {
  if (new URLSearchParams(location.hash.replace(/^#/, "")).get("token")) {
    const t = tokenFromPage();
    if (t) start(t);
  }
});
watchReadiness();

const first = tokenFromPage();
if (first) start(first); else showTokenForm("");
