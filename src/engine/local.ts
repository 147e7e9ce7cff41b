import { CarbonClient, type ClientOptions } from '../client/client.js';
import { CarbonConfigError } from '../client/errors.js';
import { withFaults } from '../client/local-faults.js';
import { LocalTransport } from '../client/transport.js';
import type { DefaultKey, Sandbox } from '../service/sandbox.js';
import { keysNotKnownHere } from '../service/sandbox-model.js';
import { type EngineOptions, openEngine } from './open.js';

/**
 * A client on the local engine: the model in this process over the ledger in `dataDir`.
 * With no `apiKey`, it uses the sandbox's own starting key for `key` (test by default).
 */
export async function openLocal(
  dataDir: string,
  options: { apiKey?: string; key?: DefaultKey } & Pick<EngineOptions, 'publicBaseUrl'> & Pick<ClientOptions, 'retry' | 'sleep'> = {},
): Promise<{ client: CarbonClient; sandbox: Sandbox }> {
  // As an empty key is (client.ts): an unset variable would make the ledger in the working directory.
  if (typeof dataDir !== 'string' || dataDir.trim() === '')
    throw new CarbonConfigError('No data directory (an unset variable?): give openLocal the directory of the local ledger.');
  if (options.key !== undefined && !['test', 'live', 'read_only'].includes(options.key))
    throw new CarbonConfigError(`key is test, live or read_only (the sandbox's own key to use), not ${JSON.stringify(options.key)}.`);
  const engine = await openEngine(dataDir, options.publicBaseUrl === undefined ? {} : { publicBaseUrl: options.publicBaseUrl });
  const { sandbox } = engine;
  const apiKey = options.apiKey ?? (await sandbox.defaultKey(options.key ?? 'test'));
  if (apiKey === undefined) {
    const which = options.key ?? 'test';
    // Keys of a ledger loaded from a snapshot (or made in another home) work, but their text is not kept here.
    const theirs = await keysNotKnownHere(sandbox, which);
    await engine.close();
    const why = theirs
      ? `'s ${which} keys are not known here (its ledger came from a snapshot or another CARBON_HOME, or its sandbox-keys.json was deleted)`
      : ` has no ${which} key that is not revoked`;
    const create = `carbon sandbox keys create${which === 'test' ? '' : which === 'live' ? ' --live' : ' --read-only'}`;
    throw new CarbonConfigError(
      `The local sandbox in ${dataDir}${why}; run \`${create}\`${theirs ? ', or pass one of its keys as apiKey' : ''}.`,
    );
  }
  const transport = new LocalTransport(
    withFaults(engine.service, () => sandbox.faultsText()),
    () => engine.close(),
  );
  const client = new CarbonClient({
    apiKey,
    transport,
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return { client, sandbox };
}
