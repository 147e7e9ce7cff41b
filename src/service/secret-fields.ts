/**
 * What the request journal keeps of the values an app sent under a secret's name (journal-note.ts):
 * a query's or a form's `password=***`, a JSON body's `"client_secret":"***"`.
 *
 * A value kept under one of these names is a secret, whatever its form: a short password or token
 * has no key's shape to be known by. Matched against the name lowercased with all but its letters
 * and digits taken out (`client_secret`, `X-Api-Key`, `accessToken`), as Sentry's and Stripe's
 * scrubbing names them. The API takes none of them (an unknown parameter or field is refused), but
 * the journal keeps what the app sent.
 */
const SECRET_NAME =
  /password|passwd|passphrase|pwd|secret|token|apikey|accesskey|privatekey|authorization|credential|signature|sessionid|cookie|^auth$|^key$|^sig$|^pass$/;
const secretName = (name: string) => SECRET_NAME.test(name.toLowerCase().replace(/[^a-z0-9]/g, ''));

/** A query, or a form's body: each `name=value` whose name is a secret's kept as `name=***`, the rest as it came. */
export function maskSecretParams(text: string): string {
  if (!text.includes('=')) return text;
  return text
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq === -1) return part;
      const [name = ''] = new URLSearchParams(part.slice(0, eq)).keys();
      return secretName(name) ? `${part.slice(0, eq)}=***` : part;
    })
    .join('&');
}

/** A URL with its query's secret-named parameters masked (maskSecretParams), as the journal keeps a query; the rest as it is. */
export function maskSecretQuery(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const hash = url.indexOf('#', q);
  const end = hash === -1 ? url.length : hash;
  return url.slice(0, q + 1) + maskSecretParams(url.slice(q + 1, end)) + url.slice(end);
}

/**
 * A body: a JSON text's members named as secrets kept with their whole value as "***" (a string, a
 * number, an object, an array: whatever its form but null), the rest exactly as sent; any other text as a
 * form's (a line end after it, a space in a value, are still a form's).
 */
export function maskSecretFields(body: string): string {
  const first = body.trimStart().replace(/^\uFEFF/, '')[0];
  return first === '{' || first === '[' ? maskJsonMembers(body) : maskSecretParams(body);
}

/**
 * One pass over a JSON text, string by string: a string followed by `:` is a member's name (read as
 * the app's parser reads it: `"pass\u0077ord"` is `password`), and a secret's value, to its end, is
 * replaced. Outside strings JSON has no `"`, so each one found starts a string. A text cut short
 * (not JSON) is masked to its end.
 */
function maskJsonMembers(body: string): string {
  let kept = '';
  let from = 0;
  let at = body.indexOf('"');
  while (at !== -1) {
    const end = stringEnd(body, at);
    let next = skipSpace(body, end);
    if (body[next] === ':' && secretName(memberName(body.slice(at + 1, end - 1)))) {
      next = skipSpace(body, next + 1);
      const valueEnd = valueEndAt(body, next);
      // null tells nothing: kept, so the entry shows the app sent none.
      if (body.slice(next, valueEnd) !== 'null') {
        kept += `${body.slice(from, next)}"***"`;
        from = valueEnd;
      }
      at = body.indexOf('"', valueEnd);
    } else at = body.indexOf('"', end);
  }
  return from === 0 ? body : kept + body.slice(from);
}

/** Where the string starting at `at` (its `"`) ends: past its closing quote, or the text's end. */
function stringEnd(text: string, at: number): number {
  let quote = text.indexOf('"', at + 1);
  while (quote !== -1) {
    let slashes = 0;
    while (text[quote - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) return quote + 1;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
}

/** Where the value starting at `at` ends: a string, an object or array (to its matching close), or a scalar. */
function valueEndAt(text: string, at: number): number {
  const open = text[at];
  if (open === '"') return stringEnd(text, at);
  if (open !== '{' && open !== '[') {
    let end = at;
    while (end < text.length && !/[,}\]\s]/.test(text[end]!)) end++;
    return end;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringEnd(text, i) - 1;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
  }
  return text.length;
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  return i;
}

/** A JSON member's name as the app's parser reads it: `"pass\u0077ord"` is `password`. */
function memberName(written: string): string {
  if (!written.includes('\\')) return written;
  try {
    return JSON.parse(`"${written}"`) as string;
  } catch {
    return written;
  }
}
