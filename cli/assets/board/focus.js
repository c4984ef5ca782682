// Focus that survives re-rendering. The views are rebuilt on every read of the board, so a
// control is remembered by what it is (its todo's id and its data-action/data-control, or
// its element id), not as an element, and focused again once the new one is there.

import { $, q } from "./dom.js";
import { store } from "./store.js";

const PENDING_MS = 5000;
let pending = null;   // the control to focus once its view is rebuilt (its own focus was lost)
let pendingUntil = 0; // ... if that happens within PENDING_MS

/** What a focused element is, or null when nothing rebuilt could find it again. */
export function keyOf(e) {
  if (!e || e === document.body) return null;
  const row = e.closest(".todo[data-todo-id]");
  if (row && row.closest("#views")) {
    const control = e.dataset.action ? "[data-action=" + q(e.dataset.action) + "]"
                  : e.dataset.control ? "[data-control=" + q(e.dataset.control) + "]" : null;
    return { id: row.dataset.todoId, control };
  }
  return e.id ? { elementId: e.id } : null;
}

/** Focuses the control of a key in the shown view: the same one, else its partner move button,
 *  else (its buttons changed with its status) its first status button, else its subject.
 *  True when found. */
export function restore(key) {
  if (!key) return false;
  if (key.elementId) {
    const e = $(key.elementId);
    if (e && !e.disabled && e.offsetParent !== null) { e.focus(); return true; }
    return false;
  }
  const view = $(store.view === "board" ? "view-board" : "view-list");
  const row = view.querySelector(".todo[data-todo-id=" + q(key.id) + "]");
  if (!row) return false;
  const tries = [key.control];
  if (key.control === '[data-control="move-up"]') tries.push('[data-control="move-down"]');
  if (key.control === '[data-control="move-down"]') tries.push('[data-control="move-up"]');
  tries.push("[data-action]", '[data-control="open"]');
  for (const sel of tries) {
    const e = sel && row.querySelector(sel);
    if (e && !e.disabled) { e.focus(); return true; }
  }
  return false;
}

/** Remembers a control to focus once it is rendered (within 5 s), when the focus is lost
 *  meanwhile (a disabled button loses it; a todo restored is not shown until the board is
 *  read again). */
export function later(key) {
  pending = key;
  pendingUntil = Date.now() + PENDING_MS;
}

/** Runs a render, keeping the focus: on the same control when the render replaced it, or on
 *  the control asked for by later() when the focus was lost before. */
export function keeping(render) {
  const before = document.activeElement;
  const key = keyOf(before);
  render();
  const now = document.activeElement;
  const lost = !now || now === document.body || now === $("main");   // (main: where a closed toast leaves it)
  if (key && lost && !before.isConnected) {
    restore(key);
  } else if (pending && lost && Date.now() < pendingUntil && !store.busy.has(Number(pending.id))) {
    // restore() focuses (its focusin clears `pending`) or, when the todo is not shown yet, waits
    restore(pending);
  }
}

/** The skip link (#skip, the page's first tab stop, shown when focused): moves the focus to
 *  the views (#views), past the header, Needs attention and the toolbar. */
export function wireSkipLink() {
  $("skip").addEventListener("click", (ev) => {
    ev.preventDefault();   // (no #views in the address)
    $("views").focus();
  });
}

// a control focused by the person (not by restore: it clears `pending` first) wins
document.addEventListener("focusin", () => { pending = null; });
