import { describe, expect, test } from 'vitest';
import { durationArg } from '../../src/cli/commands/sandbox/shared.js';
import { dollarsOption, numberOption, parseWhen, wholeNumberOption, whyNotANumber } from '../../src/cli/options.js';

/**
 * One grammar for every number typed into carbon: digits, thousands grouped by commas or not at
 * all, a decimal point where the quantity has one. The same text is accepted or refused the same
 * way by every option, and a refusal says why.
 */

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('accepted the same way everywhere', () => {
  test.each([
    ['1000', 1000],
    ['1,000', 1000],
    ['12,345,678', 12_345_678],
    [' 42 ', 42],
  ])('%j is %d as kg, as a whole number and (×100) as dollars', (text, n) => {
    expect(numberOption(text, '--kg')).toBe(n);
    expect(wholeNumberOption(text, '--max-cents')).toBe(n);
    expect(dollarsOption(text, '--amount')).toBe(n * 100);
  });

  test('decimals: passed on where the API judges them, cents for dollars, refused for whole numbers', () => {
    expect(numberOption('2.5', '--kg')).toBe(2.5);
    expect(dollarsOption('12.50', '--amount')).toBe(1250);
    expect(dollarsOption('$1,000.05', '--amount')).toBe(100_005);
    expect(message(() => wholeNumberOption('12.50', '--max-cents (cents)'))).toBe(
      '--max-cents (cents) must be a whole number of 0 or more, not "12.50".',
    );
    // A negative is a whole number: what it misses is the bound, which is said.
    expect(message(() => wholeNumberOption('-1', '--max-cents (cents)'))).toBe(
      '--max-cents (cents) must be a whole number of 0 or more, not "-1".',
    );
    expect(message(() => dollarsOption('12.505', '--amount'))).toBe(
      '--amount must be dollars such as 250, 1,000 or 12.50, not "12.505" (at most two decimals: whole cents).',
    );
  });

  test('a number written well but past 2^53 is called too large, not malformed', () => {
    expect(message(() => dollarsOption('99999999999999999999', '--amount'))).toBe(
      '--amount must be dollars such as 250, 1,000 or 12.50, not "99999999999999999999" (too large: more than carbon counts exactly).',
    );
    expect(message(() => dollarsOption('$99,999,999,999,999.99', 'The top-up'))).toContain('(too large: more than carbon counts exactly).');
    expect(message(() => wholeNumberOption('99999999999999999999', '--limit', { min: 1 }))).toBe(
      '--limit must be a whole number of at least 1, not "99999999999999999999" (too large: more than carbon counts exactly).',
    );
    // Within bounds that are named, the range says it all; a negative is not "too large".
    expect(message(() => wholeNumberOption('99999999999999999999', '--page-size', { min: 1, max: 100 }))).toBe(
      '--page-size must be a whole number from 1 to 100, not "99999999999999999999".',
    );
    expect(message(() => dollarsOption('-5', '--amount'))).toBe('--amount must be dollars such as 250, 1,000 or 12.50, not "-5".');
  });
});

test('--kg 4.9999999999999999999 is refused as not whole, as the API refuses the same text, not bought as 5 kg', () => {
  expect(message(() => numberOption('4.9999999999999999999', '--kg'))).toBe(
    '--kg must be a whole number, not "4.9999999999999999999" (more decimals than carbon counts exactly).',
  );
  expect(message(() => numberOption('99.99999999999999999', '--amount-cents'))).toContain('(more decimals than carbon counts exactly)');
  // Decimals a double holds are passed on for the API to judge; zeros after the point are whole.
  expect([numberOption('4.5', '--kg'), numberOption('1.000', '--kg')]).toEqual([4.5, 1]);
});

test('whole-number options refuse any decimals: 3.9999999999999999999 is no cap of 4 cents, nor 4.0', () => {
  for (const text of ['3.9999999999999999999', '4.00000000000000001', '4.0'])
    expect(message(() => wholeNumberOption(text, '--max-cents'))).toBe(`--max-cents must be a whole number of 0 or more, not "${text}".`);
  expect(message(() => wholeNumberOption('0.9999999999999999999', '--timeout', { min: 1, max: 86_400 }))).toContain('from 1 to 86400');
});

describe('refused the same way everywhere, saying why', () => {
  test.each([
    ['1e3', 'write the digits out: no exponents'],
    ['2.5E+2', 'write the digits out: no exponents'],
    ['1_000', 'group thousands with commas, or not at all'],
    ['1 000', 'group thousands with commas, or not at all'],
    ['1,00', 'commas group thousands, as in 1,000'],
    ['10,0000', 'commas group thousands, as in 1,000'],
    // A first group of 0 is a decimal comma (a tenth), not a hundred: refused, never read 1,000 times too large.
    ['0,100', 'no group of thousands starts with 0: a decimal comma? write 0.1 for a tenth'],
    ['00,250', 'no group of thousands starts with 0: a decimal comma? write 0.1 for a tenth'],
    ['000,001.5', 'no group of thousands starts with 0: a decimal comma? write 0.1 for a tenth'],
    ['.5', 'a digit before the point: 0.5'],
    ['-.25', 'a digit before the point: -0.25'],
  ])('%j: %s', (text, why) => {
    expect(whyNotANumber(text)).toBe(` (${why})`);
    // A whole number (--kg, --limit) is not told to write a tenth: that would be refused too.
    const whole = why.replace(': a decimal comma? write 0.1 for a tenth', '');
    for (const [fn, said] of [
      [() => numberOption(text, '--kg'), whole],
      [() => wholeNumberOption(text, '--limit'), whole],
      [() => dollarsOption(text, '--amount'), why],
    ] as const) {
      expect(message(fn)).toContain(`not "${text}" (${said}).`);
    }
  });

  test('words, hex and empty text are refused without a guess at why', () => {
    for (const text of ['ten', '0x10', '', '-', '1.']) {
      expect(whyNotANumber(text)).toBe('');
      expect(message(() => numberOption(text, '--kg'))).toBe(`--kg must be a number such as 500 or 1,000, not "${text}".`);
    }
  });

  test('bounds are named in the message', () => {
    expect(message(() => wholeNumberOption('0', '--limit', { min: 1 }))).toBe('--limit must be a whole number of at least 1, not "0".');
    expect(message(() => wholeNumberOption('65,536', '--port', { max: 65_535 }))).toBe(
      '--port must be a whole number from 0 to 65535, not "65,536".',
    );
    expect(wholeNumberOption('65,535', '--port', { max: 65_535 })).toBe(65_535);
  });
});

describe('an age or a duration written well but too long is called that, not malformed', () => {
  test('--since 9999999d: an age has at most 6 digits; 999999d is read', () => {
    expect(message(() => parseWhen('9999999d', '--since', 0))).toBe(
      '--since must be a day such as 2026-01-31, today or yesterday, or an age such as 7d, 12h or 30m, not "9999999d" (an age has at most 6 digits: 999999d).',
    );
    expect(parseWhen('999999d', '--since', 0)).toBe(-999_999 * 86_400_000);
    expect(message(() => parseWhen('7x', '--since', 0))).toMatch(/not "7x"\.$/);
  });

  test('sandbox clock advance 99999999999d: too large, not "above zero"; 0s is still above zero', () => {
    expect(message(() => durationArg('99999999999d', 'The duration', true))).toBe(
      'The duration must be a duration such as 90s, 15m, 2h, 1d, 1w or 1h30m, not "99999999999d" (too large: more than carbon counts exactly).',
    );
    expect(message(() => durationArg('0s', 'The duration', true))).toMatch(/must be a duration above zero \(the clock only moves forward/);
    expect(message(() => durationArg('-1m', 'The duration', true))).toMatch(/must be a duration above zero \(the clock only moves forward/);
    expect(durationArg('1h30m', 'The duration', true)).toBe(5_400_000);
    // A week as `report --since 7w` reads it; a unit carbon does not read is named as that, not as a clock going back.
    expect(durationArg('1w', 'The duration', true)).toBe(7 * 86_400_000);
    expect(message(() => durationArg('1y', 'The duration', true))).toBe(
      'The duration must be a duration such as 90s, 15m, 2h, 1d, 1w or 1h30m (units: ms, s, m, h, d, w), not "1y".',
    );
  });
});
