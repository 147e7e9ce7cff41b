import { readFileSync } from 'node:fs';
import { API_PREFIX, type ApiRequest, type ApiResponse, type Offset, type Quote } from '../../../api/types.js';
import { CarbonConnectionError, otherServer } from '../../../client/errors.js';
import { LedgerError } from '../../../engine/ledger.js';
import { randomUUID } from '../../../platform/random.js';
import { redactSecrets } from '../../../service/keys.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT, exitCodeForStatus } from '../../exit-codes.js';
import { liveBalance, liveNeedsYes, liveShortBalance } from '../../purchase/live-consent.js';
import { ledgerFailedPurchase, retriedRefusal, sayBoughtIfStdoutLost, unknownPurchase } from '../../purchase/unknown-outcome.js';
import { dollars, kg } from '../../render/format.js';
import { bySigterm, untilStopped } from '../../stop-signals.js';

/**
 * `carbon api METHOD PATH`: one raw request through the configured engine and key, like `gh api`
 * and `stripe get/post`. The response body is printed as JSON on stdout whatever the status; the
 * status becomes the exit code by the usual table (2xx → 0). A POST /offsets gets an
 * Idempotency-Key, and with the live key it is sent only when someone said so (asked, or --yes), as
 * `carbon buy` is. Retried as every command's requests are (--max-retries: no answer, 429, 5xx,
 * 409 but a reused key; the same key on each attempt); the last attempt's answer is the one printed.
 */
export async function run(
  ctx: Context,
  method: string,
  path: string,
  flags: { data?: string; idempotencyKey?: string; yes?: boolean },
): Promise<void> {
  const verb = method.toUpperCase();
  if (!/^(GET|POST|HEAD|PUT|PATCH|DELETE)$/.test(verb))
    throw usage(`The method is GET, POST or HEAD (the API's), or PUT, PATCH or DELETE (which it answers 405), not "${method}".`);
  // An empty path ("$PATH_VAR" unset) is no request to send, as an empty id is none for `carbon show`.
  if (path.trim() === '') throw usage('The path is empty: give one such as /balance or /offsets?limit=2; nothing was sent.');
  // Appended, not resolved against a base: `//offsets` is a path, where a URL reader takes it for a host (and sent `POST /`).
  const url = new URL(`http://x${path.startsWith('/') ? '' : '/'}${path}`);
  const relative = url.pathname.startsWith(`${API_PREFIX}/`) ? url.pathname.slice(API_PREFIX.length) : url.pathname;
  const body = bodyOf(verb, flags.data);
  const headers: Record<string, string> = {};
  // `/offsets/` and `//offsets` too: a service that routes them as /offsets would buy with them.
  const purchase = verb === 'POST' && relative.replace(/\/{2,}/g, '/').replace(/\/+$/, '') === '/offsets';
  if (purchase && ctx.settings.mode === 'live' && !flags.yes) await confirmLive(ctx, body);
  if (purchase) headers['idempotency-key'] = flags.idempotencyKey ?? randomUUID();
  const client = await ctx.client();
  let answer: { response: ApiResponse; earlierMaybeSent: boolean };
  try {
    const sent = client.raw(verb, relative, { ...(body === undefined ? {} : { body }), query: queryOf(url.searchParams), headers });
    // Ctrl-C or SIGTERM (a CI job's timeout) before a purchase's answer: it may have been made, so
    // the stop says so and names the key to retry with (exit 130), as `carbon buy` does.
    answer = !purchase
      ? await sent
      : await untilStopped(sent, (signal) =>
          unknownPurchase(
            `Stopped${bySigterm(signal)} before the purchase was answered.`,
            EXIT.interrupted,
            'interrupted',
            headers['idempotency-key']!,
          ),
        );
  } catch (err) {
    if (purchase && err instanceof LedgerError) throw ledgerFailedPurchase(ctx, err, headers['idempotency-key']!);
    if (!purchase || !(err instanceof CarbonConnectionError) || err.neverSent) throw err;
    throw unknownPurchase(err.message, EXIT.failure, 'connection_error', headers['idempotency-key']!);
  }
  const { earlierMaybeSent } = answer;
  // A HEAD's answer has no body: the local engine's (the GET's) is dropped, so both engines say the same.
  // An error's words are masked as every command's are: a server may echo the key it was sent.
  const response =
    verb === 'HEAD'
      ? { ...answer.response, body: undefined }
      : answer.response.status >= 400
        ? { ...answer.response, body: maskedStrings(answer.response.body) }
        : answer.response;
  const bought = response.body as Partial<Offset> | undefined;
  if (purchase && response.status < 300 && typeof bought?.id === 'string') sayBoughtIfStdoutLost(bought as Offset);
  // An answer that is not JSON (a proxy's error page) leaves stdout empty: `null` is no answer the server gave.
  if (response.body !== undefined) ctx.out.stdout.write(`${JSON.stringify(response.body, null, ctx.out.interactive ? 2 : undefined)}\n`);
  if (response.status >= 400)
    throw answerError(verb, relative, response, earlierMaybeSent, purchase ? headers['idempotency-key']! : undefined);
}

/** Every string in a JSON value with the secrets in it masked (redactSecrets). */
function maskedStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(maskedStrings);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([name, v]) => [name, maskedStrings(v)]));
}

/** The body --data gives (JSON, or @FILE holding JSON); none for a GET or a HEAD, which the server would not read. */
function bodyOf(verb: string, data: string | undefined): string | undefined {
  if (data === undefined) return undefined;
  if (verb === 'GET' || verb === 'HEAD')
    throw usage(
      `A ${verb} sends no body, so --data has nowhere to go; nothing was sent.`,
      "Put the parameters in the path's query, as in '/offsets?limit=2'.",
    );
  const body = data.startsWith('@') ? readData(data.slice(1)) : data;
  try {
    JSON.parse(body);
  } catch {
    throw usage('--data must be JSON (or @FILE holding JSON); the API reads JSON bodies.');
  }
  return body;
}

/** What an answer of 400 or more ends the command with; `idempotencyKey` for a purchase. */
function answerError(verb: string, relative: string, response: ApiResponse, earlierMaybeSent: boolean, idempotencyKey?: string): CliError {
  const envelope = (response.body as { error?: { code?: string } } | undefined)?.error?.code;
  // Another server's "no such path" or "not this method" (a wrong base URL): exit 1, as every command says it.
  // A HEAD's answer has no body to carry the envelope: its status is all there is.
  if (envelope === undefined && verb !== 'HEAD' && (response.status === 404 || response.status === 405)) {
    const other = otherServer(response.status, verb, relative, earlierMaybeSent);
    if (idempotencyKey === undefined) return new CliError(other.message, EXIT.failure, 'connection_error');
    if (other.refused) return new CliError(`${other.message} Nothing was bought.`, EXIT.failure, 'connection_error');
    return unknownPurchase(other.message, EXIT.failure, 'connection_error', idempotencyKey, true);
  }
  const code = envelope ?? 'http_error';
  const said = `${verb} ${relative} answered ${response.status} ${code}.`;
  // A 5xx may have come after the purchase committed; a retried refusal, after an earlier attempt that did.
  const refusedAfter = retriedRefusal(response.status, code, earlierMaybeSent);
  if (idempotencyKey !== undefined && (response.status >= 500 || refusedAfter))
    return unknownPurchase(said, exitCodeForStatus(response.status, code), code, idempotencyKey, refusedAfter);
  return new CliError(said, exitCodeForStatus(response.status, code), code, undefined, apiFields(response.body));
}

/**
 * The API's own words for --json: its envelope's message and every field it gives beside the code
 * (`param`, `balance_cents` and `required_cents`…), so stderr carries the envelope the API
 * answered, as each other command's does. The line a person reads stays the summary above.
 */
function apiFields(body: unknown): Record<string, string | number> {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  const fields: Record<string, string | number> = {};
  if (typeof error !== 'object' || error === null) return fields;
  for (const [name, value] of Object.entries(error))
    if (name !== 'type' && name !== 'code' && (typeof value === 'string' || typeof value === 'number')) fields[name] = value;
  return fields;
}

/**
 * A live POST /offsets is a purchase with the live key: sent only when someone said so, as `carbon
 * buy`'s is (live-consent.ts), and asked about as it is: the body's kg or amount quoted first, so the
 * question shows the cost, and one the balance does not cover is refused before it (exit 3).
 */
async function confirmLive(ctx: Context, body: string | undefined): Promise<void> {
  const nobody = ctx.out.nobodyToAsk;
  if (nobody !== undefined) throw liveNeedsYes(ctx, nobody, 'nothing was sent');
  const quote = await quoteOf(ctx, body);
  if (quote !== undefined && !quote.sufficient_balance) throw liveShortBalance(ctx, quote, 'nothing was sent');
  const buys =
    quote === undefined
      ? 'buys with the live balance'
      : `buys ${kg(quote.kg)} for ${dollars(quote.amount_cents)} from the ${liveBalance(ctx)} (${dollars(quote.available_cents)})`;
  const { confirmOrStop } = await import('../../prompt.js');
  await confirmOrStop(ctx.out, `POST /offsets with the LIVE key ${buys}. Send it?`, 'Cancelled; nothing was sent.');
}

/** The quote of a body asking for kg or amount_cents; none for another (the API's answer to it will say what is wrong), or when the quote fails. */
async function quoteOf(ctx: Context, body: string | undefined): Promise<Quote | undefined> {
  let fields: unknown;
  try {
    fields = JSON.parse(body ?? '');
  } catch {
    return undefined;
  }
  const { kg: kilos, amount_cents: cents } = (typeof fields === 'object' && fields !== null ? fields : {}) as Record<string, unknown>;
  const params = typeof kilos === 'number' ? { kg: kilos } : typeof cents === 'number' ? { amount_cents: cents } : undefined;
  if (params === undefined) return undefined;
  try {
    return await (await ctx.client()).quote(params);
  } catch {
    return undefined;
  }
}

const UNREADABLE: Record<string, string> = { ENOENT: 'there is no such file', EISDIR: 'it is a directory', EACCES: 'permission denied' };

function readData(file: string): string {
  if (file === '') throw usage('-d @FILE needs a file (or @- for stdin), and was given an empty name; nothing was sent.');
  try {
    return file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    // Said in words, as a CSV or a snapshot that cannot be read is: not an errno code alone.
    const why = UNREADABLE[code] ?? code;
    throw new CliError(`Cannot read ${file}: ${why}; nothing was sent.`, EXIT.usage, 'usage_error');
  }
}

/** The path's query as the API reads it: a name given twice stays twice (the API refuses it, naming it), never the last alone. */
function queryOf(params: URLSearchParams): ApiRequest['query'] {
  // No prototype: a parameter named `__proto__` stays a parameter (and is refused by name), as in parseTarget.
  const query = Object.create(null) as ApiRequest['query'];
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  return query;
}
