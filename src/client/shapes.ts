import type { ApiResponse } from '../api/types.js';
import { CarbonAnswerError } from './errors.js';

/** The kind of object each of the API's answers is (its `object`). */
export type Shape = 'quote' | 'offset' | 'list' | 'balance' | 'impact';

/**
 * An answer that is not the object the API answers there (a wrong base URL, a proxy's page, another
 * service's JSON) is refused in one line, as an answer that is not JSON is (http-transport.ts),
 * rather than read as one: a balance is not shown as an offset, and a list's rows are the API's
 * offsets. The local model's answers are always of its shape.
 */
export function expectShape<T>(response: ApiResponse<T>, kind: Shape, method: string, path: string): ApiResponse<T> {
  const body = response.body as { object?: unknown; data?: unknown } | null | undefined;
  const object = typeof body === 'object' && body !== null ? body.object : undefined;
  const ok =
    object === kind &&
    (kind !== 'list' || (Array.isArray(body!.data) && body!.data.every((o) => (o as { object?: unknown } | null)?.object === 'offset')));
  const what = `${method} ${path.startsWith('/offsets/') ? '/offsets/{id}' : path}`;
  if (ok) return wholeNumbers(response, kind, what);
  const seen = typeof object === 'string' ? `an object ${JSON.stringify(object.slice(0, 40))}` : 'a body with no "object"';
  const rows = object === kind ? ' whose data are not all offsets' : '';
  throw new CarbonAnswerError(
    `The API answered ${what} with ${response.status} and ${seen}${rows}, where the API answers ${kind === 'offset' || kind === 'impact' ? 'an' : 'a'} ${kind}; is the base URL right?`,
  );
}

/** The spec's integer fields of cents and kg, in each object carbon shows a figure of. */
const WHOLE: Record<Exclude<Shape, 'list'>, readonly string[]> = {
  offset: ['kg', 'amount_cents'],
  quote: ['kg', 'amount_cents', 'available_cents'],
  balance: ['available_cents'],
  impact: ['placed_kg', 'processing_kg', 'offsets'],
};

/** An answer of the right object whose money or kg is not a whole number (`0.15`, `"12"`, missing) is refused, not shown as a figure. */
function wholeNumbers<T>(response: ApiResponse<T>, kind: Shape, what: string): ApiResponse<T> {
  const objects =
    kind === 'list'
      ? ((response.body as { data: unknown[] }).data as Record<string, unknown>[])
      : [response.body as Record<string, unknown>];
  const fields = WHOLE[kind === 'list' ? 'offset' : kind];
  for (const o of objects)
    for (const field of fields)
      if (!Number.isSafeInteger(o[field]))
        throw new CarbonAnswerError(
          `The API answered ${what} with ${response.status} and ${kind === 'list' ? 'an offset' : `${kind === 'offset' || kind === 'impact' ? 'an' : 'a'} ${kind}`} whose ${field} is ${JSON.stringify(o[field] ?? null).slice(0, 40)}, where the API answers a whole number; is the base URL right?`,
        );
  return response;
}
