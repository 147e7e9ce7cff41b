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

  test("zsh: the file to add fpath to is the one zsh reads, $ZDOTDIR's where it is set", async () => {
    const home = newHome();
    const plain = await carbon(['completion', '--install', 'zsh'], { home });
    expect(plain.stderr).toContain('before `compinit` in ~/.zshrc if it is not there');
    const dotdir = await carbon(['completion', '--install', 'zsh'], { home, env: { ZDOTDIR: `${home}/zsh` } });
    expect(dotdir.stderr).toContain('before `compinit` in $ZDOTDIR/.zshrc if it is not there');
  });

  test('a path that cannot be written: one line naming it and why, with what to do instead (exit 1)', async () => {
    const { mkdirSync, writeFileSync, readdirSync } = await import('node:fs');
    // ~/.zfunc a file where the directory goes; fish's carbon.fish a directory where the file goes.
    const zsh = newHome();
    writeFileSync(`${zsh}/.zfunc`, 'autoload -U compinit\n');
    const fish = newHome();
    mkdirSync(`${fish}/.config/fish/completions/carbon.fish`, { recursive: true });
    for (const [home, shell, message] of [
      [zsh, 'zsh', `Cannot install the zsh completion script in ${zsh}/.zfunc/_carbon: ${zsh}/.zfunc is a file, not a directory.`],
      [fish, 'fish', `Cannot install the fish completion script in ${fish}/.config/fish/completions/carbon.fish: it is a directory.`],
    ] as const) {
      const r = await carbon(['completion', '--install', shell], { home });
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: ${message} Print it and put it where your shell looks: \`carbon completion ${shell} > FILE\`.\n`);
    }
    expect(readdirSync(`${fish}/.config/fish/completions/carbon.fish`)).toEqual([]);
  });

  test('an unknown $SHELL: a usage error naming it, nothing written', async () => {
    const r = await carbon(['completion', '--install'], { home: newHome(), env: { SHELL: '/bin/tcsh' } });
    expect([r.exitCode, r.stderr]).toEqual([2, expect.stringContaining('$SHELL is /bin/tcsh')]);
  });
});
