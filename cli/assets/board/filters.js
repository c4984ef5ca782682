// The view and the filters, kept in the address's query so that a link opens the same view:
// `?view=board&list=release-1&status=pending&who=agent-7&q=deploy` (the pool's list is
// `tenant`; the archived todos instead of the others: `archived=true`). The token is never put
// there.

import { $, el } from "./dom.js";
import { store, convKey } from "./store.js";

const POOL = "tenant";
const STATUSES = ["pending", "in_progress", "review", "blocked", "deferred", "completed", "canceled"];

/** Reads the view and the filters from the address. */
export function readUrl() {
  const p = new URLSearchParams(location.search);
  store.view = p.get("view") === "board" ? "board" : "list";
  for (const k of Object.keys(store.filters)) store.filters[k] = (p.get(k) || "").trim();
  if (!STATUSES.includes(store.filters.status)) store.filters.status = "";
  if (store.filters.archived !== "true") store.filters.archived = "";
}

/** Whether the views show the archived todos (the toggle "Archived"): those the service's
 *  search finds (search.js, archived.js). */
export const archivedShown = () => store.filters.archived === "true";

/** Writes the view and the filters into the address (replacing it: no history entry). */
export function writeUrl() {
  const p = new URLSearchParams();
  if (store.view === "board") p.set("view", "board");
  for (const [k, v] of Object.entries(store.filters)) if (v) p.set(k, v);
  const s = p.toString();
  history.replaceState(null, "", location.pathname + (s ? "?" + s : ""));
}

/** The filter's value of a list. */
export const listValue = (conversation) => (conversation === null || conversation === undefined
  ? POOL : convKey(conversation));

/** Whether a list passes the list filter. */
export const listShown = (conversation) => !store.filters.list || store.filters.list === listValue(conversation);

/** Whether a todo passes the status, who and text filters. */
export function todoShown(t) {
  const f = store.filters;
  if (f.status && t.status !== f.status) return false;
  if (f.who) {
    const who = f.who.toLowerCase();
    if (![t.claimed_by, t.owner, t.agent_id, t.updated_by].some((v) => v && String(v).toLowerCase().includes(who))) {
      return false;
    }
  }
  // (while the service's matches are shown, they hold the words in the description too)
  return !f.q || Boolean(store.search) || String(t.subject || "").toLowerCase().includes(f.q.toLowerCase());
}

export const filtering = () => Object.values(store.filters).some(Boolean);

/** The list filter's options: every list of the board (and the one asked for, if not there). */
export function fillListOptions(convs) {
  const select = $("filter-list");
  const wanted = [""].concat(convs.map((c) => listValue(c.conversation_id)));
  if (store.filters.list && !wanted.includes(store.filters.list)) wanted.push(store.filters.list);
  const have = [...select.options].map((o) => o.value);
  if (have.join("\n") !== wanted.join("\n")) {
    select.textContent = "";
    for (const v of wanted) {
      select.append(el("option", { value: v, text: v === "" ? "All lists" : v === POOL ? "Tenant-wide pool" : v }));
    }
  }
  select.value = store.filters.list;
}

/** Sets the controls from the store and calls changed() on every edit. */
export function wireFilters(changed) {
  const fields = { list: $("filter-list"), status: $("filter-status"), who: $("filter-who"), q: $("filter-q") };
  const markArchived = wireArchived(changed);
  for (const [k, input] of Object.entries(fields)) {
    input.value = store.filters[k];
    input.addEventListener(input.tagName === "SELECT" ? "change" : "input", () => {
      store.filters[k] = input.value.trim();
      writeUrl();
      changed();
    });
  }
  $("filters").addEventListener("submit", (ev) => ev.preventDefault());   // Enter in a box: nothing to send
  $("filter-clear").addEventListener("click", () => {
    for (const [k, input] of Object.entries(fields)) { store.filters[k] = ""; input.value = ""; }
    if (archivedShown()) { store.filters.archived = ""; store.search = null; markArchived(); }
    writeUrl();
    changed();
    fields.q.focus();
  });
}

/** The toggle "Archived" (#filter-archived, aria-pressed): the archived todos instead of the
 *  others. Returns what shows its state. */
function wireArchived(changed) {
  const toggle = $("filter-archived");
  const mark = () => {
    toggle.setAttribute("aria-pressed", archivedShown() ? "true" : "false");
    toggle.querySelector("[data-role=check]").textContent = archivedShown() ? "✓ " : "";
  };
  mark();
  toggle.addEventListener("click", () => {
    store.filters.archived = archivedShown() ? "" : "true";
    store.search = null;   // the matches read were of the other kind
    mark();
    writeUrl();
    changed();
  });
  return mark;
}
