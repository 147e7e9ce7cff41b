import type { Offset } from '../../api/types.js';
import type { Context } from '../context.js';
import { csvLine } from '../render/resources.js';
import type { BatchRow } from './rows.js';

/** What became of a row of a batch: an offset's status, or why it was not bought. */
type RowStatus = Offset['status'] | 'failed' | 'skipped' | 'quoted' | 'changed';

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
  /** The sandbox's batch: the CSV's last column says so on every row, as `list --format csv`'s does. */
  private readonly sandbox: boolean;
  /** Written to a terminal: a field's control characters are spaces (csvField). */
  private readonly terminal: boolean;

  /**
   * Made once the batch is quoted: by then the answers have said whether the service is a sandbox.
   * `quiet` (--quiet): the ids of the offsets the rows bought (or had bought before), one a line, as
   * `carbon buy -q` prints its one, for xargs and loops; no header, and no line for a row not bought.
   */
  constructor(
    private readonly ctx: Context,
    private readonly quiet = false,
  ) {
    this.terminal = ctx.out.interactive;
    this.hold = ctx.out.stderrInteractive && this.terminal;
    this.sandbox = ctx.fromSandbox;
    if (!ctx.out.json && !quiet) this.write(csvLine(COLUMNS, this.sandbox, true));
  }

  /** Rows not yet written, when they are written a block at a time (a dry run's quotes). */
  private block = '';
  private blockRows = 0;
  /** A dry run's rows are written 256 at a time: nothing is bought between them. */
  coalesce = false;

  private write(text: string): void {
    if (this.hold) this.held.push(text);
    else if (!this.coalesce) this.ctx.out.stdout.write(text);
    else {
      this.block += text;
      if (++this.blockRows >= 256) this.writeBlock();
    }
  }

  private writeBlock(): void {
    if (this.block !== '') this.ctx.out.stdout.write(this.block);
    this.block = '';
    this.blockRows = 0;
  }

  add(r: RowResult): void {
    if (this.quiet) {
      if (r.offset_id !== null) this.write(`${r.offset_id}\n`);
      return;
    }
    this.write(
      this.ctx.out.json
        ? `${JSON.stringify({ object: 'batch_row', ...Object.fromEntries(COLUMNS.map((c) => [c, r[c]])) })}\n`
        : csvLine(
            COLUMNS.map((c) => r[c]),
            this.sandbox,
            false,
            this.terminal,
          ),
    );
  }

  end(totals: Record<string, string | number | boolean | null>): void {
    if (this.ctx.out.json) this.write(`${JSON.stringify({ object: 'batch', ...totals })}\n`);
    this.flush();
  }

  /** Resolves when stdout can take more: a pipe read slower than the rows are made holds none of them here. */
  async drain(): Promise<void> {
    const stdout = this.ctx.out.stdout as NodeJS.WritableStream & { writableNeedDrain?: boolean };
    this.writeBlock();
    if (this.hold || !stdout.writableNeedDrain) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        for (const event of ['drain', 'close', 'error']) stdout.off(event, done);
        resolve();
      };
      for (const event of ['drain', 'close', 'error']) stdout.on(event, done);
    });
  }

  /** What a terminal's run held back, written now. */
  flush(): void {
    this.writeBlock();
    if (this.held.length > 0) this.ctx.out.stdout.write(this.held.splice(0).join(''));
  }
}
