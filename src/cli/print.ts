import type { Balance, Impact, Offset, Quote } from '../api/types.js';
import type { Context } from './context.js';
import {
  balanceCard,
  balancePlain,
  impactCard,
  impactPlain,
  offsetCard,
  offsetPlain,
  type Paint,
  quoteCard,
  quotePlain,
} from './render/resources.js';

type Renderers<T> = { card: (value: T, paint: Paint, sandbox: boolean) => string; plain: (value: T) => string };

const RENDERERS = {
  offset: { card: offsetCard, plain: offsetPlain } as Renderers<Offset>,
  quote: { card: quoteCard, plain: quotePlain } as Renderers<Quote>,
  balance: { card: balanceCard, plain: balancePlain } as Renderers<Balance>,
  impact: { card: impactCard, plain: impactPlain } as Renderers<Impact>,
};

type Resource = Offset | Quote | Balance | Impact;

/**
 * Prints one resource the way the reader wants it: --json, the API's object exactly; a terminal,
 * a card (saying so when it is the sandbox's); a pipe, plain `field<TAB>value` lines.
 */
export async function printResource(ctx: Context, value: Resource): Promise<void> {
  if (ctx.out.json) return ctx.out.jsonDocument(value);
  const r = RENDERERS[value.object] as Renderers<Resource>;
  ctx.out.data(ctx.out.interactive ? r.card(value, await ctx.paint(), ctx.fromSandbox) : r.plain(value));
}

/**
 * Prints any object the same three ways: --json the object itself, a card on a terminal, plain
 * `field<TAB>value` lines in a pipe. Without renderers, the value is one of the API's resources.
 */
export async function print<T>(
  ctx: Context,
  value: T,
  card?: (value: T, paint: Paint) => string,
  plain?: (value: T) => string,
): Promise<void> {
  if (card === undefined || plain === undefined) return printResource(ctx, value as Resource);
  if (ctx.out.json) return ctx.out.jsonDocument(value);
  ctx.out.data(ctx.out.interactive ? card(value, await ctx.paint()) : plain(value));
}
