/** What every page carbon serves shares: escaping, and the document around a page's body. */

/** HTML for text and attribute values (double-quoted attributes). */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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
