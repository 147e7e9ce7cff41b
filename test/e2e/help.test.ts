import { describe, expect, test } from 'vitest';
import { homes, ok, serve } from '../support/cli.js';

/** Help: a command's own flags and examples first, the global flags once; `carbon serve --help` and its banner. */

const newHome = homes();

describe('help', () => {
  test("a command's help is its own: usage, flags and examples first, the global flags named once at the end", async () => {
    const home = newHome();
    const help = (await ok(['help', 'balance'], { home })).stdout;
    expect(help.split('\n').length).toBeLessThan(20);
    expect(help.indexOf('Examples:')).toBeLessThan(help.indexOf('Inherited flags'));
    expect(help).toMatch(/Inherited flags \(what each does: carbon help\):\n {2}--json {2}--profile <name> {2}--live/);
    expect(help).not.toContain("print the API's JSON object");
    // The whole explanation is in `carbon help`, once.
    const root = (await ok(['help'], { home })).stdout;
    expect(root).toContain("print the API's JSON object");
    expect(root).not.toContain('Inherited flags');
  });

  test('carbon serve --help names the developer page; the banner gives the API address once', async () => {
    const home = newHome();
    expect((await ok(['serve', '--help'], { home })).stdout).toMatch(/developer page/);
    const server = await serve(home);
    const banner = server.stderr();
    expect(banner.split(server.url).length - 1).toBe(2); // the banner's first line, and the example command
    expect(banner).not.toContain('listening on');
    expect((await server.stop()).exitCode).toBe(0);
  });
});
