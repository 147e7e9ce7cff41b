import { afterAll, describe, expect, test } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { CarbonClient } from '../../src/client/client.js';
import { CarbonConfigError, CarbonConnectionError } from '../../src/client/errors.js';
import { tempDirs } from '../support/temp.js';
import { openSandbox } from '../support/world.js';

const dirs = tempDirs('carbon-replay-');
afterAll(() => dirs.removeAll());

/**
 * A purchase reports `replayed` only for a purchase made before this call: a replay that answers
 * the call's own retry, after an attempt that may have reached the server, is the purchase that
 * attempt made (its answer lost), not an earlier one. The model is real; the transport in front
 * of it loses an answer, or fails before sending, as the network would.
 */
async function clientThrough(lose: 'answer' | 'before-sending' | 'nothing') {
  const sandbox = await openSandbox(dirs.make());
  const service = sandbox.service();
  const apiKey = (await sandbox.defaultKey('test'))!;
  let calls = 0;
  const client = new CarbonClient({
    apiKey,
    sleep: async () => {},
    transport: {
      async request(request: ApiRequest): Promise<ApiResponse> {
        calls++;
        if (calls === 1 && lose === 'before-sending') throw new CarbonConnectionError('connection refused', undefined, true);
        const response = await service.handle(request);
        if (calls === 1 && lose === 'answer') throw new CarbonConnectionError('the connection was dropped');
        return response;
      },
    },
  });
  return { client, sandbox, calls: () => calls };
}

describe('CarbonClient.buy: replayed', () => {
  test("the call's own first answer lost: the retry's replay is this purchase, not an earlier one", async () => {
    const { client, sandbox, calls } = await clientThrough('answer');
    const bought = await client.buy({ kg: 5 }, { idempotencyKey: 'own-lost-answer' });
    expect(calls()).toBe(2);
    expect(bought.replayed).toBe(false);
    expect((await sandbox.status()).impact.test.offsets).toBe(1);
    await sandbox.close();
  });

  test('a key used by an earlier call replays as replayed, also after an attempt that never left', async () => {
    for (const lose of ['nothing', 'before-sending'] as const) {
      const { client, sandbox } = await clientThrough('nothing');
      const first = await client.buy({ kg: 5 }, { idempotencyKey: 'earlier' });
      const again = await (await clientThroughSame(sandbox, lose)).buy({ kg: 5 }, { idempotencyKey: 'earlier' });
      expect([first.replayed, again.replayed, again.offset.id]).toEqual([false, true, first.offset.id]);
      await sandbox.close();
    }
  });
});

/** A second client on the same model, its first attempt lost as `lose` says. */
async function clientThroughSame(sandbox: Awaited<ReturnType<typeof openSandbox>>, lose: 'before-sending' | 'nothing') {
  const service = sandbox.service();
  let calls = 0;
  return new CarbonClient({
    apiKey: (await sandbox.defaultKey('test'))!,
    sleep: async () => {},
    transport: {
      async request(request: ApiRequest): Promise<ApiResponse> {
        calls++;
        if (calls === 1 && lose === 'before-sending') throw new CarbonConnectionError('connection refused', undefined, true);
        return service.handle(request);
      },
    },
  });
}

describe('CarbonClient without a key', () => {
  test('an unset variable (undefined) or a blank key is refused when the client is made: CarbonConfigError, nothing sent', () => {
    let sent = 0;
    const transport = {
      async request(): Promise<ApiResponse> {
        sent++;
        throw new Error('not to be reached');
      },
    };
    for (const apiKey of [undefined, '', '  ']) {
      expect(() => new CarbonClient({ apiKey: apiKey as unknown as string, transport })).toThrow(CarbonConfigError);
    }
    expect(sent).toBe(0);
  });
});

describe('CarbonClient.close() on the local engine', () => {
  test('resolves once the ledger is closed, its purchase in the file; a call after it is refused as the client closed', async () => {
    const { openLocal } = await import('../../src/engine/local.js');
    const dir = dirs.make();
    const first = await openLocal(dir);
    const { offset } = await first.client.buy({ kg: 5 });
    // Twice (or at once) is once.
    await Promise.all([first.client.close(), first.client.close()]);
    await first.client.close();
    await expect(first.client.balance()).rejects.toThrow(CarbonConfigError);
    const again = await openLocal(dir);
    try {
      expect((await again.client.list()).data.map((o) => o.id)).toEqual([offset.id]);
    } finally {
      await again.client.close();
    }
  });
});

describe('HttpTransport', () => {
  test('a base URL with a query or a fragment is refused (every path follows it), before any key is sent', async () => {
    const { HttpTransport } = await import('../../src/client/http-transport.js');
    for (const baseUrl of ['http://127.0.0.1:9/api/v1?x=1', 'http://127.0.0.1:9/api/v1#x']) {
      expect(() => new HttpTransport({ baseUrl })).toThrow(CarbonConfigError);
    }
  });
});
