import type { Mode } from '../../../api/types.js';
import { isoTime } from '../../../platform/iso-time.js';
import { grouped, shortDay } from '../../../service/units.js';
import { escapeHtml, escapeWhole } from '../html.js';

/**
 * The developer page's chart of kg bought per day: from the first purchase (at most 30 days
 * back, and all 30 when there are older ones) to today, model time. Bars on a kg scale with date ticks; each bar's value shows on hover
 * and on keyboard focus (CSS only: the page allows no inline script or style, so the bars are
 * SVG, sized by attributes, in a CSS grid). A first day of purchases is said in words, not drawn
 * as one bar at the edge of an empty month. "The numbers" has the same data as a table.
 */

export interface ChartData {
  /** kg per UTC day (YYYY-MM-DD), days without purchases absent; the last 30 days at most. */
  days: Array<{ period: string; kg: number }>;
  /** Today, model time (YYYY-MM-DD). */
  today: string;
  /** Whether the mode has purchases from before the 30 days: the chart then spans all 30. */
  earlier: boolean;
}

const DAY = 86_400_000;
const MAX_DAYS = 30;
const MIN_DAYS = 7;
const kg = (n: number) => `${grouped(n)} kg`;
const dayOf = (ms: number) => isoTime(ms).slice(0, 10);
/** "Nov 25": short enough for a tick under a bar. */
const tick = (day: string) => shortDay(new Date(`${day}T00:00:00Z`));

/** Days between date ticks: every second of a span of two weeks or less, every seventh of a longer one. */
export const tickStep = (span: number): number => (span <= 14 ? 2 : 7);

/** The scale's top: 1, 2 or 5 times a power of ten, at or above the largest bar; below 10, even (its middle mark whole kg too). */
function niceMax(max: number): number {
  if (max < 10) return Math.max(2, 2 * Math.ceil(max / 2));
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max)!;
}

export function chartHtml(data: ChartData, mode: Mode): string {
  const bought = data.days.filter((d) => d.kg > 0);
  if (bought.length === 0 && data.earlier) {
    return `<p class="muted">No purchases in ${mode} mode in the last ${MAX_DAYS} days (model time, to ${escapeWhole(data.today)}): the offsets below have the earlier ones.</p>`;
  }
  if (bought.length === 0) return `<p class="muted">No purchases yet in ${mode} mode: the chart of kg per day starts with the first.</p>`;
  const todayMs = Date.parse(`${data.today}T00:00:00Z`);
  const firstMs = data.earlier ? todayMs - (MAX_DAYS - 1) * DAY : Date.parse(`${bought[0]!.period}T00:00:00Z`);
  if (!data.earlier && bought.length === 1 && bought[0]!.period === data.today) {
    return `<p class="first-day"><strong>${escapeHtml(kg(bought[0]!.kg))}</strong> bought today (${escapeWhole(data.today)}), the first day of purchases in ${mode} mode. From tomorrow (model time) a chart shows kg per day.</p>`;
  }
  const span = Math.min(MAX_DAYS, Math.max(MIN_DAYS, Math.round((todayMs - firstMs) / DAY) + 1));
  const byDay = new Map(data.days.map((d) => [d.period, d.kg]));
  const days = Array.from({ length: span }, (_, i) => dayOf(todayMs - (span - 1 - i) * DAY)).map((period) => ({
    period,
    kg: byDay.get(period) ?? 0,
  }));
  const top = niceMax(Math.max(...days.map((d) => d.kg)));
  const title = `kg of CO2 bought per day (${mode}), the last ${span} days: ${days[0]!.period} to ${days.at(-1)!.period}`;
  const bars = days
    .map((d, i) => {
      const label = `${d.period}: ${kg(d.kg)}`;
      const h = d.kg === 0 ? 0 : Math.max(1, Math.round((d.kg / top) * 100));
      // The value pops up on the side with room: the later half of the days opens to the left (on a
      // phone, a wide value opened right from past the middle ran off the screen).
      const side = i >= span / 2 ? ' end' : '';
      const focus = d.kg === 0 ? '' : ' tabindex="0"';
      return `<li class="day${side}"${focus} title="${escapeHtml(label)}" aria-label="${escapeHtml(label)}"><svg viewBox="0 0 10 100" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect x="1" y="${100 - h}" width="8" height="${h}"/></svg><span class="value" aria-hidden="true">${escapeHtml(tick(d.period))}: ${escapeHtml(kg(d.kg))}</span></li>`;
    })
    .join('');
  // A date under every second day of a short span, every seventh of a long one, counted back from
  // today: each centred under its own day's bar, today's last (from the first day, the last tick
  // named the day before the last bar it stood under). A narrow chart shows every other one, then
  // every fourth (assets.ts), so none runs into the next.
  const step = tickStep(span);
  const ticks: string[] = [];
  for (let i = span - 1, n = 0; i >= 0; i -= step, n++) {
    const sparse = n % 2 === 1 ? ' odd' : n % 4 === 2 ? ' even' : '';
    ticks.unshift(`<li class="at${i + 1}${sparse}">${escapeHtml(tick(days[i]!.period))}</li>`);
  }
  const rows = bought.map((d) => `<tr><td>${escapeHtml(d.period)}</td><td class="num">${escapeHtml(kg(d.kg))}</td></tr>`).join('');
  return `<figure class="chart days${span}" aria-labelledby="chart-title">
<figcaption id="chart-title">${escapeWhole(title)}</figcaption>
<div class="plot"><ol class="scale" aria-hidden="true"><li>${escapeHtml(kg(top))}</li><li>${escapeHtml(kg(top / 2))}</li><li>0</li></ol>
<ol class="bars">${bars}</ol>
<ol class="ticks" aria-hidden="true">${ticks.join('')}</ol></div>
</figure>
<details><summary>The numbers</summary><table class="compact"><thead><tr><th scope="col">Day</th><th scope="col" class="num">kg</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}
