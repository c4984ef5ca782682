// Reordering a list in the list view: "Move #N up/down" buttons (and Alt+↑/Alt+↓ anywhere in
// a row), and HTML5 drag and drop by a row's handle ([data-control=drag]). A row moves among
// the rows of its group only: the top-level rows of its list, or the subtasks shown under the
// same parent (data-group). Each move sends `reorder` with the window it changes.
//
// Dropping a row on another one of its group puts it in that row's place (the rows between
// shift by one), whatever the pointer's height on it. A test can drag without a real pointer
// by dispatching the events itself, e.g.:
//   const dt = new DataTransfer();
//   handle.dispatchEvent(new DragEvent("dragstart", {bubbles: true, cancelable: true, dataTransfer: dt}));
//   target.dispatchEvent(new DragEvent("dragover", {bubbles: true, cancelable: true, dataTransfer: dt}));
//   target.dispatchEvent(new DragEvent("drop", {bubbles: true, cancelable: true, dataTransfer: dt}));
//   handle.dispatchEvent(new DragEvent("dragend", {bubbles: true, dataTransfer: dt}));
// (handle: the dragged row's `[data-control=drag]`; target: the `.todo` row whose place it takes).

import { q } from "./dom.js";
import { reorder } from "./actions.js";
import { keyOf } from "./focus.js";
import { announce } from "./notices.js";

/** The rows of a row's group, in the order shown. */
function group(row) {
  return [...row.parentElement.children].filter((r) => r.classList.contains("todo") && r.dataset.group === row.dataset.group);
}

const idOf = (row) => Number(row.dataset.todoId);

/** Moves a row one step (-1 up, +1 down); key: the control to keep focused. */
export function moveBy(row, step, key) {
  const rows = group(row);
  const i = rows.indexOf(row), j = i + step;
  const me = idOf(row);
  if (j < 0 || j >= rows.length) { announce("#" + me + " is already " + (step < 0 ? "first" : "last")); return; }
  const other = idOf(rows[j]);
  reorder(step < 0 ? [me, other] : [other, me], me, key, "Moved #" + me + (step < 0 ? " up" : " down"));
}

/** The drag and drop and keyboard handlers of the list view's root. */
export function wireReorder(root) {
  let dragged = null;   // the dragged row's todo id

  const rowOf = (id) => root.querySelector(".todo[data-todo-id=" + q(id) + "]");
  const clearMarks = () => root.querySelectorAll(".drop-target, .dragging")
    .forEach((e) => e.classList.remove("drop-target", "dragging"));
  // the row an event is over, when the dragged row may take its place
  const targetOf = (ev) => {
    const row = ev.target instanceof Element ? ev.target.closest(".todo") : null;
    const from = dragged === null ? null : rowOf(dragged);
    if (!row || !from || row === from || row.parentElement !== from.parentElement || row.dataset.group !== from.dataset.group) {
      return null;
    }
    return row;
  };

  root.addEventListener("dragstart", (ev) => {
    const handle = ev.target instanceof Element ? ev.target.closest("[data-control=drag]") : null;
    if (!handle) return;
    const row = handle.closest(".todo");
    dragged = idOf(row);
    row.classList.add("dragging");
    if (ev.dataTransfer) {
      ev.dataTransfer.effectAllowed = "move";
      ev.dataTransfer.setData("text/plain", "#" + dragged);
      ev.dataTransfer.setDragImage(row, 12, 12);
    }
  });
  root.addEventListener("dragover", (ev) => {
    const row = targetOf(ev);
    if (!row) return;
    ev.preventDefault();   // allows the drop
    if (ev.dataTransfer) ev.dataTransfer.dropEffect = "move";
    if (!row.classList.contains("drop-target")) {
      root.querySelectorAll(".drop-target").forEach((e) => e.classList.remove("drop-target"));
      row.classList.add("drop-target");
    }
  });
  root.addEventListener("drop", (ev) => {
    const row = targetOf(ev);
    if (!row) return;
    ev.preventDefault();
    const from = rowOf(dragged);
    const ids = group(from).map(idOf);
    const i = ids.indexOf(dragged), j = ids.indexOf(idOf(row));
    const order = ids.filter((x) => x !== dragged);
    order.splice(j, 0, dragged);
    const moved = dragged;
    clearMarks();
    dragged = null;
    reorder(order.slice(Math.min(i, j), Math.max(i, j) + 1), moved, { id: String(moved), control: '[data-control="open"]' },
            "Moved #" + moved + " to position " + (j + 1));
  });
  root.addEventListener("dragend", () => { clearMarks(); dragged = null; });

  root.addEventListener("keydown", (ev) => {
    if (!ev.altKey || (ev.key !== "ArrowUp" && ev.key !== "ArrowDown")) return;
    const row = ev.target instanceof Element ? ev.target.closest(".todo") : null;
    if (!row || !row.querySelector("[data-control=move-up]")) return;   // read-only: no moves
    ev.preventDefault();
    moveBy(row, ev.key === "ArrowUp" ? -1 : 1, keyOf(ev.target));
  });
}
