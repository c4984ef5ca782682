// The board's writes (`POST /v1/board/act`) from the rows and cards: a todo's controls are
// disabled while its write is in flight, a refusal is shown by it ([data-role=error]) for
// 30 s or until the next action on it, and the focus comes back to the control pressed.

import { act, Unauthorized } from "./api.js";
import { q } from "./dom.js";
import { duration, durationExact } from "./format.js";
import { store, setError, serverNow } from "./store.js";
import { announce, confirmDialog, toast } from "./notices.js";
import { ACTIONS } from "./todo.js";
import * as focus from "./focus.js";

/** What main.js does after a write (given its result: see post): show the todo it answered
 *  with, and read what changed since. */
export const actionHooks = { changed() {} };

/** Posts an op: {data} on success, {error} (an ApiError: .status, .message, .body) on a
 *  refusal, null after a 401 (the page is back on the token form). */
async function post(body) {
  try {
    return { data: (await act(body)) || {} };
  } catch (e) {
    if (e instanceof Unauthorized) return null;
    return { error: e };
  }
}

/** An op on todo id from its row or card; key: the control pressed (focus.keyOf). */
async function onTodo(id, body, key) {
  if (store.busy.has(id)) return null;
  store.busy.add(id);
  store.errors.delete(id);
  for (const row of document.querySelectorAll(".todo[data-todo-id=" + q(id) + "]")) {
    row.querySelectorAll("button[data-action], button[data-control]:not([data-control=open])")
      .forEach((b) => { b.disabled = true; });
    row.querySelectorAll("[data-role=error]").forEach((e) => e.remove());
  }
  focus.later(key);
  const result = await post(body);
  store.busy.delete(id);
  if (result && result.error) setError(id, result.error.message);
  actionHooks.changed(result);
  return result;
}

const todo = (id) => (store.byId.get(id) || {}).todo;

/** Start, Complete, Cancel, Reopen: the `status` op with the version the page read. */
export function setStatus(id, action, key) {
  setStatusTo(id, ACTIONS[action].status, key);
}

/** Moves todo id to `status` (a button, or a card dropped on a column): the `status` op with
 *  the version the page read; nothing when it has that status already. */
export function setStatusTo(id, status, key) {
  const t = todo(id);
  if (!t || t.status === status) return;
  onTodo(id, { op: "status", id, version: t.version, status }, key);
}

/** Takes an agent's claim back, once the person confirms (told whether its lease still runs:
 *  leaseEnds, the lease_expires_at read). Resolves the op's result, or null. */
export async function release(id, holder, fence, key, leaseEnds) {
  const yes = await confirmDialog({
    title: "Release the claim on #" + id + "?",
    text: releaseWords(id, holder, leaseEnds),
    yes: "Release #" + id, no: "Keep the claim",
  });
  if (!yes) return null;
  return onTodo(id, { op: "release", id, holder, fence }, key);
}

/** What releasing does, on the server's clock: "agent-7's lease on #9 still runs for 4 min 12 s;
 *  releasing makes its next heartbeat fail." or "agent-7's lease on #9 lapsed 3 min ago." */
export function releaseWords(id, holder, leaseEnds) {
  const ends = leaseEnds ? Date.parse(leaseEnds) : NaN;
  const back = " #" + id + " goes back to pending.";
  if (isNaN(ends)) return holder + " holds #" + id + " with no lease; releasing makes its next heartbeat fail." + back;
  const left = (ends - serverNow()) / 1000;
  if (left >= 1) {
    return holder + "'s lease on #" + id + " still runs for " + durationExact(left)
      + "; releasing makes its next heartbeat fail." + back;
  }
  return holder + "'s lease on #" + id + " lapsed " + (left > -1 ? "just now." : duration(-left) + " ago.") + back;
}

/** Releases a claim from a row or card, with the holder, fence and lease the page read. */
export function releaseRow(id, key) {
  const t = todo(id);
  if (t && t.claimed_by) release(id, t.claimed_by, t.fence, key, t.lease_expires_at);
}

/** Puts these todos of one list in this order (they keep the positions they hold). */
export async function reorder(ids, id, key, words) {
  const result = await onTodo(id, { op: "reorder", ids }, key);
  if (result && result.data) announce(words);
}

/** Posts an op, and reads the board again when it succeeded. The op's result (see post). */
export async function write(body) {
  const result = await post(body);
  if (result && result.data) actionHooks.changed(result);
  return result;
}

/** Adds a todo to a list (null: the pool), under parentId when given. The op's result. */
export function add(conversation, subject, parentId) {
  const body = { op: "add", list: conversation === undefined ? null : conversation, subject };
  if (parentId !== null && parentId !== undefined) body.parent_id = parentId;
  return write(body);
}

/** Archives todo id and offers "Undo" for 10 s; resolves the op's result. */
export async function archive(id) {
  const result = await write({ op: "archive", id });
  if (!result || result.error) return result;
  const undo = result.data && result.data.undo;
  if (undo) {
    toast("Archived #" + id, { text: "Undo", label: "Undo archiving #" + id }, async () => {
      focus.later({ id: String(id), control: '[data-control="open"]' });   // the todo, once it is back
      const back = await write(undo);   // (its return is announced with the board's changes)
      if (back && back.error) toast("Could not undo the archiving of #" + id + ": " + back.error.message);
    });
  } else {
    announce("Archived #" + id);
  }
  return result;
}

/** Puts archived todo id back on its list (its row's "Put back", archived.js), with `status`
 *  when given (the one it had before it was archived). The op's result, as onTodo's. */
export function unarchive(id, status, key) {
  const body = { op: "unarchive", id };
  if (status) body.status = status;
  return onTodo(id, body, key);
}

/** Makes a new list (it shows with no todos and its add form). */
export function createList(name) {
  return write({ op: "create_list", name });
}

