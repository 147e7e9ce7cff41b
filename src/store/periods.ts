import { isoTime } from '../platform/iso-time.js';

/** kg per UTC day, as the stores keep them (days since the epoch), grouped by day or by month. */
export const DAY_MS = 86_400_000;

export function groupByPeriod(rows: Array<{ day: number; kg: number }>, period: 'day' | 'month'): Array<{ period: string; kg: number }> {
  const out: Array<{ period: string; kg: number }> = [];
  for (const r of rows) {
    const label = isoTime(r.day * DAY_MS).slice(0, period === 'day' ? 10 : 7);
    const last = out.at(-1);
    if (last !== undefined && last.period === label) last.kg += r.kg;
    else out.push({ period: label, kg: r.kg });
  }
  return out;
}
