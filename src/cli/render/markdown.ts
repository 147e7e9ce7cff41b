/**
 * Text made safe for a cell of a GitHub-flavoured Markdown table, whatever it holds (a
 * reference is the caller's free text). What HTML would read becomes an entity (`<`, `>`, `&`:
 * no tag, no entity of its own, no script); what Markdown would read is escaped with a
 * backslash (emphasis, code, links, images, strikethrough, the cell's own `|`, and `$`, which
 * Jupyter, Colab and other math-reading viewers take for a formula, across cells and rows); and a line break
 * of any kind, or another control character, becomes a space, so a row stays one line.
 */
export function markdownCell(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]+/g, ' ')
    .replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))
    .replace(/[\\`*_[\]|~!#()$]/g, (c) => `\\${c}`)
    .trim();
}
