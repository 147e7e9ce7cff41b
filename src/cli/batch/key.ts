import type { BatchRow } from './rows.js';

/** The SHA-256 of `data`, in hex. */
export const hash = async (data: string | Buffer) => (await import('node:crypto')).createHash('sha256').update(data).digest('hex');

/** The batch's Idempotency-Key of a row: batch id, row number, and a digest of what the row buys. */
export async function rowKey(batchId: string, row: BatchRow): Promise<string> {
  const { kg: k, amount_cents: c, reference: r } = row.params;
  return `csv-${batchId}-${row.row}-${(await hash(JSON.stringify([k ?? null, c ?? null, r ?? null]))).slice(0, 16)}`;
}
