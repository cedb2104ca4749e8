// Talking to the handoffs HTTP API: URLs, bearer tokens, errors as {code, message}.
// This file is served at <root>/static/js/api.js; the API is at <root>/v1/, so the page
// works wherever the app is mounted.

export const ROOT = new URL("../../", import.meta.url);

/** An error the API answered with: its stable code and the sentence it gave, and for a
 * 429 the seconds its `Retry-After` asks to wait. */
export class ApiError extends Error {
  constructor(code, message, status, retryAfter = null) {
    super(message);
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** The absolute URL of an API path (no leading slash), with query parameters. */
export function url(path, params = {}) {
  const u = new URL(path, ROOT);
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
  }
  return u.toString();
}

/** Call the API and return its JSON; throws ApiError with the server's code and sentence. */
export async function call(method, path, { token, body, params, headers: extra } = {}) {
  const headers = { Accept: "application/json", ...extra };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(url(path, params), {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError("network_error", "The server cannot be reached; check the connection.", 0);
  }
  const type = res.headers.get("content-type") || "";
  if (!res.ok) {
    let code = "http_" + res.status;
    let message = `The server answered ${res.status}.`;
    if (type.includes("json")) {
      const data = await res.json().catch(() => null);
      if (data && data.error) ({ code, message } = data.error);
    }
    const wait = Number(res.headers.get("retry-after"));
    throw new ApiError(code, message, res.status, Number.isFinite(wait) && wait > 0 ? wait : null);
  }
  if (type.includes("json")) return res.json();
  // A streamed answer (SSE): the page follows the session's event stream instead.
  res.body?.cancel().catch(() => {});
  return null;
}

const SESSION_KEY = "handoffs.session";

/** The session this browser last used ({id, token}), or null. */
export function savedSession() {
  try {
    const s = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    return s && typeof s.id === "string" && typeof s.token === "string" ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(session) {
  if (session) localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else localStorage.removeItem(SESSION_KEY);
}
