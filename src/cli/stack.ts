import { readFileSync } from 'node:fs';
import type { SourceMap } from 'node:module';
import { dirname, join } from 'node:path';

/** What `SourceMap.findEntry` returns for a position it maps (an empty object otherwise). */
interface Entry {
  originalSource?: string;
  originalLine?: number;
  originalColumn?: number;
}

/**
 * A stack trace with the frames of carbon's bundles (`dist/cli.cjs`, minified: scripts/build.mjs)
 * read back to the TypeScript they were built from, through the source map beside each bundle.
 * For CARBON_DEBUG=1 only: a map is ~0.9 MB of JSON. (Node's --enable-source-maps does not reach
 * code that bin/carbon.cjs compiles with vm.Script.) A frame without a map stays as it is. The
 * function names stay the minified ones: a frame gives where the call is, not where its function
 * was declared.
 */
export function mappedStack(stack: string): string {
  // node:module is loaded here, not with the CLI: no start-up otherwise needs it.
  const { SourceMap } = process.getBuiltinModule('node:module');
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (file: string): SourceMap | null => {
    let map = maps.get(file);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
      maps.set(file, map);
    }
    return map;
  };
  return stack.replace(/((?:[A-Za-z]:)?[^\s():]+\.c?js):(\d+):(\d+)/g, (frame, file: string, line: string, column: string) => {
    const entry = mapOf(file)?.findEntry(Number(line) - 1, Number(column) - 1) as Entry | undefined;
    if (entry?.originalSource === undefined || entry.originalLine === undefined || entry.originalColumn === undefined) return frame;
    return `${join(dirname(file), entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}
