// Words and numbers as the board shows them.

/** A status as the badges say it. */
const STATUS_WORDS = {
  pending: "pending", in_progress: "in progress", completed: "done", canceled: "canceled",
  blocked: "blocked", deferred: "deferred", review: "in review",
};

/** What a change to this status did, for the announcements ("#12 completed by agent-3"). */
export const STATUS_DONE = {
  pending: "reopened", in_progress: "started", completed: "completed", canceled: "canceled",
  blocked: "blocked", deferred: "deferred", review: "sent to review",
};

export const statusWord = (s) => STATUS_WORDS[s] || String(s);

/** A duration in words: "42 s", "5 min", "2 h 10 min", "3 d". */
export function duration(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) {
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return m && h < 10 ? h + " h " + m + " min" : h + " h";
  }
  return Math.floor(s / 86400) + " d";
}

/** A duration to the second, for a sentence: "42 s", "4 min 12 s", "2 h 10 min", "3 d 4 h". */
export function durationExact(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min" + (s % 60 ? " " + (s % 60) + " s" : "");
  if (s < 86400) {
    return Math.floor(s / 3600) + " h" + (s % 3600 >= 60 ? " " + Math.floor((s % 3600) / 60) + " min" : "");
  }
  return Math.floor(s / 86400) + " d" + (s % 86400 >= 3600 ? " " + Math.floor((s % 86400) / 3600) + " h" : "");
}

/** A countdown: "4:05", "1:02:03". */
export function clock(s) {
  s = Math.max(0, Math.floor(s));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return h ? h + ":" + pad(m) + ":" + pad(r) : m + ":" + pad(r);
}

/** A time as the viewer's clock shows it, to the second, with the zone (the hover of "… ago"). */
export function exactTime(ts) {
  const d = ts ? new Date(ts) : null;
  if (!d || isNaN(d.getTime())) return "";
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit",
                                       minute: "2-digit", second: "2-digit", timeZoneName: "short" });
}

/** A list's name in sentences: the pool is "the tenant-wide pool". */
export const listWords = (conversation) => (conversation === null || conversation === undefined
  ? "the tenant-wide pool" : conversation);

/** A due date (a time stored at the day's start, UTC) as its day, "2026-12-24"; "" for none. */
export function dueDay(ts) {
  const d = ts ? new Date(ts) : null;
  return d && !isNaN(d.getTime()) ? d.toISOString().slice(0, 10) : "";
}

/** Whether an open todo's due day (dueDay) is past on the server's day `today` ("YYYY-MM-DD"). */
export const overdue = (day, status, today) => Boolean(day) && day < today
  && status !== "completed" && status !== "canceled";

/** A todo's labels as the edit form shows them: "ui, bug". */
export const labelsText = (labels) => (Array.isArray(labels) ? labels.join(", ") : "");

/** Labels typed as "ui, bug": each once, trimmed, in the order typed. */
export function labelsOf(text) {
  const out = [];
  for (const l of String(text).split(",").map((s) => s.trim())) if (l && !out.includes(l)) out.push(l);
  return out;
}
