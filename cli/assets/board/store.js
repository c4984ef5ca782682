// What the page knows: the last `/v1/board` answer, indexed, with the changes read since
// (`/v1/board/changes`) and the pages of long lists read since (`/v1/board/page`) applied to
// it; and the page's own state (the view, the filters, refusals shown by todos, actions in
// flight).

export const ERROR_MS = 30000;

export const store = {
  board: null,          // the last /v1/board answer, with what was read since applied
  cursor: null,         // where the next /v1/board/changes starts
  fetchedAt: 0,         // Date.now() when it arrived
  skewMs: 0,            // the server's clock minus ours, from board.now
  person: true,         // false: an agent's token, the board is read-only
  byId: new Map(),      // todo id -> { todo, conversation }
  view: "list",         // list | board
  filters: { list: "", status: "", who: "", q: "", archived: "" },   // archived: "true" or ""
  expanded: { completed: false, canceled: false },   // the board view's Done and Canceled columns
  search: null,         // while a filter on todos (or Archived) is set: its matches (search.js)
  errors: new Map(),    // todo id -> { text, until }: a refusal shown by the todo
  busy: new Set(),      // todo ids with an action in flight
  selected: new Set(),  // todo ids checked for an action on several (bulk.js)
};

/** The key of a list in attributes and maps: "" for the tenant-wide pool. */
export const convKey = (c) => (c === null || c === undefined ? "" : String(c));

/** Seconds since the board was read. */
export const elapsed = () => (Date.now() - store.fetchedAt) / 1000;

/** The server's time now, in ms (our clock corrected by the skew seen on the last read). */
export const serverNow = () => Date.now() + store.skewMs;

/** Takes a new `/v1/board` answer. */
export function setBoard(data) {
  store.board = data;
  store.cursor = typeof data.cursor === "string" ? data.cursor : null;
  setNow(data.now);
  // read-only only when the service says the token is not a person's
  store.person = !(data.viewer && data.viewer.person === false);
  store.byId = new Map();
  for (const c of conversations()) {
    for (const t of c.todos || []) store.byId.set(t.id, { todo: t, conversation: c.conversation_id });
  }
}

/** The server's time of the last read, and how far our clock is from it. */
function setNow(now) {
  store.board.now = now;
  store.fetchedAt = Date.now();
  const n = Date.parse(now);
  store.skewMs = isNaN(n) ? 0 : n - store.fetchedAt;
}

/** The list `conversation` of the board, made (empty, shown first after the pool) when it is
 *  not there yet: a list an agent just started. */
function listOf(conversation) {
  const key = convKey(conversation);
  const all = conversations();
  let c = all.find((x) => convKey(x.conversation_id) === key);
  if (!c) {
    c = { conversation_id: conversation === undefined ? null : conversation, todos: [], todos_omitted: 0, next: null };
    const at = all.length && all[0].conversation_id === null ? 1 : 0;
    all.splice(at, 0, c);
  }
  return c;
}

/** Whether place a (a todo's position and id) comes before place b in list order. */
const before = (a, b) => a.position < b.position || (a.position === b.position && a.id < b.id);

/** The place a list's `next` names (`<position>:<id>`), or null. */
function placeOf(next) {
  const m = /^(-?\d+):(-?\d+)$/.exec(next || "");
  return m ? { position: Number(m[1]), id: Number(m[2]) } : null;
}

/** Puts todo t in its list, in list order; left out when its place is past what the page has
 *  read of a long list (the next page brings it). True when it is shown. */
function place(t) {
  const c = listOf(t.conversation_id);
  const last = placeOf(c.next);
  if (last && before(last, t)) return false;
  const at = c.todos.findIndex((x) => before(t, x));
  c.todos.splice(at < 0 ? c.todos.length : at, 0, t);
  store.byId.set(t.id, { todo: t, conversation: c.conversation_id });
  return true;
}

/** Takes a todo off the list it is shown in. */
function unplace(id) {
  const was = store.byId.get(id);
  if (!was) return;
  const c = conversations().find((x) => convKey(x.conversation_id) === convKey(was.conversation));
  if (c) c.todos = c.todos.filter((x) => x.id !== id);
  store.byId.delete(id);
}

/** Applies todos read since the board (from `/v1/board/changes`, or the answer of a write):
 *  each leaves the place it had and takes its new one (an archived one none). Returns the keys
 *  of the lists that changed and what the todos were before ({id -> {todo, conversation}}). */
export function applyTodos(todos) {
  const changed = new Set(), was = new Map();
  for (const t of todos) {
    const old = store.byId.get(t.id);
    if (old) { was.set(t.id, old); changed.add(convKey(old.conversation)); }
    unplace(t.id);
    if (t.archived_at) continue;
    if (place(t)) changed.add(convKey(t.conversation_id));
  }
  return { changed, was };
}

/** Applies a `/v1/board/changes` answer: its todos (applyTodos), the lists made on the board
 *  meanwhile, "needs attention" now, and the cursor. Returns as applyTodos. */
export function applyChanges(body) {
  const { changed, was } = applyTodos(body.todos || []);
  // a list made on the board meanwhile (which records no event): shown, empty
  for (const name of body.empty_lists || []) {
    if (!conversations().some((c) => c.conversation_id === name)) { listOf(name); changed.add(convKey(name)); }
  }
  store.board.attention = body.attention || [];
  store.board.attention_omitted = body.attention_omitted || 0;
  store.cursor = body.cursor;
  setNow(body.now);
  return { changed, was };
}

/** Adds a page of list `conversation` (`/v1/board/page`'s body) after what the page holds. */
export function addPage(conversation, body) {
  const c = listOf(conversation);
  let added = 0;
  for (const t of body.todos || []) {
    if (store.byId.has(t.id)) continue;
    c.todos.push(t);
    store.byId.set(t.id, { todo: t, conversation: c.conversation_id });
    added++;
  }
  c.next = body.next || null;
  c.todos_omitted = c.next ? Math.max(0, (c.todos_omitted || 0) - added) : 0;
}

/** The board's lists, in the server's order. */
export const conversations = () => (store.board && Array.isArray(store.board.conversations)
  ? store.board.conversations : []);

/** Shows the store's refusal by a todo for ERROR_MS (or until the next action on it). */
export function setError(id, text) {
  store.errors.set(id, { text, until: Date.now() + ERROR_MS });
}

/** How long ago (s, on the server's clock when read) a time was, or null. */
export function secondsSince(ts) {
  if (!ts || !store.board) return null;
  const a = Date.parse(ts), n = Date.parse(store.board.now);
  if (isNaN(a) || isNaN(n)) return null;
  return Math.max(0, (n - a) / 1000);
}
