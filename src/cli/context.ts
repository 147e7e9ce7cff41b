import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiRequest } from '../api/types.js';
import type { CarbonClient, Exchange } from '../client/client.js';
import type { Transport } from '../client/transport.js';
import type { CloseOptions } from '../engine/ledger.js';
import type { Engine } from '../engine/open.js';
import type { Sandbox } from '../service/sandbox.js';
import { profileFlag } from './config-store.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { Output } from './output.js';
import type { Paint } from './render/resources.js';
import type { Settings } from './settings.js';

/**
 * What a command is handed (wrangler's habit): settings, output, and the engine, created on
 * first use and only as far as the command needs. Nothing here is a module-level singleton,
 * so a test can build a Context with its own streams and environment.
 */
export class Context {
  private openedEngine: Engine | undefined;
  private openClient: CarbonClient | undefined;
  /** The ledger failed the command (unreachable, stalled): its close is not waited on for long (run-to-exit.ts). */
  ledgerFailed = false;

  constructor(
    readonly settings: Settings,
    readonly out: Output,
    readonly env: NodeJS.ProcessEnv = process.env,
    /** --verbose: a line per HTTP request on stderr. */
    readonly verbose = false,
  ) {}

  /** The typed client on the configured engine: the local model, or the API over HTTP. */
  async client(): Promise<CarbonClient> {
    if (this.openClient) return this.openClient;
    const s = this.settings;
    const { CarbonClient } = await import('../client/client.js');
    const retry = { maxRetries: s.maxRetries };
    const onExchange = await this.exchangeLog();
    const { apiKey, transport } =
      s.engine === 'remote' ? await this.remote() : await ((await this.ledgerMissing()) ? this.deferred() : this.local());
    this.openClient = new CarbonClient({ apiKey, transport, retry, ...(onExchange ? { onExchange } : {}) });
    return this.openClient;
  }

  /**
   * --verbose (or CARBON_DEBUG=http): one line per request on stderr, for the client's requests and
   * `carbon logs`' own: the URL as requested (the in-process model's path after `local`), with any key
   * in its path or query, and the values of secret-named query parameters (`?access_token=`), masked
   * as the request journal masks them; the key never in it. Undefined without either.
   */
  async exchangeLog(): Promise<((x: Exchange) => void) | undefined> {
    if (!this.verbose && !/(^|,)http(,|$)/.test(this.env.CARBON_DEBUG ?? '')) return undefined;
    const where = this.settings.engine === 'remote' ? '' : 'local';
    const shown = await shownUrl();
    return (x) =>
      this.out.info(
        `http: ${x.method} ${where}${shown(x.url)} ${x.status === 0 ? 'no answer' : x.status} ${x.ms.toFixed(1)}ms${x.requestId === undefined ? '' : ` ${x.requestId}`} attempt ${x.attempt}`,
      );
  }

  /** The API over HTTP, with the configured key. */
  private async remote(): Promise<{ apiKey: string; transport: Transport }> {
    const s = this.settings;
    if (s.apiKey === undefined) {
      throw new CliError(
        `No ${s.mode} API key for ${s.baseUrl}.`,
        EXIT.auth,
        'api_key_missing',
        `Set CARBON_API_KEY, or run \`carbon config set${profileFlag(s.config, s.profileName)} ${s.mode}-key -\`.`,
      );
    }
    // Every path of the API is under /api/v1: a base URL without it answers 404s that say
    // nothing about why. Said once, with the likely fix (not with --json: stderr is for errors).
    const path = new URL(s.baseUrl!).pathname.replace(/\/+$/, '');
    if (!path.endsWith('/api/v1') && !this.out.json) {
      const base = `${new URL(s.baseUrl!).origin}${path}`;
      // Another version (`/api/v2`) or `/api` alone is corrected in place, not appended to.
      const meant = /\/api(\/v\d*)?$/.test(path) ? base.replace(/\/api(\/v\d*)?$/, '/api/v1') : `${base}/api/v1`;
      this.out.warn(`the base URL ${base} does not end in /api/v1, where the API's paths are; did you mean ${meant}?`);
    }
    const { HttpTransport } = await import('../client/http-transport.js');
    const transport = new HttpTransport({
      baseUrl: s.baseUrl!,
      allowInsecureHttp: s.allowInsecureHttp,
      ...(s.timeoutSeconds === undefined ? {} : { timeoutMs: s.timeoutSeconds * 1000 }),
    });
    return { apiKey: s.apiKey, transport };
  }

  /** Whether the local ledger is yet to be made (its SQLite file is not there, and this command has not opened it). */
  async ledgerMissing(): Promise<boolean> {
    const { store } = this.settings;
    if (this.openedEngine !== undefined || store.kind !== 'sqlite') return false;
    const { LEDGER_FILE } = await import('../engine/ledger.js');
    return !existsSync(join(store.dir, LEDGER_FILE));
  }

  /**
   * The local model before its ledger exists: a request the model would refuse as malformed
   * whatever the ledger held (the service's own checks) is answered without creating it (bad input
   * changes nothing); the first other request creates the sandbox, as `local()` does.
   */
  private async deferred(): Promise<{ apiKey: string; transport: Transport }> {
    const [{ DeferredTransport, KEY_OF_THE_LEDGER }, { refusalWithoutLedger }] = await Promise.all([
      import('../client/transport.js'),
      import('../service/request-checks.js'),
    ]);
    // Once something else opened the ledger (`ctx.sandbox()`), every request goes to it, as local()'s would.
    const refusal = (request: ApiRequest) => (this.openedEngine === undefined ? refusalWithoutLedger(request) : undefined);
    return { apiKey: KEY_OF_THE_LEDGER, transport: new DeferredTransport(refusal, () => this.local()) };
  }

  /** The local model in this process, with the configured key if the sandbox made it, else the sandbox's own. */
  private async local(): Promise<{ apiKey: string; transport: Transport }> {
    const s = this.settings;
    const engine = await this.engine();
    const { sandbox } = engine;
    let apiKey = s.apiKey;
    if (apiKey !== undefined && (await sandbox.findKey(apiKey)) === undefined) {
      // A key meant for the live API (CARBON_API_KEY, a profile's key) must not stop local runs:
      // the local model uses its own key of the same mode instead, and says so. A key the local
      // sandbox made (revoked or read-only ones too) is used as it is.
      const profileKey = `the ${s.mode}-key of profile ${s.profileName}`;
      const source = s.apiKeySource === 'env' ? 'CARBON_API_KEY' : s.apiKeySource === 'flag' ? '--api-key' : profileKey;
      const instead = `using the sandbox's own ${s.mode} key (set CARBON_BASE_URL to send it to the API)`;
      this.out.warn(`${source} is not a key of the local sandbox: ${instead}.`);
      apiKey = undefined;
    }
    const own = apiKey === undefined;
    apiKey ??= await sandbox.defaultKey(s.mode);
    if (apiKey === undefined) throw await noKey(sandbox, s.mode);
    const { LocalTransport, OwnKeyTransport } = await import('../client/transport.js');
    const { withFaults } = await import('../client/local-faults.js');
    const local = new LocalTransport(withFaults(engine.service, () => sandbox.faultsText()));
    // The sandbox's own key follows the sandbox's keys (a reset under `watch`); a configured one is the user's.
    return { apiKey, transport: own ? new OwnKeyTransport(local, apiKey, () => sandbox.defaultKey(s.mode)) : local };
  }

  /**
   * Whether what this command read is the sandbox's: the local model, or a server whose answers
   * said `Carbon-Sandbox: true` (carbon serve). Asked after a request: a service that does not
   * say it is a sandbox is taken as the service, and nothing it answers is marked.
   */
  get fromSandbox(): boolean {
    return this.settings.engine === 'local' || this.openClient?.fromSandbox === true;
  }

  /**
   * The local engine on this machine's ledger (the data directory, or --database), opened on first
   * use. On PostgreSQL a command keeps one connection, whatever CARBON_PG_POOL says (carbon serve's
   * pool): its reads, its transactions and its journal entries take turns on it, and each further
   * connection would cost a handshake and a password exchange of its own.
   */
  private async engine(): Promise<Engine> {
    if (this.openedEngine) return this.openedEngine;
    const { openEngine } = await import('../engine/open.js');
    const { store } = this.settings;
    this.openedEngine = await openEngine(store.kind === 'postgres' ? { ...store, single: true } : store, {
      journal: this.settings.journal,
    });
    return this.openedEngine;
  }

  /** The local model's sandbox on this machine's ledger. Refused on the remote engine. */
  async sandbox(): Promise<Sandbox> {
    return (await this.engine()).sandbox;
  }

  /** Refuses sandbox operations when the engine is remote: they act on this machine's model only. */
  requireLocal(what: string): void {
    if (this.settings.engine === 'remote') {
      throw new CliError(
        `${what} acts on the local model, but this command is set to use the remote API at ${this.settings.baseUrl}.`,
        EXIT.usage,
        'usage_error',
        "Add --local to act on this machine's model (the one `carbon serve` serves from the same CARBON_HOME).",
      );
    }
  }

  /** Colours for stdout (or stderr), chalk when on; loaded only when a person will read the output. */
  async paint(stream: 'stdout' | 'stderr' = 'stdout'): Promise<Paint> {
    const on = stream === 'stdout' ? this.out.color : this.out.stderrColor;
    const { makePaint } = await import('./render/paint.js');
    return makePaint(on);
  }

  /** Releases the client and the engine (`exiting`: the process ends next, store/port.ts). */
  async close(options?: CloseOptions): Promise<void> {
    await this.openClient?.close();
    await this.openedEngine?.close(options);
  }
}

/** A requested URL as --verbose shows it: keys masked, and the values of secret-named query parameters. */
async function shownUrl(): Promise<(url: string) => string> {
  const [{ redactSecrets }, { maskSecretQuery }] = await Promise.all([import('../service/keys.js'), import('../service/secret-fields.js')]);
  return (url) => redactSecrets(maskSecretQuery(url));
}

/**
 * Why the local engine has no key of a mode to send, and the way on. A ledger loaded from a
 * snapshot saved in another home (or made there) has keys whose text this home never held
 * (docs/snapshots.md, "Keys"): they work for whoever holds them, and `reset` would throw the
 * loaded state away, so the way on is a new key, or one of theirs by its text.
 */
async function noKey(sandbox: Sandbox, mode: 'test' | 'live'): Promise<CliError> {
  const create = `carbon sandbox keys create${mode === 'live' ? ' --live' : ''}`;
  const { keysNotKnownHere } = await import('../service/sandbox-model.js');
  if (await keysNotKnownHere(sandbox, mode))
    return new CliError(
      `The local sandbox's ${mode} keys are not known here: its ledger came from a snapshot (which holds no key's text) or another CARBON_HOME, or this home's sandbox-keys.json was deleted, so carbon has no ${mode} key to send.`,
      EXIT.auth,
      'api_key_missing',
      `Run \`${create}\` for a new one that carbon uses from then on (the ledger's own keys still work), or set CARBON_API_KEY to one of them (\`carbon sandbox keys\` lists them).`,
    );
  return new CliError(
    `The local sandbox has no ${mode} key that is not revoked.`,
    EXIT.auth,
    'api_key_missing',
    `Create one with \`${create}\`, or start over with \`carbon sandbox reset\`.`,
  );
}
