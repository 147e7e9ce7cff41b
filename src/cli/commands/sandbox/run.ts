import { ACCOUNT_STANDINGS, type Balance, type Mode, type Offset } from '../../../api/types.js';
import { LedgerError } from '../../../engine/ledger.js';
import { checkRate, checkRateLimit, checkTopUp, topUpOutOfRange } from '../../../service/settings.js';
import { duration } from '../../../service/units.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { dollarsOption, isOneOf, wholeNumberOption } from '../../options.js';
import { print } from '../../print.js';
import { dollars, grouped } from '../../render/format.js';
import { accountCard, accountPlain, clockCard, clockPlain, statusCard, statusPlain } from '../../render/sandbox.js';
import { sayIfStdoutLost } from '../../stdio.js';
import { ACCOUNT, account, CLOCK, change, clock, durationArg, note, open } from './shared.js';

/**
 * `carbon sandbox …`: what the real service does on its developer page or behind the scenes
 * (top-ups, keys, account standing, review, failed orders, the clock), on this machine's local
 * model, the one `carbon serve` serves from the same CARBON_HOME. Each subcommand prints the
 * object it changed: --json the object itself, a card on a terminal, `field<TAB>value` in a pipe.
 */

export { faultsOff, faultsSet, faultsShow } from './faults.js';
export { keysCreate, keysList, keysRevoke } from './keys.js';
export { login } from './login.js';
export { snapshotLoad, snapshotSave } from './snapshot.js';

export async function status(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'status');
  await print(ctx, await sandbox.status(), statusCard, statusPlain);
}

export async function topup(ctx: Context, amount: string | undefined, flags: { cents?: string }): Promise<void> {
  if ((amount === undefined) === (flags.cents === undefined)) {
    throw usage('Give the amount in dollars (`carbon sandbox topup 250`) or in cents (`--cents 25000`), one of the two.');
  }
  const cents = flags.cents !== undefined ? wholeNumberOption(flags.cents, '--cents') : dollarsOption(amount!, 'The top-up');
  const sandbox = await open(ctx, 'topup', () => {
    // Given in dollars, said in dollars (the model's message counts cents).
    const outOfRange = amount === undefined ? null : topUpOutOfRange(cents);
    if (outOfRange !== null) throw usage(outOfRange);
    checkTopUp(cents);
  });
  const mode: Mode = ctx.settings.mode;
  // Read before the top-up: once it is committed, nothing may fail the command (a failure read
  // after it was said as a top-up not made, that "can be retried").
  const { rate } = await account(sandbox);
  const available = await sandbox.topUp(mode, cents).catch((err: unknown) => {
    if (!(err instanceof LedgerError)) throw err;
    ctx.ledgerFailed = true;
    // PostgreSQL failed under it: its COMMIT may have been made with the answer lost, and a top-up
    // has no key that would make a second one the same one (a purchase's does: buy/run.ts).
    if (ctx.settings.store.kind !== 'postgres' || err.unwritten) throw err;
    throw new CliError(
      `${err.message} The top-up may or may not have been made.`,
      EXIT.failure,
      'storage_error',
      'See the balance (carbon balance) before topping up again.',
    );
  });
  // The API's own Balance object, so `carbon sandbox topup 250 --json | jq .available_cents`
  // reads like `carbon balance --json`.
  const balance: Balance = {
    object: 'balance',
    livemode: mode === 'live',
    available_cents: available,
    currency: 'usd',
    rate_millicents_per_kg: rate,
  };
  // Made: a stdout that fails now (a full disk) must not read as nothing done, or a script tops up again.
  sayIfStdoutLost(`The top-up of ${dollars(cents)} was made: the ${mode} balance is ${dollars(available)}.`, {
    available_cents: available,
  });
  await note(ctx, (p) => `${p.green('✓')} Topped up ${dollars(cents)} (${mode === 'live' ? p.red('live') : p.cyan('test')} balance).`);
  await print(ctx, balance);
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
  // Its least is 1, not 0 (a rate of 0 would give offsets away): what is over the most, the model's check says.
  const millicents = wholeNumberOption(value, 'The rate (millicents per kg)', { min: 1 });
  await change(
    ctx,
    'rate',
    async (sandbox) => {
      await sandbox.setRate(millicents);
      // Said as the page says it (a ✓ line, as every other change's): millicents a kg are cents a tonne.
      await note(ctx, (p) => `${p.green('✓')} The rate is ${grouped(millicents)} millicents per kg: ${dollars(millicents)} a tonne.`);
    },
    ACCOUNT,
    () => checkRate(millicents),
  );
}

export async function reviewLimit(ctx: Context, value: string): Promise<void> {
  const cents = dollarsOption(value, 'The review limit');
  await change(
    ctx,
    'review-limit',
    async (sandbox) => {
      await sandbox.setReviewLimit(cents);
      await note(ctx, (p) => `${p.green('✓')} The review limit is ${dollars(cents)}: a live purchase above it waits for review.`);
    },
    ACCOUNT,
  );
}

export async function rateLimit(ctx: Context, value: string, flags: { window?: string }): Promise<void> {
  const requests = value === 'off' ? null : wholeNumberOption(value, 'The rate limit (requests per window, or off)');
  const windowMs = flags.window === undefined ? undefined : durationArg(flags.window, '--window');
  // Without --window the current window stays: `rate-limit 10` after `--window 1m` means 10 a minute.
  await change(
    ctx,
    'rate-limit',
    async (sandbox) => {
      const set = await sandbox.setRateLimit(requests, windowMs);
      if (set.rate_limit_requests && ctx.settings.store.kind === 'sqlite')
        await rateLimitNote(ctx, set.rate_limit_requests, set.rate_limit_window_ms);
      // As `account suspended` says what it shuts: a script's every call now fails.
      if (set.rate_limit_requests === 0)
        await note(
          ctx,
          (p) =>
            `${p.yellow('✓')} Rate limit 0: every request now gets 429 rate_limited (exit 7), until \`carbon sandbox rate-limit off\`.`,
        );
      if (set.rate_limit_requests === null) await note(ctx, (p) => `${p.green('✓')} Rate limit off: no request is refused for its rate.`);
    },
    ACCOUNT,
    () => checkRateLimit(requests, windowMs ?? 1000),
  );
}

/**
 * On SQLite the counts live in one process's memory (store/port.ts, takeRequest): a carbon serve
 * counts what it answers, but each local command starts at zero, so a limit above 0 is never met
 * by one-shot calls. Said where it is set, so a script rehearsing 429s is not left wondering.
 */
async function rateLimitNote(ctx: Context, requests: number, windowMs: number): Promise<void> {
  await note(
    ctx,
    (p) =>
      `${p.green('✓')} ${grouped(requests)} request${requests === 1 ? '' : 's'} per ${duration(windowMs)} per key. Each process counts its own: a carbon serve ` +
      'every request it answers, a local command only its own requests (three `carbon balance` in a row are never refused); ' +
      '`rate-limit 0` refuses every one.',
  );
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
  const ms = durationArg(value, 'The duration', true);
  await change(ctx, 'clock advance', (sandbox) => sandbox.advanceClock(ms), CLOCK);
}

export async function reset(ctx: Context, flags: { yes?: boolean }): Promise<void> {
  const sandbox = await open(ctx, 'reset');
  if (!flags.yes) {
    const what = `every offset, balance and key of the local sandbox in ${sandbox.label}`;
    // A script is never prompted: without a person to ask (no terminal, a CI job), only --yes may delete.
    const nobody = ctx.out.nobodyToAsk;
    if (nobody !== undefined)
      throw usage(`carbon sandbox reset deletes ${what}, and nobody can confirm it (${nobody}).`, 'Add --yes to do it without a prompt.');
    const { confirmOrStop } = await import('../../prompt.js');
    await confirmOrStop(ctx.out, `Delete ${what}?`, 'Cancelled; nothing was deleted.');
  }
  await sandbox.reset();
  await note(ctx, (p) => `${p.green('✓')} The sandbox starts over: a fresh account with new test, live and read-only keys.`);
  await print(ctx, await sandbox.status(), statusCard, statusPlain);
}
