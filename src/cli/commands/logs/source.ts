import type { RequestEntry } from '../../../api/journal.js';
import type { Exchange } from '../../../client/client.js';
import { connectionFailure, isLoopback, type Received, sendHttp } from '../../../client/http-transport.js';
import { filterParams, type RequestFilter } from '../../../service/journal-view.js';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { EXIT, exitCodeForStatus } from '../../exit-codes.js';

/**
 * Where `carbon logs` reads the journal: the local model's ledger (the data directory, or
 * --database: the journal every instance on it writes), or a `carbon serve` at the base URL
 * through its `/_sandbox/requests`. The live API has no journal carbon can read: refused, in one line.
 */
export interface JournalSource {
  /** Where, for people. */
  where: string;
  /** With `filter.after`: the entries after it, oldest first, waiting up to `waitS` for one. */
  entries(filter: RequestFilter, waitS: number, signal?: AbortSignal): Promise<RequestEntry[]>;
  /** The highest seq handed out, where a follower starts (service/journal.ts: newestSeq). */
  newestSeq(): Promise<number>;
  entry(requestId: string): Promise<RequestEntry | undefined>;
}

export async function journalSource(ctx: Context): Promise<JournalSource> {
  if (ctx.settings.engine === 'local') {
    const sandbox = await ctx.sandbox();
    return {
      where: sandbox.label,
      // A waiting follower looks again at the ledger every 200 ms (another process may have written).
      entries: async (filter, waitS, signal) => {
        const until = Date.now() + waitS * 1000;
        let data = await sandbox.journal.entries(filter);
        while (data.length === 0 && filter.after !== null && Date.now() < until && signal?.aborted !== true) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          data = await sandbox.journal.entries(filter);
          // Numbered from 1 again (a journal emptied by an older carbon; seqs now never go back): said
          // at once, so the follower starts again from there.
          if (data.length === 0 && (await sandbox.journal.newestSeq()) < filter.after) break;
        }
        return data;
      },
      entry: (id) => sandbox.journal.entry(id),
      newestSeq: () => sandbox.journal.newestSeq(),
    };
  }
  return servedSource(ctx, await ctx.exchangeLog());
}

function servedSource(ctx: Context, log: ((x: Exchange) => void) | undefined): JournalSource {
  const s = ctx.settings;
  const base = new URL(s.baseUrl!);
  const origin = `${base.origin}${base.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`;
  if (base.protocol === 'http:' && !isLoopback(base.hostname) && !s.allowInsecureHttp) {
    throw new CliError(
      `Refusing to send an API key over plain http:// to ${base.host}.`,
      EXIT.usage,
      'usage_error',
      'Use https://, or allow it with --allow-insecure-http.',
    );
  }
  if (s.apiKey === undefined) {
    throw new CliError(
      `No ${s.mode} API key for ${s.baseUrl}.`,
      EXIT.auth,
      'api_key_missing',
      'Set CARBON_API_KEY to a key of that sandbox.',
    );
  }
  const key = s.apiKey;
  const get = async (path: string, signal?: AbortSignal): Promise<unknown> => {
    const timeoutMs = (s.timeoutSeconds ?? 30) * 1000;
    const url = `${origin}${path}`;
    const started = performance.now();
    // --verbose: a line a request, as the client's (one attempt: these reads are not retried).
    const said = (status: number, requestId?: string) =>
      log?.({ method: 'GET', url, status, ms: performance.now() - started, requestId, attempt: 1 });
    let res: Received;
    try {
      res = await sendHttp(url, {
        method: 'GET',
        headers: { authorization: `Bearer ${key}`, accept: 'application/json', 'user-agent': 'carbon-cli' },
        body: '',
        signal: signal ?? AbortSignal.timeout(timeoutMs),
      });
      said(res.status, res.headers['request-id']);
    } catch (err) {
      if (signal?.aborted) return { object: 'list', data: [] };
      said(0);
      throw new CliError(connectionFailure(origin, err, timeoutMs), EXIT.failure, 'connection_error');
    }
    return answer(res, origin, path);
  };
  const list = async (query: string, signal?: AbortSignal) => {
    const answered = (await get(`/_sandbox/requests?${query}`, signal)) as { object?: string; data?: RequestEntry[]; newest_seq?: number };
    if (answered.object !== 'list' || !Array.isArray(answered.data)) throw notASandbox(origin);
    return answered as { data: RequestEntry[]; newest_seq?: number };
  };
  return {
    where: origin,
    entries: async (filter, waitS, signal) => (await list(filterToQuery(filter, waitS), signal)).data,
    // An older carbon serve says no newest_seq: its newest entry's, then.
    newestSeq: async () => {
      const answered = await list('limit=1');
      return answered.newest_seq ?? answered.data[0]?.seq ?? 0;
    },
    entry: async (id) => (await get(`/_sandbox/requests/${encodeURIComponent(id)}`)) as RequestEntry | undefined,
  };
}

function filterToQuery(filter: RequestFilter, waitS: number): string {
  const params = filterParams(filter);
  if (waitS > 0) params.set('wait', String(waitS));
  return params.toString();
}

/** The live API (or anything that is not a carbon sandbox) at the base URL. */
function notASandbox(origin: string): CliError {
  return new CliError(
    `carbon logs reads a sandbox's request journal, and ${origin} is not a carbon sandbox: the live API keeps no journal carbon can read.`,
    EXIT.usage,
    'usage_error',
  );
}

/**
 * A served sandbox's answer: its body, undefined for an entry it has not, or its refusal with the
 * exit code every command gives that status.
 */
function answer(res: Received, origin: string, path: string): unknown {
  let body: { error?: { code?: string; message?: string } } | null = null;
  try {
    body = JSON.parse(res.text);
  } catch {
    // Not JSON: not a carbon sandbox (below).
  }
  if (res.status === 404 && body?.error?.code === 'resource_missing' && path.startsWith('/_sandbox/requests/')) return undefined;
  if (res.status === 404 || body === null) throw notASandbox(origin);
  // 401/403: 4, 429: 7, a 5xx: 1.
  if (res.status >= 400) {
    const [fallback, code] =
      res.status === 401 ? ['The key was refused.', 'api_key_invalid'] : [`${origin} answered ${res.status}.`, 'api_error'];
    throw new CliError(body.error?.message ?? fallback, exitCodeForStatus(res.status), body.error?.code ?? code);
  }
  return body;
}
