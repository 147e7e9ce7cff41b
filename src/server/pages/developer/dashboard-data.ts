import type { Mode, OffsetStatus } from '../../../api/types.js';
import type { Session } from '../../../service/page-access.js';
import type { Sandbox } from '../../../service/sandbox.js';
import type { DashboardData } from './views.js';

/** What the dashboard shows, read in one go: the account, keys, a page of offsets by the filter, the review queue, the chart. */

const STATUSES = new Set(['processing', 'placed', 'refunded']);
const DAY = /^\d{4}-\d{2}-\d{2}$/;
type Filter = { status?: string; reference?: string; since?: string; until?: string; after?: string };

export async function data(sandbox: Sandbox, session: Session, mode: Mode, f: Filter): Promise<DashboardData> {
  const status = STATUSES.has(f.status ?? '') ? (f.status as OffsetStatus) : null;
  const day = (text: string | undefined, plus = 0) =>
    text !== undefined && DAY.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) ? Date.parse(`${text}T00:00:00Z`) + plus : null;
  const now = await sandbox.now();
  const [standing, keys, offsets, review, chart] = await Promise.all([
    sandbox.status(),
    sandbox.keys(),
    sandbox.offsets(mode, {
      status,
      reference: f.reference ? f.reference : null,
      since: day(f.since),
      until: day(f.until, 86_400_000),
      startingAfter: f.after ? f.after : null,
      limit: 20,
    }),
    sandbox.reviewQueue(),
    sandbox.kgByPeriod(mode, 'day', now - 29 * 86_400_000),
  ]);
  return {
    mode,
    status: standing,
    keys,
    offsets,
    review,
    chart: { days: chart, today: new Date(now).toISOString().slice(0, 10) },
    csrf: session.csrf,
    refresh: 0,
    filter: {
      status: status ?? '',
      reference: f.reference ?? '',
      since: day(f.since) === null ? '' : f.since!,
      until: day(f.until) === null ? '' : f.until!,
    },
  };
}
