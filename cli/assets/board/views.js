// The two views of the board, both filtered (filters.js):
// - the list view (#view-list): one card per list, `.conv[data-conversation]` (the pool:
//   data-conversation="" data-pool="true"), its todos in list order with subtasks under their
//   parent, and its add form `form.add[data-conversation]`. Cards are kept from one read to
//   the next (what is typed in an add form stays) and stay where they are.
// - the board view (#view-board): columns by status, `.column[data-column=pending|in_progress|
//   blocked|completed|canceled]`, one card per todo; Done and Canceled are collapsed until their
//   heading's button (aria-expanded) opens them (or the status filter asks for their status).
// Each render builds its todos in a DocumentFragment and puts them in at once. A list the
// board read in part ends in "Show more" (`button[data-control=more]`), which reads its next
// page (`/v1/board/page`) when pressed or when it scrolls into sight.
// With the filter "Archived" on, both show the archived todos the search found instead
// (archived.js): the list view in #archived-lists, the board view in its columns, all open.

import { $, el, show, q } from "./dom.js";
import { listWords } from "./format.js";
import { store, convKey, conversations, addPage } from "./store.js";
import { request, Unauthorized } from "./api.js";
import { listShown, todoShown, filtering, archivedShown } from "./filters.js";
import { todoElement } from "./todo.js";
import * as actions from "./actions.js";
import { moveBy, wireReorder } from "./reorder.js";
import { wireColumnDrag } from "./columns.js";
import { openDetail } from "./detail.js";
import { keyOf } from "./focus.js";
import { archivedElement, clearArchived, putBack, renderArchivedList, showArchivedHead } from "./archived.js";

const COLUMNS = [
  { key: "pending", title: "Pending", statuses: ["pending", "deferred"] },
  { key: "in_progress", title: "In progress", statuses: ["in_progress", "review"] },
  { key: "blocked", title: "Blocked", statuses: ["blocked"] },
  { key: "completed", title: "Done", statuses: ["completed"], collapsible: true },
  { key: "canceled", title: "Canceled", statuses: ["canceled"], collapsible: true },
];

const cards = new Map();   // list key -> its card in the list view
let cardsForPerson = null; // whether the cards were made with add forms
let made = 0;              // for unique ids of the cards' headings and inputs
let archivedWas = false;   // whether the last render showed the archived todos

const present = (v) => v !== null && v !== undefined;

/** Renders the view in use (the other one is emptied); of the list view, only the cards of
 *  the lists in `changed` (their keys) when given and the view was the list view already.
 *  Returns how many todos it shows. */
export function renderView(changed) {
  const list = store.view === "list", archived = archivedShown();
  show($("view-list"), list);
  show($("view-board"), !list);
  show($("conversations"), !archived);
  show($("archived-lists"), archived && list);
  showArchivedHead(archived);
  const whole = archived !== archivedWas;   // (the lists' cards were not kept up meanwhile)
  archivedWas = archived;
  if (list && !archived) {
    const partly = changed && !whole && $("columns").childElementCount === 0 && cardsForPerson === store.person;
    $("columns").textContent = "";
    clearArchived();
    return renderList(partly ? changed : null);
  }
  // the list view's cards stay (with what is typed in their add forms), not their todos
  unwatchMore($("conversations"));
  for (const ul of $("conversations").querySelectorAll(".todos")) ul.textContent = "";
  if (list) {
    $("columns").textContent = "";
    return renderArchivedList();
  }
  clearArchived();
  return renderBoard();
}

// ---- the list view ------------------------------------------------------------------------

function renderList(changed) {
  const root = $("conversations");
  const convs = conversations().slice();
  if (!convs.some((c) => !present(c.conversation_id))) convs.push({ conversation_id: null, todos: [] });  // the pool's add form
  if (cardsForPerson !== store.person) {
    for (const card of cards.values()) card.remove();
    cards.clear();
    cardsForPerson = store.person;
  }
  // The first read shows the server's order; after that cards stay where they are (a card that
  // jumps away while a person reaches for its button is no help) and a new list goes in after
  // the one the server lists before it.
  const seen = new Set();
  let prev = null, shown = 0;
  for (const c of convs) {
    const key = convKey(c.conversation_id);
    seen.add(key);
    let card = cards.get(key);
    if (!card) {
      card = makeCard(c.conversation_id);
      cards.set(key, card);
      root.insertBefore(card, prev ? prev.nextSibling : root.firstChild);
    }
    const visible = listShown(c.conversation_id);
    show(card, visible);
    if (visible && (!changed || changed.has(key) || card.dataset.shown === undefined)) {
      card.dataset.shown = String(fillCard(card, c));
    }
    if (visible) shown += Number(card.dataset.shown);
    prev = card;
  }
  for (const [key, card] of cards) {
    if (seen.has(key)) continue;
    const input = card.querySelector("input");
    if (card.contains(document.activeElement) && input && input.value) continue;   // being typed in
    card.remove();
    cards.delete(key);
  }
  return shown;
}

function makeCard(conversation) {
  const pool = !present(conversation);
  const n = ++made;
  const card = el("section", { class: pool ? "conv pool" : "conv", "data-conversation": convKey(conversation),
                               "data-pool": pool ? "true" : null, "aria-labelledby": "list-" + n },
    el("h2", { id: "list-" + n },
      el("span", { class: "name" + (pool ? " pool" : ""), text: pool ? "Tenant-wide" : conversation }),
      el("span", { class: "counts" })),
    el("div", { class: "bar" }, el("span")),
    el("ul", { class: "todos" }));
  if (store.person) card.append(...addForm(conversation, n));
  return card;
}

/** The add form of a list (and the box for its refusal). */
function addForm(conversation, n) {
  const input = el("input", { type: "text", name: "subject", id: "add-" + n, placeholder: "Add a todo…",
                              maxlength: 2000, autocomplete: "off" });
  const button = el("button", { type: "submit", class: "primary", text: "Add" });
  const err = el("div", { class: "error hidden", "data-role": "add-error", role: "alert" });
  const form = el("form", { class: "add", "data-conversation": convKey(conversation),
                            "data-pool": present(conversation) ? null : "true" },
    el("label", { class: "vh", for: "add-" + n, text: "Add a todo to " + listWords(conversation) }),
    input, button);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const subject = input.value.trim();
    if (!subject) { input.focus(); return; }
    const pressed = document.activeElement === button;
    button.disabled = true;
    show(err, false);
    const result = await actions.add(conversation, subject);
    button.disabled = false;
    // a disabled button loses the focus: give it back to where the person was
    if (pressed && document.activeElement === document.body) button.focus();
    if (result && result.data) input.value = "";
    else if (result) { err.textContent = result.error.message; show(err, true); }
  });
  return [form, err];
}

/** The todos of a list the view shows: the filters' matches while there are (search.js). */
const todosOf = (conv) => (store.search ? store.search.byList.get(convKey(conv.conversation_id)) || []
  : Array.isArray(conv.todos) ? conv.todos : []);

/** Fills a list's card; returns how many todos it shows. */
function fillCard(card, conv) {
  const todos = todosOf(conv);
  const open = todos.filter((t) => t.status !== "completed" && t.status !== "canceled").length;
  const done = todos.filter((t) => t.status === "completed").length;
  const canceled = todos.length - open - done;
  const counted = todos.length - canceled;
  card.querySelector(".counts").textContent = todos.length === 0 ? "no todos"
    : open + " open · " + done + " done" + (canceled ? " · " + canceled + " canceled" : "")
      + (conv.todos_omitted ? " · " + conv.todos_omitted + " more not shown" : "");
  card.querySelector(".bar > span").style.width = counted ? (100 * done / counted).toFixed(1) + "%" : "0";

  const shown = todos.filter(todoShown);
  const frag = document.createDocumentFragment();
  if (shown.length === 0) {
    frag.append(el("li", { class: "empty", text: todos.length || store.search ? "No todo here matches the filters." : "Nothing here yet." }));
  }
  // Subtasks right under their parent when it is shown in this list; the rest in list order.
  const ids = new Set(shown.map((t) => t.id));
  const nested = (t) => present(t.parent_id) && t.parent_id !== t.id && ids.has(t.parent_id);
  const kids = new Map();
  for (const t of shown) {
    if (!nested(t)) continue;
    if (!kids.has(t.parent_id)) kids.set(t.parent_id, []);
    kids.get(t.parent_id).push(t);
  }
  const placed = new Set();
  const place = (t, depth, group) => {
    if (placed.has(t.id)) return;
    placed.add(t.id);
    frag.append(todoElement(t, { kind: "row", conversation: conv.conversation_id, depth, group }));
    for (const k of kids.get(t.id) || []) place(k, Math.min(depth + 1, 3), String(t.id));
  };
  for (const t of shown) if (!nested(t)) place(t, 0, "");
  for (const t of shown) place(t, 1, String(t.parent_id));   // subtasks whose parents form a loop: shown anyway
  if (conv.next && !store.search) frag.append(moreItem(conv));
  unwatchMore(card);
  card.querySelector(".todos").replaceChildren(frag);
  return shown.length;
}

// ---- the pages of long lists --------------------------------------------------------------

const PAGE_SIZE = 100;
const reading = new Set();   // keys of the lists whose next page is being read
/** Reads a list's next page once its "Show more" comes within 600 px of the window. */
const nearby = typeof IntersectionObserver === "function"
  ? new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) readMore(e.target.dataset.conversation);
    }, { rootMargin: "600px" })
  : null;

/** Stops watching the "Show more" buttons under `root`, which a render is about to replace
 *  (a watched element stays alive). */
function unwatchMore(root) {
  if (nearby) root.querySelectorAll("button[data-control=more]").forEach((b) => nearby.unobserve(b));
}

/** The last row of a list read in part: "Show more", pressed or scrolled to. */
function moreItem(conv) {
  const key = convKey(conv.conversation_id);
  const n = conv.todos_omitted || 0;
  const b = el("button", { type: "button", class: "more", "data-control": "more", "data-conversation": key,
                           text: "Show more of " + listWords(conv.conversation_id) + (n ? " (" + n + " not shown)" : "") });
  if (nearby) nearby.observe(b);
  return el("li", { class: "more-row" }, b);
}

/** Reads the next page of the list of key `key` and shows it. */
async function readMore(key) {
  const conv = conversations().find((c) => convKey(c.conversation_id) === key);
  if (!conv || !conv.next || reading.has(key)) return;
  reading.add(key);
  const params = new URLSearchParams({ after: conv.next, page_size: String(PAGE_SIZE) });
  if (present(conv.conversation_id)) params.set("list", conv.conversation_id);
  try {
    const body = await request("GET", "/v1/board/page?" + params);
    if (conv.next === params.get("after")) addPage(conv.conversation_id, body);
  } catch (e) {
    if (!(e instanceof Unauthorized)) setMoreError(key, e.message);
    return;
  } finally {
    reading.delete(key);
  }
  pageRead(new Set([key]));
}

/** What main.js does once a page is in: render those lists again. */
let pageRead = () => {};

function setMoreError(key, text) {
  const b = document.querySelector("button[data-control=more][data-conversation=" + q(key) + "]");
  if (b) b.textContent = "Could not read more: " + text + ". Try again";
}

// ---- the board view -----------------------------------------------------------------------

/** The board view's todos, each with its list: the archived ones the search found, or those of
 *  the lists shown that pass the filters. */
function* boardTodos() {
  if (archivedShown()) {
    if (store.search && store.search.archived) for (const t of store.search.todos) yield [t, t.conversation_id];
    return;
  }
  for (const conv of conversations()) {
    if (!listShown(conv.conversation_id)) continue;
    for (const t of todosOf(conv)) if (todoShown(t)) yield [t, conv.conversation_id];
  }
}

function renderBoard() {
  const byColumn = new Map(COLUMNS.map((c) => [c.key, []]));
  const column = new Map();
  for (const c of COLUMNS) for (const s of c.statuses) column.set(s, c.key);
  let shown = 0;
  for (const [t, conversation] of boardTodos()) {
    byColumn.get(column.get(t.status) || "pending").push([t, conversation]);
    shown++;
  }
  const archived = archivedShown();
  const item = archived ? archivedElement : todoElement;
  const frag = document.createDocumentFragment();
  for (const c of COLUMNS) {
    const todos = byColumn.get(c.key);
    // a collapsed column opens by itself when the status filter asks for its status; all are
    // open on the archived todos (mostly done and canceled)
    const collapsible = c.collapsible && !archived;
    const open = !collapsible || store.expanded[c.key] || c.statuses.includes(store.filters.status);
    const titleId = "col-" + c.key + "-title", listId = "col-" + c.key + "-list";
    const count = el("span", { class: "count", text: String(todos.length) });
    const heading = collapsible
      ? el("h2", { id: titleId },
          el("button", { type: "button", class: "toggle", id: "col-" + c.key + "-toggle", "data-column-toggle": c.key,
                         "aria-expanded": open ? "true" : "false", "aria-controls": listId },
            el("span", { class: "chevron", "aria-hidden": "true", text: open ? "▾" : "▸" }), c.title + " ", count))
      : el("h2", { id: titleId }, c.title + " ", count);
    const ul = el("ul", { class: "cards", id: listId, hidden: !open });
    if (open) {
      if (todos.length === 0) ul.append(el("li", { class: "empty", text: filtering() && !archived ? "None match the filters." : "None." }));
      for (const [t, conversation] of todos) ul.append(item(t, { kind: "card", conversation, depth: 0 }));
    }
    frag.append(el("section", { class: "column" + (open ? "" : " collapsed"), "data-column": c.key,
                                "aria-labelledby": titleId }, heading, ul));
  }
  $("columns").replaceChildren(frag);
  return shown;
}

// ---- the controls of both views (one listener each) -------------------------------------

/** Wires the views' controls; rerender(changed?) renders again (a column opened or closed; the
 *  lists of keys `changed` got their next page). */
export function wireViews(rerender) {
  pageRead = rerender;
  const views = $("views");
  views.addEventListener("click", (ev) => {
    const b = ev.target instanceof Element ? ev.target.closest("button") : null;
    if (!b || b.disabled) return;
    if (b.dataset.control === "more") { readMore(b.dataset.conversation); return; }
    if (b.dataset.columnToggle) {
      store.expanded[b.dataset.columnToggle] = !store.expanded[b.dataset.columnToggle];
      rerender();
      return;
    }
    const row = b.closest(".todo[data-todo-id]");
    if (!row) return;
    const id = Number(row.dataset.todoId), key = keyOf(b);
    if (b.dataset.action) actions.setStatus(id, b.dataset.action, key);
    else if (b.dataset.control === "open") openDetail(id, key);
    else if (b.dataset.control === "release") actions.releaseRow(id, key);
    else if (b.dataset.control === "unarchive") putBack(id, key);
    else if (b.dataset.control === "move-up") moveBy(row, -1, key);
    else if (b.dataset.control === "move-down") moveBy(row, 1, key);
  });
  wireReorder($("conversations"));
  wireColumnDrag($("columns"));
}

/** Shows todo id in the view: scrolls to it, flashes it and focuses its subject. False when it
 *  is not shown (filtered out, in a collapsed column). */
export function reveal(id) {
  const view = $(store.view === "board" ? "view-board" : "view-list");
  const row = view.querySelector(".todo[data-todo-id=" + q(id) + "]");
  // (a card the filter hides keeps its old rows: not shown is not there)
  if (!row || row.offsetParent === null) return false;
  row.scrollIntoView({ behavior: "smooth", block: "center" });
  row.classList.remove("flash");
  void row.offsetWidth;   // restarts the animation
  row.classList.add("flash");
  row.querySelector("[data-control=open]").focus({ preventScroll: true });
  return true;
}
