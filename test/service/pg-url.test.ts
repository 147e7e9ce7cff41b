import { expect, test } from 'vitest';
import { maskUrl, parseDatabaseUrl } from '../../src/store/postgres/url.js';

/** A database URL read as psql (libpq) reads it, which has no fragment: a `#` is the text's wherever it is. */

test.each([
  ['in the password parameter', 'postgres://carbon@db:5432/carbon?password=2024#Winter', 'postgres://carbon@db:5432/carbon?password=***'],
  [
    'after another parameter',
    'postgres://carbon@db/carbon?application_name=a#b&password=pw#Winter',
    'postgres://carbon@db/carbon?application_name=a%23b&password=***',
  ],
  ['in the user info', 'postgres://carbon:2024#Winter@db:5432/x', 'postgres://carbon:***@db:5432/x'],
])('a "#" %s: masked whole, the rest never shown as a fragment', (_what, url, shown) => {
  expect(maskUrl(url)).toBe(shown);
  expect(maskUrl(url)).not.toContain('Winter');
});

test('the driver is given the whole password, "#" and all, as psql sends it', () => {
  const { connectionString } = parseDatabaseUrl('postgres://carbon@db:5432/carbon?password=2024#Winter');
  const sent = new URL(connectionString);
  expect([sent.searchParams.get('password'), sent.hash]).toEqual(['2024#Winter', '']);
  // In the database name too: libpq's name is `team#1`, not `team` with a fragment.
  expect(decodeURIComponent(new URL(parseDatabaseUrl('postgres://carbon:pw@db/team#1').connectionString).pathname)).toBe('/team#1');
});
