import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { PAGE_SECRET } from '../../../service/sandbox.js';
import type { LedgerStore } from '../../../store/port.js';

/**
 * Who may open the developer page: the account owner, who holds the one-time login token
 * `carbon serve` prints. The token is exchanged for a session cookie (HttpOnly, SameSite=Strict)
 * signed with a secret kept in the store, so any instance sharing the store accepts it; a used
 * token is recorded there too, so it works once, on any instance. API keys open nothing here,
 * and the cookie authorizes no API call (the API reads only the Authorization header).
 *
 * A session is also recorded in the store (by a hash of its id) and looked up on every request:
 * signing out deletes the record, so a copy of the cookie opens nothing after it, on any
 * instance. `Sandbox.reset()` drops the signing secret, which ends every session at once.
 *
 * Forms that change state carry a CSRF token bound to the session, and must come with an Origin
 * (or Referer) of this server: a cross-site post fails both checks.
 */

const SECRET = PAGE_SECRET;
const TOKEN_PREFIX = 'developer_page.token.';
const SESSION_PREFIX = 'developer_page.session.';
const FLASH_PREFIX = 'developer_page.flash.';
export const SESSION_COOKIE = 'carbon_session';
/** A session lasts 12 hours; a login token is good for a day and for one use. */
const SESSION_MS = 12 * 60 * 60 * 1000;
const TOKEN_MS = 24 * 60 * 60 * 1000;
/** A flash (the key just created, shown after the redirect) waits five minutes for its page. */
const FLASH_MS = 5 * 60 * 1000;

const b64 = (buf: Buffer) => buf.toString('base64url');
const hash = (token: string) => createHmac('sha256', 'carbon-login-token').update(token).digest('base64url');

async function secret(store: LedgerStore): Promise<Buffer> {
  let value = await store.meta(SECRET);
  if (value === undefined) {
    value = await store.transaction(async (tx) => {
      // Another instance may have made it first: theirs stands.
      const made = await tx.meta(SECRET);
      if (made !== undefined) return made;
      const fresh = b64(randomBytes(32));
      await tx.putMeta(SECRET, fresh);
      return fresh;
    });
  }
  return Buffer.from(value, 'base64url');
}

function sign(key: Buffer, payload: string): string {
  return b64(createHmac('sha256', key).update(payload).digest());
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A new one-time login token, recorded (by its hash) in the store. */
export async function newLoginToken(store: LedgerStore, now: number): Promise<string> {
  const token = b64(randomBytes(24));
  await store.transaction((tx) => tx.putMeta(TOKEN_PREFIX + hash(token), String(now + TOKEN_MS)));
  return token;
}

/** Uses a login token up: true the first time, within its day; false ever after. */
export async function useLoginToken(store: LedgerStore, token: string, now: number): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{20,64}$/.test(token)) return false;
  const name = TOKEN_PREFIX + hash(token);
  return store.transaction(async (tx) => {
    const expires = await tx.meta(name);
    if (expires === undefined) return false;
    await tx.putMeta(name, null);
    return Number(expires) > now;
  });
}

/** Whether a login token would sign in, without using it up (HEAD /login changes nothing). */
export async function loginTokenValid(store: LedgerStore, token: string, now: number): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{20,64}$/.test(token)) return false;
  const expires = await store.meta(TOKEN_PREFIX + hash(token));
  return expires !== undefined && Number(expires) > now;
}

export interface Session {
  id: string;
  /** The CSRF token of this session's forms. */
  csrf: string;
}

/** The cookie value of a new session, recorded in the store. */
export async function newSession(store: LedgerStore, now: number): Promise<string> {
  const id = b64(randomBytes(12));
  const payload = `${id}.${now + SESSION_MS}`;
  const key = await secret(store);
  await store.transaction((tx) => tx.putMeta(SESSION_PREFIX + hash(id), String(now + SESSION_MS)));
  return `${payload}.${sign(key, payload)}`;
}

/** The session a request's cookie names, if it is valid, current and not ended. */
export async function readSession(store: LedgerStore, cookieHeader: string | undefined, now: number): Promise<Session | null> {
  const value = cookie(cookieHeader, SESSION_COOKIE);
  const m = value === undefined ? null : /^([A-Za-z0-9_-]{16})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (m === null) return null;
  const key = await secret(store);
  if (!same(sign(key, `${m[1]}.${m[2]}`), m[3]!) || Number(m[2]) <= now) return null;
  const recorded = await store.meta(SESSION_PREFIX + hash(m[1]!));
  if (recorded === undefined || Number(recorded) <= now) return null;
  return { id: m[1]!, csrf: sign(key, `csrf.${m[1]}`) };
}

/** Signs a session out: its record goes, so no copy of its cookie opens anything after. */
export async function endSession(store: LedgerStore, session: Session): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.putMeta(SESSION_PREFIX + hash(session.id), null);
    await tx.putMeta(FLASH_PREFIX + hash(session.id), null);
  });
}

/**
 * What a POST leaves for the page its redirect leads to: the id of a key just created (its
 * secret stays in the key vault), for this session only, taken by the first GET that reads it.
 */
export async function putFlash(store: LedgerStore, session: Session, keyId: string, now: number): Promise<void> {
  await store.transaction((tx) => tx.putMeta(FLASH_PREFIX + hash(session.id), `${now + FLASH_MS}.${keyId}`));
}

export async function takeFlash(store: LedgerStore, session: Session, now: number): Promise<string | undefined> {
  const name = FLASH_PREFIX + hash(session.id);
  if ((await store.meta(name)) === undefined) return undefined;
  return store.transaction(async (tx) => {
    const value = await tx.meta(name);
    if (value === undefined) return undefined;
    await tx.putMeta(name, null);
    const dot = value.indexOf('.');
    return Number(value.slice(0, dot)) > now ? value.slice(dot + 1) : undefined;
  });
}

/** A state-changing form is accepted only with its session's CSRF token, from this origin. */
export function sameSite(headers: Record<string, string | undefined>, origin: string): boolean {
  const from = headers.origin ?? (headers.referer === undefined ? undefined : safeOrigin(headers.referer));
  if (from === undefined) return false;
  const host = headers.host;
  return from === origin || (host !== undefined && (from === `http://${host}` || from === `https://${host}`));
}

export function csrfOk(session: Session, token: string | null): boolean {
  return token !== null && same(session.csrf, token);
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
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${origin.startsWith('https:') ? '; Secure' : ''}`;
}
