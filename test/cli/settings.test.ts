import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { colorOn } from '../../src/cli/output.js';
import { resolvePaths } from '../../src/cli/paths.js';
import { type GlobalOptions, resolveConfigSettings, resolveSettings } from '../../src/cli/settings.js';

/** Settings precedence (flag > environment > profile > default) and the colour rule, as tables. */

const home = mkdtempSync(join(tmpdir(), 'carbon-settings-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const TEST_A = `ck_test_${'a'.repeat(32)}`;
const TEST_B = `ck_test_${'b'.repeat(32)}`;
const LIVE_A = `ck_live_${'a'.repeat(32)}`;
const LIVE_ENV = `ck_live_${'e'.repeat(32)}`;

writeFileSync(
  join(home, 'config.json'),
  JSON.stringify({
    current_profile: 'default',
    profiles: {
      default: { test_key: TEST_A, live_key: LIVE_A },
      staging: { test_key: TEST_B, mode: 'live', base_url: 'https://staging.example.com/api/v1' },
    },
  }),
);

type Expect = Partial<{
  profileName: string;
  mode: string;
  engine: string;
  baseUrl: string | null;
  apiKey: string | undefined;
  apiKeySource: string;
  maxRetries: number;
}>;

describe('resolveSettings', () => {
  const cases: Array<[string, GlobalOptions, Record<string, string>, Expect]> = [
    [
      'defaults: local, test, the profile key',
      {},
      {},
      { profileName: 'default', mode: 'test', engine: 'local', baseUrl: null, apiKey: TEST_A, apiKeySource: 'profile', maxRetries: 2 },
    ],
    ['--live picks the live key', { live: true }, {}, { mode: 'live', apiKey: LIVE_A }],
    [
      'CARBON_API_KEY beats the profile, and its prefix sets the mode',
      {},
      { CARBON_API_KEY: LIVE_ENV },
      { mode: 'live', apiKey: LIVE_ENV, apiKeySource: 'env' },
    ],
    [
      '--api-key beats CARBON_API_KEY',
      { apiKey: TEST_B },
      { CARBON_API_KEY: LIVE_ENV },
      { mode: 'test', apiKey: TEST_B, apiKeySource: 'flag' },
    ],
    [
      'a profile sets mode and base URL',
      { profile: 'staging' },
      {},
      {
        profileName: 'staging',
        mode: 'live',
        engine: 'remote',
        baseUrl: 'https://staging.example.com/api/v1',
        apiKey: undefined,
        apiKeySource: 'sandbox',
      },
    ],
    ['CARBON_PROFILE selects, --profile beats it', { profile: 'default' }, { CARBON_PROFILE: 'staging' }, { profileName: 'default' }],
    ['--test beats the profile mode', { profile: 'staging', test: true }, {}, { mode: 'test', apiKey: TEST_B }],
    ['--local beats a base URL', { profile: 'staging', local: true }, {}, { engine: 'local', baseUrl: null }],
    [
      'CARBON_BASE_URL beats the profile, --base-url beats it',
      { baseUrl: 'http://127.0.0.1:1/api/v1' },
      { CARBON_BASE_URL: 'http://127.0.0.1:2/api/v1' },
      { engine: 'remote', baseUrl: 'http://127.0.0.1:1/api/v1' },
    ],
    ['CARBON_MAX_RETRIES, --max-retries beats it', { maxRetries: '0' }, { CARBON_MAX_RETRIES: '5' }, { maxRetries: 0 }],
    ['an empty CARBON_PROFILE is unset', {}, { CARBON_PROFILE: '' }, { profileName: 'default' }],
    // PostgreSQL's own settings are not looked at without its URL (a shell may export them for another job).
    ['CARBON_DATABASE_SCHEMA without a PostgreSQL URL is not read', {}, { CARBON_DATABASE_SCHEMA: 'a;drop' }, { engine: 'local' }],
  ];
  test.each(cases)('%s', (_name, opts, env, expected) => {
    expect(resolveSettings(opts, { CARBON_HOME: home, ...env })).toMatchObject(expected);
  });

  test.each<[string, GlobalOptions, Record<string, string>, RegExp]>([
    ['--live and --test', { live: true, test: true }, {}, /--live or --test, not both/],
    ['--live with a test key', { live: true }, { CARBON_API_KEY: TEST_B }, /is a test key/],
    ['a key that is no key', {}, { CARBON_API_KEY: 'nope' }, /not a test or live key/],
    // A CI secret pasted with its line's end: named as that, not as a header that cannot be sent.
    [
      'a key with a newline',
      {},
      { CARBON_API_KEY: `${TEST_B}\n` },
      /^The API key from CARBON_API_KEY has white space at an end, or a control character/,
    ],
    ['a key with a space', { apiKey: ` ${TEST_B}` }, {}, /^The API key from --api-key has white space at an end/],
    [
      'a key with nothing after its mode, to a remote API',
      { baseUrl: 'http://127.0.0.1:1/api/v1' },
      { CARBON_API_KEY: 'ck_test_' },
      /^The API key from CARBON_API_KEY has nothing after ck_test_: its secret, the letters and digits that follow, is missing/,
    ],
    ['an unknown profile, named', { profile: 'nope' }, {}, /No profile named "nope"/],
    ['--max-retries out of range', { maxRetries: '11' }, {}, /--max-retries must be a whole number from 0 to 10/],
    // A bad value is named where it was typed: the variable, or the flag that wins over it.
    [
      'CARBON_MAX_RETRIES not a number',
      {},
      { CARBON_MAX_RETRIES: 'x' },
      /^CARBON_MAX_RETRIES must be a whole number from 0 to 10, not "x"/,
    ],
    ['CARBON_TIMEOUT not a number', {}, { CARBON_TIMEOUT: 'abc' }, /^CARBON_TIMEOUT must be a whole number from 1 to 86400, not "abc"/],
    ['--timeout bad, CARBON_TIMEOUT good', { timeout: '0' }, { CARBON_TIMEOUT: '5' }, /^--timeout must be a whole number from 1 to 86400/],
    ['CARBON_PG_POOL not a number', {}, { CARBON_DATABASE_URL: 'postgres://db/x', CARBON_PG_POOL: 'many' }, /^CARBON_PG_POOL must be/],
    ['CARBON_JOURNAL_KEEP not a number', {}, { CARBON_JOURNAL_KEEP: 'lots' }, /^CARBON_JOURNAL_KEEP must be/],
    [
      'CARBON_DATABASE_SCHEMA malformed, with a PostgreSQL URL',
      {},
      { CARBON_DATABASE_URL: 'postgres://db/x', CARBON_DATABASE_SCHEMA: 'a;drop' },
      /^The database schema is not usable: the schema name "a;drop"/,
    ],
    ['--database-schema without --database', { databaseSchema: 'ledger' }, {}, /^--database-schema goes with --database/],
    ['a --base-url that is no URL', { baseUrl: 'not-a-url' }, {}, /The base URL from --base-url is not a URL/],
    ['a CARBON_BASE_URL that is no http(s) URL', {}, { CARBON_BASE_URL: 'ftp://x/api/v1' }, /from CARBON_BASE_URL must use https:\/\//],
  ])('refused: %s', (_name, opts, env, message) => {
    expect(() => resolveSettings(opts, { CARBON_HOME: home, ...env })).toThrow(message);
  });

  test('config commands resolve a profile that does not exist yet, whatever the key variables say', () => {
    const s = resolveConfigSettings(
      { profile: 'new' },
      { CARBON_HOME: home, CARBON_API_KEY: 'nope', CARBON_MAX_RETRIES: 'x', CARBON_BASE_URL: 'bad' },
    );
    expect(s).toMatchObject({ profileName: 'new', profile: {}, engine: 'local' });
  });

  test("config commands resolve whatever the ledger's variables say: they never open it", () => {
    const ledger = {
      CARBON_DATABASE_URL: 'mysql://db.example/carbon',
      CARBON_PG_POOL: 'many',
      CARBON_PG_CONNECT_TIMEOUT_MS: '5s',
      CARBON_BUSY_TIMEOUT_MS: '5s',
      CARBON_JOURNAL_KEEP: 'lots',
      CARBON_JOURNAL_MAX_AGE_DAYS: 'a week',
    };
    // Each of them stops a command that opens the ledger…
    for (const [name, value] of Object.entries(ledger)) {
      const alone = {
        CARBON_HOME: home,
        [name]: value,
        ...(name.startsWith('CARBON_PG_') ? { CARBON_DATABASE_URL: 'postgres://db/x' } : {}),
      };
      expect(() => resolveSettings({}, alone), name).toThrow();
    }
    // …and none stops `carbon config`, which is there to look at and fix the configuration.
    expect(resolveConfigSettings({}, { CARBON_HOME: home, ...ledger })).toMatchObject({ profileName: 'default', engine: 'local' });
  });
});

describe('resolvePaths', () => {
  test('CARBON_HOME holds config and data; set to the empty string it is unset, as every carbon variable is', () => {
    expect(resolvePaths({ CARBON_HOME: '/ci/carbon', HOME: '/home/u' }, 'linux')).toEqual({
      configDir: '/ci/carbon',
      dataDir: '/ci/carbon/data',
    });
    const perUser = { configDir: '/home/u/.config/carbon', dataDir: '/home/u/.local/share/carbon' };
    expect(resolvePaths({ CARBON_HOME: '', HOME: '/home/u' }, 'linux')).toEqual(perUser);
    expect(resolvePaths({ HOME: '/home/u', XDG_CONFIG_HOME: '', XDG_DATA_HOME: '' }, 'linux')).toEqual(perUser);
  });
});

describe('colorOn', () => {
  test.each<[boolean, Record<string, string>, boolean | undefined, boolean]>([
    [true, {}, undefined, true],
    [false, {}, undefined, false],
    [true, { NO_COLOR: '1' }, undefined, false],
    [true, { NO_COLOR: '' }, undefined, true],
    [true, {}, false, false],
    [false, { FORCE_COLOR: '1' }, undefined, true],
    [false, { FORCE_COLOR: '' }, undefined, true],
    [true, { FORCE_COLOR: '0' }, undefined, false],
    [true, { FORCE_COLOR: 'false' }, undefined, false],
    [false, { FORCE_COLOR: '1', NO_COLOR: '1' }, undefined, false],
    [false, { FORCE_COLOR: '1' }, false, false],
  ])('tty=%s env=%o flag=%s → %s', (tty, env, flag, expected) => {
    expect(colorOn(tty, env, flag)).toBe(expected);
  });
});
