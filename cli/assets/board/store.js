// What the page knows: the last `/v1/board` answer, indexed, and the page's own state (the
// view, the filters, refusals shown by todos, actions in flight).

export const ERROR_MS = 30000;

export const store = {
  board: null,          // the last /v1/board answer
  fetchedAt: 0,         // Date.now() when it arrived
  skewMs: 0,            // the server's clock minus ours, from board.now
  person: true,         // false: an agent's token, the board is read-only
  byId: new Map(),      // todo id -> { todo, conversation }
  view: "list",         // list | board
  filters: { list: "", status: "", who: "", q: "" },
  expanded: { completed: false, canceled: false },   // the board view's Done and Canceled columns
  errors: new Map(),    // todo id -> { text, until }: a refusal shown by the todo
  busy: new Set(),      // todo ids with an action in flight
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
  store.fetchedAt = Date.now();
  const n = Date.parse(data.now);
  store.skewMs = isNaN(n) ? 0 : n - store.fetchedAt;
  // read-only only when the service says the token is not a person's
  store.person = !(data.viewer && data.viewer.person === false);
  store.byId = new Map();
  for (const c of conversations()) {
    for (const t of c.todos || []) store.byId.set(t.id, { todo: t, conversation: c.conversation_id });
  }
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
