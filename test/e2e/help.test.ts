import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { CommandSpec } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { ROOT } from '../support/binary.js';
import { carbon, homes, ok, serve } from '../support/cli.js';

/** Help: a command's own flags and examples first, the global flags once; `carbon serve --help` and its banner. */

const newHome = homes();

describe('help', () => {
  test('carbon --help names every CARBON_ variable carbon reads', async () => {
    // Each name in src/ read from the environment (`env.NAME`, `env['NAME']`, or given as a variable's name in a message).
    const names = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(join(dir, entry.name));
        else for (const m of readFileSync(join(dir, entry.name), 'utf8').matchAll(/\bCARBON_[A-Z_]+[A-Z]\b/g)) names.add(m[0]);
      }
    };
    walk(join(ROOT, 'src'));
    names.delete('CARBON_SCHEMA_NEWER'); // an error's code, not a variable
    // The walk sees what it should.
    expect(names).toContain('CARBON_PG_POOL');
    const help = (await ok(['--help'], { home: newHome() })).stdout.replace(/\s+/g, ' ');
    expect([...names].filter((name) => !help.includes(name)).sort()).toEqual([]);
  });

  test("a command's help is its own: usage, flags and examples first, the global flags named once at the end", async () => {
    const home = newHome();
    const help = (await ok(['help', 'balance'], { home })).stdout;
    expect(help.split('\n').length).toBeLessThan(20);
    expect(help.indexOf('Examples:')).toBeLessThan(help.indexOf('Inherited flags'));
    expect(help).toMatch(/Inherited flags \(what each does: carbon help\):\n {2}--json {2}--profile <name> {2}--live/);
    expect(help).not.toContain("print the API's JSON object");
    // The whole explanation is in `carbon help`, once.
    const root = (await ok(['help'], { home })).stdout;
    expect(root).toContain("print the API's JSON object");
    expect(root).not.toContain('Inherited flags');
  });

  test('carbon serve --help names the developer page; the banner gives the API address once', async () => {
    const home = newHome();
    expect((await ok(['serve', '--help'], { home })).stdout).toMatch(/developer page/);
    const server = await serve(home);
    const banner = server.stderr();
    expect(banner.split(server.url).length - 1).toBe(2); // the banner's first line, and the example command
    expect(banner).not.toContain('listening on');
    expect((await server.stop()).exitCode).toBe(0);
  });

  /** Every group that does nothing alone (its subcommands, and none of them its default), by its words. */
  const groups = (specs: readonly CommandSpec[], above: string[] = []): string[][] =>
    specs.flatMap((spec) => {
      const words = [...above, spec.name];
      const subs = spec.subcommands ?? [];
      const bare = subs.length > 0 && spec.load === undefined && !subs.some((s) => s.isDefault === true);
      return [...(bare ? [words] : []), ...groups(subs, words)];
    });

  test.each([[], ...groups(COMMANDS)].map((words) => [['carbon', ...words].join(' '), words]))(
    '%s, bare, prints its help on stdout and exits 0',
    async (_name, words) => {
      const r = await carbon(words, { home: newHome() });
      expect([r.exitCode, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toMatch(new RegExp(`^Usage: ${['carbon', ...words].join(' ')} \\[options\\] \\[command\\]\n`));
      expect(r.stdout).toMatch(/\n {2}help \[command\] /);
    },
  );

  // A script that asked for JSON gets none of the help's prose on stdout: a usage error, reported
  // as every --json error is (the envelope on stderr). Help asked for by name is still help.
  test.each([[], ...groups(COMMANDS)].map((words) => [['carbon', ...words].join(' '), words]))(
    '%s --json, bare, is a usage error: exit 2, nothing on stdout, the envelope on stderr',
    async (name, words) => {
      const home = newHome();
      const r = await carbon([...words, '--json'], { home });
      expect([r.exitCode, r.stdout]).toEqual([2, '']);
      expect(r.stderr.endsWith('\n') && r.stderr.split('\n')).toHaveLength(2);
      expect(JSON.parse(r.stderr)).toEqual({
        error: {
          type: 'invalid_request_error',
          code: 'usage_error',
          message: `${name} --json needs a command: only a command prints JSON (\`${name} help\` lists them).`,
        },
      });
      expect((await ok(['--json', ...words, '--help'], { home })).stdout).toMatch(new RegExp(`^Usage: ${name} `));
    },
  );

  /** Every group with a default command that takes flags, by its words, and those flags. */
  const defaulted = (specs: readonly CommandSpec[], above: string[] = []): [string, string[], string[]][] =>
    specs.flatMap((spec) => {
      const words = [...above, spec.name];
      const flags = spec.subcommands?.find((s) => s.isDefault === true)?.flags?.map((f) => f.flags) ?? [];
      return [
        ...(flags.length > 0 ? [[words.join(' '), words, flags] as [string, string[], string[]]] : []),
        ...defaulted(spec.subcommands ?? [], words),
      ];
    });

  test.each(defaulted(COMMANDS))(
    "carbon %s --help lists the flags it takes: its default command's, then its commands",
    async (_name, words, flags) => {
      const help = (await ok([...words, '--help'], { home: newHome() })).stdout;
      const options = help.slice(help.indexOf('\nOptions:\n'), help.indexOf('\nCommands:\n'));
      for (const flag of flags) expect(options).toContain(`\n  ${flag} `);
      expect(options).toMatch(/\n {2}-h, --help /);
    },
  );

  test("a word that is none of a group's commands is still a usage error, with the suggestion; help X still helps", async () => {
    const home = newHome();
    const typo = await carbon(['config', 'sett'], { home });
    expect([typo.exitCode, typo.stdout]).toEqual([2, '']);
    expect(typo.stderr).toMatch(/unknown command 'sett' \(Did you mean set\?\)/);
    expect((await carbon(['nope'], { home })).exitCode).toBe(2);
    expect((await ok(['help', 'config'], { home })).stdout).toMatch(/^Usage: carbon config /);
    expect((await ok(['sandbox', 'help', 'keys'], { home })).stdout).toMatch(/^Usage: carbon sandbox keys /);
  });

  test('help for a command there is not: the unknown command, exit 2, as without help; help for one there is still helps', async () => {
    const home = newHome();
    for (const [argv, line] of [
      [['help', 'bogus'], "error: unknown command 'bogus' (Did you mean logs?)\n"],
      [['sandbox', 'keys', 'help', 'bogus'], "error: unknown command 'bogus' (`carbon sandbox keys help` lists the commands)\n"],
      [['config', 'help', 'sett'], "error: unknown command 'sett' (Did you mean set?)\n"],
    ] as const) {
      const r = await carbon([...argv], { home });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', line]);
    }
    expect((await ok(['help', 'buy'], { home })).stdout).toMatch(/^Usage: carbon buy /);
    expect((await ok(['sandbox', 'keys', 'help', 'create'], { home })).stdout).toMatch(/^Usage: carbon sandbox keys create /);
  });

  // The words of an unknown command, and the one line it gets, whichever way it is asked for:
  // `carbon X`, `carbon help X`, and a group's own `help` (`carbon sandbox help X`).
  const unknowns: Array<[string[], string]> = [
    // commander suggests a command only when it is close (under half the letters changed):
    // `bye` is two edits from `buy`, so there is none, and the line says where the commands are.
    [['bye'], "error: unknown command 'bye' (`carbon help` lists the commands)\n"],
    [['blance'], "error: unknown command 'blance' (Did you mean balance?)\n"],
    [['sandbox', 'bye'], "error: unknown command 'bye' (`carbon sandbox help` lists the commands)\n"],
    [['sandbox', 'keys', 'bye'], "error: unknown command 'bye' (`carbon sandbox keys help` lists the commands)\n"],
    [['config', 'sett'], "error: unknown command 'sett' (Did you mean set?)\n"],
    [['logs', 'bye'], "error: unknown command 'bye' (`carbon logs help` lists the commands)\n"],
  ];
  const askedFor = (words: string[]) => [words, ['help', ...words], [...words.slice(0, -1), 'help', words.at(-1)!]];

  test.each(unknowns)('carbon %j, or help for it: exit 2, nothing on stdout, the same one line', async (words, line) => {
    const home = newHome();
    for (const argv of askedFor(words)) {
      const r = await carbon(argv, { home });
      expect([argv.join(' '), r.exitCode, r.stdout, r.stderr]).toEqual([argv.join(' '), 2, '', line]);
    }
  });

  test('--json, an unknown command or help for it: the one envelope, with the suggestion and without the pointer', async () => {
    const home = newHome();
    for (const [words, line] of unknowns) {
      const message = line.replace(/^error: /, '').replace(/ \(`carbon .*\n$|\n$/, '');
      for (const argv of askedFor(words)) {
        const r = await carbon([...argv, '--json'], { home });
        expect([argv.join(' '), r.exitCode, r.stdout]).toEqual([argv.join(' '), 2, '']);
        expect(JSON.parse(r.stderr)).toEqual({ error: { type: 'invalid_request_error', code: 'usage_error', message } });
      }
    }
  });

  test("help for a group's command helps, whichever way it is asked for; help help is the help", async () => {
    const home = newHome();
    const keysCreate = (await ok(['sandbox', 'keys', 'create', '--help'], { home })).stdout;
    expect(keysCreate).toMatch(/^Usage: carbon sandbox keys create /);
    for (const argv of [
      ['help', 'sandbox', 'keys', 'create'],
      ['sandbox', 'help', 'keys', 'create'],
      ['sandbox', 'keys', 'help', 'create'],
    ]) {
      expect((await ok(argv, { home })).stdout, argv.join(' ')).toBe(keysCreate);
    }
    // A command that is not a group takes its help's further words as `--help` does: they are not commands.
    expect((await ok(['help', 'balance', 'extra'], { home })).stdout).toMatch(/^Usage: carbon balance /);
    // `help` is a command of every group too: its help is the group's (it was "unknown command 'help' (Did you mean help?)").
    for (const group of [[], ['sandbox'], ['sandbox', 'keys']]) {
      const r = await carbon([...group, 'help', 'help'], { home });
      expect([r.exitCode, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toBe((await ok([...group, 'help'], { home })).stdout);
    }
  });

  test('--json: an unknown command is one envelope whose message is one line, the suggestion in it', async () => {
    const r = await carbon(['--json', 'bogus'], { home: newHome() });
    expect([r.exitCode, r.stdout]).toEqual([2, '']);
    expect(JSON.parse(r.stderr)).toEqual({
      error: { type: 'invalid_request_error', code: 'usage_error', message: "unknown command 'bogus' (Did you mean logs?)" },
    });
  });

  test("a mistyped command followed by the real one's options: the unknown command, not the option, exit 2", async () => {
    const home = newHome();
    for (const [argv, line] of [
      [['byu', '--kg', '5'], "error: unknown command 'byu' (Did you mean buy?)\n"],
      [['lsit', '--limit', '5'], "error: unknown command 'lsit' (Did you mean list?)\n"],
    ] as const) {
      const r = await carbon([...argv], { home });
      expect([r.exitCode, r.stdout, r.stderr]).toEqual([2, '', line]);
    }
  });
});
