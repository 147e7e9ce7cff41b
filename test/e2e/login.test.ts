import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, test } from 'vitest';
import { carbon, carbonTty, homes, json, ok, serve } from '../support/cli.js';

/**
 * `carbon sandbox login`: a fresh one-time link to the developer page, made through the ledger,
 * for the address `carbon serve` recorded there, so it signs a browser in on every instance that
 * shares the ledger, once.
 */

const newHome = homes();

/** Follows a login link as a browser's first request would: 303 and a session cookie, or 401. */
async function signIn(link: string): Promise<{ status: number; cookie: string | null }> {
  const r = await fetch(link, { redirect: 'manual' });
  await r.text();
  return { status: r.status, cookie: r.headers.get('set-cookie') };
}

describe('carbon sandbox login', () => {
  test('--print: the link alone on stdout, for the served address; it works once, on any instance of the ledger', async () => {
    const home = newHome();
    const first = await serve(home);
    const second = await serve(home, ['--show-keys']); // the same ledger; started last, so its address is the one recorded
    const origin = new URL(second.url).origin;

    const printed = await ok(['sandbox', 'login', '--print'], { home });
    expect(printed.stderr).toBe('');
    const link = printed.stdout.trim();
    expect(printed.stdout).toBe(`${link}\n`);
    expect(link).toMatch(new RegExp(`^${origin.replace(/[./]/g, '\\$&')}/login\\?token=[A-Za-z0-9_-]{32}$`));

    // Made by the CLI, accepted by the other instance: the token lives in the ledger.
    const token = new URL(link).search;
    const signedIn = await signIn(`${new URL(first.url).origin}/login${token}`);
    expect(signedIn.status).toBe(303);
    expect(signedIn.cookie).toMatch(/^carbon_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
    expect((await signIn(link)).status).toBe(401); // once

    // Each run makes a new link; the one serve printed at start-up still works on its own.
    const again = (await ok(['sandbox', 'login'], { home })).stdout.trim();
    expect(again).not.toBe(link);
    expect((await signIn(again)).status).toBe(303);
    expect((await signIn(second.ready.developer_page_url)).status).toBe(303);

    const asJson = await json<{ developer_page_url: string }>(['sandbox', 'login'], { home });
    expect(asJson.developer_page_url).toMatch(/\/login\?token=/);
    await first.stop();
    await second.stop();
  });

  // The opener's arguments are in every user's `ps`: it gets a file of the user's own (0600) that
  // leads the browser on to the link, as Jupyter's does, not the link with its token.
  test('on a terminal with a display: the opener is handed a private file that leads on to the link, never the token', async () => {
    const home = newHome();
    const server = await serve(home);
    const bin = join(home, 'bin');
    mkdirSync(bin);
    const opened = join(home, 'opened.txt');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" >> ${opened}\n`, { mode: 0o755 });
    const r = await carbonTty(['sandbox', 'login'], { home, env: { PATH: `${bin}:${process.env.PATH}`, DISPLAY: ':0' } });
    expect(r.exitCode, r.output).toBe(0);
    expect(r.output).toContain(`Opening ${new URL(server.url).origin}/login (a one-time link)`);
    expect(r.output).not.toContain('token=');
    const file = join(home, 'data', 'login.html');
    expect(readFileSync(opened, 'utf8')).toBe(`${pathToFileURL(file).href}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const link = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(readFileSync(file, 'utf8'))![1]!;
    expect(link).toMatch(/\/login\?token=[A-Za-z0-9_-]{32}$/);
    expect((await signIn(link)).status).toBe(303);
    await server.stop();
  });

  test('--url names the address; without a served address it says how to get one (exit 2)', async () => {
    const home = newHome();
    const none = await carbon(['sandbox', 'login', '--print'], { home });
    expect([none.exitCode, none.stdout]).toEqual([2, '']);
    expect(none.stderr).toMatch(/^error: No carbon serve has served this ledger yet.*--url/);
    expect(none.stderr.split('\n')).toHaveLength(2);

    const bad = await carbon(['sandbox', 'login', '--url', 'not a url'], { home });
    expect([bad.exitCode, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toContain('--url must be a URL');

    const given = await ok(['sandbox', 'login', '--print', '--url', 'https://sandbox.example.com/'], { home });
    expect(given.stdout).toMatch(/^https:\/\/sandbox\.example\.com\/login\?token=[A-Za-z0-9_-]{32}\n$/);

    // A server started later records its own address, and a link made for it signs in there.
    const server = await serve(home, ['--public-url', 'http://localhost:1']);
    const link = (await ok(['sandbox', 'login', '--print'], { home })).stdout.trim();
    expect(link).toMatch(/^http:\/\/localhost:1\/login\?token=/);
    expect((await signIn(`${new URL(server.url).origin}/login${new URL(link).search}`)).status).toBe(303);
    await server.stop();
  });
});
