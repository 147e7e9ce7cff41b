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
    // No field of a request takes a fraction, and JSON.parse reads `0.99999999999999999` as 1 and
    // `1000000.00000000001` as 1,000,000: a number not whole as written is read as NaN, which every
    // field refuses. (Text without a `.`, `e` or `E` holds no such number: no reviver to run.)
    value = /[.eE]/.test(raw) ? JSON.parse(raw, wholeAsWritten) : JSON.parse(raw);
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

/** A JSON number as its text says, or NaN when that text is not a whole number (`2.0` and `1e3` are). */
function wholeAsWritten(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(context.source);
  if (m === null) return value;
  const digits = m[1]! + (m[2] ?? '');
  // The digits past the decimal point, once the exponent has moved it, must all be zeros.
  const point = m[1]!.length + Number(m[3] ?? 0);
  return /^0*$/.test(digits.slice(Math.max(0, point))) ? value : Number.NaN;
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
