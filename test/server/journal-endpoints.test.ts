import { beforeAll, describe, expect, test } from 'vitest';
import { filterParams } from '../../src/service/journal-view.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * `GET /_sandbox/requests`, the served journal `carbon logs` reads, as a script with curl reads
 * it: its pages and what `has_more` says at their edges, and its 401s.
 */

const served = serveInProcess('carbon-journal-endpoints-');
let key: string;

beforeAll(async () => {
  key = (await served.server.sandbox.defaultKey('test'))!;
  // Five requests in the journal, and nothing else.
  for (let i = 0; i < 5; i++) await fetch(`${served.server.url}/balance`, { headers: { authorization: `Bearer ${key}` } });
});

interface Page {
  data: { seq: number }[];
  has_more: boolean;
}
const page = async (query: string): Promise<Page> => {
  const r = await fetch(`${served.server.origin}/_sandbox/requests?${query}`, { headers: { authorization: `Bearer ${key}` } });
  expect(r.status).toBe(200);
  return (await r.json()) as Page;
};

describe('GET /_sandbox/requests: has_more', () => {
  test('is true only while entries lie beyond the page: a last page exactly full has none', async () => {
    // The five GETs of /balance alone: the other tests here add entries of their own, in any order.
    const balances = (query: string) => page(`method=GET&path=/api/v1/balance&${query}`);
    const all = await balances('limit=100');
    expect([all.data.length, all.has_more]).toEqual([5, false]);
    const seqs = all.data.map((e) => e.seq);
    expect((await balances('limit=4')).has_more).toBe(true);
    expect((await balances('limit=5')).has_more).toBe(false);
    const first = await balances('limit=3');
    expect([first.data.length, first.has_more]).toEqual([3, true]);
    const second = await balances(`limit=2&before=${first.data.at(-1)!.seq}`);
    expect([second.data.map((e) => e.seq), second.has_more]).toEqual([seqs.slice(3), false]);
    // Following (after=SEQ, oldest first): more is newer entries.
    const oldest = seqs.at(-1)!;
    expect((await balances(`after=${oldest}&limit=3`)).has_more).toBe(true);
    expect((await balances(`after=${oldest}&limit=4`)).has_more).toBe(false);
    // Both: the entries between them, oldest first, and more is only those still between.
    const between = await balances(`after=${seqs[4]}&before=${seqs[0]}&limit=2`);
    expect([between.data.map((e) => e.seq), between.has_more]).toEqual([[seqs[3], seqs[2]], true]);
    expect(await balances(`after=${seqs[4]}&before=${seqs[0]}`)).toMatchObject({
      data: seqs
        .slice(1, 4)
        .reverse()
        .map((seq) => ({ seq })),
      has_more: false,
    });
  });
});

describe('GET /_sandbox/requests: text that is no text', () => {
  test('bytes that are not UTF-8, or NUL, in a filter are 422 naming it, as on GET /offsets: never echoed as a lone surrogate', async () => {
    for (const [query, param, says] of [
      ['status=%FF', 'status', 'valid Unicode text'],
      ['since=%ED%A0%80', 'since', 'valid Unicode text'],
      ['method=%FF', 'method', 'valid Unicode text'],
      ['request_id=%FF', 'request_id', 'valid Unicode text'],
      ['code=%00', 'code', 'NUL character'],
      ['path=/%00', 'path', 'NUL character'],
    ]) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests?${query}`, { headers: { authorization: `Bearer ${key}` } });
      const text = await r.text();
      const body = JSON.parse(text) as { error: { code: string; param: string; message: string } };
      expect([query, r.status, body.error.code, body.error.param]).toEqual([query, 422, 'validation_error', param]);
      expect(body.error.message, query).toContain(says);
      expect(text, query).not.toMatch(/\\ud[89a-f]/i);
    }
  });
});

describe('GET /_sandbox/requests: wait', () => {
  test('waits only with after: without it, a filter that matches nothing is answered at once, not after the 25 s', async () => {
    const r = await fetch(`${served.server.origin}/_sandbox/requests?wait=25&path=/nowhere`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(20_000),
    });
    expect(await r.json()).toMatchObject({ data: [], has_more: false });
  });
});

describe("GET /_sandbox/requests: its 401s are the API's", () => {
  test('no Authorization header is api_key_missing; a malformed or unknown key api_key_invalid', async () => {
    const codes: [string, number, string][] = [];
    for (const [name, headers] of [
      ['none', {}],
      ['blank', { authorization: ' ' }],
      ['malformed', { authorization: 'Bearer nope' }],
      ['unknown', { authorization: `Bearer ck_test_${'x'.repeat(32)}` }],
    ] as const) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests`, { headers });
      codes.push([name, r.status, ((await r.json()) as { error: { code: string } }).error.code]);
    }
    expect(codes).toEqual([
      ['none', 401, 'api_key_missing'],
      ['blank', 401, 'api_key_missing'],
      ['malformed', 401, 'api_key_invalid'],
      ['unknown', 401, 'api_key_invalid'],
    ]);
  });
});

describe('GET /_sandbox/requests: limit', () => {
  test('is 1 to 1000, as carbon logs --limit is: 0 and 1001 are refused naming it, not read as 1 or 1000', async () => {
    for (const limit of ['0', '1001', 'abc']) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests?limit=${limit}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await r.json()) as { error: { code: string; param: string; message: string } };
      expect([limit, r.status, body.error.code, body.error.param, body.error.message]).toEqual([
        limit,
        422,
        'validation_error',
        'limit',
        'limit must be a whole number from 1 to 1000.',
      ]);
    }
    expect((await page('limit=1')).data).toHaveLength(1);
  });
});

describe('GET /_sandbox/requests: following', () => {
  test('after a seq beyond the newest (the journal was emptied, as sandbox reset does): answered at once, not after the wait', async () => {
    // wait=25 would hold the answer for 25 s; the test's own 10 s bound fails it then.
    const r = await page('after=1000000&wait=25');
    expect([r.data, r.has_more]).toEqual([[], false]);
  }, 10_000);

  test('a key revoked while its read waits reads nothing more: the wait ends in 401 api_key_revoked, not with the entries written after', async () => {
    const waiter = await served.server.sandbox.createKey('test', 'read_only');
    const newest = (await page('limit=1')).data[0]!.seq;
    const waiting = fetch(`${served.server.origin}/_sandbox/requests?after=${newest}&wait=20`, {
      headers: { authorization: `Bearer ${waiter.secret}` },
    });
    // Revoked once the read is in and past its first look (which is at once: a look is every 200 ms).
    while (served.server.inFlight() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await served.server.sandbox.revokeKey(waiter.id);
    // Not a GET of /balance: the test of has_more counts those, in whatever order the tests run.
    await fetch(`${served.server.url}/impact`, { headers: { authorization: `Bearer ${key}` } });
    const r = await waiting;
    const body = (await r.json()) as { error?: { code: string }; data?: unknown[] };
    expect([r.status, body.error?.code, body.data]).toEqual([401, 'api_key_revoked', undefined]);
  }, 10_000);
});

describe('/_sandbox/requests: a method it does not have', () => {
  test("is 405 method_not_allowed with Allow, in the API's envelope, before the key is read: as the API's own GET-only paths answer", async () => {
    // The API's answer for the same mistake, to compare with (POST /balance: GET only).
    const api = await fetch(`${served.server.url}/balance`, { method: 'POST' });
    const apiBody = (await api.json()) as { error: Record<string, unknown> };
    expect([api.status, api.headers.get('allow'), apiBody.error.type, apiBody.error.code]).toEqual([
      405,
      'GET, HEAD',
      'invalid_request_error',
      'method_not_allowed',
    ]);
    const seen: unknown[] = [];
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      for (const path of ['/_sandbox/requests', '/_sandbox/requests/req_abc']) {
        // No key at all: a wrong method is said first, as the API does.
        const r = await fetch(`${served.server.origin}${path}`, { method });
        const body = (await r.json()) as { error: Record<string, unknown> };
        seen.push([
          method,
          path,
          r.status,
          r.headers.get('allow'),
          r.headers.get('content-type'),
          r.headers.get('request-id')?.startsWith('req_'),
          body,
        ]);
      }
    }
    expect(seen).toEqual(
      ['POST', 'PUT', 'DELETE', 'PATCH'].flatMap((method) =>
        ['/_sandbox/requests', '/_sandbox/requests/req_abc'].map((path) => [
          method,
          path,
          405,
          api.headers.get('allow'),
          api.headers.get('content-type'),
          true,
          {
            error: { type: 'invalid_request_error', code: 'method_not_allowed', message: `${method} is not allowed on ${path}; use GET.` },
          },
        ]),
      ),
    );
    // GET and HEAD are still answered.
    expect(
      (await fetch(`${served.server.origin}/_sandbox/requests`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
  });
});

describe('GET /_sandbox/requests: unknown query parameters', () => {
  test("are refused as the API's GET /offsets refuses them: 422 validation_error naming the parameter", async () => {
    const headers = { authorization: `Bearer ${key}` };
    const api = await fetch(`${served.server.url}/offsets?stauts=500`, { headers });
    const apiBody = (await api.json()) as { error: Record<string, unknown> };
    expect([api.status, apiBody]).toEqual([
      422,
      {
        error: { type: 'invalid_request_error', code: 'validation_error', param: 'stauts', message: 'Received unknown parameter: stauts.' },
      },
    ]);
    for (const query of ['stauts=500', 'status=5xx&stauts=500', 'stauts=', 'limit=5&wait=0&stauts']) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests?${query}`, { headers });
      expect([query, r.status, await r.json()]).toEqual([query, api.status, apiBody]);
    }
    // Every parameter carbon logs sends (filterParams, every filter set; and wait) is still read.
    const every = filterParams({
      status: '2xx',
      method: 'GET',
      path: '/api/v1/balance',
      code: 'x',
      since: 0,
      requestId: 'req_x',
      mode: 'test',
      limit: 5,
      before: 999_999,
      after: null,
    });
    every.set('wait', '0');
    expect([...every.keys()]).toHaveLength(10);
    expect((await fetch(`${served.server.origin}/_sandbox/requests?${every}`, { headers })).status).toBe(200);
    expect((await page('after=0&limit=1')).data).toHaveLength(1);
  });
});

describe('GET /_sandbox/requests: since', () => {
  test('is epoch milliseconds, and a refusal says so, with an example (before: "a whole number up to 9007199254740991")', async () => {
    const headers = { authorization: `Bearer ${key}` };
    for (const since of ['1h', '2026-12-01']) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests?since=${since}`, { headers });
      const body = (await r.json()) as { error: { param: string; message: string } };
      expect([r.status, body.error.param, body.error.message]).toEqual([
        422,
        'since',
        `since is a time in milliseconds since 1970 (1769817600000 is 2026-01-31), not "${since}".`,
      ]);
    }
    expect((await fetch(`${served.server.origin}/_sandbox/requests?since=${Date.now() - 3_600_000}`, { headers })).status).toBe(200);
  });
});

describe('GET /_sandbox/requests: path', () => {
  test('a prefix without its leading / is 422 naming path, as carbon logs --path refuses it, not a filter that matches nothing', async () => {
    const headers = { authorization: `Bearer ${key}` };
    const r = await fetch(`${served.server.origin}/_sandbox/requests?path=api/v1`, { headers });
    expect([r.status, await r.json()]).toEqual([
      422,
      {
        error: {
          type: 'invalid_request_error',
          code: 'validation_error',
          param: 'path',
          message: 'path is the start of a path, such as /api/v1/offsets.',
        },
      },
    ]);
    expect((await fetch(`${served.server.origin}/_sandbox/requests?path=/api/v1`, { headers })).status).toBe(200);
  });
});

describe('GET /_sandbox/requests: a parameter given twice, and wait', () => {
  test("a parameter given twice is the API's 422 (may be given only once), not its first value read", async () => {
    const headers = { authorization: `Bearer ${key}` };
    const api = await fetch(`${served.server.url}/offsets?limit=1&limit=2`, { headers });
    const apiBody = (await api.json()) as { error: { code: string; message: string } };
    expect([api.status, apiBody.error.message]).toEqual([422, 'limit may be given only once.']);
    const r = await fetch(`${served.server.origin}/_sandbox/requests?status=5xx&status=2xx`, { headers });
    expect([r.status, await r.json()]).toEqual([
      422,
      { error: { type: 'invalid_request_error', code: 'validation_error', param: 'status', message: 'status may be given only once.' } },
    ]);
  });

  test("a parameter given no value (a script's unset variable) is 422 naming it, as the API's limit= is, not read as left out", async () => {
    const headers = { authorization: `Bearer ${key}` };
    const api = await fetch(`${served.server.url}/offsets?limit=`, { headers });
    expect([api.status, ((await api.json()) as { error: { param: string } }).error.param]).toEqual([422, 'limit']);
    for (const name of ['limit', 'status', 'path', 'before', 'after', 'request_id', 'livemode']) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests?${name}=`, { headers });
      expect([name, r.status, await r.json()]).toEqual([
        name,
        422,
        {
          error: {
            type: 'invalid_request_error',
            code: 'validation_error',
            param: name,
            message: `${name} has no value: give it one, or leave it out.`,
          },
        },
      ]);
    }
  });

  test('wait that is not a whole number of seconds is 422 naming it; a large one waits at most 25 s', async () => {
    const headers = { authorization: `Bearer ${key}` };
    for (const wait of ['abc', '-1', '1.5', '']) {
      const r = await fetch(`${served.server.origin}/_sandbox/requests?after=0&wait=${wait}`, { headers });
      const body = (await r.json()) as { error: { code: string; param: string } };
      expect([wait, r.status, body.error.code, body.error.param]).toEqual([wait, 422, 'validation_error', 'wait']);
    }
    // Entries are there: a large wait answers at once.
    expect((await page('after=0&wait=1000&limit=1')).data).toHaveLength(1);
  });
});

describe('GET /_sandbox/requests/{request_id}: a secret the app sent under its name', () => {
  test('a query parameter or JSON member named as a password or a token is kept masked, as carbon logs and a snapshot then show it', async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const sent = await fetch(`${served.server.url}/offsets?password=hunter2&access_token=SUPERSECRET2`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'secret-named-1' },
      body: '{"kg":1,"client_secret":"abc123"}',
    });
    expect(sent.status).toBe(422);
    const id = sent.headers.get('request-id')!;
    const r = await fetch(`${served.server.origin}/_sandbox/requests/${id}`, { headers });
    expect(r.status).toBe(200);
    const text = await r.text();
    for (const secret of ['hunter2', 'SUPERSECRET2', 'abc123']) expect(text).not.toContain(secret);
    const entry = JSON.parse(text) as { query: string; request_body: string };
    expect([entry.query, JSON.parse(entry.request_body)]).toEqual(['password=***&access_token=***', { kg: 1, client_secret: '***' }]);
  });
});

describe('GET /_sandbox/requests/{request_id}: an id no entry has', () => {
  test('is 404 naming it decoded, as GET /offsets/{id} names an offset id, with anything shaped like a key masked', async () => {
    const missing = async (segment: string) => {
      const r = await fetch(`${served.server.origin}/_sandbox/requests/${segment}`, { headers: { authorization: `Bearer ${key}` } });
      expect(r.status).toBe(404);
      return ((await r.json()) as { error: { code: string; message: string } }).error;
    };
    // Before: '..%2f', the path's own spelling.
    expect(await missing('..%2f')).toEqual({
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: "No such request in the journal: '../'.",
      param: 'id',
    });
    expect((await missing('%ZZ')).message).toBe("No such request in the journal: '%ZZ'.");
    expect((await missing(key)).message).toBe(`No such request in the journal: 'ck_test_…${key.slice(-4)}'.`);
  });
});
