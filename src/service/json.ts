/**
 * JSON for request bodies. JSON.parse silently keeps the last of two equal keys, so two
 * parsers (a proxy and this service, say) could read one body two ways; we refuse duplicate
 * top-level keys instead. Nested values are never valid request fields, so only the top
 * level needs the check.
 */
export type ParseResult = { ok: true; value: unknown } | { ok: false; reason: string };

export function parseJsonBody(raw: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    // RangeError covers absurdly deep nesting; SyntaxError everything else.
    return { ok: false, reason: err instanceof SyntaxError ? 'the body is not valid JSON' : 'the body is too deeply nested' };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const dup = firstDuplicateTopLevelKey(raw);
    if (dup !== undefined) return { ok: false, reason: `the body repeats the key "${dup}"` };
  }
  return { ok: true, value };
}

/** Scans an already-valid JSON object text and returns the first repeated top-level key. */
function firstDuplicateTopLevelKey(raw: string): string | undefined {
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      const start = i;
      for (i++; raw[i] !== '"'; i++) if (raw[i] === '\\') i++;
      if (depth === 1 && expectKey) {
        const key = JSON.parse(raw.slice(start, i + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
        expectKey = false;
      }
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
    }
  }
  return undefined;
}
