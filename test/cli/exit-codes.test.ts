import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { EXIT, EXIT_CODES_HELP, type ExitCode, exitCodeForStatus } from '../../src/cli/exit-codes.js';
import { reportError } from '../../src/cli/report-error.js';

/** The status → exit code mapping, in-process, as a table of worked examples (README's table). */
describe('exit codes for API statuses', () => {
  test.each([
    [200, 1],
    [201, 1],
    [400, 2],
    [405, 2],
    [413, 2],
    [422, 2],
    [402, 3],
    [401, 4],
    [403, 4],
    [404, 5],
    [409, 6],
    [429, 7],
    [408, 1],
    [431, 1],
    [500, 1],
    [502, 1],
    [503, 1],
    [0, 1],
  ])('%i → %i', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });

  test('a 404 is exit 5 only for what does not exist; route_missing (an address the API does not serve: a wrong base URL) is 1', () => {
    expect(exitCodeForStatus(404, 'resource_missing')).toBe(EXIT.notFound);
    expect(exitCodeForStatus(404, 'route_missing')).toBe(EXIT.failure);
  });

  test('the codes are the documented, stable numbers', () => {
    expect(EXIT).toEqual({
      ok: 0,
      failure: 1,
      usage: 2,
      insufficientBalance: 3,
      auth: 4,
      notFound: 5,
      conflict: 6,
      rateLimited: 7,
      waitTimeout: 8,
      refunded: 9,
      batchIncomplete: 10,
      oldNode: 11,
      undelivered: 12,
      interrupted: 130,
    });
    for (let code = 0; code <= 9; code++) expect(EXIT_CODES_HELP).toMatch(new RegExp(`^    ${code}  \\S`, 'm'));
    expect(EXIT_CODES_HELP).toMatch(/^ {3}10 {2}buy --from-csv: /m);
    expect(EXIT_CODES_HELP).toMatch(/^ {3}11 {2}this Node\.js is older than 22\.13/m);
    expect(EXIT_CODES_HELP).toMatch(/^ {3}12 {2}watch --forward-to: /m);
    // SIGTERM stops a confirmation as Ctrl-C does (terminal.test.ts), and the help says so.
    expect(EXIT_CODES_HELP).toMatch(
      /^ {2}130 {2}stopped by Ctrl-C or SIGTERM \(at --wait, a purchase awaiting its answer, a confirmation, /m,
    );
  });
});

/** The --json envelope of the CLI's own errors: typed as the API types them (docs/service-model.md), api_error only for its own faults. */
describe("the type of the CLI's own errors", () => {
  const typeOf = (err: CliError): string => {
    let text = '';
    const stderr = new Writable({ write: (chunk, _enc, done) => done(void (text += String(chunk))) });
    reportError(err, { json: true, env: {}, stderr });
    return JSON.parse(text).error.type;
  };
  test.each<[string, ExitCode, string, string]>([
    ['a usage error', EXIT.usage, 'usage_error', 'invalid_request_error'],
    ['a batch short of balance', EXIT.insufficientBalance, 'insufficient_balance', 'invalid_request_error'],
    ['no key', EXIT.auth, 'api_key_missing', 'authentication_error'],
    ['a read-only key (dry run)', EXIT.auth, 'insufficient_permissions', 'permission_error'],
    ['a profile setting not set', EXIT.notFound, 'config_key_unset', 'invalid_request_error'],
    ['a certificate missing', EXIT.notFound, 'certificate_missing', 'invalid_request_error'],
    ['a conflict', EXIT.conflict, 'idempotency_key_reused', 'invalid_request_error'],
    ['a rate limit', EXIT.rateLimited, 'rate_limited', 'rate_limit_error'],
    ['an unexpected failure', EXIT.failure, 'address_in_use', 'api_error'],
    ["a server's 500, passed on", EXIT.failure, 'internal_error', 'api_error'],
  ])('%s (exit %i, %s): %s', (_name, exitCode, code, type) => {
    expect(typeOf(new CliError('x', exitCode, code))).toBe(type);
  });
});
