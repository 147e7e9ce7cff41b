/** What every page carbon serves shares: escaping, and the document around a page's body. */

/**
 * HTML for text and attribute values (double-quoted attributes). A NUL, which no HTML may hold (a
 * browser reads it as U+FFFD, a parser as an error), is written as that U+FFFD.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'\u0000]/g, (c) => `&#${c === '\u0000' ? 65533 : c.charCodeAt(0)};`);
}

/** Escaped, with its dates and hyphenated words (2026-12-05, drop-before) kept on one line: a narrow screen broke them at a hyphen. */
export function escapeWhole(value: string): string {
  return escapeHtml(value).replace(/\b[a-z0-9]+(?:-[a-z0-9]+)+\b/gi, (w) => `<span class="nw">${w}</span>`);
}

/**
 * HTML for text a caller wrote (a reference, a body, a path), shown as it was typed: its
 * bidirectional controls (an override, an embedding, an isolate, a mark) are shown as `[U+202E]`,
 * not obeyed, so `\u202Eabc-gnp.exe` does not read as `exe.png-cba` (the spoofed-name trick); so
 * are its other control characters but tab and line breaks (an escape sequence, a bell: in a file
 * read on a terminal, `carbon report --format html`, they would be obeyed there, and HTML counts
 * them as errors). For text only: an attribute's value (a form field's) keeps what was typed.
 */
export function escapeText(value: string): string {
  return escapeHtml(asTyped(value));
}

/** `text` with its bidirectional and control characters shown as `[U+202E]` (escapeText, before any other change to it). */
export function asTyped(text: string): string {
  return SHOWN.test(text) ? text.replace(SHOWN_ALL, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`) : text;
}
const SHOWN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const SHOWN_ALL = new RegExp(SHOWN.source, 'g');

/** A whole HTML document: `head` is markup added to the head (styles, scripts), `body` the body's. */
export function htmlDocument(title: string, head: string, body: string, bodyAttributes = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${head}
</head>
<body${bodyAttributes}>
${body}
</body>
</html>
`;
}
