import { SESSION_MS } from '../../../service/page-access.js';

/**
 * The developer page's HTTP side of signing in: the session cookie and where a form came from.
 * The tokens, sessions and notices themselves are kept in the store by `sandbox.pages`
 * (src/service/page-access.ts). API keys open nothing here, and the cookie authorizes no API call
 * (the API reads only the Authorization header). Forms that change state carry a CSRF token bound
 * to the session, and must come with an Origin (or Referer) of this server: a cross-site post
 * fails both checks.
 */

export const SESSION_COOKIE = 'carbon_session';

/** A state-changing form is accepted only from this origin (and with its session's CSRF token). */
export function sameSite(headers: Record<string, string | undefined>, origin: string): boolean {
  const from = headers.origin ?? (headers.referer === undefined ? undefined : safeOrigin(headers.referer));
  if (from === undefined) return false;
  const host = headers.host;
  // The Host the request came to, under either scheme (a TLS proxy in front, no --public-url); only
  // https where the page is https, as its cookie is Secure: a plain-http page of the same name is another site.
  return (
    from === origin || (host !== undefined && ((!origin.startsWith('https:') && from === `http://${host}`) || from === `https://${host}`))
  );
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export function cookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Secure` when the page is reached over HTTPS (`--public-url https://…`): never sent in clear. */
export function sessionCookie(origin: string, value: string, maxAgeSeconds = SESSION_MS / 1000): string {
  const secure = origin.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}
