import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { usage } from './errors.js';

/**
 * Node reads the command line's bytes as UTF-8 and puts U+FFFD in place of any that are not, so a
 * Latin-1 `build-\xe9` and `build-\xe8` (a CI variable in another encoding) would both become
 * `build-�`: one idempotency key for two purchases, a reference not as it was sent. An argument
 * holding U+FFFD is refused (a usage error, exit 2) unless the command line's own bytes are all
 * UTF-8 (Linux's /proc/self/cmdline: then U+FFFD was typed as such); where they cannot be read, it
 * is refused all the same. The value is not echoed: it may be a key.
 */
export function refuseNonUtf8Arguments(argv: readonly string[], rawArgs: () => Buffer[] | undefined = procCmdline): void {
  const at = argv.findIndex((arg) => arg.includes('\uFFFD'));
  if (at === -1) return;
  const raw = rawArgs();
  // The command's own arguments are the last ones (before them: node, its flags, the script).
  if (raw !== undefined && raw.length >= argv.length && raw.slice(raw.length - argv.length).every((arg) => isUtf8(arg))) return;
  const arg = argv[at]!;
  const flag =
    arg.startsWith('--') && arg.includes('=')
      ? arg.slice(0, arg.indexOf('='))
      : at > 0 && argv[at - 1]!.startsWith('-')
        ? argv[at - 1]
        : undefined;
  throw usage(
    `${flag === undefined ? `Argument ${at + 1}` : `The value of ${flag}`} is not UTF-8 text: bytes that are not UTF-8 would be read as U+FFFD, so two different values could become one; nothing was done.`,
    'Give it in UTF-8 (iconv -f latin1 -t utf-8 converts Latin-1 text).',
  );
}

/** The command line's arguments as bytes, or undefined where there is no /proc. */
function procCmdline(): Buffer[] | undefined {
  try {
    const all = readFileSync('/proc/self/cmdline');
    const parts: Buffer[] = [];
    for (let start = 0, end = all.indexOf(0); end !== -1; start = end + 1, end = all.indexOf(0, start))
      parts.push(all.subarray(start, end));
    return parts;
  } catch {
    return undefined;
  }
}
