import { redactSecrets } from '../../service/keys.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { grouped, oneLine } from '../render/format.js';

/** Faults named one by one (stderr, or the --json envelope's `rows`); the rest are counted. */
export const SHOWN_FAULTS = 20;

/** A row that cannot be bought: its number, its line in the file, and why. */
export interface RowFault {
  row: number;
  line: number;
  message: string;
}

/**
 * Stops the batch, nothing bought, when any row cannot be bought; names the first 20, in row order:
 * on stderr a line each, or with --json in the envelope's `rows` (`rows_refused` counts them all).
 */
export function refuseBatch(ctx: Context, faults: RowFault[], count: number, rowCount: number): void {
  if (count === 0) return;
  const said = faults.map((f) => `row ${f.row} (line ${f.line}): ${f.message}`);
  // A row's line quotes its cell: a key pasted into a kg column is masked, as the error line masks it.
  // And on one line, its control characters as spaces (render/format.ts): a cell's escape sequence
  // never reaches the terminal, as the error line below does not let it.
  if (!ctx.out.json) for (const line of said) ctx.out.info(`  ${oneLine(redactSecrets(line))}`);
  if (!ctx.out.json && count > faults.length) ctx.out.info(`  … and ${count - faults.length} more`);
  const first = `(first: ${said[0]}); nothing was bought.`;
  throw new CliError(`${grouped(count)} of ${grouped(rowCount)} rows cannot be bought ${first}`, EXIT.usage, 'csv_invalid', undefined, {
    rows: faults.map((f) => ({ ...f, message: oneLine(f.message) })),
    rows_refused: count,
  });
}
