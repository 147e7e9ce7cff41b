import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeDirs } from '../../../platform/dirs.js';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { note, open } from './shared.js';

/**
 * `carbon sandbox login`: a fresh one-time link to the developer page, made in the ledger (so it
 * works on every instance that shares it) for the address the last `carbon serve` recorded
 * there, or `--url`. Opened in the browser on a terminal with a display; printed otherwise, and
 * with --print the link alone on stdout.
 */
export async function login(ctx: Context, flags: { print?: boolean; url?: string }): Promise<void> {
  const { publicUrl } = await import('../serve/run.js');
  const given = publicUrl(flags.url, '--url');
  const sandbox = await open(ctx, 'login');
  const origin = given ?? (await sandbox.pages.recordedUrl());
  if (origin === undefined) {
    throw new CliError(
      "No carbon serve has served this ledger yet, so the developer page's address is not known.",
      EXIT.usage,
      'page_url_missing',
      "Start `carbon serve` (with the same CARBON_HOME or --database), or give the page's address with --url http://127.0.0.1:4010.",
    );
  }
  const link = `${origin}/login?token=${await sandbox.pages.newLoginToken(Date.now())}`;
  if (ctx.out.json) return ctx.out.jsonDocument({ developer_page_url: link });
  const { hasDisplay, openInBrowser } = await import('../../browser.js');
  if (flags.print || !ctx.out.interactive || !hasDisplay(ctx.env)) {
    ctx.out.data(link);
    if (!flags.print)
      await note(ctx, (p) => p.dim('A one-time link: it signs one browser in, for 12 hours, and expires unused after a day.'));
    return;
  }
  // Handed to the opener as a file of the user's own that leads the browser on to the link, as
  // Jupyter does: the opener's arguments are in every user's `ps`, and the token is a secret until used.
  await openInBrowser(ctx, linkFile(ctx.settings.paths.dataDir, link), `${origin}/login (a one-time link)`);
}

/** `login.html` in the data directory (0600, in a directory of 0700), replaced at each login: its `file:` URL. */
function linkFile(dir: string, link: string): string {
  makeDirs(dir, 0o700);
  const path = join(dir, 'login.html');
  const href = link.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  const fd = openSync(path, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(
      fd,
      `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${href}">\n<title>carbon sandbox login</title>\n<p><a href="${href}">Sign in to the developer page</a> (a one-time link).</p>\n`,
    );
  } finally {
    closeSync(fd);
  }
  return pathToFileURL(path).href;
}
