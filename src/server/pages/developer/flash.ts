import { keyMode } from '../../../service/keys.js';
import type { Session } from '../../../service/page-access.js';
import type { Sandbox } from '../../../service/sandbox.js';
import type { DashboardData } from './views.js';

/**
 * What an action leaves for the page its redirect leads to, kept in the store for this session
 * (never in a URL or a cookie) and taken once: a notice, what was typed into a refused form, or
 * the id of the key just created (whose secret the page then shows, this once).
 */
export interface Flash {
  notice?: { kind: 'ok' | 'error'; text: string };
  typed?: DashboardData['typed'];
  key?: string;
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
      notice: { kind: 'ok', text: `Created ${keyMode(secret) ?? 'test'} key ${flash.key}.` },
    };
  }
  return { ...(flash.notice === undefined ? {} : { notice: flash.notice }), ...(flash.typed === undefined ? {} : { typed: flash.typed }) };
}
