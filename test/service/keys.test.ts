import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { sha256 } from '../../src/platform/sha256.js';
import { hashKey, newApiKey, redactSecrets, requestId, sameHash } from '../../src/service/keys.js';

// The key digests are computed without node:crypto (start-up); they must be SHA-256 exactly, or
// every key already stored in a ledger would stop authenticating.

const nodeSha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

test('sha256 gives the FIPS 180-4 example digests', () => {
  const hex = (s: string) => sha256(Buffer.from(s, 'utf8')).toString('hex');
  expect(hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  expect(hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  expect(hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
  expect(hex('a'.repeat(1_000_000))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
});

test('sha256 agrees with node:crypto on every length around the block edges, and on random bytes', () => {
  for (let length = 0; length <= 200; length++) {
    const data = Uint8Array.from({ length }, (_, i) => (i * 131 + length) & 0xff);
    expect(sha256(data).toString('hex'), `length ${length}`).toBe(nodeSha256(data));
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 1000 }), (data) => {
      expect(sha256(data).toString('hex')).toBe(nodeSha256(data));
    }),
    { numRuns: 500 },
  );
});

test('hashKey is the SHA-256 of the key as UTF-8', () => {
  for (const key of [newApiKey('test'), newApiKey('live'), 'ck_test_é', '']) {
    expect(hashKey(key).toString('hex')).toBe(nodeSha256(Buffer.from(key, 'utf8')));
  }
});

test('sameHash is true only for equal digests', () => {
  const a = hashKey('ck_test_a');
  expect(sameHash(a, Buffer.from(a))).toBe(true);
  for (let i = 0; i < a.length; i++) {
    const b = Buffer.from(a);
    b[i] = b[i]! ^ 1;
    expect(sameHash(a, b), `byte ${i}`).toBe(false);
  }
  expect(sameHash(a, a.subarray(0, 31))).toBe(false);
});

test('request ids are req_ and 14 base62 characters, and do not repeat', () => {
  const ids = new Set(Array.from({ length: 10_000 }, requestId));
  expect(ids.size).toBe(10_000);
  for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9]{14}$/);
});

test('redactSecrets masks every spelling of a key, and its bare secret part, in answers and the log alike', () => {
  const key = newApiKey('test');
  const secret = key.slice('ck_test_'.length);
  const last4 = secret.slice(-4);
  for (const [spelling, shown] of [
    [`ck_%00test_${secret}`, `ck_\u0000test_…${last4}`],
    [`ck-test-${secret}`, `ck-test-…${last4}`],
    [`CK_TEST_${secret}`, `CK_TEST_…${last4}`],
    [`ck_test-${secret}`, `ck_test-…${last4}`],
    [`ck%2Dtest%2D${secret}`, `ck-test-…${last4}`],
    [secret, `…${last4}`],
    [`${secret}x`, `…${secret.slice(-3)}x`],
    [`Bearer%20${secret}`, `Bearer …${last4}`],
  ]) {
    const text = `/api/v1/nope/${spelling}?reference=${spelling}`;
    const redacted = redactSecrets(text);
    expect(redacted, spelling).not.toContain(secret.slice(0, 28));
    expect(redacted, spelling).toBe(`/api/v1/nope/${shown}?reference=${shown}`);
  }
  // What the service issues and echoes is left as it was: ids are shorter than a secret, or broken by `_`.
  for (const text of [
    '/api/v1/offsets/off_AbCdEfGhIjKlMnOpQrStUvWx',
    'cert_0123456789abcdef01234567',
    'req_AbCdEfGhIjKlMn',
    '123e4567-e89b-12d3-a456-426614174000',
    'a'.repeat(31),
  ])
    expect(redactSecrets(text)).toBe(text);
  // A secret that happens to be hex is masked too when a mode comes before it (hex alone is left as it was: below).
  for (const hex of ['a'.repeat(32), 'E'.repeat(32), '0123456789abcdef0123456789abcdef'])
    for (const spelling of [`ck-test-${hex}`, `CK_LIVE_${hex}`, `ck_test-${hex}`, `ck%2Dtest%2D${hex}`])
      expect(redactSecrets(`No such offset: '${spelling}'.`), spelling).not.toContain(hex.slice(0, 28));
  fc.assert(
    fc.property(fc.string(), fc.constantFrom('_', '-', '%00', '%20', '.', ':', '/', ''), fc.string(), (before, sep, after) => {
      expect(redactSecrets(`${before}ck${sep}test${sep}${secret}${after}`)).not.toContain(secret.slice(0, 28));
    }),
    { numRuns: 300 },
  );
});

test('redactSecrets masks the other secrets too: a signing secret (base62, or an older base64url one), a login token, a URL password', () => {
  const older = 'whsec__EH5qbuq69d-eQDUkqKP0Xsk1yOUM0iLSoMUf383Oto';
  const current = `whsec_${'Ab3'.repeat(14)}x`;
  expect(redactSecrets(`No such offset: '${older}'.`)).toBe("No such offset: 'whsec_…3Oto'.");
  expect(redactSecrets(`/hook?secret=${current}`)).toBe(`/hook?secret=whsec_…${current.slice(-4)}`);
  // A login token is 32 letters and digits: a run, shown by its last four.
  expect(redactSecrets('/login?token=lCBsgmqScxSv4geyxFbER6aWppjfJvru')).toBe('/login?token=…Jvru');
  for (const [url, shown] of [
    ['postgres://u:SuperSecret123@127.0.0.1:1/db', 'postgres://u:***@127.0.0.1:1/db'],
    ['postgresql://carbon:p@ss@db.internal/ledger?sslmode=require', 'postgresql://carbon:***@db.internal/ledger?sslmode=require'],
    ['postgres://u:Super%2FSecret@h/db', 'postgres://u:***@h/db'],
    ["No profile named 'https://a:b@c.example'.", "No profile named 'https://a:***@c.example'."],
    ['/x?db=postgres%3A%2F%2Fu%3ApW%40h%2Fdb', '/x?db=postgres://u:***@h/db'],
    // Digits then # or ? in the password, as psql reads it (the user has no dot: not a host and a port).
    ['postgres://carbon:2024#pw@db:5432/x', 'postgres://carbon:***@db:5432/x'],
  ] as const)
    expect(redactSecrets(url)).toBe(shown);
  expect(redactSecrets('WHSEC_Sa-WEyxe_YZxuaV-PDfaoxwx_CBBzU8lg8SV7S-jkPg')).toBe('whsec_…jkPg');
  // A URL without a password, an address, a port and a query with an address in it, and hex (a git
  // SHA, a digest, a UUID without dashes: no secret's alphabet) stay as they were.
  for (const text of [
    'postgres://u@h/db',
    'http://127.0.0.1:5101/api/v1',
    'ops@example.com',
    'whsec_',
    'http://example.com:8080?notify=ops@example.com',
    '0377db6849b176f67f2856af20707fca8664a3fb',
    '0310A9C65D90453BA0C3FEC0754A4A7C',
    // A word that ends in a mode's letters is no mode: the hex after it stays.
    'img-latest-3f2a9c0d4e5b6a7980f1e2d3c4b5a6978877665544',
    'deploy latest:0377db6849b176f67f2856af20707fca8664a3fb',
    'alive_0310A9C65D90453BA0C3FEC0754A4A7C',
  ])
    expect(redactSecrets(text)).toBe(text);
  // runs: 'after-mode' (an Idempotency-Key a caller chose, carbon's batch keys): a long run is kept, a key in any spelling still masked.
  const batchKey = 'csv:default:AbCdEfGhIjKlMnOpQrStUvWxYz012345';
  expect(redactSecrets(batchKey, { runs: 'after-mode' })).toBe(batchKey);
  expect(redactSecrets(batchKey)).toBe('csv:default:…2345');
  const key = newApiKey('test');
  const secret = key.slice('ck_test_'.length);
  for (const spelling of [key, `CK_TEST_${secret}`, `ck-test-${secret}`])
    expect(redactSecrets(spelling, { runs: 'after-mode' })).toBe(`${spelling.slice(0, 8)}…${key.slice(-4)}`);
  // The bare secret, and its mode run into it or far from it: still a key.
  for (const spelling of [secret, `cktest${secret}`, `ck_test____${secret}`, `ck_test_%00%00%00${secret}`])
    expect(redactSecrets(spelling, { runs: 'after-mode' })).not.toContain(secret.slice(0, 28));
  // A label of a caller's own, longer or shorter than a secret: whole.
  for (const label of ['AcmeCorpQuarterlyOffsetPurchaseQ4Retry1', 'AcmeCorpQuarterlyOffsetPurchase', `${secret}1`])
    expect(redactSecrets(label, { runs: 'after-mode' })).toBe(label);
});

test('redactSecrets masks a key in a JSON body that spells any of its characters as \\u00XX; the body stays JSON, other escapes as sent', () => {
  const key = newApiKey('live');
  const spell = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  for (let at = 0; at < key.length; at++) {
    const spelled = `${key.slice(0, at)}${spell(key[at]!)}${key.slice(at + 1)}`;
    const body = `{"kg":1,"reference":"${spelled}","note":"a \\u0022quote\\u0022 and \\u00e9"}`;
    const shown = redactSecrets(body);
    // Not the secret, nor any 12 of its characters in a row (what a partial mask would leave).
    for (let i = 8; i + 12 <= key.length; i++) expect(shown, `escaped at ${at}`).not.toContain(key.slice(i, i + 12));
    expect(JSON.parse(shown)).toEqual({ kg: 1, reference: `ck_live_…${key.slice(-4)}`, note: 'a "quote" and é' });
  }
  // No key: the escapes as they came.
  for (const text of ['{"reference":"flight\\u002dLHR"}', '\\u0041\\u0042', '{"a":"\\u0022"}']) expect(redactSecrets(text)).toBe(text);
});

test('redactSecrets masks key-shaped text, plain or percent-encoded (once or twice), and leaves other text as it was', () => {
  const key = newApiKey('live');
  const masked = `ck_live_…${key.slice(-4)}`;
  const encoded = key.replace(/_/g, '%5F');
  expect(redactSecrets(`GET /x/${key}`)).toBe(`GET /x/${masked}`);
  expect(redactSecrets(`/x/${encoded}`)).toBe(`/x/${masked}`);
  expect(redactSecrets(`/x/${key.replace(/_/g, '%255f')}`)).toBe(`/x/${masked}`);
  expect(redactSecrets(`${key} and ${key.replace('live', 'test')}`)).not.toContain(key.slice(8));
  // No key: the text comes back untouched, its escapes as they were.
  for (const text of ['/api/v1/offsets/off_%41bc', '100%', '%zz%', 'ck_live_short']) expect(redactSecrets(text)).toBe(text);
  fc.assert(
    fc.property(fc.string(), fc.string(), (before, after) => {
      expect(redactSecrets(`${before}${encodeURIComponent(key)}${after}`)).not.toContain(key.slice(8));
    }),
    { numRuns: 300 },
  );
});
