import { expect, test } from 'vitest';
import { flagTable } from '../../src/cli/flags.js';

test('a flag table: flags, two or more spaces, the description; a line indented further carries it on', () => {
  const rows = flagTable(
    `
    -q, --quiet        print only the ids
    --status <status>  only offsets
                         in this state
  `,
    { '--status': { choices: ['placed'] } },
  );
  expect(rows).toEqual([
    { flags: '-q, --quiet', description: 'print only the ids' },
    { flags: '--status <status>', description: 'only offsets in this state', choices: ['placed'] },
  ]);
});

test('a flag table refuses a row with no description, and extras for a flag it does not have', () => {
  expect(() => flagTable('  --json')).toThrow('no description');
  expect(() => flagTable('  --json  print JSON', { '--jsno': { values: 'profiles' } })).toThrow('does not have');
});
