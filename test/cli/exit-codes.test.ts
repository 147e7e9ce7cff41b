import { describe, expect, test } from 'vitest';
import { EXIT, EXIT_CODES_HELP, exitCodeForStatus } from '../../src/cli/exit-codes.js';

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
    expect(EXIT_CODES_HELP).toMatch(/^ {2}130 {2}stopped by Ctrl-C/m);
  });
});
