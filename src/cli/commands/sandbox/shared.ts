import { missingOffset } from '../../../client/errors.js';
import type { Sandbox } from '../../../service/sandbox.js';
import type { Context } from '../../context.js';
import { usage } from '../../errors.js';
import { print } from '../../print.js';
import { parseDuration } from '../../render/format.js';
import type { Paint } from '../../render/resources.js';
import { accountCard, accountPlain, clockCard, clockPlain, type SandboxAccount, type SandboxClock } from '../../render/sandbox.js';

/** What the `carbon sandbox` subcommands share: the local sandbox opened, notes, durations, and the parts they print. */

/**
 * The local sandbox, for `carbon sandbox <what>`. `check` is the model's own check of what was typed
 * (service/settings.ts, which the Sandbox method makes again): made before the ledger is opened, so
 * bad input makes no sandbox in a home that has none yet.
 */
export async function open(ctx: Context, what: string, check?: () => unknown): Promise<Sandbox> {
  ctx.requireLocal(`carbon sandbox ${what}`);
  check?.();
  return ctx.sandbox();
}

/** A success note for people, on stderr; silent with --json (the object on stdout says it all). */
export async function note(ctx: Context, text: (paint: Paint) => string): Promise<void> {
  if (ctx.out.json) return;
  ctx.out.info(text(await ctx.paint('stderr')));
}

/** For `open`'s check: an id no offset has (''), answered with the model's 404 before a sandbox is made to look in. */
export function offsetNamed(id: string): () => void {
  return () => {
    if (id === '') throw missingOffset(id);
  };
}

export function durationArg(value: string, what: string, forward = false): number {
  const ms = parseDuration(value);
  if (ms !== null) return ms;
  const wellWritten = /^(\d+(ms|s|m|h|d|w))+$/.test(value.trim());
  // The model's clock goes back only with a reset or a snapshot loaded: said of a zero or a sign, not of a unit carbon does not read (1y).
  const backwards = forward && ((wellWritten && !/[1-9]/.test(value)) || /^\s*-/.test(value));
  const only = backwards ? ' above zero (the clock only moves forward: `carbon sandbox reset` or a snapshot loaded takes it back)' : '';
  // Written well and not zero, but past what carbon counts exactly: said so, not "above zero".
  const long = wellWritten && /[1-9]/.test(value) ? ' (too large: more than carbon counts exactly)' : '';
  const units = long || only ? '' : ' (units: ms, s, m, h, d, w)';
  throw usage(`${what} must be a duration${only} such as 90s, 15m, 2h, 1d, 1w or 1h30m${units}, not "${value}"${long}.`);
}

export async function account(sandbox: Sandbox): Promise<SandboxAccount> {
  return (await sandbox.status()).account;
}

export async function clock(sandbox: Sandbox): Promise<SandboxClock> {
  return (await sandbox.status()).clock;
}

/** A part of the sandbox as a subcommand prints it: read afresh, then a card or plain lines. */
export interface View<T> {
  read: (sandbox: Sandbox) => Promise<T>;
  card: (value: T, paint: Paint) => string;
  plain: (value: T) => string;
}

export const ACCOUNT: View<SandboxAccount> = { read: account, card: accountCard, plain: accountPlain };
export const CLOCK: View<SandboxClock> = { read: clock, card: clockCard, plain: clockPlain };

/** `carbon sandbox <what>` that sets one thing: the change made, then the part it changed printed as it now is. */
export async function change<T>(
  ctx: Context,
  what: string,
  apply: (sandbox: Sandbox) => Promise<unknown>,
  view: View<T>,
  check?: () => unknown,
): Promise<void> {
  const sandbox = await open(ctx, what, check);
  await apply(sandbox);
  await print(ctx, await view.read(sandbox), view.card, view.plain);
}
