// Live updates and readiness, and the indicator #live that tells both.
//
// The event stream `/v1/events` is read through fetch (EventSource cannot send the token's
// header), reconnecting with `Last-Event-ID`. `/readyz` is asked every 3 s, and right after a
// request fails: the stream can stay up while the database is down, so #live says "database
// unavailable" (data-state="unavailable") whenever readyz does, whatever the stream.

import { currentToken } from "./api.js";
import { $ } from "./dom.js";

/** What main.js does: on the stream's first message, on a change, on a 401, when the database
 *  comes back, and when it goes away or comes back (for the announcement). */
export const liveHooks = { connected() {}, changed() {}, unauthorized() {}, ready() {}, database() {} };

const READY_EVERY_MS = 3000;
const WORDS = { live: "live", connecting: "connecting…", reconnecting: "reconnecting…", offline: "offline",
                unavailable: "database unavailable" };

let stream = "offline";        // offline | connecting | live | reconnecting
let database = "unknown";      // ready | unavailable | unknown (readyz not answered)
let gen = 0;                   // bumps on every (re)start, so that a stale loop stops
let abort = null;              // the AbortController of the stream's request
let lastEventId = null;

function show() {
  const state = database === "unavailable" ? "unavailable" : stream;
  const l = $("live");
  l.dataset.state = state;
  l.textContent = WORDS[state];
}

function setStream(s) {
  stream = s;
  show();
}

/** Stops the stream and forgets its cursor (a new token starts from now). */
export function stopStream() {
  gen++;
  if (abort) { abort.abort(); abort = null; }
  lastEventId = null;
  setStream("offline");
}

/** (Re)starts the stream; it reconnects by itself, a second after each drop. */
export function startStream() {
  gen++;
  if (abort) { abort.abort(); abort = null; }
  const mine = gen;
  setStream("connecting");
  (async () => {
    let first = true;
    while (mine === gen && currentToken()) {
      if (!first) {
        setStream("reconnecting");
        await new Promise((r) => setTimeout(r, 1000));
        if (mine !== gen) return;
      }
      first = false;
      const ctrl = new AbortController();
      abort = ctrl;
      try {
        const headers = { Authorization: "Bearer " + currentToken(), Accept: "text/event-stream" };
        if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
        const res = await fetch("/v1/events", { headers, signal: ctrl.signal, cache: "no-store" });
        if (res.status === 401) { if (mine === gen) liveHooks.unauthorized(); return; }
        if (!res.ok || !res.body) throw new Error("HTTP " + res.status);
        await readEvents(res.body, mine);
      } catch (e) {
        // the request failed or the stream broke: told below, then tried again
      }
      if (mine !== gen) return;
      checkReadiness();   // a stream that ends: is it the service or the database?
    }
  })();
}

/** Reads Server-Sent Events until the stream ends (or a newer stream starts). */
async function readEvents(body, mine) {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buf = "", data = [], hasData = false, id = null;
  const dispatch = () => {
    if (id !== null) { lastEventId = id; id = null; }
    if (!hasData) return;
    const text = data.join("\n");
    data = []; hasData = false;
    let msg;
    try { msg = JSON.parse(text); } catch (e) { return; }
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "server.connected") { setStream("live"); liveHooks.connected(); }
    else if (msg.type === "todo.updated") liveHooks.changed(msg.properties);
    // a list another person made on the board (it records no change of a todo)
    else if (msg.type === "board.list.created") liveHooks.changed(msg.properties);
  };
  const line = (l) => {
    if (l === "") return dispatch();
    if (l[0] === ":") return;                    // a comment (": ping")
    const c = l.indexOf(":");
    const field = c < 0 ? l : l.slice(0, c);
    let value = c < 0 ? "" : l.slice(c + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "data") { data.push(value); hasData = true; }
    else if (field === "id") { if (!value.includes("\0")) id = value; }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (mine !== gen) { reader.cancel().catch(() => {}); return; }
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let start = 0;
      for (let i = 0; i < buf.length; i++) {
        const ch = buf[i];
        if (ch !== "\n" && ch !== "\r") continue;
        if (ch === "\r" && i + 1 === buf.length) break;     // maybe half of "\r\n": wait
        line(buf.slice(start, i));
        if (ch === "\r" && buf[i + 1] === "\n") i++;
        start = i + 1;
      }
      buf = buf.slice(start);
      if (stream !== "live" && mine === gen) setStream("live");
    }
  } finally {
    try { reader.releaseLock(); } catch (e) { /* already released */ }
  }
}

let asking = false;

/** Asks `/readyz` now (it needs no token). A service that cannot be reached says nothing of
 *  the database: the stream's state shows then. */
export async function checkReadiness() {
  if (asking) return;
  asking = true;
  let now = "unknown";
  try {
    const res = await fetch("/readyz", { cache: "no-store", headers: { Accept: "application/json" } });
    const body = await res.json().catch(() => null);
    if (res.ok && body && body.status === "ready") now = "ready";
    else if (res.status === 503 || (body && body.status === "unavailable")) now = "unavailable";
  } catch (e) {
    now = "unknown";
  } finally {
    asking = false;
  }
  const was = database;
  database = now;
  show();
  if (was === now) return;
  if (now === "unavailable") liveHooks.database(false);
  if (now === "ready" && was === "unavailable") { liveHooks.database(true); liveHooks.ready(); }
}

/** Asks `/readyz` every 3 s while the page is visible, and as soon as it shows again. */
export function watchReadiness() {
  checkReadiness();
  setInterval(() => { if (document.visibilityState !== "hidden") checkReadiness(); }, READY_EVERY_MS);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") checkReadiness();
  });
}
