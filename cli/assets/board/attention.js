// "Needs attention" (#attention): the rows of todo.needs_attention that pass the filters (the
// list, who, status and words, as the views apply them: filters.js), each a button
// (#attention-<id>) that shows its todo in the view, or opens its detail when the view does not
// show it. The heading's button (#attention-toggle, aria-expanded) collapses and expands the
// list and always says how many there are ("2 of 5" when the filters hide some). The choice is
// kept in the tab's sessionStorage; with none made, the list starts collapsed in a window
// 600 px wide or less. A render keeps the focus on the item it was on (or, gone, the one now in
// its place, else the toggle).

import { $, el, setText, show } from "./dom.js";
import { duration, statusWord } from "./format.js";
import { store, elapsed } from "./store.js";
import { listShown, todoShown } from "./filters.js";
import { reveal } from "./views.js";
import { openDetail } from "./detail.js";
import * as focus from "./focus.js";

const KEPT = "pg_todos_attention";      // sessionStorage: "open" or "closed"
const PHONE = "(max-width: 600px)";

let expanded = null;   // whether the list is open; decided on first use

function isExpanded() {
  if (expanded === null) {
    let kept = null;
    try { kept = sessionStorage.getItem(KEPT); } catch (e) { /* storage off: the default */ }
    expanded = kept ? kept === "open" : !matchMedia(PHONE).matches;
  }
  return expanded;
}

/** Whether an attention row passes the filters, as its todo on the board does (the row itself
 *  when the board does not hold its todo, e.g. on a list left out). */
function passes(a) {
  if (!listShown(a.conversation_id)) return false;
  const on = store.byId && store.byId.get(a.todo_id);
  return todoShown(on ? on.todo : a);
}

/** Renders the rows of the board's attention that pass the filters, keeping the focus. */
export function renderAttention() {
  const items = store.board && Array.isArray(store.board.attention) ? store.board.attention : [];
  const omitted = (store.board && store.board.attention_omitted) || 0;
  const shown = items.filter(passes);
  show($("attention"), items.length > 0);
  const all = items.length + omitted;
  setText($("attention-count"), shown.length === items.length ? String(all) : shown.length + " of " + all);
  const frag = document.createDocumentFragment();
  for (const a of shown) frag.append(item(a));
  if (!shown.length && items.length) frag.append(el("li", { class: "muted", text: "None matches the filters." }));
  if (omitted) frag.append(el("li", { class: "muted", text: omitted + " more not shown" }));
  keepingFocus(() => $("attention-list").replaceChildren(frag));
  mark();
}

function item(a) {
  const where = [a.conversation_id === null || a.conversation_id === undefined ? "tenant-wide" : a.conversation_id,
                 a.claimed_by ? "held by " + a.claimed_by : null,
                 a.status ? statusWord(a.status) : null].filter(Boolean).join(" · ");
  return el("li", { "data-attention-todo-id": a.todo_id, "data-reason": a.reason, "data-for-seconds": a.for_seconds },
    el("button", { type: "button", class: "attention-item", id: "attention-" + a.todo_id, title: "show #" + a.todo_id },
      el("span", { class: "reason", "data-role": "reason", text: reasonWords(a.reason, a.for_seconds) }),
      el("span", { class: "id", text: "#" + a.todo_id }),
      el("span", { class: "subject", text: a.subject }),
      el("span", { class: "where", text: where })));
}

/** Runs build(), which replaces the items; an item that had the focus gives it to its
 *  replacement, else to the item now in its place, else to the toggle. */
function keepingFocus(build) {
  const list = $("attention-list");
  const had = list.contains(document.activeElement) ? document.activeElement : null;
  const at = had ? [...list.querySelectorAll("button.attention-item")].indexOf(had) : -1;
  build();
  if (!had || had.isConnected) return;
  const now = [...list.querySelectorAll("button.attention-item")];
  const next = $(had.id) || now[Math.min(at, now.length - 1)] || $("attention-toggle");
  if (next && next.offsetParent !== null) next.focus({ preventScroll: true });
}

function reasonWords(reason, secs) {
  const live = (secs || 0) + elapsed();
  switch (reason) {
    case "lease_lapsed": return "lease lapsed " + duration(live) + " ago";
    case "no_heartbeat": return "no heartbeat for " + duration(live);
    case "blocked": return "blocked for " + duration(live);
    default: return String(reason || "attention").replace(/_/g, " ") + (secs ? " for " + duration(live) : "");
  }
}

/** Every second: how long each has waited. */
export function tickAttention() {
  for (const li of document.querySelectorAll("#attention-list li[data-reason]")) {
    setText(li.querySelector("[data-role=reason]"), reasonWords(li.dataset.reason, Number(li.dataset.forSeconds)));
  }
}

/** The toggle's state, the list shown or not. */
function mark() {
  const on = isExpanded();
  const toggle = $("attention-toggle");
  toggle.setAttribute("aria-expanded", on ? "true" : "false");
  setText(toggle.querySelector(".chevron"), on ? "▾" : "▸");
  $("attention-list").hidden = !on;
  $("attention").classList.toggle("collapsed", !on);
}

/** Wires the toggle and the items' clicks. */
export function wireAttention() {
  $("attention-toggle").addEventListener("click", () => {
    expanded = !isExpanded();
    try { sessionStorage.setItem(KEPT, expanded ? "open" : "closed"); } catch (e) { /* kept for this page only */ }
    mark();
  });
  $("attention-list").addEventListener("click", (ev) => {
    const b = ev.target instanceof Element ? ev.target.closest("button.attention-item") : null;
    if (!b) return;
    const id = Number(b.closest("li").dataset.attentionTodoId);
    if (!reveal(id)) openDetail(id, focus.keyOf(b));
  });
  mark();
}
