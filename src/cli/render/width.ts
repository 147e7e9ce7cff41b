/**
 * Terminal cells, for tables (fit.ts) and for cli-table3, which draws them with this measure in
 * place of its own (cli-table3.ts). ANSI colour codes take no cells, combining marks none, East
 * Asian wide characters and emoji two (ranges after wcwidth; a terminal with other fonts may
 * disagree on rare ones).
 */

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// Made on first use: Unicode property classes cost ~0.4 ms to build, which every command would
// pay at start-up, tables or not.
let widthClasses: { zero: RegExp; wide: RegExp } | undefined;
const classes = () =>
  (widthClasses ??= {
    zero: /[\p{Mn}\p{Me}\p{Cf}\p{Cc}]/u,
    wide: /[\p{Emoji_Presentation}\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u,
  });

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

function charWidth(char: string): number {
  const { zero, wide } = classes();
  if (zero.test(char)) return 0;
  return wide.test(char) ? 2 : 1;
}

/** Terminal cells `text` takes. */
export function displayWidth(text: string): number {
  const plain = stripAnsi(text);
  // Nearly every cell is printable ASCII: one cell a character.
  if (/^[\x20-\x7e]*$/.test(plain)) return plain.length;
  let width = 0;
  for (const char of plain) width += charWidth(char);
  return width;
}

/**
 * `text` in at most `width` cells: as it is if it fits, else cut and ended with '…'. Its colour
 * codes are kept as they come (they take no cells), and a cut one ends with a reset, so no colour
 * runs on past it: a dimmed cell stays dimmed, cut or not.
 */
export function cut(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  let coloured = false;
  // Each colour code, then each run of text between two.
  parts: for (const part of text.split(ANSI_PARTS)) {
    if (part.startsWith('\u001b[')) {
      out += part;
      coloured = true;
      continue;
    }
    for (const char of part) {
      const w = charWidth(char);
      if (used + w > width - 1) break parts;
      out += char;
      used += w;
    }
  }
  return `${out}…${coloured ? '\u001b[0m' : ''}`;
}
const ANSI_PARTS = /(\u001b\[[0-9;?]*[ -/]*[@-~])/;
