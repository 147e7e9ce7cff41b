import { describe, expect, test } from 'vitest';
import { fitHelpText, fitLine, shellWords, wrapCommand, wrapWords } from '../../src/cli/render/wrap.js';

/** Help and banners fitted to a width: broken at spaces only, commands at the spaces a shell splits on. */

describe('shellWords: split where a shell splits, quotes kept', () => {
  test.each([
    ['carbon buy --kg 500', ['carbon', 'buy', '--kg', '500']],
    [`jq -r '.[] | select(.default=="test") | .secret'`, ['jq', '-r', `'.[] | select(.default=="test") | .secret'`]],
    ['a "b c \\" d" e', ['a', '"b c \\" d"', 'e']],
    ['a\\ b  c', ['a\\ b', 'c']],
    ['--route "POST /offsets"', ['--route', '"POST /offsets"']],
  ])('%s', (text, words) => {
    expect(shellWords(text)).toEqual(words);
  });
});

describe('wrapCommand', () => {
  const command = `carbon sandbox keys --reveal --json | jq -r '.[] | select(.default=="test") | .secret'`;

  test('as it is when it fits', () => {
    expect(wrapCommand('carbon balance', 80, '  $ ', '      ')).toEqual(['  $ carbon balance']);
  });

  test.each([30, 40, 60])('at %i: every line fits (but a word wider than the width), continued with \\, quotes never split', (width) => {
    const lines = wrapCommand(command, width, '  $ ', '      ');
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines.slice(0, -1)) expect(l).toMatch(/ \\$/);
    for (const l of lines) if (!l.includes("'")) expect(l.length).toBeLessThanOrEqual(width);
    expect(lines.join('\n').replace(/ \\\n {6}/g, ' ')).toBe(`  $ ${command}`);
  });
});

describe('wrapWords and fitLine', () => {
  test('words are never broken; a word wider than the width stands alone', () => {
    expect(wrapWords('aaa bbb ccc ddd', 7)).toEqual(['aaa bbb', 'ccc ddd']);
    expect(wrapWords('a verylongword b', 5)).toEqual(['a', 'verylongword', 'b']);
    expect(wrapWords('one two three', 9, '> ', '  ')).toEqual(['> one two', '  three']);
  });

  test('an item goes on under its description; a word too wide to follow its term goes under it', () => {
    expect(fitLine('    2  usage: bad options or arguments', 24)).toEqual(['    2  usage: bad', '       options or', '       arguments']);
    expect(fitLine('  developer page http://127.0.0.1:4010/login?token=abc', 40)).toEqual([
      '  developer page',
      '    http://127.0.0.1:4010/login?token=abc',
    ]);
  });

  test('fitHelpText: lines at the margin run on into a paragraph; indented lines stay items', () => {
    const text = 'Environment: A, B,\nC, D.\n\nExit codes:\n    0  success\n  130  interrupted by Ctrl-C';
    expect(fitHelpText(text, 20)).toBe(
      ['Environment: A, B,', 'C, D.', '', 'Exit codes:', '    0  success', '  130  interrupted', '       by Ctrl-C'].join('\n'),
    );
    expect(fitHelpText(text, 80)).toBe('Environment: A, B, C, D.\n\nExit codes:\n    0  success\n  130  interrupted by Ctrl-C');
  });
});
