import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SnapshotSummary } from '../service/snapshots.js';
import { LedgerError } from '../store/ledger-error.js';
import { openStore } from '../store/open.js';

/**
 * A snapshot loaded into a scratch ledger and thrown away (docs/snapshots.md): every check a load
 * makes, the rules across rows among them, with no ledger of the user's opened. `--dry-run` says
 * what a load would; a home with no sandbox yet has its file checked so before one is made, so a
 * refused file makes none. The scratch ledger is SQLite in the temporary directory (`TMPDIR`), as
 * large as the loaded ledger would be, and is removed before this returns.
 */
export async function checkSnapshot(lines: () => AsyncIterable<string>): Promise<SnapshotSummary> {
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'carbon-snapshot-check-'));
  } catch (err) {
    // Said as the temporary directory's, not as the snapshot file's (which is there).
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new LedgerError(
      `The temporary directory ${tmpdir()} cannot hold the scratch ledger a snapshot is checked in (${code}); nothing was loaded.`,
      tmpdir(),
      'Set TMPDIR to a directory you may write in.',
    );
  }
  try {
    const store = await openStore({ kind: 'sqlite', dir });
    try {
      const { Snapshots } = await import('../service/snapshots.js');
      return await new Snapshots(store, Date.now).load(lines);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
