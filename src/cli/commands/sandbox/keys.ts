import type { Sandbox } from '../../../service/sandbox.js';
import type { Context } from '../../context.js';
import { print } from '../../print.js';
import { terminalWidth } from '../../render/fit.js';
import { keyCard, keyPlain, keyRow, keyTable, type ShownKey } from '../../render/sandbox.js';
import { fitNote } from '../../render/wrap.js';
import { note, open } from './shared.js';

/** `carbon sandbox keys`: list them (masked unless --reveal), create one, revoke one. */

/** The keys as printed: masked, or (--reveal) with the full text this machine keeps for each. */
async function shownKeys(sandbox: Sandbox, reveal: boolean): Promise<ShownKey[]> {
  return sandbox.keys({ reveal });
}

export async function keysList(ctx: Context, flags: { reveal?: boolean }): Promise<void> {
  const sandbox = await open(ctx, 'keys');
  const keys = await shownKeys(sandbox, Boolean(flags.reveal));
  // Asked for by name, a text not known here is said so (on stderr: the list stays data), not left out silently.
  const unknown = flags.reveal ? keys.filter((k) => k.revoked === null && k.secret === undefined).length : 0;
  if (unknown > 0) {
    ctx.out.warn(
      `The full text of ${unknown === 1 ? '1 key' : `${unknown} keys`} is not known here (loaded from a snapshot saved elsewhere): it is shown masked. \`carbon sandbox keys create\` makes one whose text is.`,
    );
  }
  if (ctx.out.json) return ctx.out.jsonDocument(keys);
  if (!ctx.out.interactive) {
    if (keys.length > 0) ctx.out.stdout.write(keys.map((k) => `${keyRow(k)}\n`).join(''));
    return;
  }
  const paint = await ctx.paint();
  ctx.out.data(keyTable(keys, paint, terminalWidth(ctx.out.stdout, ctx.env)));
  if (!flags.reveal)
    ctx.out.info(
      fitNote(
        (await ctx.paint('stderr')).dim('Keys are masked; add --reveal to print them in full.'),
        terminalWidth(ctx.out.stderr, ctx.env),
      ),
    );
}

export async function keysCreate(ctx: Context, flags: { readOnly?: boolean }): Promise<void> {
  const sandbox = await open(ctx, 'keys create');
  const created = await sandbox.createKey(ctx.settings.mode, flags.readOnly ? 'read_only' : 'purchase');
  const key = (await sandbox.keys()).find((k) => k.id === created.id)!;
  const shown: ShownKey = { ...key, secret: created.secret };
  if (ctx.out.json) return ctx.out.jsonDocument(shown);
  const paint = await ctx.paint('stderr');
  ctx.out.info(
    `${paint.green('✓')} Created ${key.mode} key ${key.id} with ${key.permission === 'read_only' ? 'read-only' : 'purchase'} access. ` +
      'It is printed in full only here (and by `carbon sandbox keys --reveal` on this machine).',
  );
  // The full key alone on stdout, so `KEY=$(carbon sandbox keys create)` captures it.
  ctx.out.data(created.secret);
}

export async function keysRevoke(ctx: Context, id: string): Promise<void> {
  const sandbox = await open(ctx, 'keys revoke');
  const role = await roleUsedAs(sandbox, id);
  await sandbox.revokeKey(id);
  const key = (await sandbox.keys()).find((k) => k.id === id)!;
  const next = role === undefined ? '' : await nextKeyNote(sandbox, role);
  await note(ctx, (p) => `${p.green('✓')} Revoked ${id}.${next}`);
  await print(ctx, key as ShownKey, keyCard, keyPlain);
}

/** The mode local commands use key `id` for, if any (they send a test or a live key, never the read-only one). */
async function roleUsedAs(sandbox: Sandbox, id: string): Promise<'test' | 'live' | undefined> {
  for (const role of ['test', 'live'] as const) {
    const secret = await sandbox.defaultKey(role);
    if (secret !== undefined && (await sandbox.findKey(secret))?.id === id) return role;
  }
  return undefined;
}

/** What local commands use for `role` now that its key is revoked: another key whose text is kept here, or none. */
async function nextKeyNote(sandbox: Sandbox, role: 'test' | 'live'): Promise<string> {
  const next = await sandbox.defaultKey(role);
  const nextId = next === undefined ? undefined : (await sandbox.findKey(next))?.id;
  const used = ` Local commands used it as the sandbox's ${role} key`;
  if (nextId !== undefined) return `${used}: they use ${nextId} from now on.`;
  const create = `carbon sandbox keys create${role === 'live' ? ' --live' : ''}`;
  return `${used}, and no other is left: those that need one stop with exit 4 until \`${create}\` makes a new one.`;
}
