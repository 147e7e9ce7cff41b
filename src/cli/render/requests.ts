import type { RequestEntry } from '../../api/journal.js';
import { type Column, type Layout, layout, lines, table } from './fit.js';
import { oneLine } from './format.js';
import type { Paint } from './resources.js';

/** The request journal as text (`carbon logs`): a table, plain rows, one entry whole. */

/**
 * Every path begins `/api/v1/`: cut below 20 cells it no longer says which endpoint (nor below 16
 * the result which error), and cut at all it may lose the offset it names. So INSTANCE and TIME go
 * before the path or the code is cut (a terminal of 120 columns shows the request's own columns
 * whole), and on a narrower one the two are cut before MS and RESULT go. On a phone's 40 columns,
 * where even the path at its shortest leaves no room for the request id, the path goes too: the id
 * is what `carbon logs show` is given, and a line cut at the edge would cut it.
 */
const TABLE: readonly Column[] = [
  { header: 'TIME', drop: 2 },
  // Dropped last, METHOD first: on a terminal too narrow for them and the id, the id whole.
  { header: 'STATUS', align: 'right', drop: 7 },
  { header: 'METHOD', drop: 6 },
  { header: 'PATH', min: 20, drop: 5, whole: 3 },
  { header: 'RESULT', min: 16, drop: 4, whole: 3 },
  { header: 'MS', align: 'right', drop: 3 },
  { header: 'REQUEST ID' },
  { header: 'INSTANCE', min: 8, drop: 1 },
];

const target = (e: RequestEntry) => oneLine(e.query === '' ? e.path : `${e.path}?${e.query}`);
const ms = (e: RequestEntry) => e.duration_ms.toFixed(1);
/** Model time, to the millisecond, as a row shows it. */
const time = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;

function statusText(status: number, paint: Paint): string {
  const text = String(status);
  return status >= 500 ? paint.red(text) : status >= 400 ? paint.yellow(text) : paint.green(text);
}

/** What a row says beside the status: the error's code, else `replayed`, else the offset. */
function code(e: RequestEntry, paint: Paint): string {
  if (e.error !== null) return e.error.code ?? e.error.type ?? '';
  if (e.replayed) return paint.cyan('replayed');
  return e.offset ?? '';
}

function cells(e: RequestEntry, paint: Paint): string[] {
  return [time(e.created), statusText(e.status, paint), e.method, target(e), code(e, paint), ms(e), e.id, e.instance];
}

export function requestTable(entries: readonly RequestEntry[], paint: Paint, width: number | undefined): string {
  return table(
    TABLE,
    entries.map((e) => cells(e, paint)),
    width,
    paint.dim,
  );
}

/** Rows of a stream (--follow), sized by the first batch, the header with it. */
export function requestStream(paint: Paint, width: number | undefined): (batch: readonly RequestEntry[]) => string {
  let at: Layout | undefined;
  return (batch) => {
    const rows = batch.map((e) => cells(e, paint));
    const first = at === undefined;
    at ??= layout(TABLE, rows, width);
    return lines(TABLE, at, rows, width, first ? paint.dim : undefined)
      .map((l) => `${l}\n`)
      .join('');
  };
}

/** A plain row: model time, real time, status, method, path?query, code, ms, id, key, mode, offset, replayed, instance. */
export function requestRow(e: RequestEntry): string {
  const mode = e.livemode === null ? '' : e.livemode ? 'live' : 'test';
  return [
    e.created,
    e.real_time,
    e.status,
    e.method,
    target(e),
    e.error?.code ?? '',
    ms(e),
    e.id,
    e.key_id ?? '',
    mode,
    e.offset ?? '',
    e.replayed,
    oneLine(e.instance),
  ].join('\t');
}

/** One entry whole: every field, then both bodies (JSON indented when they are JSON). */
export function requestCard(e: RequestEntry, paint: Paint): string {
  const dash = paint.dim('—');
  const rows: Array<[string, string]> = [
    ['request', paint.bold(e.id)],
    ['time', `${e.created} ${paint.dim(`(model time; real time ${e.real_time})`)}`],
    ['request line', `${e.method} ${target(e)}`],
    ['status', statusText(e.status, paint)],
    ...(e.error === null
      ? []
      : ([
          ['error', `${e.error.type ?? ''} ${e.error.code ?? ''}`.trim()],
          ['param', e.error.param === null ? dash : oneLine(e.error.param)],
          ['message', oneLine(e.error.message ?? '')],
        ] as Array<[string, string]>)),
    ['duration', `${ms(e)} ms`],
    ['key', e.key_id === null ? dash : `${e.key_id} (${e.livemode ? 'live' : 'test'})`],
    ['idempotency key', e.idempotency_key === null ? dash : `${oneLine(e.idempotency_key)}${e.replayed ? paint.cyan(' (replayed)') : ''}`],
    ['offset', e.offset ?? dash],
    ['instance', oneLine(e.instance)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const head = rows.map(([label, value]) => `${paint.dim(label.padEnd(width))}  ${value}`).join('\n');
  return `${head}\n\n${paint.bold('Request body')}\n${body(e.request_body, paint)}\n\n${paint.bold('Response body')}\n${body(e.response_body, paint)}\n`;
}

/** A body: indented JSON when it is JSON, else as it is; none said as such. */
function body(text: string, paint: Paint): string {
  if (text === '') return paint.dim('(none)');
  try {
    return shown(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    return shown(text);
  }
}

/**
 * A body as a terminal may print it: what any caller sent, so its control characters (but tab and
 * newline; CRLF as a newline) are written as --json writes them (`\u001b`), never sent to the
 * terminal, where an escape sequence would retitle or recolour it, or a bare CR write over a line.
 * C1 too (U+0080 to U+009F): JSON leaves them as they are, and U+009B is a CSI to some terminals.
 */
function shown(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) =>
      c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

/**
 * `carbon logs show` in a pipe: field TAB value, a line each. A caller's bodies are written with
 * their line ends, tabs and other control characters as --json writes them (`\n`, `\t`, `\u001b`):
 * each keeps to its line, and what was sent can still be told (a space could have been any of them).
 */
export function requestPlain(e: RequestEntry): string {
  const fields: Array<[string, string | number | boolean | null]> = [
    ['id', e.id],
    ['created', e.created],
    ['real_time', e.real_time],
    ['method', e.method],
    ['path', e.path],
    ['query', e.query],
    ['status', e.status],
    ['error_type', e.error?.type ?? null],
    ['error_code', e.error?.code ?? null],
    ['error_param', e.error?.param ?? null],
    ['error_message', e.error?.message ?? null],
    ['duration_ms', e.duration_ms],
    ['key_id', e.key_id],
    ['livemode', e.livemode],
    ['idempotency_key', e.idempotency_key],
    ['replayed', e.replayed],
    ['offset', e.offset],
    ['instance', e.instance],
    ['request_body', e.request_body],
    ['response_body', e.response_body],
  ];
  return `${fields.map(([k, v]) => `${k}\t${v === null ? '' : k.endsWith('_body') ? escaped(String(v)) : oneLine(String(v))}`).join('\n')}\n`;
}

/** Every control character as JSON writes it in a string (DEL and C1, which JSON leaves, as `\u007f`): a body on one line. */
const escaped = (text: string): string =>
  text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) =>
    c < ' ' ? JSON.stringify(c).slice(1, -1) : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
