// The archived todos: while the filter "Archived" is on (`archived=true` in the address), the
// views show what `/v1/board/search?archived=true` found (search.js: with the other filters,
// at most 200, read again after each change) instead of the lists, under the heading
// "Archived todos — newest first" (#archived-head, which says "No archived todos" when there
// are none):
// - the list view (#archived-lists): one card per list, `.conv.archived[data-archived-list]`
//   (the pool first, then the lists by name), its todos newest archived first;
// - the board view: the columns by status, all open (views.js).
// Each todo is `li.todo.archived` as todo.js makes it, with when it was archived
// ([data-role=archived]) and, for a person, "Put back" ([data-control=unarchive]) in place of
// the controls of a todo on its list: the `unarchive` op, with the status it had before it was
// archived (its history's newest archiving says which). A refusal is shown by the todo, as
// the other actions' are.

import { $, el, setText, show } from "./dom.js";
import { duration, exactTime, listWords } from "./format.js";
import { request, Unauthorized } from "./api.js";
import { store, secondsSince } from "./store.js";
import { todoElement } from "./todo.js";
import * as actions from "./actions.js";
import { announce } from "./notices.js";
import * as focus from "./focus.js";

const asking = new Set();   // todo ids whose status before the archiving is being read

/** Writes the heading's note: how many, or "No archived todos", or why there are none shown. */
export function renderArchivedHead() {
  const s = store.search && store.search.archived ? store.search : null;
  const n = s ? s.todos.length : 0;
  const others = Object.entries(store.filters).some(([k, v]) => k !== "archived" && v);
  setText($("archived-note"), !s ? "Reading the archived todos…"
    : s.error ? "Could not read the archived todos: " + s.error
    : n === 0 ? "No archived todos" + (others ? " match the filters." : ".")
    : (s.more ? "The first " + n + " archived todos" : n + (n === 1 ? " archived todo" : " archived todos"))
      + (others ? " matching the filters" : "") + "."
      + (store.person ? " Put back returns one to its list, with the status it had." : ""));
}

/** The list view's cards of the archived todos (#archived-lists); returns how many it shows. */
export function renderArchivedList() {
  const s = store.search && store.search.archived ? store.search : null;
  const frag = document.createDocumentFragment();
  let shown = 0, n = 0;
  for (const [key, todos] of s ? s.byList : []) {
    const conversation = todos[0].conversation_id, pool = key === "";
    const titleId = "archived-list-" + (++n);
    frag.append(el("section", { class: "conv archived" + (pool ? " pool" : ""), "data-archived-list": key,
                                "aria-labelledby": titleId },
      el("h2", { id: titleId },
        el("span", { class: "name" + (pool ? " pool" : ""), text: pool ? "Tenant-wide" : conversation }),
        el("span", { class: "counts", text: todos.length + " archived" })),
      el("ul", { class: "todos" },
        ...todos.map((t) => archivedElement(t, { kind: "row", conversation, depth: 0, group: "" })))));
    shown += todos.length;
  }
  $("archived-lists").replaceChildren(frag);
  return shown;
}

/** Empties the list view's archived cards (the filter is off). */
export function clearArchived() {
  $("archived-lists").textContent = "";
}

/** Shows or hides the heading of the archived todos. */
export function showArchivedHead(on) {
  show($("archived-head"), on);
  if (on) renderArchivedHead();
}

/** An archived todo as todo.js makes it (opts as todoElement's), with when it was archived and
 *  "Put back" in place of the controls of a todo on its list. */
export function archivedElement(t, opts) {
  const li = todoElement(t, opts);
  li.classList.add("archived");
  li.dataset.archived = "true";
  for (const x of li.querySelectorAll(":scope > .actions, [data-control=drag], [data-control=select]")) x.remove();
  const ago = secondsSince(t.archived_at);
  const meta = li.querySelector(".meta");
  if (meta && t.archived_at) {
    meta.prepend(el("span", { class: "archived-at", "data-role": "archived", title: exactTime(t.archived_at),
                              text: "archived" + (ago === null ? "" : " " + duration(ago) + " ago") }));
  }
  if (store.person) {
    const back = el("button", { type: "button", "data-control": "unarchive", disabled: store.busy.has(t.id) || asking.has(t.id),
                                "aria-label": "Put back #" + t.id + " on " + listWords(opts.conversation),
                                text: "Put back" });
    li.insertBefore(el("div", { class: "actions" }, back), li.querySelector(":scope > [data-role=error]"));
  }
  return li;
}

/** The status todo id had before its newest archiving (its history says it), or null when
 *  that is not known (it is then put back as it is). */
async function statusBefore(id) {
  let data;
  try {
    data = await request("GET", "/v1/board/todos/" + encodeURIComponent(id));
  } catch (e) {
    if (e instanceof Unauthorized) throw e;
    return null;
  }
  let found = null;
  for (const h of (data && data.history) || []) {
    if (h.changes && h.changes.archived_at && (!found || h.version > found.version)) found = h;
  }
  return found ? found.old_status || found.new_status || null : null;
}

/** "Put back" on archived todo id (key: the control pressed, focus.keyOf): back on its list with
 *  the status it had; it leaves the archived todos, and the focus goes to the next one's
 *  "Put back" (or the heading). */
export async function putBack(id, key) {
  if (store.busy.has(id) || asking.has(id)) return;
  const t = ((store.search && store.search.todos) || []).find((x) => x.id === id);
  if (!t) return;
  const rows = [...document.querySelectorAll("#views .todo.archived[data-todo-id]")].filter((r) => r.offsetParent !== null);
  const at = rows.findIndex((r) => Number(r.dataset.todoId) === id);
  const next = rows[at + 1] || rows[at - 1];
  asking.add(id);
  document.querySelectorAll('#views .todo.archived[data-todo-id="' + id + '"] [data-control=unarchive]')
    .forEach((b) => { b.disabled = true; });
  let status;
  try {
    status = await statusBefore(id);
  } catch (e) {
    return;   // the token was refused: the page is back on its form
  } finally {
    asking.delete(id);
  }
  const result = await actions.unarchive(id, status, key);
  if (!result || !result.data) return;
  announce("#" + id + " put back on " + listWords(t.conversation_id));
  const now = document.activeElement;
  if (!now || now === document.body || now === $("main")) {
    if (!(next && focus.restore({ id: next.dataset.todoId, control: '[data-control="unarchive"]' }))) {
      $("archived-title").focus();
    }
  }
}
