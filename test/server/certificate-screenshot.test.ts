import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Offset } from '../../src/api/types.js';
import type { RunningServer } from '../../src/server/server.js';
import { serveInProcess } from '../support/in-process-server.js';

/**
 * The certificate page of a placed live offset, opened in headless Chromium as a person would:
 * a screenshot and a printed PDF. Skipped where no Chromium is installed (Debian: `apt-get
 * install chromium`); CARBON_SCREENSHOT_DIR keeps the files for a look.
 */

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
const run = promisify(execFile);

if (CHROMIUM === undefined && process.env.CI === 'true')
  throw new Error('Chromium is missing: in CI the browser tests must run (.ci/run installs it).');
if (CHROMIUM === undefined)
  process.stderr.write('Certificate page browser test skipped: no Chromium at /usr/bin/chromium (apt-get install chromium).\n');
describe.skipIf(CHROMIUM === undefined)('certificate page in headless Chromium', () => {
  const served = serveInProcess('carbon-shot-');
  let server: RunningServer;
  let dir: string;
  let out: string;
  let url: string;

  beforeAll(async () => {
    ({ dir, server } = served);
    out = process.env.CARBON_SCREENSHOT_DIR ?? join(dir, 'out');
    const live = (await server.sandbox.defaultKey('live'))!;
    await server.sandbox.topUp('live', 1_000_000);
    const headers = { authorization: `Bearer ${live}`, 'idempotency-key': 'shot' };
    const bought = (await (
      await fetch(`${server.url}/offsets`, { method: 'POST', headers, body: '{"kg": 2500, "reference": "PRIVATE-LABEL"}' })
    ).json()) as Offset;
    await server.sandbox.advanceClock(60_000);
    const placed = (await (await fetch(`${server.url}/offsets/${bought.id}`, { headers })).json()) as Offset;
    url = placed.certificate_url!;
  });

  const chromium = (args: string[]) =>
    run(
      CHROMIUM!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        `--user-data-dir=${join(dir, 'profile')}`,
        ...args,
      ],
      {
        timeout: 60_000,
        // A home of its own: Chromium writes crash reports and dconf caches under $HOME otherwise.
        env: {
          ...process.env,
          HOME: join(dir, 'home'),
          XDG_CONFIG_HOME: join(dir, 'home', '.config'),
          XDG_CACHE_HOME: join(dir, 'home', '.cache'),
        },
      },
    );

  it('renders: a screenshot of the page', async () => {
    const png = join(out, 'certificate.png');
    await run('mkdir', ['-p', out]);
    await chromium([`--screenshot=${png}`, '--window-size=1000,1000', '--hide-scrollbars', url]);
    const bytes = readFileSync(png);
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    // A blank page compresses to almost nothing; a rendered certificate does not.
    expect(bytes.length).toBeGreaterThan(20_000);
  }, 90_000);

  it('prints: a PDF with the kg and without the reference', async () => {
    const pdf = join(out, 'certificate.pdf');
    await run('mkdir', ['-p', out]);
    await chromium([`--print-to-pdf=${pdf}`, '--no-pdf-header-footer', url]);
    const bytes = readFileSync(pdf);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const dom = (await chromium(['--dump-dom', url])).stdout;
    expect(dom).toContain('2,500');
    expect(dom).not.toContain('PRIVATE-LABEL');
  }, 90_000);
});
