import { describe, expect, it } from 'vitest';
import { candidates, formatCandidates } from '../../src/cli/commands/complete/run.js';
import type { Candidate, Sources } from '../../src/cli/commands/complete/sources.js';
import { buildProgram } from '../../src/cli/registry.js';
import type { GlobalOptions } from '../../src/cli/settings.js';

/**
 * The brain of `carbon __complete`, in process, against the real command tree and fake sources
 * that record which global options reached them.
 */

const seen: GlobalOptions[] = [];
const sources: Sources = {
  async offsetIds(globals) {
    seen.push(globals);
    return [{ value: 'off_new', description: '500 kg · placed' }, { value: 'off_old' }];
  },
  async profiles() {
    return [{ value: 'default' }, { value: 'staging', description: 'live · https://api.example.com/api/v1' }];
  },
  async savedProfiles() {
    return [{ value: 'staging' }];
  },
  async configKeys() {
    return ['test-key', 'live-key', 'mode', 'base-url'].map((value) => ({ value }));
  },
  async keyIds() {
    return [{ value: 'key_abc' }];
  },
  async reviewIds() {
    return [{ value: 'off_held', description: '100 kg · live' }];
  },
  async processingIds() {
    return [{ value: 'off_held' }, { value: 'off_test' }];
  },
};

const complete = async (...words: string[]): Promise<string[]> =>
  (await candidates(buildProgram(), words, sources)).map((c: Candidate) => c.value);

describe('__complete candidates', () => {
  it('offers every visible command, and never the hidden helper', async () => {
    const top = await complete('');
    expect(top).toEqual(expect.arrayContaining(['buy', 'quote', 'list', 'show', 'balance', 'impact', 'completion', 'help']));
    expect(top).not.toContain('__complete');
  });

  it('reads nested commands from commander: config and sandbox, two levels deep', async () => {
    expect(await complete('config', '')).toEqual(expect.arrayContaining(['set', 'get', 'unset', 'list', 'use']));
    expect(await complete('sandbox', '')).toEqual(expect.arrayContaining(['topup', 'keys', 'review', 'fail', 'clock', 'reset']));
    expect(await complete('sandbox', 'clock', '')).toEqual(expect.arrayContaining(['show', 'advance']));
    // Global options before the command do not lose the way.
    expect(await complete('--profile', 'staging', '--json', 'sandbox', 'keys', '')).toEqual(expect.arrayContaining(['create', 'revoke']));
  });

  it("offers a command's own options and the global ones, not the options already given", async () => {
    const buy = await complete('buy', '--kg', '5', '-');
    expect(buy).toEqual(
      expect.arrayContaining([
        '--amount-cents',
        '--reference',
        '--idempotency-key',
        '--wait',
        '--max-cents',
        '--yes',
        '--json',
        '--profile',
        '--help',
      ]),
    );
    expect(buy).not.toContain('--kg');
    expect(buy).not.toContain('--limit');
    expect(buy).not.toContain('--version');
    expect(await complete('-')).toContain('--version');
    // A command that takes no argument offers its options on an empty word.
    expect(await complete('list', '')).toContain('--format');
  });

  it("offers a group's default command's options, and reads their values as values", async () => {
    expect(await complete('logs', '-')).toEqual(
      expect.arrayContaining(['--status', '--method', '--since', '--limit', '--follow', '--json']),
    );
    expect(await complete('sandbox', 'keys', '-')).toContain('--reveal');
    // `carbon logs --status 4xx`: 4xx is the flag's value, so the filters are still offered.
    const after = await complete('logs', '--status', '4xx', '-');
    expect(after).toEqual(expect.arrayContaining(['--method', '--path', '--follow']));
    expect(after).not.toContain('--status');
    // Its value: the classes (a single code is typed), and the methods.
    expect(await complete('logs', '--status', '')).toEqual(['2xx', '4xx', '5xx']);
    expect(await complete('logs', 'list', '--method', '')).toEqual(['GET', 'POST']);
  });

  it('offers option values: --format choices, profiles, --opt=value forms', async () => {
    expect(await complete('list', '--format', '')).toEqual(['table', 'plain', 'json', 'csv']);
    expect(await complete('list', '--format=c')).toEqual(['--format=table', '--format=plain', '--format=json', '--format=csv']);
    expect(await complete('--profile', '')).toEqual(['default', 'staging']);
    expect(await complete('balance', '--profile', '')).toEqual(['default', 'staging']);
    // Free text: nothing to offer, and not the options either.
    expect(await complete('buy', '--reference', '')).toEqual([]);
  });

  it('offers argument values: shells, config keys, mode values, choices of other commands', async () => {
    expect(await complete('completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(await complete('config', 'set', '')).toEqual(['test-key', 'live-key', 'mode', 'base-url']);
    expect(await complete('config', 'set', 'mode', '')).toEqual(['test', 'live']);
    expect(await complete('config', 'use', '')).toEqual(['default', 'staging']);
    expect(await complete('sandbox', 'account', '')).toEqual(['active', 'suspended', 'unapproved']);
    expect(await complete('sandbox', 'review', '')).toEqual(['approve', 'reject']);
    // What the subcommand can act on: held for review, processing; not the key's newest offsets.
    expect(await complete('sandbox', 'review', 'approve', '')).toEqual(['off_held']);
    expect(await complete('sandbox', 'review', 'reject', '')).toEqual(['off_held']);
    expect(await complete('sandbox', 'fail', '')).toEqual(['off_held', 'off_test']);
    expect(await complete('sandbox', 'keys', 'revoke', '')).toEqual(['key_abc']);
  });

  it('offers offset ids for show and --starting-after, on the engine the typed options select', async () => {
    seen.length = 0;
    expect(await complete('show', '')).toEqual(['off_new', 'off_old']);
    expect(await complete('--profile', 'staging', 'show', '--live', '')).toEqual(['off_new', 'off_old']);
    expect(await complete('list', '--starting-after', '')).toEqual(['off_new', 'off_old']);
    expect(seen[1]).toMatchObject({ profile: 'staging', live: true });
    // One id is all show takes.
    expect(await complete('show', 'off_new', '')).toEqual(expect.arrayContaining(['--wait']));
  });

  it('says where a file name goes, for the shell to complete from the disk, --opt=FILE too', async () => {
    expect(await complete('buy', '--from-csv', '')).toEqual([':files']);
    expect(await complete('buy', '--from-csv', 'fl')).toEqual([':files']);
    expect(await complete('buy', '--from-csv=fl')).toEqual([':files']);
    expect(await complete('watch', '--cursor', '')).toEqual([':files']);
    expect(await complete('sandbox', 'snapshot', 'save', '')).toEqual([':files']);
    expect(await complete('sandbox', 'snapshot', 'load', 'seed')).toEqual([':files']);
    // Not for a value that is no file, nor once the file is given.
    expect(await complete('buy', '--kg', '')).toEqual([]);
    expect(await complete('sandbox', 'snapshot', 'load', 'seed.ndjson', '')).not.toContain(':files');
  });

  it('follows `help` and `--`', async () => {
    expect(await complete('help', '')).toEqual(expect.arrayContaining(['buy', 'config']));
    expect(await complete('help', 'config', '')).toEqual(expect.arrayContaining(['set', 'use']));
    expect(await complete('show', '--', '-')).toEqual(['off_new', 'off_old']);
  });

  it('prints one candidate a line, a description after a tab, nothing that could split a line', () => {
    expect(formatCandidates([{ value: 'a', description: 'one\ttwo\nthree' }, { value: 'b' }, { value: 'bad\nvalue' }, { value: '' }])).toBe(
      'a\tone two three\nb\n',
    );
  });
});
