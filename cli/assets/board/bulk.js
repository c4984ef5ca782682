// Several todos at once: each row and card has a checkbox ("Select #N",
// `input[data-control=select]`); while any is checked the selection bar (#bulk) says how many
// and offers Complete, Release claims, Assign to…, Archive (with Undo) and Clear selection.
// Each is one `{"op": "bulk"}` of the todos' own actions, made on what the page read (the
// version, the claim's holder and fence): all or none, a refusal naming the todo it stopped at.

import { $, show } from "./dom.js";
import { store } from "./store.js";
import { write } from "./actions.js";
import { announce, confirmDialog, toast } from "./notices.js";

let rerender = () => {};

/** A todo the page shows: read with the board, or found by a search (past the pages read). */
function todoOf(id) {
  const read = store.byId.get(id);
  if (read) return read.todo;
  return ((store.search && store.search.todos) || []).find((t) => t.id === id) || null;
}

const picked = () => [...store.selected].map(todoOf).filter(Boolean);
const open = (t) => t.status !== "completed" && t.status !== "canceled";
const ids = (todos) => todos.map((t) => "#" + t.id).join(", ");

/** Forgets selected todos the page no longer shows, and shows the bar as the selection is. */
export function showSelection() {
  for (const id of store.selected) if (!todoOf(id) || todoOf(id).archived_at) store.selected.delete(id);
  const n = store.selected.size;
  show($("bulk"), n > 0 && store.person);
  $("bulk-count").textContent = n === 1 ? "1 todo selected" : n + " todos selected";
}

function say(text) {
  $("bulk-error").textContent = text || "";
  show($("bulk-error"), Boolean(text));
}

/** Sends the actions for these todos; done(data) after it succeeded. */
async function send(actions, words, done) {
  say(null);
  if (!actions.length) { say("None of the selected todos can be " + words + "."); return; }
  const r = await write({ op: "bulk", actions });
  if (!r) return;
  if (r.error) {
    const at = r.error.body && Number.isInteger(r.error.body.index) ? actions[r.error.body.index] : null;
    say((at ? "Nothing was changed: #" + at.id + " was refused: " : "Nothing was changed: ") + r.error.message);
    return;
  }
  store.selected.clear();
  showSelection();
  rerender();
  announce(words[0].toUpperCase() + words.slice(1) + ": " + ids(r.data.todos || []));
  if (done) done(r.data);
}

function complete() {
  const todos = picked().filter(open);
  send(todos.map((t) => ({ op: "status", id: t.id, status: "completed", version: t.version })), "completed");
}

async function release() {
  const todos = picked().filter((t) => t.claimed_by);
  if (todos.length) {
    const yes = await confirmDialog({
      title: "Release " + todos.length + (todos.length === 1 ? " claim?" : " claims?"),
      text: todos.map((t) => "#" + t.id + " held by " + t.claimed_by).join("; ")
        + ". Each goes back to pending; its agent's next heartbeat fails.",
      yes: "Release " + ids(todos), no: "Keep the claims",
    });
    if (!yes) return;
  }
  send(todos.map((t) => ({ op: "release", id: t.id, holder: t.claimed_by, fence: t.fence })), "released");
}

function assign() {
  const owner = $("bulk-owner").value.trim() || null;
  const todos = picked().filter((t) => (t.owner || null) !== owner);
  send(todos.map((t) => ({ op: "edit", id: t.id, version: t.version, owner })), owner ? "assigned to " + owner : "unassigned",
       () => { $("bulk-owner").value = ""; });
}

function archive() {
  const todos = picked();
  send(todos.map((t) => ({ op: "archive", id: t.id })), "archived", (data) => {
    if (!data.undo) return;
    toast("Archived " + ids(data.todos || []), { text: "Undo", label: "Undo archiving " + ids(data.todos || []) },
      async () => {
        const back = await write(data.undo);
        if (back && back.error) toast("Could not undo: " + back.error.message);
      });
  });
}

/** Wires the checkboxes (one listener on the views) and the bar; render() draws the views again. */
export function wireBulk(render) {
  rerender = render;
  $("views").addEventListener("change", (ev) => {
    const box = ev.target;
    if (!(box instanceof HTMLInputElement) || box.dataset.control !== "select") return;
    const row = box.closest(".todo[data-todo-id]");
    if (!row) return;
    const id = Number(row.dataset.todoId);
    if (box.checked) store.selected.add(id); else store.selected.delete(id);
    // (the same todo's other checkbox, in the other view, follows on the next render)
    showSelection();
  });
  $("bulk-complete").addEventListener("click", complete);
  $("bulk-release").addEventListener("click", release);
  $("bulk-archive").addEventListener("click", archive);
  $("bulk-assign-form").addEventListener("submit", (ev) => { ev.preventDefault(); assign(); });
  $("bulk-clear").addEventListener("click", () => { store.selected.clear(); say(null); showSelection(); rerender(); });
}
