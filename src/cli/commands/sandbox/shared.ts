import type { Sandbox } from '../../../service/sandbox.js';
import type { Context } from '../../context.js';
import { usage } from '../../errors.js';
import { print } from '../../print.js';
import { durationRefusal, parseDuration } from '../../render/format.js';
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

export function durationArg(value: string, what: string, forward = false): number {
  const ms = parseDuration(value);
  if (ms !== null) return ms;
  throw usage(durationRefusal(value, what, forward));
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
