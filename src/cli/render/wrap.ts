import { displayWidth } from './width.js';

/**
 * Text fitted to a terminal's width without breaking a word (help, banners, hints): lines are
 * broken at spaces only, and a command line is broken at the spaces a shell splits on, with a
 * ` \` continuation, so that it still runs when pasted. A single word wider than the width (a
 * long URL) is left whole on a line of its own: cut, it would no longer work.
 */

/** The words of `text` a shell would split it into, each with its quotes (split at unquoted spaces). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== null) {
      word += c;
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"') word += text[++i] ?? '';
    } else if (c === '\\') word += c + (text[++i] ?? '');
    else if (c !== ' ') {
      if (c === "'" || c === '"') quote = c;
      word += c;
    } else if (word !== '') {
      words.push(word);
      word = '';
    }
  }
  if (word !== '') words.push(word);
  return words;
}

/**
 * A command line in `width` cells: `first` before its first line, `rest` before each following
 * one, every line but the last ended with ` \`. Broken only at unquoted spaces; as it is when it fits.
 */
export function wrapCommand(command: string, width: number, first: string, rest: string): string[] {
  if (displayWidth(first + command) <= width) return [first + command];
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of shellWords(command)) {
    if (!empty && displayWidth(`${line} ${word}`) + 2 > width) {
      lines.push(`${line} \\`);
      line = rest + word;
    } else line = empty ? line + word : `${line} ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** `text` (one line) in `width` cells, broken at spaces: `first` before the first line, `rest` before the others. */
export function wrapWords(text: string, width: number, first = '', rest = first): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(' ').filter((w) => w !== '')) {
    if (!empty && displayWidth(`${line} ${word}`) > width) {
      lines.push(line);
      line = rest + word;
    } else line = empty ? line + word : `${line} ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/**
 * A note under a table or a card, for a person: on a terminal (`width` known: render/fit.ts,
 * terminalWidth) broken at spaces to fit it, where the terminal would break it mid-word; elsewhere
 * one line, as a log keeps it.
 */
export function fitNote(text: string, width: number | undefined): string {
  return width === undefined ? text : wrapWords(text, width).join('\n');
}

/**
 * Help text (notes, epilogues, lists) in `width` cells. Lines that start at the margin run on into
 * one paragraph, reflowed; an indented line is an item of its own, wrapped under its description
 * (`  --flag  text`, `  0  success`) or two cells in; a line starting `$ ` (an example) is a command.
 */
export function fitHelpText(text: string, width: number): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(...wrapWords(paragraph.join(' '), width));
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    if (line.trim() === '') {
      flush();
      out.push('');
    } else if (indent === 0 && !line.endsWith(':')) paragraph.push(line);
    else {
      flush();
      out.push(...fitItem(line, indent, width));
    }
  }
  flush();
  return out.join('\n');
}

/** One line in `width` cells: an example (`$ carbon …`), or an item wrapped under its description. */
export function fitLine(line: string, width: number): string[] {
  return fitItem(line, line.length - line.trimStart().length, width);
}

/** One indented line: an example (`$ carbon …`), or an item wrapped under its description. */
function fitItem(line: string, indent: number, width: number): string[] {
  const body = line.slice(indent);
  const pad = ' '.repeat(indent);
  if (body.startsWith('$ ')) return wrapCommand(body.slice(2), width, `${pad}$ `, `${pad}    `);
  if (displayWidth(line) <= width) return [line];
  // `term  description`: continued under the description; otherwise two cells in.
  const gap = /^(\S+(?: \S+)*?) {2,}/.exec(body);
  const hang = gap !== null && gap[0].length < width / 2 ? indent + gap[0].length : indent === 0 ? 0 : indent + 2;
  const first = gap === null ? pad : pad + gap[0];
  const rest = gap === null ? body : body.slice(gap[0].length);
  // A word too wide to follow its term (a long URL) goes under it, two cells in.
  const head = rest.split(' ')[0]!;
  if (gap !== null && displayWidth(first + head) > width) return [pad + gap[0].trimEnd(), ...wrapWords(rest, width, `${pad}  `)];
  return wrapWords(gap === null ? body : body.slice(gap[0].length), width, first, ' '.repeat(hang));
}
