import { keyMode } from '../../../service/keys.js';
import type { Session } from '../../../service/page-access.js';
import type { Sandbox } from '../../../service/sandbox.js';
import { escapeText } from '../html.js';
import type { DashboardData } from './views.js';

/**
 * What an action leaves for the page its redirect leads to, kept in the store for this session
 * (never in a URL or a cookie) and taken once: a notice, what was typed into a refused form, or
 * the id of the key just created (whose secret the page then shows, this once).
 */
export interface Flash {
  notice?: Notice;
  typed?: DashboardData['typed'];
  key?: string;
}

/** A section of the dashboard that holds forms, by its heading's id: where an action's redirect returns, and its notice shows. */
export type Section = 'account' | 'offsets' | 'review' | 'keys' | 'controls' | 'faults';

export interface Notice {
  kind: 'ok' | 'error';
  text: string;
  /** The section of the form it answers, shown under its heading; none (a notice an older carbon left): the page's top. */
  section?: Section;
}

/**
 * The notice, if it is shown at `section` (undefined: the page's top). An error is an alert; what
 * was done, a status. It takes the focus as the page opens, so a screen reader says it and the
 * next Tab goes on from it, not from the page's top, without JavaScript: an action's redirect
 * names it (`#notice`, actions.ts: returnTo), and a browser focuses a fragment's target that can
 * take focus (tabindex="-1"); opened without that fragment (`?done=`, a refusal answered in place),
 * `autofocus` does it.
 */
export function noticeAt(d: Pick<DashboardData, 'notice'>, section?: Section): string {
  if (d.notice === undefined || d.notice.section !== section) return '';
  const role = d.notice.kind === 'error' ? 'alert' : 'status';
  return `<p id="notice" class="notice ${d.notice.kind}" role="${role}" tabindex="-1" autofocus>${escapeText(d.notice.text)}</p>`;
}

export async function putFlash(sandbox: Sandbox, session: Session, flash: Flash, now: number): Promise<void> {
  await sandbox.pages.putFlash(session, JSON.stringify(flash), now);
}

type Shown = Pick<DashboardData, 'createdKey' | 'notice' | 'typed'>;
export async function takeFlash(sandbox: Sandbox, session: Session, now: number): Promise<Shown | undefined> {
  const text = await sandbox.pages.takeFlash(session, now);
  if (text === undefined) return undefined;
  let flash: Flash;
  try {
    flash = JSON.parse(text) as Flash;
  } catch {
    flash = { key: text }; // Left by an older carbon: a created key's id alone.
  }
  if (flash.key !== undefined) {
    const secret = await sandbox.secret(flash.key);
    if (secret === undefined) return undefined;
    return {
      createdKey: { id: flash.key, secret },
      notice: { kind: 'ok', text: `Created ${keyMode(secret) ?? 'test'} key ${flash.key}.`, section: 'keys' },
    };
  }
  return { ...(flash.notice === undefined ? {} : { notice: flash.notice }), ...(flash.typed === undefined ? {} : { typed: flash.typed }) };
}
