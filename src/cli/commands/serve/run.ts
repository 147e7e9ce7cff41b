import { isLoopback } from '../../../client/http-transport.js';
import { isoTime } from '../../../platform/iso-time.js';
import type { closeOnSignals, RunningServer } from '../../../server/server.js';
import { maskKey } from '../../../service/keys.js';
import type { Context } from '../../context.js';
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { wholeNumberOption } from '../../options.js';
import { terminalWidth } from '../../render/fit.js';
import { fitLine, wrapCommand } from '../../render/wrap.js';
import { onReaderGone } from '../../stdio.js';
import { DEFAULT_HOST, DEFAULT_PORT } from './index.js';

export interface ServeFlags {
  host?: string;
  port?: string;
  publicUrl?: string;
  showKeys?: boolean;
}

/** The line a script reads from stdout (exactly one), to learn where the server is and its keys. */
export interface ServeReady {
  url: string;
  test_key: string | null;
  read_only_key: string | null;
  live_key: string | null;
  /** The developer page's one-time login link: its token masked unless --show-keys (as the keys are). */
  developer_page_url: string;
  pid: number;
  /** This process's name in the request journal (`carbon logs`' instance column). */
  instance: string;
}

/**
 * An address or host name to listen on: never empty (`--host "$HOST"` with HOST unset would listen
 * on every interface, as Node reads ''), nor with a character no address or name has.
 */
function hostOption(value: string | undefined): string {
  if (value === undefined) return DEFAULT_HOST;
  if (!/^[A-Za-z0-9._:%-]+$/.test(value))
    throw usage(
      `--host must be an address or a host name, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface), not ${JSON.stringify(value)}.`,
    );
  return value;
}

function port(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  return wholeNumberOption(value, '--port (0 picks a free one)', { max: 65_535 });
}

/** An http(s) origin given by the user (`--public-url`, `--url`), without its trailing slashes. */
export function publicUrl(value: string | undefined, flag = '--public-url'): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`${flag} must be a URL such as https://sandbox.example.com, not "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage(`${flag} must be an http(s) URL.`);
  // It is printed (the banner, the login link) and put in every certificate_url: no password there,
  // and nothing after the path that the paths put after it would land in.
  if (url.username !== '' || url.password !== '')
    throw usage(`${flag} must not carry a user name or password: it is printed, and in every certificate_url.`);
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(value))
    throw usage(`${flag} must not have a query (?) or a fragment (#): the login link's and certificates' paths follow it.`);
  // carbon serve answers at the root: a link under another path (behind a proxy that strips it) would lead nowhere here.
  if (url.pathname.replace(/\/+$/, '') !== '')
    throw usage(
      `${flag} must be an origin such as https://sandbox.example.com, without a path (${url.pathname}): carbon serve answers at the root.`,
    );
  return value.replace(/\/+$/, '');
}

/**
 * `carbon serve`: the local model as the HTTP API, from the same data directory as the local
 * engine. Resolves when SIGINT or SIGTERM has closed the server gracefully; runToExit() then exits 0.
 */
export async function run(ctx: Context, flags: ServeFlags): Promise<void> {
  const host = hostOption(flags.host);
  const options = { host, port: port(flags.port), publicUrl: publicUrl(flags.publicUrl) };
  const { startServer, closeOnSignals, linksHost } = await import('../../../server/server.js');
  const { log, flush } = requestLog((text) => ctx.out.info(text));
  let server: RunningServer;
  try {
    server = await startServer({
      host: options.host,
      port: options.port,
      dataDir: ctx.settings.paths.dataDir,
      store: ctx.settings.store,
      journal: ctx.settings.journal,
      ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
      log,
    });
  } catch (err) {
    flush();
    throw listenError(err, host, options.port);
  }

  // Registered before anything is printed: a script that reads the line and signals at once
  // must get a graceful close, not Node's default death by signal.
  const closed = untilStopped(server, closeOnSignals, log);
  // A script that read the ready line and closed its end (`| head -1`) does not stop the server:
  // what stdout would say is dropped (stderr's failures are let go too: stdio.ts).
  const keepServing = onReaderGone(() => {});
  const full = {
    test: (await server.sandbox.defaultKey('test')) ?? null,
    read_only: (await server.sandbox.defaultKey('read_only')) ?? null,
    live: (await server.sandbox.defaultKey('live')) ?? null,
  };
  const show = (key: string | null) => (key === null ? null : flags.showKeys ? key : maskKey(key));
  const ready: ServeReady = {
    url: server.url,
    test_key: show(full.test),
    read_only_key: show(full.read_only),
    live_key: show(full.live),
    developer_page_url: flags.showKeys ? server.developerPageUrl : maskedLink(server.developerPageUrl),
    pid: process.pid,
    instance: server.sandbox.journal.settings.instance,
  };

  flush();
  ctx.out.info(await banner(ctx, flags, server, ready, full.test));
  if (!isLoopback(host)) {
    // Every address: its links name this machine's loopback (lifecycle.ts), which others cannot open.
    const links =
      linksHost(host) !== host && flags.publicUrl === undefined
        ? ` Its links use ${server.origin}, this machine's own address: give --public-url with the address others reach it at, for the links they open.`
        : '';
    ctx.out.warn(`serving on ${host}, not a loopback address: anyone who can reach it can use the sandbox's keys.${links}`);
  }
  // The one line of data: what a script needs to drive the server.
  ctx.out.stdout.write(`${JSON.stringify(ready)}\n`);

  await closed;
  keepServing();
  flush();
}

/** How long a second SIGINT or SIGTERM leaves the ledger to close before the process ends. */
const STOP_NOW_MS = 1000;

/**
 * Resolves once SIGINT or SIGTERM has closed `server`; or, after a second signal, within
 * STOP_NOW_MS even if the ledger does not answer (a stalled database, a lock held elsewhere),
 * as `kill -9` would end it, saying what that loses.
 */
function untilStopped(server: RunningServer, onSignals: typeof closeOnSignals, log: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    let done = false;
    const onClosed = () => {
      done = true;
      resolve();
    };
    const onStopNow = () => {
      setTimeout(() => {
        if (!done) log(`stopped without waiting for the ledger: the request journal's last entries, not yet written, are lost`);
        resolve();
      }, STOP_NOW_MS).unref();
    };
    onSignals(server, { log, onClosed, onStopNow });
  });
}

/** An access-log line: it begins with its time (server/access-log.ts). */
const TIMED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /;

/** The request log's lines are written at most this often under load (each write is a write(2)). */
const LOG_INTERVAL_MS = 50;

/**
 * The request log on stderr. Under load every request logs a line: they are written together, not
 * with one write(2) apiece (stderr to a file or a terminal is written synchronously). A line that
 * comes after a quiet LOG_INTERVAL_MS is written at the end of its turn; one that comes sooner
 * waits for the interval's end, so a busy server writes about twenty times a second (the write was
 * 7 % of its time at one a turn: BENCHMARKS.md, "GET /balance"). What waits is written at close.
 */
export function requestLog(write: (text: string) => void): { log: (line: string) => void; flush: () => void } {
  let pending: string[] = [];
  let written = Number.NEGATIVE_INFINITY;
  const flush = () => {
    if (pending.length === 0) return;
    written = performance.now();
    const text = pending.join('\n');
    pending = [];
    write(text);
  };
  const log = (line: string) => {
    // Every line with its time, as the access log's come (the start, the stop, an outage, an error), so a log file places them.
    if (pending.push(TIMED.test(line) ? line : `${isoTime(Date.now())} ${line}`) > 1) return;
    const wait = written + LOG_INTERVAL_MS - performance.now();
    if (wait <= 0) setImmediate(flush);
    else setTimeout(flush, wait).unref();
  };
  return { log, flush };
}

/**
 * The login link with its token masked as a key is (`…` and its last four characters): a secret
 * until used, so a log (CI, journald) keeps only this. `carbon sandbox login` makes another.
 */
const maskedLink = (link: string): string =>
  link.replace(/([?&]token=)([^&]*)/, (_, name: string, token: string) => `${name}…${token.slice(-4)}`);

/** Why the server could not listen, as the user can act on it (a port in use, an address refused). */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    const hint = 'Pick another with --port, or --port 0 for a free one.';
    return new CliError(`Port ${port} on ${host} is already in use.`, EXIT.failure, 'address_in_use', hint);
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    const hint = 'Try --host 127.0.0.1 and a port above 1023.';
    return new CliError(`Cannot listen on ${host}:${port} (${code}).`, EXIT.failure, 'listen_failed', hint);
  }
  return err;
}

/** The banner on stderr: where the server is, its keys (masked unless --show-keys), its data, and a command to try. */
async function banner(ctx: Context, flags: ServeFlags, server: RunningServer, ready: ServeReady, testKey: string | null): Promise<string> {
  const paint = await ctx.paint('stderr');
  // Fitted to a terminal's width (never a word broken; the command to try continued with ` \`);
  // in a log, every line whole.
  const width = terminalWidth(ctx.out.stderr, ctx.env);
  const fitted = (line: string, style: (s: string) => string = (s) => s): string =>
    (width === undefined ? [line] : fitLine(line, width)).map((l) => style(l)).join('\n');
  const reveal = '$(carbon sandbox keys --reveal --json | jq -r \'.[] | select(.default=="test") | .secret\')';
  const key = testKey === null ? '<test key>' : flags.showKeys ? testKey : reveal;
  // The key first: a shell puts an assignment before a command into the environment of the ones
  // after it, `$(carbon sandbox keys …)` too, which with CARBON_BASE_URL set would ask the server.
  const example = `CARBON_API_KEY=${key} CARBON_BASE_URL=${server.url} carbon buy --kg 500`;
  // The login link in full to a person (stderr a terminal) or with --show-keys; a log keeps it masked.
  const person = ctx.out.stderrInteractive;
  const lines = [
    '',
    `${paint.green('●')} carbon sandbox API at ${paint.bold(server.url)}`,
    fitted(`  developer page ${person ? server.developerPageUrl : ready.developer_page_url}`),
    fitted('                 (top-ups, keys, the ledger; the link signs you in once, for 12 hours)', paint.dim),
    `  test key       ${ready.test_key ?? paint.dim('none (carbon sandbox keys create)')}`,
    `  read-only key  ${ready.read_only_key ?? paint.dim('none (carbon sandbox keys create --read-only)')}`,
    `  live key       ${ready.live_key ?? paint.dim('none (carbon sandbox keys create --live)')}`,
  ];
  if (!flags.showKeys) {
    const masked = person
      ? 'keys masked: add --show-keys, or run `carbon sandbox keys --reveal`'
      : 'keys and link masked: add --show-keys, or run `carbon sandbox keys --reveal` (a new link: `carbon sandbox login --print`)';
    // The same ledger: the same data directory, or (PostgreSQL) the same database URL and schema.
    const same = server.store.kind === 'postgres' ? 'the same --database (or CARBON_DATABASE_URL) and schema' : 'the same CARBON_HOME';
    lines.push(fitted(`  (${masked} with ${same})`, paint.dim));
  }
  // The data directory (SQLite), or the database URL with its password masked.
  const tryIt = width === undefined ? [`  Try: ${example}`] : wrapCommand(example, width, '  Try: ', '    ');
  lines.push(
    fitted(`  data           ${server.store.label}`),
    fitted(
      server.sandbox.journal.settings.enabled
        ? `  instance       ${ready.instance} (its name in carbon logs)`
        : `  journal        off (CARBON_JOURNAL=off): carbon logs shows none of what this instance answers`,
    ),
    '',
    ...tryIt,
    paint.dim('  Ctrl-C stops it.'),
    '',
  );
  return lines.join('\n');
}
