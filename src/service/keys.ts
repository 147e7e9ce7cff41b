import type { Mode } from '../api/types.js';
import { BASE62, randomBase62, randomHex } from '../platform/random.js';
import { sha256 } from '../platform/sha256.js';

export { randomBase62 };

/** The service-specific key prefix; keys read `ck_test_…` and `ck_live_…`. */
export const KEY_PREFIX = 'ck';
const KEY_PATTERN = /^ck_(test|live)_[A-Za-z0-9]{32}$/;

/** A certificate's id: 24 lowercase hex digits of CSPRNG after `cert_` (public, unguessable). */
export function newCertificateId(): string {
  return `cert_${randomHex(12)}`;
}

/**
 * A request's id (`req_…`): a label for logs and support, not a secret, so it is drawn from
 * Math.random: the CSPRNG's pool (platform/random.ts) is kept for what must not be guessed.
 */
export function requestId(): string {
  let out = 'req_';
  for (let i = 0; i < 14; i++) out += BASE62[Math.floor(Math.random() * 62)];
  return out;
}

/**
 * What every key the sandbox makes says after its mode: `ck_live_sandbox…` is never taken for a key
 * of the real service, in a config, a secret store or a log (the masked form, `ck_live_…abcd`, is
 * the same as any key's). The rest is random: 25 base62 characters, 148 bits.
 */
const SANDBOX_KEY_MARK = 'sandbox';

/** A new key of the sandbox's: the spec's shape (prefix, mode, then the secret: 32 letters and digits), marked as the sandbox's. */
export function newApiKey(mode: Mode): string {
  return `${KEY_PREFIX}_${mode}_${SANDBOX_KEY_MARK}${randomBase62(32 - SANDBOX_KEY_MARK.length)}`;
}

/**
 * A new offset's id, marked as the sandbox's as its keys are (`off_sandbox…`): an app that keeps
 * only the id (or the body, whose `livemode` may be true) can still tell a rehearsal from a
 * purchase. 24 letters and digits after `off_`, as the service's; the 17 random ones are 101 bits.
 */
export function newOffsetId(): string {
  return `off_${SANDBOX_KEY_MARK}${randomBase62(24 - SANDBOX_KEY_MARK.length)}`;
}

/** Whether `key` is one a carbon sandbox made (`ck_live_sandbox…`): never the real service's. */
export const isSandboxKey = (key: string): boolean =>
  key.startsWith(`${KEY_PREFIX}_test_${SANDBOX_KEY_MARK}`) || key.startsWith(`${KEY_PREFIX}_live_${SANDBOX_KEY_MARK}`);

/** The mode a well-formed key names, or null for anything that is not a key of ours. */
export function keyMode(key: string): Mode | null {
  const m = KEY_PATTERN.exec(key);
  return m ? (m[1] as Mode) : null;
}

/** Keys are stored as SHA-256 digests: the ledger never holds a usable key. */
export function hashKey(key: string): Buffer {
  return sha256(Buffer.from(key, 'utf8'));
}

/** Compares two digests in time that does not depend on where they differ. */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * A key as it may be shown anywhere: its prefix and mode, then its last four characters.
 * Anything that does not look like a key shows only its length, never its text.
 */
export function maskKey(key: string): string {
  const shape = keyShape(key);
  if (shape !== null && shape.rest.length >= 12) return maskedKey(shape.prefix, shape.mode, shape.rest.slice(-4));
  return `[${key.length}-character key]`;
}

/**
 * What a key looks like, whoever issued it (`<prefix>_<mode>_<rest>`): the mode a configured key
 * names, and how it is masked. `keyMode` is the stricter test of a key of this service.
 */
export function keyShape(key: string): { prefix: string; mode: Mode; rest: string } | null {
  const m = /^([a-z]+)_(test|live)_(.*)$/s.exec(key);
  return m === null ? null : { prefix: m[1]!, mode: m[2] as Mode, rest: m[3]! };
}

/**
 * A reference as a person is shown it: a key in it masked (`ck_live_…`, or a bare secret's shape),
 * never a long reference of the caller's own (`PO-AnnualOffsetsForBoardTravel2027`), which data shows whole too.
 */
export const shownReference = (reference: string): string => redactSecrets(reference, { runs: 'after-mode' });

/**
 * `text` with anything shaped like a secret masked: for what echoes a caller's input back (an
 * offset id in a 404, a path in the access log, an error's `param`, a value typed where another
 * was expected), where a secret pasted in the wrong place would otherwise be shown in full.
 * Percent-encoding is decoded first (a path may carry `ck%5Ftest%5F…`), and JSON's `\u00XX` escapes
 * of a key's characters (a body may carry `ck_live_ab\u0063…`): text that holds a secret once
 * decoded comes back decoded, the secret masked.
 *
 * Every spelling of an API key goes: `ck_test_<secret>`, and whatever is put between or around its
 * parts (`ck_%00test_…`, `ck-test-…`, `CK_TEST_…`), and the bare secret, since the secret is the
 * key (its prefix and mode are public). So besides the key-shaped text, any run of 32 or more
 * letters and digits (the secret's alphabet and length: a developer page's login token is one too)
 * is masked to its last four characters, unless it is hex (a git SHA, a digest, a UUID without its
 * dashes: no secret's alphabet) and no mode comes right before it. With `runs: 'after-mode'` (an
 * Idempotency-Key: the caller's own label, shown so that it can be sent again), only a run that a
 * mode comes right before, or a bare secret's shape (exactly 32, or a mode and 32), is masked. A webhook signing secret (`whsec_…`, one made by an older
 * carbon in base64url) shows its last four, and a URL's password (`postgres://user:…@host`) is
 * `***` (not a port and a query: `host:8080?to=ops@example.com`).
 */
export function redactSecrets(text: string, options: { runs?: 'after-mode' } = {}): string {
  // A URL's password first as it came (a `/` in it is `%2F`, which decoded would end it), then again decoded.
  const given = hasPassword(text) ? text.replace(URL_PASSWORD_ALL, maskPassword) : text;
  const plain = given.includes('%') || given.includes('\\u') ? decoded(given) : given;
  // Most text names no mode, no signing secret and no URL's password, and holds no long run: one linear scan each, before any regular expression.
  const named = plain.includes('_test_') || plain.includes('_live_');
  const long = hasSecretRun(plain);
  const signing = /whsec_/i.test(plain);
  const password = plain !== given && hasPassword(plain);
  if (!named && !long && !signing && !password) return given;
  let out = named && KEY_LIKE.test(plain) ? plain.replace(KEY_LIKE_ALL, (key) => maskKey(key)) : plain;
  if (signing) out = out.replace(SIGNING_SECRET_ALL, (secret) => `whsec_…${secret.slice(-4)}`);
  // Hex is no secret's alphabet (a git SHA, a digest, a UUID without its dashes): left as it was,
  // unless a mode comes right before it (`ck-test-<32 hex>`: a key, however unlikely its secret).
  if (long)
    out = out.replace(SECRET_RUN_ALL, (run: string, at: number, whole: string) =>
      (HEX.test(run) || (options.runs === 'after-mode' && !bareSecret(run, whole))) &&
      !AFTER_MODE.test(whole.slice(Math.max(0, at - 13), at))
        ? run
        : `…${run.slice(-4)}`,
    );
  if (password) out = out.replace(URL_PASSWORD_ALL, maskPassword);
  return out === plain ? given : out;
}
const hasPassword = (text: string) => text.includes('@') && text.includes('://');

/** `text` with every URL's password as `***` (a password may hold an `@`), and nothing else changed. */
export const maskUrlPasswords = (text: string): string => (hasPassword(text) ? text.replace(URL_PASSWORD_ALL, maskPassword) : text);
/**
 * The prefix is bounded: with `[a-z]+`, a parameter named by a million letters took the engine
 * a million steps from each of its million starting points (a request that never ended).
 */
const KEY_LIKE = /[a-z]{1,32}_(?:test|live)_[A-Za-z0-9]{12,}/;
const KEY_LIKE_ALL = new RegExp(KEY_LIKE.source, 'g');
/** As long as a key's secret part, or longer: a secret, whatever is around it. */
const SECRET_LENGTH = 32;
const SECRET_RUN_ALL = new RegExp(`[A-Za-z0-9]{${SECRET_LENGTH},}`, 'g');
/** A signing secret: base62 now, base64url from an older carbon (`-` and `_` break a run of letters and digits). */
const SIGNING_SECRET_ALL = /whsec_[A-Za-z0-9_-]{8,}/gi;
const HEX = /^(?:[0-9a-f]+|[0-9A-F]+)$/;
/** A key's mode and what a spelling put after it (`_test_`, `-TEST-`, `test%00`, `test____`): a run here is a key's secret. */
const AFTER_MODE = /(?:^|[^A-Za-z])(?:test|live)[^A-Za-z0-9]{1,8}$/i;
/** A key's secret alone (the whole text: 32 letters and digits), or run on from its mode (`cktest<secret>`): masked in a caller's label too. */
const bareSecret = (run: string, whole: string) =>
  !HEX.test(run) && ((run.length === SECRET_LENGTH && whole.length === SECRET_LENGTH) || MODE_THEN_SECRET.test(run));
const MODE_THEN_SECRET = /(?:test|live)[A-Za-z0-9]{32}$/i;
/** A URL's user and password, up to the last `@` before its host (a password may hold an `@`). */
const URL_PASSWORD_ALL = /([a-z][a-z0-9+.-]{0,31}:\/\/([^\s/:@]*)):([^\s/]*)@/gi;
/** `***` for the password, but not for a host's port and query (`example.com:8080?to=ops@example.com`: a dot in the host, digits then ? or #). */
const maskPassword = (match: string, before: string, user: string, password: string) =>
  user.includes('.') && /^\d+[?#]/.test(password) ? match : `${before}:***@`;

/** Whether `text` holds a run of SECRET_LENGTH letters and digits: one pass, no backtracking. */
function hasSecretRun(text: string): boolean {
  if (text.length < SECRET_LENGTH) return false;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    run = alnum ? run + 1 : 0;
    if (run === SECRET_LENGTH) return true;
  }
  return false;
}

/**
 * ASCII escapes decoded (a key is ASCII), repeatedly, so `%255F` is seen too; never throws. JSON's
 * `\u0033` too, for a key's own alphabet only (letters, digits, `_`, `-`), so that a JSON body
 * stays JSON: a body that spells a key's characters so holds the key all the same.
 */
function decoded(text: string): string {
  let out = text;
  for (let i = 0; i < 4; i++) {
    const next = out
      .replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      .replace(/\\u00([0-7][0-9a-fA-F])/g, (sent: string, hex: string) => {
        const c = String.fromCharCode(Number.parseInt(hex, 16));
        return /[\w-]/.test(c) ? c : sent;
      });
    if (next === out) break;
    out = next;
  }
  return out;
}

/** The shown form of a key known only by its mode and last four characters. */
export function maskedKey(prefix: string, mode: Mode, last4: string): string {
  return `${prefix}_${mode}_…${last4}`;
}
