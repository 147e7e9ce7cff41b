import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hasDisplay, openInBrowser } from '../../browser.js';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { inEitherMode } from '../../offsets/other-mode.js';

/**
 * `carbon open ID`: the offset's certificate. On the remote engine its certificate_url (the
 * served page); on the local engine, where no server may be running to serve that address, the
 * same page rendered from the model into the data directory. Opened in the browser when there is
 * a display; with --print, or without one, its address is printed instead (stdout, for scripts);
 * with --json, `{"offset", "url"}`.
 */
export async function run(ctx: Context, id: string, flags: { print?: boolean }): Promise<void> {
  const client = await ctx.client();
  const offset = await inEitherMode(ctx, id, ['open', id, ...(flags.print ? ['--print'] : [])], () => client.get(id));
  if (offset.certificate_url === null) {
    const why = !offset.livemode ? 'test offsets have none' : `it is ${offset.status}; only placed offsets have one`;
    throw new CliError(`${offset.id} has no certificate: ${why}.`, EXIT.notFound, 'certificate_missing');
  }
  let target = offset.certificate_url;
  // The server's word, handed to the desktop's opener (xdg-open takes a file, a .desktop, an option):
  // only a web address is, as the API answers one.
  if (ctx.settings.engine !== 'local' && !/^https?:$/.test(URL.parse(target)?.protocol ?? ''))
    throw new CliError(
      `The API answered ${offset.id} with a certificate_url that is not an http(s) address; it is not opened. Is the base URL right?`,
      EXIT.failure,
      'connection_error',
    );
  if (ctx.settings.engine === 'local') {
    const certificateId = offset.certificate_url.split('/').pop()!;
    const { certificatePage } = await import('../../../server/pages/certificate.js');
    const dir = join(ctx.settings.paths.dataDir, 'certificates');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${certificateId}.html`);
    writeFileSync(file, certificatePage(offset, certificateId), { mode: 0o600 });
    target = pathToFileURL(file).href;
  }
  // --json: the address as a JSON document, opened nowhere (as `sandbox login --json`), never a bare line jq cannot read.
  if (ctx.out.json) return ctx.out.jsonDocument({ offset: offset.id, url: target });
  if (flags.print || !hasDisplay()) {
    ctx.out.data(target);
    return;
  }
  await openInBrowser(ctx, target);
}
