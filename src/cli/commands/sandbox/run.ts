import { ACCOUNT_STANDINGS, type Balance, type Mode, type Offset } from '../../../api/types.js';
import { describeFaults, type FaultConfig, parseLatency, parseShare } from '../../../service/faults.js';
import type { Sandbox } from '../../../service/sandbox.js';
import type { FaultInput } from '../../../service/settings.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { dollarsOption, isOneOf, wholeNumberOption } from '../../options.js';
import { print } from '../../print.js';
import { terminalWidth } from '../../render/fit.js';
import { dollars, parseDuration } from '../../render/format.js';
import type { Paint } from '../../render/resources.js';
import {
  accountCard,
  accountPlain,
  clockCard,
  clockPlain,
  faultsCard,
  faultsPlain,
  keyCard,
  keyPlain,
  keyRow,
  keyTable,
  type SandboxAccount,
  type SandboxClock,
  type ShownKey,
  statusCard,
  statusPlain,
} from '../../render/sandbox.js';

/**
 * `carbon sandbox …`: what the real service does on its developer page or behind the scenes
 * (top-ups, keys, account standing, review, failed orders, the clock), on this machine's local
 * model, the one `carbon serve` serves from the same CARBON_HOME. Each subcommand prints the
 * object it changed: --json the object itself, a card on a terminal, `field<TAB>value` in a pipe.
 */

async function open(ctx: Context, what: string): Promise<Sandbox> {
  ctx.requireLocal(`carbon sandbox ${what}`);
  return ctx.sandbox();
}

/** A success note for people, on stderr; silent with --json (the object on stdout says it all). */
async function note(ctx: Context, text: (paint: Paint) => string): Promise<void> {
  if (ctx.out.json) return;
  ctx.out.info(text(await ctx.paint('stderr')));
}

function durationArg(value: string, what: string): number {
  const ms = parseDuration(value);
  if (ms === null) throw usage(`${what} must be a duration such as 90s, 15m, 2h, 1d or 1h30m, not "${value}".`);
  return ms;
}

async function account(sandbox: Sandbox): Promise<SandboxAccount> {
  return (await sandbox.status()).account;
}

async function clock(sandbox: Sandbox): Promise<SandboxClock> {
  return (await sandbox.status()).clock;
}

/** A part of the sandbox as a subcommand prints it: read afresh, then a card or plain lines. */
interface View<T> {
  read: (sandbox: Sandbox) => Promise<T>;
  card: (value: T, paint: Paint) => string;
  plain: (value: T) => string;
}

const ACCOUNT: View<SandboxAccount> = { read: account, card: accountCard, plain: accountPlain };
const CLOCK: View<SandboxClock> = { read: clock, card: clockCard, plain: clockPlain };

/** `carbon sandbox <what>` that sets one thing: the change made, then the part it changed printed as it now is. */
async function change<T>(ctx: Context, what: string, apply: (sandbox: Sandbox) => Promise<unknown>, view: View<T>): Promise<void> {
  const sandbox = await open(ctx, what);
  await apply(sandbox);
  await print(ctx, await view.read(sandbox), view.card, view.plain);
}

export async function status(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'status');
  await print(ctx, await sandbox.status(), statusCard, statusPlain);
}

export async function topup(ctx: Context, amount: string | undefined, flags: { cents?: string }): Promise<void> {
  if ((amount === undefined) === (flags.cents === undefined)) {
    throw usage('Give the amount in dollars (`carbon sandbox topup 250`) or in cents (`--cents 25000`), one of the two.');
  }
  let cents: number;
  if (flags.cents !== undefined) cents = wholeNumberOption(flags.cents, '--cents');
  else cents = dollarsOption(amount!, 'The top-up');
  const sandbox = await open(ctx, 'topup');
  const mode: Mode = ctx.settings.mode;
  const available = await sandbox.topUp(mode, cents);
  // The API's own Balance object, so `carbon sandbox topup 250 --json | jq .available_cents`
  // reads like `carbon balance --json`.
  const balance: Balance = {
    object: 'balance',
    livemode: mode === 'live',
    available_cents: available,
    currency: 'usd',
    rate_millicents_per_kg: (await account(sandbox)).rate,
  };
  await note(ctx, (p) => `${p.green('✓')} Topped up ${dollars(cents)} (${mode === 'live' ? p.red('live') : p.cyan('test')} balance).`);
  await print(ctx, balance);
}

/** The keys as printed: masked, or (--reveal) with the full text this machine keeps for each. */
async function shownKeys(sandbox: Sandbox, reveal: boolean): Promise<ShownKey[]> {
  return sandbox.keys({ reveal });
}

export async function keysList(ctx: Context, flags: { reveal?: boolean }): Promise<void> {
  const sandbox = await open(ctx, 'keys');
  const keys = await shownKeys(sandbox, Boolean(flags.reveal));
  if (ctx.out.json) return ctx.out.jsonDocument(keys);
  if (!ctx.out.interactive) {
    if (keys.length > 0) ctx.out.stdout.write(keys.map((k) => `${keyRow(k)}\n`).join(''));
    return;
  }
  const paint = await ctx.paint();
  ctx.out.data(keyTable(keys, paint, terminalWidth(ctx.out.stdout, ctx.env)));
  if (!flags.reveal) ctx.out.info(paint.dim('Keys are masked; add --reveal to print them in full.'));
}

export async function keysCreate(ctx: Context, flags: { readOnly?: boolean }): Promise<void> {
  const sandbox = await open(ctx, 'keys create');
  const created = await sandbox.createKey(ctx.settings.mode, flags.readOnly ? 'read_only' : 'purchase');
  const key = (await sandbox.keys()).find((k) => k.id === created.id)!;
  const shown: ShownKey = { ...key, secret: created.secret };
  if (ctx.out.json) return ctx.out.jsonDocument(shown);
  const paint = await ctx.paint('stderr');
  ctx.out.info(
    `${paint.green('✓')} Created ${key.mode} key ${key.id} with ${key.permission === 'read_only' ? 'read-only' : 'purchase'} access. ` +
      'It is printed in full only here (and by `carbon sandbox keys --reveal` on this machine).',
  );
  // The full key alone on stdout, so `KEY=$(carbon sandbox keys create)` captures it.
  ctx.out.data(created.secret);
}

export async function keysRevoke(ctx: Context, id: string): Promise<void> {
  const sandbox = await open(ctx, 'keys revoke');
  await sandbox.revokeKey(id);
  const key = (await sandbox.keys()).find((k) => k.id === id)!;
  await note(
    ctx,
    (p) =>
      `${p.green('✓')} Revoked ${id}.` +
      (key.default === null
        ? ''
        : ` It was the sandbox's default ${key.default.replace('_', '-')} key: local commands that use it now get 401 (exit 4); \`carbon sandbox keys create\` makes a new one.`),
  );
  await print(ctx, key as ShownKey, keyCard, keyPlain);
}

export async function accountStatus(ctx: Context, value: string): Promise<void> {
  if (!isOneOf(ACCOUNT_STANDINGS, value)) throw usage(`The account status is one of ${ACCOUNT_STANDINGS.join(', ')}, not "${value}".`);
  const sandbox = await open(ctx, 'account');
  await sandbox.setStatus(value);
  await note(
    ctx,
    (p) =>
      `${p.green('✓')} The account is ${value}${value === 'active' ? '' : ': every request now gets 403 api_access_inactive (exit 4)'}.`,
  );
  await print(ctx, await account(sandbox), accountCard, accountPlain);
}

export async function rate(ctx: Context, value: string): Promise<void> {
  const millicents = wholeNumberOption(value, 'The rate (millicents per kg)');
  await change(ctx, 'rate', (sandbox) => sandbox.setRate(millicents), ACCOUNT);
}

export async function reviewLimit(ctx: Context, value: string): Promise<void> {
  const cents = dollarsOption(value, 'The review limit');
  await change(ctx, 'review-limit', (sandbox) => sandbox.setReviewLimit(cents), ACCOUNT);
}

export async function rateLimit(ctx: Context, value: string, flags: { window?: string }): Promise<void> {
  const requests = value === 'off' ? null : wholeNumberOption(value, 'The rate limit (requests per window, or off)');
  const windowMs = flags.window === undefined ? undefined : durationArg(flags.window, '--window');
  // Without --window the current window stays: `rate-limit 10` after `--window 1m` means 10 a minute.
  const apply = async (sandbox: Sandbox) => sandbox.setRateLimit(requests, windowMs ?? (await account(sandbox)).rate_limit_window_ms);
  await change(ctx, 'rate-limit', apply, ACCOUNT);
}

export async function review(ctx: Context, decision: string, id: string): Promise<void> {
  if (decision !== 'approve' && decision !== 'reject') throw usage(`The decision is approve or reject, not "${decision}".`);
  const sandbox = await open(ctx, 'review');
  const offset: Offset = decision === 'approve' ? await sandbox.approve(id) : await sandbox.reject(id);
  await note(ctx, (p) =>
    decision === 'approve' ? `${p.green('✓')} Approved ${id}: placed.` : `${p.yellow('✓')} Rejected ${id}: refunded, the charge returned.`,
  );
  await print(ctx, offset);
}

export async function fail(ctx: Context, id: string): Promise<void> {
  const sandbox = await open(ctx, 'fail');
  const offset = await sandbox.fail(id);
  await note(ctx, (p) => `${p.yellow('✓')} ${id} could not be placed: refunded, the charge returned.`);
  await print(ctx, offset);
}

export async function clockShow(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'clock');
  await print(ctx, await clock(sandbox), clockCard, clockPlain);
}

export async function clockAdvance(ctx: Context, value: string): Promise<void> {
  const ms = durationArg(value, 'The duration');
  await change(ctx, 'clock advance', (sandbox) => sandbox.advanceClock(ms), CLOCK);
}

export async function reset(ctx: Context, flags: { yes?: boolean }): Promise<void> {
  const sandbox = await open(ctx, 'reset');
  if (!flags.yes) {
    const what = `every offset, balance and key of the local sandbox in ${sandbox.label}`;
    // A script is never prompted: without a terminal to ask on, only --yes may delete.
    if (!(process.stdin.isTTY && ctx.out.stderrInteractive))
      throw usage(`carbon sandbox reset deletes ${what}.`, 'Add --yes to do it without a prompt.');
    const { confirmPrompt } = await import('../../prompt.js');
    if (!(await confirmPrompt(ctx.out, `Delete ${what}?`)))
      throw new CliError('Cancelled; nothing was deleted.', EXIT.failure, 'cancelled');
  }
  await sandbox.reset();
  await note(ctx, (p) => `${p.green('✓')} The sandbox starts over: a fresh account with new test, live and read-only keys.`);
  await print(ctx, await sandbox.status(), statusCard, statusPlain);
}

export interface FaultFlags {
  errorRate?: string;
  errors?: string;
  latency?: string;
  route?: string;
  mode?: string;
  seed?: string;
  retryAfter?: string;
}

function latencyOption(value: string): { min: number; max: number } {
  const range = parseLatency(value);
  if (range === null) throw usage(`--latency is a duration or a range such as 200ms or 50ms-400ms (the low end first), not "${value}".`);
  return range;
}

function shareOption(value: string, name: string): number {
  const share = parseShare(value);
  if (share === null) throw usage(`${name} is a share from 0 to 1, such as 0.3, not "${value}".`);
  return share;
}

export async function faultsShow(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'faults');
  await print(ctx, await sandbox.faults(), faultsCard, faultsPlain);
}

export async function faultsSet(ctx: Context, flags: FaultFlags): Promise<void> {
  const input: FaultInput = {
    ...(flags.errorRate === undefined ? {} : { error_rate: shareOption(flags.errorRate, '--error-rate') }),
    ...(flags.errors === undefined ? {} : { errors: flags.errors.split(',').map((e) => e.trim()) }),
    ...(flags.latency === undefined ? {} : { latency_ms: latencyOption(flags.latency) }),
    ...(flags.route === undefined ? {} : { route: flags.route }),
    ...(flags.mode === undefined ? {} : { mode: flags.mode }),
    ...(flags.seed === undefined ? {} : { seed: wholeNumberOption(flags.seed, '--seed', { max: 0xffffffff }) }),
    ...(flags.retryAfter === undefined ? {} : { retry_after_seconds: wholeNumberOption(flags.retryAfter, '--retry-after', { max: 60 }) }),
  };
  // No default share of errors: a sandbox that failed requests unasked would surprise.
  if (input.error_rate === undefined && input.latency_ms === undefined) {
    throw usage('Say what to inject: --error-rate 0.3 (429, 500, 503 and dropped connections mixed), --latency 50ms-400ms, or both.');
  }
  const sandbox = await open(ctx, 'faults set');
  const config = await sandbox.setFaults(input);
  await note(
    ctx,
    (p) =>
      `${p.yellow('✓')} Faults on: ${describeFaults(config)}. Every carbon serve on this ledger applies them from its next request; \`carbon sandbox faults off\` clears them.`,
  );
  await print(ctx, config as FaultConfig | null, faultsCard, faultsPlain);
}

export async function faultsOff(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'faults off');
  await sandbox.clearFaults();
  await note(ctx, (p) => `${p.green('✓')} Faults off: every request is answered as usual.`);
  await print(ctx, null as FaultConfig | null, faultsCard, faultsPlain);
}

/**
 * `carbon sandbox login`: a fresh one-time link to the developer page, made in the ledger (so it
 * works on every instance that shares it) for the address the last `carbon serve` recorded
 * there, or `--url`. Opened in the browser on a terminal with a display; printed otherwise, and
 * with --print the link alone on stdout.
 */
export async function login(ctx: Context, flags: { print?: boolean; url?: string }): Promise<void> {
  const { publicUrl } = await import('../serve/run.js');
  const given = publicUrl(flags.url, '--url');
  const sandbox = await open(ctx, 'login');
  const origin = given ?? (await sandbox.pages.recordedUrl());
  if (origin === undefined) {
    throw new CliError(
      "No carbon serve has served this ledger yet, so the developer page's address is not known.",
      EXIT.usage,
      'page_url_missing',
      "Start `carbon serve` (with the same CARBON_HOME or --database), or give the page's address with --url http://127.0.0.1:4010.",
    );
  }
  const link = `${origin}/login?token=${await sandbox.pages.newLoginToken(Date.now())}`;
  if (ctx.out.json) return ctx.out.jsonDocument({ developer_page_url: link });
  const { hasDisplay, openInBrowser } = await import('../../browser.js');
  if (flags.print || !ctx.out.interactive || !hasDisplay(ctx.env)) {
    ctx.out.data(link);
    if (!flags.print)
      await note(ctx, (p) => p.dim('A one-time link: it signs one browser in, for 12 hours, and expires unused after a day.'));
    return;
  }
  openInBrowser(ctx, link, `${origin}/login (a one-time link)`);
}
