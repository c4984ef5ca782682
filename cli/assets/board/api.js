// The service's HTTP API: the token, requests and their errors.
//
// The token comes from the page's `#token=` fragment (then dropped from the address bar) or
// the tab's sessionStorage; it is sent as `Authorization: Bearer`, never in a URL or a cookie.

const TOKEN_KEY = "pg_todos_token";
let token = null;

/** What main.js does when a request is refused for its token (401), or fails otherwise. */
export const hooks = { unauthorized() {}, failed() {} };

/** A request refused for its token (401): the page goes back to the token form. */
export class Unauthorized extends Error {}

/** A request that failed: status (0 when the service could not be reached), the service's
 *  message (shown as it is), and the answer's body (a lost race's `current`). */
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export const currentToken = () => token;

/** The token of the `#token=` fragment (kept in sessionStorage, dropped from the address bar),
 *  else the one kept in sessionStorage, else null. */
export function tokenFromPage() {
  const t = new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
  if (t) {
    keep(t);
    history.replaceState(null, "", location.pathname + location.search);
    return t;
  }
  try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
}

/** Uses this token from now on, and keeps it for the tab. */
export function useToken(t) {
  token = t;
  keep(t);
}

/** Forgets the token. */
export function forgetToken() {
  token = null;
  try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage off: nothing kept */ }
}

function keep(t) {
  try { sessionStorage.setItem(TOKEN_KEY, t); } catch (e) { /* private mode: kept for this page only */ }
}

/** A request with the token; the answer's JSON. Throws Unauthorized (after hooks.unauthorized)
 *  or ApiError (after hooks.failed when the service could not be reached or answered 5xx). */
export async function request(method, path, body) {
  const headers = { Authorization: "Bearer " + token, Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, { method, headers, cache: "no-store",
                              body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    hooks.failed();
    throw new ApiError(0, "the service cannot be reached", null);
  }
  if (res.status === 401) {
    hooks.unauthorized();
    throw new Unauthorized("token refused");
  }
  let data = null;
  const text = await res.text().catch(() => "");
  if (text) { try { data = JSON.parse(text); } catch (e) { data = { error: text.trim() }; } }
  if (!res.ok) {
    if (res.status >= 500) hooks.failed();
    const msg = data && typeof data.error === "string" ? data.error
              : data && data.error && data.error.message ? data.error.message
              : "HTTP " + res.status + " " + res.statusText;
    throw new ApiError(res.status, msg, data);
  }
  return data;
}

/** One write of the board: `POST /v1/board/act` with `{"op": …}`. */
export const act = (body) => request("POST", "/v1/board/act", body);
