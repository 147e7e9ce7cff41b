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
    const top = scanTopLevel(raw);
    if (top.duplicate !== undefined) return { ok: false, reason: `the body repeats the key "${top.duplicate}"` };
    // No field of a request takes a fraction, and JSON.parse reads `0.99999999999999999` as 1 and
    // `1000000.00000000001` as 1,000,000: a top-level number not whole as written is read as NaN,
    // which every field refuses. (Defined, not assigned: a key may be `__proto__`.)
    for (const key of top.notWhole)
      Object.defineProperty(value, key, { value: Number.NaN, writable: true, enumerable: true, configurable: true });
  }
  return { ok: true, value };
}

/**
 * Scans an already-valid JSON object text, once, at its top level: the first repeated key, and
 * the keys whose value is a number not whole as written.
 */
function scanTopLevel(raw: string): { duplicate?: string; notWhole: string[] } {
  const seen = new Set<string>();
  const notWhole: string[] = [];
  let depth = 0;
  let expectKey = false;
  let key: string | undefined;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      const start = i;
      for (i++; raw[i] !== '"'; i++) if (raw[i] === '\\') i++;
      if (depth === 1 && expectKey) {
        key = JSON.parse(raw.slice(start, i + 1)) as string;
        if (seen.has(key)) return { duplicate: key, notWhole };
        seen.add(key);
        expectKey = false;
      }
    } else if (c === ':' && depth === 1 && key !== undefined) {
      let at = i + 1;
      while (raw[at] === ' ' || raw[at] === '\t' || raw[at] === '\n' || raw[at] === '\r') at++;
      let end = at;
      while (end < raw.length && NUMBER_CHARS.includes(raw[end]!)) end++;
      if (end > at && !wholeAsWritten(raw.slice(at, end))) notWhole.push(key);
      i = end - 1;
      key = undefined;
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
    }
  }
  return { notWhole };
}

const NUMBER_CHARS = '-+.0123456789eE';

/** Whether a JSON number's text is a whole number (`2.0` and `1e3` are; `0.99999999999999999` is not). */
function wholeAsWritten(text: string): boolean {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) return true;
  const digits = m[1]! + (m[2] ?? '');
  // The digits past the decimal point, once the exponent has moved it, must all be zeros.
  const point = m[1]!.length + Number(m[3] ?? 0);
  return /^0*$/.test(digits.slice(Math.max(0, point)));
}
