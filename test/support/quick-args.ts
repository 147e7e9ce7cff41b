import fc from 'fast-check';
import { QUICK_COMMANDS } from '../../src/cli/quick.js';

/**
 * Argument lists the tables do not hold, drawn from CARBON_TEST_SEED: each quick command with any
 * of its own flags (the ones quick.ts takes and the ones it leaves), the global ones, in any order
 * and spelling (`--kg 5`, `--kg=5`, a value missing), with values its choices allow and values
 * they do not. `--wait` (it waits on the model's clock) and `--from-csv` (the bin's own rule, in
 * the table) are left out. `<id>` stands for an offset's id. test/e2e/quick-parity.test.ts runs
 * some of them as processes; test/cli/quick.test.ts reads many more in-process.
 */
const GLOBAL_FLAGS = ['--json', '--live', '--test', '--local', '--verbose', '--no-color', '--color', '--profile', '-h', '--max-retries'];
const VALUES = [
  '5',
  '1234',
  '0',
  '-1',
  '1.5',
  '1,000',
  '1e3',
  'abc',
  '',
  '0x10',
  ' 5',
  'ci',
  'nope',
  '7d',
  'today',
  '2026-01-01',
  '<id>',
  'off_nothere',
];

/** A flag, spelt as a person might: `--kg 5`, `--kg=5`, or with its value missing. */
const spelt = ({ name, value, choices }: { name: string; value: boolean; choices: readonly string[] }) =>
  value
    ? fc
        .tuple(fc.constantFrom(...choices, ...VALUES), fc.constantFrom('space', 'equals', 'missing'))
        .map(([v, how]) => (how === 'space' ? [name, v] : how === 'equals' ? [`${name}=${v}`] : [name]))
    : fc.constant([name]);

export const arbitraryArgs = fc.oneof(
  ...QUICK_COMMANDS.map((spec) => {
    const own = (spec.flags ?? [])
      .flatMap((f) =>
        f.flags
          .split(/[ ,]+/)
          .filter((n) => n.startsWith('-'))
          .map((name) => ({ name, value: f.flags.includes('<'), choices: f.choices ?? [] })),
      )
      .filter(({ name }) => name !== '--wait' && name !== '--from-csv');
    const globals = GLOBAL_FLAGS.map((name) => ({ name, value: name === '--profile' || name === '--max-retries', choices: [] }));
    const word = fc.oneof(
      ...(own.length > 0 ? [{ arbitrary: fc.oneof(...own.map(spelt)), weight: 6 }] : []),
      { arbitrary: fc.oneof(...globals.map(spelt)), weight: 3 },
      { arbitrary: fc.constantFrom(...VALUES).map((v) => [v]), weight: 1 },
    );
    return fc.array(word, { maxLength: 5 }).map((words) => [spec.name, ...words.flat()]);
  }),
);
