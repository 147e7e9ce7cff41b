import { createRequire, Module } from 'node:module';
import type CliTable3 from 'cli-table3';
import { displayWidth } from './width.js';

/**
 * cli-table3, which draws carbon's tables (fit.ts), loaded on the first table drawn and measuring
 * a cell as fit.ts does. It measures with string-width 4, whose idea of a cell is not always
 * fit.ts's (✌ two cells, ㉈ one, a Hebrew vowel point or a soft hyphen one): a cell measured
 * otherwise would be padded or cut otherwise, and its line would not be as wide as fit.ts planned.
 * So cli-table3 is handed `displayWidth` in string-width's place:
 *
 * - in the built CLI, scripts/build.mjs puts this module's `cliTable3` over dist/vendor/cli-table3.cjs,
 *   a bundle of cli-table3 whose string-width is a stand-in that measures with the function it is
 *   given (`displayWidth`, cli.cjs's own: one copy, one set of Unicode classes);
 * - from the sources (the tests), this module loads the package from node_modules with
 *   `displayWidth` in require's cache in string-width's place while cli-table3 loads (cli-table3
 *   reads it once, when it loads), and string-width's entry as it was afterwards.
 */

export type Table = typeof CliTable3;

let loaded: Table | undefined;

export function cliTable3(): Table {
  return (loaded ??= load());
}

function load(): Table {
  const require = createRequire(import.meta.url);
  const stringWidth = createRequire(require.resolve('cli-table3')).resolve('string-width');
  const saved = require.cache[stringWidth];
  const measure = new Module(stringWidth);
  measure.filename = stringWidth;
  measure.loaded = true;
  measure.exports = displayWidth;
  require.cache[stringWidth] = measure;
  try {
    return require('cli-table3') as Table;
  } finally {
    if (saved === undefined) delete require.cache[stringWidth];
    else require.cache[stringWidth] = saved;
  }
}
