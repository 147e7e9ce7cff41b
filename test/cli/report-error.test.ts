import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { reportError } from '../../src/cli/report-error.js';
import { CarbonApiError } from '../../src/client/errors.js';

/** What reportError writes on stderr for `err`, with `env`. */
function reported(err: unknown, env: NodeJS.ProcessEnv, json = false): { code: number; text: string } {
  let text = '';
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  const code = reportError(err, { json, env, stderr, color: false });
  return { code, text };
}

describe('an unexpected error', () => {
  test('without CARBON_DEBUG: one line that says how to see the details, no stack', () => {
    const { code, text } = reported(new Error('boom'), {});
    expect([code, text]).toEqual([1, 'error: Unexpected error: boom (run with CARBON_DEBUG=1 for details)\n']);
  });

  test('with CARBON_DEBUG=1: the line without that hint, then the details', () => {
    const { code, text } = reported(new Error('boom'), { CARBON_DEBUG: '1' });
    const [line, ...stack] = text.trimEnd().split('\n');
    expect([code, line]).toEqual([1, 'error: Unexpected error: boom']);
    expect(stack[0]).toMatch(/^Error: boom$/);
    expect(stack.slice(1).every((frame) => /^\s+at /.test(frame))).toBe(true);
  });
});

describe('a key refused (401)', () => {
  test('the hint names where the key sent came from: the flag, the variable or the profile', () => {
    const err = () =>
      new CarbonApiError(401, { type: 'authentication_error', code: 'api_key_invalid', message: 'Invalid API key provided.' });
    const said = (keyFrom: string | undefined) => {
      let text = '';
      const stderr = new Writable({
        write(chunk, _encoding, done) {
          text += String(chunk);
          done();
        },
      });
      const code = reportError(err(), { json: false, env: {}, stderr, color: false }, { mode: 'test', engine: 'remote', keyFrom });
      return [code, text];
    };
    expect(said('--api-key')).toEqual([4, 'error: Invalid API key provided. Check the key from --api-key.\n']);
    expect(said('the test-key of profile staging')).toEqual([
      4,
      'error: Invalid API key provided. Check the key from the test-key of profile staging.\n',
    ]);
    // Not known (settings not resolved): both places a key comes from.
    expect(reported(err(), {})).toEqual({
      code: 4,
      text: 'error: Invalid API key provided. Check CARBON_API_KEY or `carbon config list`.\n',
    });
  });
});

describe('keys in what is reported', () => {
  const KEY = `ck_test_${'Q7r8S9t0'.repeat(4)}`;

  test('an answer that echoes a key (a server that does not mask it) is masked in its message and param, in text and in --json', () => {
    const err = new CarbonApiError(404, {
      type: 'invalid_request_error',
      code: 'resource_missing',
      message: `No such offset: '${KEY}'.`,
      param: KEY,
    });
    const { code, text } = reported(err, {});
    expect(code).toBe(5);
    expect(text).toBe("error: No such offset: 'ck_test_…S9t0'. (param: ck_test_…S9t0)\n");
    let json = '';
    const stderr = new Writable({
      write(chunk, _encoding, done) {
        json += String(chunk);
        done();
      },
    });
    reportError(err, { json: true, env: {}, stderr });
    expect(JSON.parse(json).error).toMatchObject({ message: "No such offset: 'ck_test_…S9t0'.", param: 'ck_test_…S9t0' });
  });

  test('a hint that repeats what was typed is masked too; an Idempotency-Key (a UUID) is not', () => {
    const typed = reported(
      new CliError('No such profile.', 2, 'usage_error', `Create it with \`carbon config set --profile ${KEY} mode test\`.`),
      {},
    );
    expect(typed.text).toBe('error: No such profile. Create it with `carbon config set --profile ck_test_…S9t0 mode test`.\n');
    const uuid = '6f1c2a9e-3b7d-4e0a-9c51-2d8f7a6b4e13';
    const retry = reported(new CliError('No answer.', 1, 'connection_error', `Retry safely with --idempotency-key ${uuid}.`), {});
    expect(retry.text).toBe(`error: No answer. Retry safely with --idempotency-key ${uuid}.\n`);
  });
});

describe('a purchase whose outcome is unknown', () => {
  test('--json: the envelope has the message and the key to retry with, not the hint a person reads (README)', async () => {
    const { unknownPurchase } = await import('../../src/cli/purchase/unknown-outcome.js');
    const uuid = '6f1c2a9e-3b7d-4e0a-9c51-2d8f7a6b4e13';
    const { code, text } = reported(unknownPurchase('No answer.', 1, 'connection_error', uuid), {}, true);
    expect(code).toBe(1);
    expect(JSON.parse(text)).toEqual({
      error: {
        type: 'api_error',
        code: 'connection_error',
        message: 'No answer. The purchase may or may not have been made.',
        idempotency_key: uuid,
      },
    });
    expect(text).not.toContain('Retry safely');
  });

  test("keeps a server's words apart from its own when they end without a full stop", async () => {
    const { unknownPurchase } = await import('../../src/cli/purchase/unknown-outcome.js');
    // Before: "down The purchase may or may not have been made."
    expect(unknownPurchase('down', 1, 'api_error', 'k-1').message).toBe('down. The purchase may or may not have been made.');
    expect(unknownPurchase('Stopped.', 130, 'interrupted', 'k-1').message).toBe('Stopped. The purchase may or may not have been made.');
    // A question keeps its mark, without a full stop after it (a batch's failed row says it the same way).
    expect(unknownPurchase('X answered in something other than HTTP; is the base URL right?', 1, 'connection_error', 'k-1').message).toBe(
      'X answered in something other than HTTP; is the base URL right? The purchase may or may not have been made.',
    );
  });
});

describe('a 402 (insufficient_balance)', () => {
  test('says the balance and the cost in dollars, and makes up neither when the answer leaves them out', () => {
    const said = (fields: object) => {
      let text = '';
      const stderr = new Writable({
        write(chunk, _encoding, done) {
          text += String(chunk);
          done();
        },
      });
      const err = new CarbonApiError(402, {
        type: 'invalid_request_error',
        code: 'insufficient_balance',
        message: 'Insufficient balance.',
        ...fields,
      });
      const code = reportError(err, { json: false, env: {}, stderr, color: false }, { mode: 'test', engine: 'remote' });
      return [code, text];
    };
    expect(said({ balance_cents: 1250, required_cents: 4000 })).toEqual([
      3,
      'error: The test balance ($12.50) does not cover this purchase ($40.00). Top up the test balance on the developer page.\n',
    ]);
    for (const fields of [{}, { balance_cents: 1250 }, { required_cents: 4000 }]) {
      expect([fields, ...said(fields)]).toEqual([
        fields,
        3,
        "error: The test balance does not cover this purchase (the API's answer did not say the balance or the cost). Top up the test balance on the developer page.\n",
      ]);
    }
  });
});
