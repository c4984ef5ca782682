// The filters' matches, from the service: the page holds only the first todos of long lists,
// so while a filter on todos (status, who, words) is set, the views show what
// `/v1/board/search` found in every todo that is not archived (the words in the subject or the
// description), at most 200, read again after each change. The list filter alone needs none:
// it shows lists as they are. With "Archived" on, the search finds the archived todos instead
// (`archived=true`: by list, the pool first then by name, the newest archived first), with
// the other filters or none.

import { request, Unauthorized } from "./api.js";
import { store, convKey } from "./store.js";
import { archivedShown } from "./filters.js";

const WAIT_MS = 200;   // typing: one search once the keys stop
let timer = null;
let asked = 0;         // the newest search asked for: an older answer is dropped

/** Whether the filters ask for a search (a filter on todos is set, or Archived). */
export const searching = () => Boolean(store.filters.status || store.filters.who || store.filters.q
                                       || archivedShown());

/** The filters as the service's search takes them. */
function params() {
  const f = store.filters, p = new URLSearchParams();
  if (f.list) p.set("list", f.list === "tenant" ? "" : f.list);
  for (const k of ["status", "who", "q"]) if (f[k]) p.set(k, f[k]);
  if (archivedShown()) p.set("archived", "true");
  return p;
}

/** Searches (after WAIT_MS, or now) and calls shown() once the matches are in the store
 *  (`store.search`: {todos, more, byList: list key -> todos, archived}); with no filter on todos,
 *  forgets the matches and calls shown() at once. An error leaves `store.search.error`. */
export function search(shown, now) {
  clearTimeout(timer);
  const mine = ++asked;
  if (!searching()) { store.search = null; shown(); return; }
  timer = setTimeout(async () => {
    let body;
    try {
      body = await request("GET", "/v1/board/search?" + params());
    } catch (e) {
      if (e instanceof Unauthorized || mine !== asked) return;
      store.search = { todos: [], more: false, byList: new Map(), archived: archivedShown(), error: e.message };
      shown();
      return;
    }
    if (mine !== asked) return;
    store.search = { todos: body.todos || [], more: Boolean(body.more), byList: byList(body.todos || []),
                     archived: archivedShown() };
    shown();
  }, now ? 0 : WAIT_MS);
}

/** Todos by the key of their list, in the order given. */
function byList(todos) {
  const lists = new Map();
  for (const t of todos) {
    const key = convKey(t.conversation_id);
    if (!lists.has(key)) lists.set(key, []);
    lists.get(key).push(t);
  }
  return lists;
}

/** Takes the todo a person's write answered with into the archived todos shown, until the
 *  search is read again (after the changes the write made): one put back leaves them, one
 *  still archived shows as it is now. */
export function settle(todo) {
  const s = store.search;
  if (!s || !s.archived || !todo) return;
  const at = s.todos.findIndex((t) => t.id === todo.id);
  if (at < 0) return;
  if (todo.archived_at) s.todos[at] = Object.assign({}, s.todos[at], todo);
  else s.todos.splice(at, 1);
  s.byList = byList(s.todos);
}
