import { describe, expect, test } from 'vitest';
import { carbon, homes, ok } from '../support/cli.js';

/** `carbon completion --install`: the script for the shell $SHELL names, written where that shell looks. */

const newHome = homes();

describe('carbon completion --install', () => {
  test.each([
    ['/bin/bash', 'bash', '.local/share/bash-completion/completions/carbon'],
    ['/usr/bin/zsh', 'zsh', '.zfunc/_carbon'],
    ['/usr/bin/fish', 'fish', '.config/fish/completions/carbon.fish'],
  ])('SHELL=%s: the %s script written where that shell looks, and said so', async (shellPath, shell, where) => {
    const home = newHome();
    const r = await carbon(['completion', '--install'], { home, env: { SHELL: shellPath } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Installed the ${shell} completion script in ${home}/${where}.`);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(`${home}/${where}`, 'utf8')).toBe((await ok(['completion', shell], { home })).stdout);
  });

  test('an unknown $SHELL: a usage error naming it, nothing written', async () => {
    const r = await carbon(['completion', '--install'], { home: newHome(), env: { SHELL: '/bin/tcsh' } });
    expect([r.exitCode, r.stderr]).toEqual([2, expect.stringContaining('$SHELL is /bin/tcsh')]);
  });
});
