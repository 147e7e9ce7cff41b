import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, test } from 'vitest';
import { BIN, baseEnv, carbon, carbonTty, coloured, homes, json, ok, plain, sandboxKeys, serve, sh, TTY } from '../support/cli.js';
import { headerless } from '../support/headerless-proxy.js';
import { limit } from '../support/load.js';

/**
 * A person at a terminal: the binary on a pseudo-terminal (util-linux `script`), so stdin, stdout
 * and stderr are all TTYs. Cards and tables, colour and how NO_COLOR / FORCE_COLOR / --no-color
 * change it, the live-purchase confirmation, and the reset prompt. (The pipe side of each is in
 * the other files: every run there has stdout and stderr as pipes.)
 */

const newHome = homes();

/**
 * Runs carbon on a pty (script(1)) and, once `after` has been printed, does `then` (type Ctrl-C,
 * move the model's clock…). `columns` 0 leaves the pty unsized, as `script` makes it without a terminal.
 */
async function whenPrinted(
  args: string[],
  home: string,
  after: RegExp,
  // biome-ignore lint/suspicious/noConfusingVoidType: a step may type and return nothing
  then: (typed: (text: string) => void, signal: (name: NodeJS.Signals) => Promise<void>) => Promise<unknown> | void,
  columns = 120,
): Promise<{ output: string; exitCode: number }> {
  const command = [process.execPath, BIN(), ...args].map(sh).join(' ');
  const child = execa(
    'script',
    ['-qec', columns === 0 ? `exec ${command}` : `stty cols ${columns} rows 40; exec ${command}`, '/dev/null'],
    {
      env: baseEnv(home, { TERM: 'xterm-256color' }),
      extendEnv: false,
      reject: false,
      stdin: 'pipe',
      timeout: limit(20_000),
    },
  );
  let output = '';
  let done: Promise<unknown> | undefined;
  child.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
    if (done === undefined && after.test(output)) {
      // carbon is script's child (`exec`): a signal goes to it, not to script.
      const signal = async (name: NodeJS.Signals) => {
        const { stdout } = await execa('pgrep', ['-P', String(child.pid)]);
        process.kill(Number(stdout.trim().split('\n')[0]), name);
      };
      done = Promise.resolve(then((text) => child.stdin!.write(text), signal));
    }
  });
  const r = await child;
  await done;
  return { output: output.replace(/\r\n/g, '\n'), exitCode: r.exitCode ?? -1 };
}

describe('cards and tables', () => {
  let home: string;
  beforeAll(async () => {
    home = newHome();
    for (let i = 0; i < 12; i++) await ok(['buy', '--kg', String(100 + i), '--reference', `trip-${i}`], { home });
  });

  test('balance: a card with dollars, in colour', async () => {
    const r = await carbonTty(['balance'], { home, env: TTY });
    expect(r.exitCode).toBe(0);
    expect(coloured(r.output)).toBe(true);
    const text = plain(r.output);
    // 12 purchases of 100 to 111 kg: 1,266 kg at $0.04.
    expect(text).toMatch(/^available {2}\$949\.36$/m);
    expect(text).toMatch(/^mode {7}test · sandbox: not real$/m);
    expect(text).toMatch(/^rate {7}\$0\.04\/kg$/m);
    expect(text).not.toContain('\t');
  });

  test('list: a table of 10 with separators and dollars, and a hint for the next page', async () => {
    const r = await carbonTty(['list'], { home, env: TTY });
    expect(r.exitCode).toBe(0);
    const text = plain(r.output);
    expect(text).toMatch(/^ID\s+STATUS\s+KG\s+AMOUNT\s+REFERENCE\s+CREATED/m);
    expect(
      text.match(/^off_\S+\s+(processing|placed)\s+\d+\s+\$4\.\d\d\s+trip-\d+\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC *$/gm),
    ).toHaveLength(10);
    expect(text).toMatch(/More offsets: carbon list --starting-after off_\S+ {2}\(or --all\)/);
  });

  test('quote, impact, show: cards', async () => {
    const quote = plain((await carbonTty(['quote', '--kg', '1500'], { home, env: TTY })).output);
    expect(quote).toMatch(/^buys +1,500 kg$/m);
    expect(quote).toMatch(/^costs +\$60\.00$/m);
    expect(quote).toMatch(/^covered +yes$/m);
    const impact = plain((await carbonTty(['impact'], { home, env: TTY })).output);
    expect(impact).toMatch(/^total +1,266 kg$/m);
    const id = (await json<{ data: Array<{ id: string }> }>(['list'], { home })).data[0]!.id;
    const show = plain((await carbonTty(['show', id], { home, env: TTY })).output);
    expect(show).toMatch(new RegExp(`^id +${id}$`, 'm'));
    expect(show).toMatch(/^reference +trip-11$/m);
  });

  test('sandbox status and keys, config list', async () => {
    const status = plain((await carbonTty(['sandbox', 'status'], { home, env: TTY })).output);
    expect(status).toMatch(/^account +active$/m);
    expect(status).toMatch(/^rate limit +off$/m);
    const keys = plain((await carbonTty(['sandbox', 'keys'], { home, env: TTY })).output);
    expect(keys).toMatch(/^ID\s+KEY\s+MODE\s+ACCESS/m);
    expect(keys).toMatch(/ck_test_…\w{4}\s+test\s+read-only/);
    // One spelling a table: the read-only key's DEFAULT as its ACCESS (--json's read_only is the API's).
    expect(keys).toMatch(/ck_test_…\w{4}\s+test\s+read-only\s+read-only\s/);
    expect(keys).toContain('Keys are masked; add --reveal');
    await ok(['config', 'set', 'mode', 'test'], { home });
    const config = plain((await carbonTty(['config', 'list'], { home, env: TTY })).output);
    expect(config).toMatch(/^default \(current\)\n {2}mode +test$/m);
  });
});

describe('CSV on a terminal: what a caller sent is never obeyed by it', () => {
  test('list, report and a batch write the escape sequences and bare CR of a reference as spaces there; a pipe gets the bytes sent', async () => {
    const home = newHome();
    const reference = '\u001b[31mRED\rX';
    await ok(['buy', '--kg', '1', '--reference', reference], { home });
    const csv = join(home, 'rows.csv');
    writeFileSync(csv, `kg,reference\n2,"\u001b]0;title\u0007two"\n`);
    for (const args of [
      ['list', '--format', 'csv'],
      ['report', '--by', 'reference', '--format', 'csv'],
      ['buy', '--from-csv', csv, '--dry-run'],
    ]) {
      // TERM=dumb: no spinner redrawing its line, which is carbon's own control sequences.
      const shown = await carbonTty(args, { home, env: { NO_COLOR: '1', TERM: 'dumb' } });
      expect([args, shown.exitCode]).toEqual([args, 0]);
      expect([args, shown.output.replace(/\r+(\n|$)/g, '$1').match(/[\u0000-\u0009\u000b-\u001f].{0,12}/g)]).toEqual([args, null]);
    }
    expect((await carbonTty(['list', '--format', 'csv'], { home })).output).toContain(' [31mRED X,');
    // A file or a pipe is data: the reference as it was sent, quoted as RFC 4180 quotes a CR.
    expect((await ok(['list', '--format', 'csv'], { home })).stdout).toContain(`,"${reference}",`);
  });
});

describe('colour', () => {
  let home: string;
  beforeAll(async () => {
    home = newHome();
  });

  test.each([
    ['NO_COLOR=1', { NO_COLOR: '1' }, []],
    ['--no-color', {}, ['--no-color']],
    ['FORCE_COLOR=0', { FORCE_COLOR: '0' }, []],
  ])('%s turns colour off on a terminal, errors included', async (_name, env, flags) => {
    const card = await carbonTty(['balance', ...flags], { home, env: { ...TTY, ...env } });
    expect(card.exitCode).toBe(0);
    expect(plain(card.output)).toMatch(/^available/m);
    expect(coloured(card.output)).toBe(false);
    const error = await carbonTty(['show', 'off_missing', ...flags], { home, env: { ...TTY, ...env } });
    expect(error.exitCode).toBe(5);
    expect(error.output).toMatch(/^error: No such offset/m);
    expect(coloured(error.output)).toBe(false);
    // The spinner of a wait, and its last line, too.
    const wait = await carbonTty(['buy', '--kg', '5', '--wait', ...flags], { home, env: { ...TTY, ...env } });
    expect(wait.exitCode).toBe(0);
    expect(plain(wait.output)).toMatch(/✓ off_\w+ placed/);
    expect(coloured(wait.output)).toBe(false);
  });

  test('a wait on a terminal has its spinner and its last line in colour by default', async () => {
    const wait = await carbonTty(['buy', '--kg', '5', '--wait'], { home, env: TTY });
    expect(wait.output).toMatch(/\u001b\[32m✓\u001b\[39m off_\w+ placed/);
    // A terminal without unicode (the Linux console) gets ora's fallback, as its frames do.
    const linux = await carbonTty(['buy', '--kg', '5', '--wait'], { home, env: { ...TTY, TERM: 'linux' } });
    expect(plain(linux.output)).toMatch(/√ off_\w+ placed/);
  });

  test('stdout on a terminal and stderr to a file (2>log): the table is in colour, the notes in the file are not', async () => {
    const log = join(home, 'notes.log');
    await ok(['buy', '--kg', '2'], { home });
    await ok(['buy', '--kg', '3'], { home });
    for (const args of [['list', '--limit', '1'], ['list', '--all'], ['report'], ['sandbox', 'keys']]) {
      writeFileSync(log, '');
      const r = await carbonTty(args, { home, env: TTY, columns: 60, stderrTo: log });
      const notes = readFileSync(log, 'utf8');
      expect([args.join(' '), r.exitCode, coloured(r.output), coloured(notes)], notes).toEqual([args.join(' '), 0, true, false]);
      expect(notes.length, args.join(' ')).toBeGreaterThan(0);
    }
    // On the terminal, the report's lines under its table are broken at spaces to its width.
    const narrow = await carbonTty(['report', '--since', '2020-01-01'], { home, env: TTY, columns: 40 });
    const lines = plain(narrow.output).trimEnd().split('\n');
    expect(lines.join('\n')).toMatch(/refunded ones left out/);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(40);
  });

  test('the error line is red on a terminal by default', async () => {
    const error = await carbonTty(['show', 'off_missing'], { home, env: TTY });
    expect(error.output).toContain('\u001b[31merror:\u001b[39m No such offset');
  });

  test('FORCE_COLOR=1 colours a pipe (stderr notes and errors); stdout rows stay plain; NO_COLOR and --no-color still win', async () => {
    const forced = await carbon(['buy', '--kg', '1'], { home, env: { FORCE_COLOR: '1' } });
    expect(forced.exitCode).toBe(0);
    expect(coloured(forced.stderr)).toBe(true);
    expect(forced.stdout).toMatch(/^id\toff_/);
    expect(coloured((await carbon(['show', 'off_missing'], { home, env: { FORCE_COLOR: '1' } })).stderr)).toBe(true);
    expect(coloured((await carbon(['buy', '--kg', '1'], { home, env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stderr)).toBe(false);
    expect(coloured((await carbon(['buy', '--kg', '1', '--no-color'], { home, env: { FORCE_COLOR: '1' } })).stderr)).toBe(false);
    expect(coloured((await carbon(['show', 'off_missing', '--no-color'], { home, env: { FORCE_COLOR: '1' } })).stderr)).toBe(false);
  });
});

describe('prompts', () => {
  test('a live purchase asks on a terminal; n stops it as Ctrl-C does (exit 130, one plain line, nothing bought), y buys, --yes skips', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const no = await carbonTty(['buy', '--kg', '100', '--live'], { home, env: TTY, input: 'n\n' });
    expect(plain(no.output)).toContain("Buy 100 kg for $4.00 from the sandbox's LIVE balance ($250.00)? [y/N]");
    expect(no.exitCode).toBe(130);
    // The user's own answer is no error: one plain line, not `error:`.
    expect(plain(no.output)).toMatch(/^Cancelled; nothing was bought\.\r?$/m);
    expect(no.output).not.toContain('error');
    // Ctrl-D (the input's end) too: the question's line ended first.
    const eof = await carbonTty(['buy', '--kg', '100', '--live'], { home, env: TTY, input: '\u0004' });
    expect(eof.exitCode).toBe(130);
    expect(plain(eof.output)).toMatch(/^Cancelled; nothing was bought\.\r?$/m);
    expect((await json(['impact', '--live'], { home })).offsets).toBe(0);

    const yes = await carbonTty(['buy', '--kg', '100', '--live'], { home, env: TTY, input: 'y\n' });
    expect(yes.exitCode).toBe(0);
    expect(plain(yes.output)).toMatch(/Bought 100 kg for \$4\.00 \(live mode, sandbox: not a real purchase\)/);

    const skipped = await carbonTty(['buy', '--kg', '100', '--live', '--yes'], { home, env: TTY });
    expect(skipped.exitCode).toBe(0);
    expect(plain(skipped.output)).not.toContain('[y/N]');
    expect((await json(['impact', '--live'], { home })).offsets).toBe(2);

    // A service that does not say it is a sandbox (the real one): its LIVE balance is named plainly.
    const server = await serve(home);
    const real = await headerless(server.url);
    try {
      const env = { ...TTY, CARBON_BASE_URL: real.url, CARBON_API_KEY: (await sandboxKeys(home)).live };
      const asked = await carbonTty(['buy', '--kg', '100', '--live'], { home, env, input: 'n\n' });
      expect(plain(asked.output)).toContain('Buy 100 kg for $4.00 from the LIVE balance ($242.00)? [y/N]');
    } finally {
      real.close();
      await server.stop();
    }
  });

  test('without a terminal a live purchase is never prompted and never hangs: it needs --yes', async () => {
    const home = newHome();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const started = Date.now();
    // stdin is an open pipe nobody writes to: a prompt would wait forever (until carbon()'s kill).
    const r = await carbon(['buy', '--kg', '100', '--live'], { home, input: '' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).not.toContain('[y/N]');
    expect(r.stderr).toContain(
      'error: A live purchase needs --yes when nobody can confirm it (stdin is not a terminal); nothing was bought.',
    );
    expect(Date.now() - started).toBeLessThan(limit(10_000));
    // With --yes: no question and no warning.
    expect((await carbon(['buy', '--kg', '1', '--live', '--yes'], { home })).stderr).not.toContain('warning');
    // Not enough balance: still no prompt, just the 402.
    const poor = await carbon(['buy', '--kg', '1000000', '--live', '--yes'], { home });
    expect(poor.exitCode).toBe(3);
  });

  test('sandbox reset asks on a terminal: n keeps everything (exit 130, one plain line), y starts over', async () => {
    const home = newHome();
    const offset = await json<{ id: string }>(['buy', '--kg', '10'], { home });
    const no = await carbonTty(['sandbox', 'reset'], { home, env: TTY, input: 'n\n' });
    expect(no.exitCode).toBe(130);
    expect(plain(no.output)).toMatch(/^Cancelled; nothing was deleted\.\r?$/m);
    expect(no.output).not.toContain('error');
    expect(plain(no.output)).toMatch(/Delete every offset, balance and key of the local sandbox in \S+\? \[y\/N\]/);
    expect((await ok(['show', offset.id], { home })).exitCode).toBe(0);
    const yes = await carbonTty(['sandbox', 'reset'], { home, env: TTY, input: 'y\n' });
    expect(yes.exitCode).toBe(0);
    expect((await carbon(['show', offset.id], { home })).exitCode).toBe(5);
  });
});

describe('spinner', () => {
  // The wait ends because the test moves the model's clock, not because 3 s of real time passed;
  // its --timeout only bounds it (15 s on a quiet machine, more on a busy one).
  const WAIT_SECONDS = String(Math.ceil(limit(15_000) / 1000));
  const advance = (home: string) => ok(['sandbox', 'clock', 'advance', '1m'], { home });
  test('--wait on a terminal shows a spinner and ends placed', async () => {
    const home = newHome();
    const r = await whenPrinted(['buy', '--kg', '10', '--wait', '--timeout', WAIT_SECONDS], home, /Waiting for off_/, () => advance(home));
    expect(r.exitCode).toBe(0);
    const text = plain(r.output);
    expect(text).toMatch(/Waiting for off_\S+ to be placed/);
    expect(text).toMatch(/off_\S+ placed/);
    expect(text).toMatch(/^status +placed$/m);
  });

  test('a terminal that reports 0 columns gets no spinner, and --wait still ends (ora would loop forever)', async () => {
    const home = newHome();
    const r = await whenPrinted(['buy', '--kg', '10', '--wait', '--timeout', WAIT_SECONDS], home, /Bought 10 kg/, () => advance(home), 0);
    expect(r.exitCode).toBe(0);
    expect(plain(r.output)).not.toContain('Waiting for');
    expect(plain(r.output)).toMatch(/^status +placed$/m);
  });
});

describe('confirming a live purchase: every combination of terminals', () => {
  const newHome2 = homes();
  test('stdout a terminal but stdin not (input piped in): not asked, nothing bought, and it says why', async () => {
    const home = newHome2();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    // script(1) gives the command a terminal; stdin is then taken from /dev/null.
    const command = `${[process.execPath, BIN(), 'buy', '--kg', '10', '--live'].map(sh).join(' ')} </dev/null`;
    const options = { env: baseEnv(home, { TERM: 'xterm-256color' }), extendEnv: false, reject: false, input: '', timeout: limit(20_000) };
    const r = await execa('script', ['-qec', command, '/dev/null'], options);
    const output = String(r.stdout);
    expect(r.exitCode).toBe(2);
    expect(output).not.toContain('[y/N]');
    expect(output).toContain('A live purchase needs --yes when nobody can confirm it (stdin is not a terminal); nothing was bought.');
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toHaveLength(0);
  });
});

describe('a CI job given a terminal (CI=true; Buildkite runs jobs on one, as docker run -t does)', () => {
  const newHome4 = homes();
  test('is never asked: a live purchase, a live batch and sandbox reset need --yes, a key is not prompted for; CI=false asks', async () => {
    const home = newHome4();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const offset = await json<{ id: string }>(['buy', '--kg', '10'], { home });
    const file = join(home, 'flights.csv');
    writeFileSync(file, 'reference,kg\nci-1,5\n');
    const ci = { ...TTY, CI: 'true' };
    // Even a terminal that would answer y: in a CI job nobody is there to mean it.
    for (const [args, said] of [
      [
        ['buy', '--kg', '10', '--live'],
        'A live purchase needs --yes when nobody can confirm it (CI=true says this is a CI job); nothing was bought.',
      ],
      [
        ['buy', '--from-csv', file, '--live'],
        'A live batch needs --yes where nobody can confirm it (CI=true says this is a CI job). Nothing was bought.',
      ],
      [['sandbox', 'reset'], 'and nobody can confirm it (CI=true says this is a CI job).'],
      [
        ['config', 'set', 'test-key', '-'],
        'Nobody can type the test-key here: stdin is a terminal, and CI=true says this is a CI job; nothing was set.',
      ],
    ] as const) {
      const r = await carbonTty([...args], { home, env: ci, input: 'y\n' });
      expect({ args, exitCode: r.exitCode }).toEqual({ args, exitCode: 2 });
      expect(plain(r.output)).not.toMatch(/\[y\/N\]|Paste or type/);
      expect(plain(r.output)).toContain(said);
    }
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toEqual([]);
    expect((await ok(['show', offset.id], { home })).exitCode).toBe(0);
    expect(existsSync(join(home, 'config.json'))).toBe(false);
    // CI=false (or unset) is a person at a terminal: asked, as before.
    const asked = await carbonTty(['buy', '--kg', '10', '--live'], { home, env: { ...TTY, CI: 'false' }, input: 'n\n' });
    expect(asked.exitCode).toBe(130);
    expect(plain(asked.output)).toContain('[y/N]');
  });
});

describe('Ctrl-C, on a real terminal', () => {
  const newHome3 = homes();
  /** Types Ctrl-C once `after` has been printed. */
  const interrupt = (args: string[], home: string, after: RegExp) => whenPrinted(args, home, after, (type) => type('\x03'));

  test('during buy --wait: stops at once, prints the offset (its id to follow), exit 130', async () => {
    const home = newHome3();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    // Held for review (a limit of $0): the wait is still on when Ctrl-C comes, however long that takes.
    await ok(['sandbox', 'review-limit', '0'], { home });
    const r = await interrupt(['buy', '--kg', '10', '--live', '--yes', '--wait'], home, /Waiting for off_/);
    expect(r.exitCode).toBe(130);
    // The command to follow it keeps --live: without it, it would look in test mode and find nothing.
    // The user's own Ctrl-C is no error: one plain line, not `error:`.
    expect(plain(r.output)).toMatch(/^Stopped waiting: off_\w+ is processing\. Follow it with `carbon show off_\w+ --wait --live`\.\r?$/m);
    expect(plain(r.output)).not.toContain('error:');
    const id = /Stopped waiting: (off_\w+)/.exec(r.output)![1];
    // The offset itself is printed (as a card on a terminal), not only named in the message.
    expect(plain(r.output)).toMatch(new RegExp(`id\\s+${id}\\nstatus\\s+processing · waiting for review`));
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toHaveLength(1);
  });

  test('at the confirmation of a live purchase: "cancelled", exit 130, nothing bought', async () => {
    const home = newHome3();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const r = await interrupt(['buy', '--kg', '10', '--live'], home, /\[y\/N\]/);
    expect(r.exitCode).toBe(130);
    expect(plain(r.output)).toMatch(/^Cancelled; nothing was bought\.\r?$/m);
    expect(r.output).not.toContain('error');
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toEqual([]);
  });

  test('SIGTERM at the confirmation (a CI job that times out): "cancelled", named, exit 130, nothing bought', async () => {
    const home = newHome3();
    await ok(['sandbox', 'topup', '250', '--live'], { home });
    const r = await whenPrinted(['buy', '--kg', '10', '--live'], home, /\[y\/N\]/, (_type, signal) => signal('SIGTERM'));
    expect(r.exitCode).toBe(130);
    expect(plain(r.output)).toMatch(/^Cancelled \(SIGTERM\); nothing was bought\.\r?$/m);
    expect(r.output).not.toContain('error');
    expect((await json<{ data: unknown[] }>(['list', '--live'], { home })).data).toEqual([]);
  });
});

describe('TERM=dumb', () => {
  test('a terminal that says it is dumb gets no colour', async () => {
    const home = newHome();
    const colourful = await carbonTty(['balance'], { home, env: { FORCE_COLOR: undefined } });
    expect(colourful.exitCode).toBe(0);
    expect(coloured(colourful.output)).toBe(true);
    const dumb = await carbonTty(['balance'], { home, env: { TERM: 'dumb', FORCE_COLOR: undefined } });
    expect(dumb.exitCode).toBe(0);
    expect(coloured(dumb.output)).toBe(false);
    expect(dumb.output).not.toMatch(/\u001b\[/);
  });
});
