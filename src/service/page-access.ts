import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62, randomBytes } from '../platform/random.js';
import type { LedgerStore, LedgerTx } from '../store/port.js';

/**
 * Who may open the developer page, kept in the store: the account owner, who holds the one-time
 * login token `carbon serve` prints. The token is exchanged for a session (its cookie value signed
 * with a secret kept in the store, so any instance sharing the store accepts it); a used token is
 * recorded there too, so it works once, on any instance. Reached as `sandbox.pages`; the server
 * keeps only the HTTP side (cookies, origins) in src/server/pages/developer/session.ts.
 *
 * A session is also recorded in the store (by a hash of its id) and looked up on every request:
 * signing out deletes the record, so a copy of the cookie opens nothing after it, on any
 * instance. `Sandbox.reset()` (and a snapshot's load) drops the signing secret, which ends every
 * session at once, and every login token not yet used: a token is recorded by its HMAC under that
 * secret, so one made before is looked for under a name no longer made. Records no longer of use
 * go too (docs/security.md): the expired tokens when a token is made or used, the expired sessions
 * (and what their pages were left) when a session is made, all of them at a reset.
 */

/** The name of the page's signing secret among the store's named values (endPageAccess drops it). */
const PAGE_SECRET = 'developer_page.secret';
const TOKEN_PREFIX = 'developer_page.token.';
const SESSION_PREFIX = 'developer_page.session.';
const FLASH_PREFIX = 'developer_page.flash.';
/** Where the last `carbon serve` on this ledger serves the page (its public origin). */
const PAGE_URL = 'developer_page.url';
/** A session lasts 12 hours; a login token is good for a day and for one use. */
export const SESSION_MS = 12 * 60 * 60 * 1000;
const TOKEN_MS = 24 * 60 * 60 * 1000;
/** A flash (the key just created, shown after the redirect) waits five minutes for its page. */
const FLASH_MS = 5 * 60 * 1000;
const LOGIN_TOKEN = /^[A-Za-z0-9_-]{20,64}$/;
const SESSION_VALUE = /^([A-Za-z0-9_-]{16})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/;

const b64 = (buf: Buffer) => buf.toString('base64url');
const hash = (token: string) => createHmac('sha256', 'carbon-login-token').update(token).digest('base64url');
const sign = (key: Buffer, payload: string) => b64(createHmac('sha256', key).update(payload).digest());

/** Where a login token is recorded: its HMAC under the signing secret (a reset drops the secret, and so every token). */
const tokenName = (key: Buffer, token: string) => TOKEN_PREFIX + sign(key, `login.${token}`);

/**
 * Ends every session and every login token not yet used (`carbon sandbox reset`, a snapshot's
 * load): the signing secret goes, and with it every record made under it.
 */
export async function endPageAccess(tx: LedgerTx): Promise<void> {
  await tx.putMeta(PAGE_SECRET, null);
  for (const prefix of [TOKEN_PREFIX, SESSION_PREFIX, FLASH_PREFIX]) await tx.dropMetas(prefix);
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface Session {
  id: string;
  /** The CSRF token of this session's forms. */
  csrf: string;
}

export class PageAccess {
  constructor(private readonly store: LedgerStore) {}

  private async secret(): Promise<Buffer> {
    let value = await this.store.meta(PAGE_SECRET);
    if (value === undefined) {
      value = await this.store.transaction(async (tx) => {
        // Another instance may have made it first: theirs stands.
        const made = await tx.meta(PAGE_SECRET);
        if (made !== undefined) return made;
        const fresh = b64(randomBytes(32));
        await tx.putMeta(PAGE_SECRET, fresh);
        return fresh;
      });
    }
    return Buffer.from(value, 'base64url');
  }

  /**
   * A new one-time login token, recorded in the store by its HMAC under the signing secret: 32
   * letters and digits (190 bits), which every echo masks as it masks a key's secret (redactSecrets).
   */
  async newLoginToken(now: number): Promise<string> {
    const token = randomBase62(32);
    const name = tokenName(await this.secret(), token);
    await this.store.transaction(async (tx) => {
      await tx.dropMetas(TOKEN_PREFIX, now);
      await tx.putMeta(name, String(now + TOKEN_MS));
    });
    return token;
  }

  /**
   * Uses a login token up: true the first time, within its day, and while the signing secret it
   * was made under stands (no reset since); false ever after. The secret is read in the same
   * transaction, so a reset is either before (the token is refused) or after (its session ends).
   */
  async useLoginToken(token: string, now: number): Promise<boolean> {
    if (!LOGIN_TOKEN.test(token)) return false;
    return this.store.transaction(async (tx) => {
      const secret = await tx.meta(PAGE_SECRET);
      if (secret === undefined) return false;
      const name = tokenName(Buffer.from(secret, 'base64url'), token);
      const expires = await tx.meta(name);
      if (expires === undefined) return false;
      await tx.putMeta(name, null);
      await tx.dropMetas(TOKEN_PREFIX, now);
      return Number(expires) > now;
    });
  }

  /** Whether a login token would sign in, without using it up (HEAD /login changes nothing). */
  async loginTokenValid(token: string, now: number): Promise<boolean> {
    if (!LOGIN_TOKEN.test(token)) return false;
    const secret = await this.store.meta(PAGE_SECRET);
    if (secret === undefined) return false;
    const expires = await this.store.meta(tokenName(Buffer.from(secret, 'base64url'), token));
    return expires !== undefined && Number(expires) > now;
  }

  /** The cookie value of a new session, recorded in the store. */
  async newSession(now: number): Promise<string> {
    const id = b64(randomBytes(12));
    const payload = `${id}.${now + SESSION_MS}`;
    const key = await this.secret();
    await this.store.transaction(async (tx) => {
      await tx.dropMetas(SESSION_PREFIX, now);
      await tx.dropMetas(FLASH_PREFIX, now);
      await tx.putMeta(SESSION_PREFIX + hash(id), String(now + SESSION_MS));
    });
    return `${payload}.${sign(key, payload)}`;
  }

  /** The session a cookie value names, if it is valid, current and not ended. */
  async readSession(value: string | undefined, now: number): Promise<Session | null> {
    const m = value === undefined ? null : SESSION_VALUE.exec(value);
    if (m === null) return null;
    const key = await this.secret();
    if (!same(sign(key, `${m[1]}.${m[2]}`), m[3]!) || Number(m[2]) <= now) return null;
    const recorded = await this.store.meta(SESSION_PREFIX + hash(m[1]!));
    if (recorded === undefined || Number(recorded) <= now) return null;
    return { id: m[1]!, csrf: sign(key, `csrf.${m[1]}`) };
  }

  /** Signs a session out: its record goes, so no copy of its cookie opens anything after. */
  async endSession(session: Session): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.putMeta(SESSION_PREFIX + hash(session.id), null);
      await tx.putMeta(FLASH_PREFIX + hash(session.id), null);
    });
  }

  /** A state-changing form is accepted only with its session's CSRF token. */
  csrfOk(session: Session, token: string | null): boolean {
    return token !== null && same(session.csrf, token);
  }

  /**
   * What a POST leaves for the page its redirect leads to: the id of a key just created (its
   * secret stays in the key vault), for this session only, taken by the first GET that reads it.
   */
  async putFlash(session: Session, keyId: string, now: number): Promise<void> {
    await this.store.transaction((tx) => tx.putMeta(FLASH_PREFIX + hash(session.id), `${now + FLASH_MS}.${keyId}`));
  }

  async takeFlash(session: Session, now: number): Promise<string | undefined> {
    const name = FLASH_PREFIX + hash(session.id);
    if ((await this.store.meta(name)) === undefined) return undefined;
    return this.store.transaction(async (tx) => {
      const value = await tx.meta(name);
      if (value === undefined) return undefined;
      await tx.putMeta(name, null);
      const dot = value.indexOf('.');
      return Number(value.slice(0, dot)) > now ? value.slice(dot + 1) : undefined;
    });
  }

  /**
   * Where the developer page is served: each `carbon serve` records its public origin (its
   * --public-url, or http://host:port) when it starts, so `carbon sandbox login` on any machine
   * that reaches the ledger can make a link to it. With several instances on one ledger the last
   * one started wins; behind a load balancer, give every instance the same --public-url.
   */
  async recordUrl(origin: string): Promise<void> {
    await this.store.transaction((tx) => tx.putMeta(PAGE_URL, origin));
  }

  recordedUrl(): Promise<string | undefined> {
    return this.store.meta(PAGE_URL);
  }
}
