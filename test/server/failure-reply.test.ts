import { expect, test } from 'vitest';
import { failureReply } from '../../src/server/reply.js';
import { pgError } from '../../src/store/postgres/errors.js';
import { sqliteError } from '../../src/store/sqlite/errors.js';

/**
 * What `carbon serve` answers when its ledger fails (docs/reliability.md): 503 either way; with
 * Retry-After and "try again shortly" for what passes by itself, without them for what waits for a
 * person, whom the log tells what to do.
 */

const answer = (err: Error) => {
  const logged: string[] = [];
  const reply = failureReply(err, (line) => logged.push(line));
  return {
    status: reply.status,
    retryAfter: reply.headers['retry-after'],
    message: (reply.body as { error: { message: string } }).error.message,
    logged,
  };
};

test('what passes: a lock held, a database out of reach or restarting, its host not found (a container restarting)', () => {
  for (const err of [
    sqliteError(Object.assign(new Error('database is locked'), { errcode: 5 }), '/x/ledger.db'),
    pgError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'postgres://u:***@db/x'),
    pgError(Object.assign(new Error('getaddrinfo ENOTFOUND db'), { code: 'ENOTFOUND' }), 'postgres://u:***@db/x'),
    pgError(Object.assign(new Error('getaddrinfo EAI_AGAIN db'), { code: 'EAI_AGAIN' }), 'postgres://u:***@db/x'),
  ])
    expect([err.message, answer(err)]).toMatchObject([
      err.message,
      { status: 503, retryAfter: '1', message: expect.stringContaining('Try again shortly') },
    ]);
});

test('what waits for a person: a damaged file, a full disk, one that cannot be written, credentials refused', () => {
  for (const err of [
    sqliteError(Object.assign(new Error('database disk image is malformed'), { errcode: 11 }), '/x/ledger.db'),
    sqliteError(Object.assign(new Error('database or disk is full'), { errcode: 13 }), '/x/ledger.db'),
    sqliteError(Object.assign(new Error('attempt to write a readonly database'), { errcode: 8 }), '/x/ledger.db'),
    pgError(Object.assign(new Error('password authentication failed'), { code: '28P01' }), 'postgres://u:***@db/x'),
  ]) {
    const seen = answer(err);
    expect([err.message, seen.status, seen.retryAfter, seen.message]).toEqual([
      err.message,
      503,
      undefined,
      "The service cannot use its ledger until its operator acts on what the server's log says.",
    ]);
    // The log says what happened and what to do.
    expect(seen.logged).toEqual([expect.stringContaining(err.message)]);
  }
});
