import { expect, test } from 'vitest';
import { engineFlags, followUp, shownArgs } from '../../src/cli/follow-up.js';

/** Commands printed for the user to run next: the flags that chose where a run went, never a key or a database password. */

const KEY = `ck_live_${'a'.repeat(32)}`;

test('the engine flags are kept, --api-key is left out and the mode it chose said instead', () => {
  expect(followUp(['show', 'off_1', '--wait'], ['buy', '--kg', '5', '--api-key', KEY, '--base-url', 'http://127.0.0.1:1/api/v1'])).toBe(
    'carbon show off_1 --wait --base-url http://127.0.0.1:1/api/v1 --live',
  );
  expect(engineFlags(['list', `--api-key=${KEY.replace('live', 'test')}`, '--profile', 'ci'])).toEqual(['--profile', 'ci', '--test']);
  // A mode given already is not given twice.
  expect(engineFlags(['list', '--live', '--api-key', KEY])).toEqual(['--live']);
  expect(shownArgs(['list', '--api-key', KEY, '--limit', '2']).join(' ')).not.toContain(KEY.slice(8));
});

test("a database URL's password is ***, whole, whatever it holds (an @ too), in either form of the flag", () => {
  for (const url of ['postgres://u:p@ss@h/db', 'postgres://u:S3cret@h:5432/db?sslmode=require']) {
    const shown = [...engineFlags(['list', '--database', url]), ...engineFlags(['list', `--database=${url}`])].join(' ');
    expect(shown).toContain('postgres://u:***@h');
    expect(shown).not.toMatch(/ss@|S3cret/);
  }
});

test('a flag typed twice is said once, as commander reads it: a switch on, a value the last given', () => {
  expect(engineFlags(['buy', '--live', '--kg', '5', '--yes', '--live'])).toEqual(['--live']);
  expect(engineFlags(['list', '--profile', 'a', '--live', '--profile=b', '--database', 'x', '--database', 'y'])).toEqual([
    '--live',
    '--profile=b',
    '--database',
    'y',
  ]);
  expect(followUp(['sandbox', 'topup', '2000'], ['buy', '--kg', '5', '--test', '--local', '--test'])).toBe(
    'carbon sandbox topup 2000 --test --local',
  );
});
