import type { Offset } from '../../api/types.js';
import type { Context } from '../context.js';
import { csvField } from '../render/resources.js';
import type { BatchRow } from './rows.js';

/** What became of a row of a batch: an offset's status, or why it was not bought. */
type RowStatus = Offset['status'] | 'failed' | 'skipped' | 'quoted';

interface RowResult {
  row: number;
  status: RowStatus;
  offset_id: string | null;
  kg: number | null;
  amount_cents: number | null;
  reference: string | null;
  replayed: boolean;
  error_code: string | null;
  error_message: string | null;
  idempotency_key: string;
}

const COLUMNS = [
  'row',
  'status',
  'offset_id',
  'kg',
  'amount_cents',
  'reference',
  'replayed',
  'error_code',
  'error_message',
  'idempotency_key',
] as const;

/** A row's result: what the row asked for, with its key, unless `fields` says otherwise. */
export function result(row: BatchRow, key: string, fields: Partial<RowResult> & { status: RowStatus }): RowResult {
  return {
    row: row.row,
    offset_id: null,
    kg: row.params.kg ?? null,
    amount_cents: row.params.amount_cents ?? null,
    reference: row.params.reference ?? null,
    replayed: false,
    error_code: null,
    error_message: null,
    idempotency_key: key,
    ...fields,
  };
}

/**
 * The results on stdout: CSV (a header, then a row per purchase) or, with --json, NDJSON (an
 * object per row, then the batch's totals). Written as each row is done in a pipe, so a reader
 * sees progress and a cut-off run leaves what it did; on a terminal, after the progress bar.
 */
export class ResultPrinter {
  private readonly held: string[] = [];
  private readonly hold: boolean;

  constructor(private readonly ctx: Context) {
    this.hold = ctx.out.stderrInteractive && ctx.out.interactive;
    if (!ctx.out.json) this.write(`${COLUMNS.join(',')}\r\n`);
  }

  private write(text: string): void {
    if (this.hold) this.held.push(text);
    else this.ctx.out.stdout.write(text);
  }

  add(r: RowResult): void {
    this.write(
      this.ctx.out.json
        ? `${JSON.stringify({ object: 'batch_row', ...Object.fromEntries(COLUMNS.map((c) => [c, r[c]])) })}\n`
        : `${COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`,
    );
  }

  end(totals: Record<string, string | number | boolean>): void {
    if (this.ctx.out.json) this.write(`${JSON.stringify({ object: 'batch', ...totals })}\n`);
    this.flush();
  }

  /** What a terminal's run held back, written now. */
  flush(): void {
    if (this.held.length > 0) this.ctx.out.stdout.write(this.held.splice(0).join(''));
  }
}
