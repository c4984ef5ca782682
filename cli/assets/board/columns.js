// Dragging a card of the board view to another column, by its handle ([data-control=drag]):
// the `status` op with the version the page read, so the store's rules decide (a refusal
// shows by the card, as a button's does). The keyboard's way is the card's own buttons
// (Start, Complete, Cancel, Reopen). A test drags without a real pointer by dispatching the
// events itself, as reorder.js says, with a `.column[data-column]` (or anything in it) as
// the target.

import { setStatusTo } from "./actions.js";

/** The status a card dropped on a column takes. */
const STATUS_OF = { pending: "pending", in_progress: "in_progress", blocked: "blocked",
                    completed: "completed", canceled: "canceled" };

/** The drag and drop handlers of the board view's root (#columns). */
export function wireColumnDrag(root) {
  let dragged = null;   // { id, from: the column it was dragged from }
  const columnOf = (ev) => (ev.target instanceof Element ? ev.target.closest(".column[data-column]") : null);
  const target = (ev) => {
    const col = columnOf(ev);
    return dragged && col && col.dataset.column !== dragged.from ? col : null;
  };
  const clear = () => {
    dragged = null;
    root.querySelectorAll(".drop-target, .dragging").forEach((e) => e.classList.remove("drop-target", "dragging"));
  };
  root.addEventListener("dragstart", (ev) => {
    const handle = ev.target instanceof Element ? ev.target.closest("[data-control=drag]") : null;
    const card = handle ? handle.closest(".todo") : null;
    const from = card ? card.closest(".column[data-column]") : null;
    if (!from) return;
    dragged = { id: Number(card.dataset.todoId), from: from.dataset.column };
    card.classList.add("dragging");
    ev.dataTransfer.effectAllowed = "move";
    ev.dataTransfer.setData("text/plain", "#" + dragged.id);
  });
  root.addEventListener("dragover", (ev) => {
    const col = target(ev);
    if (!col) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = "move";
    root.querySelectorAll(".column.drop-target").forEach((c) => { if (c !== col) c.classList.remove("drop-target"); });
    col.classList.add("drop-target");
  });
  root.addEventListener("drop", (ev) => {
    const col = target(ev);
    if (!col) return;
    ev.preventDefault();
    const id = dragged.id;
    clear();
    setStatusTo(id, STATUS_OF[col.dataset.column], null);
  });
  root.addEventListener("dragend", clear);
}
