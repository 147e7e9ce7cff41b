import { closeSync, createReadStream, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { CHUNK, decode, csvRefusal as refuse } from './encoding.js';

/**
 * The records of a `--from-csv` file, streamed: the bytes are decoded and parsed a chunk at a
 * time, so a file of any length is read in constant memory, and a record that never ends (an
 * unclosed quote) is refused once it passes MAX_RECORD, not at the end of the file.
 */

/** The longest record carbon reads: a purchase is a few short cells. */
const MAX_RECORD = 64 * 1024;

export interface CsvRecord {
  cells: string[];
  /** The line of the file the record starts on (1 is the header). */
  line: number;
}

export type Delimiter = ',' | ';' | '\t';

/** Why `file` cannot be read, as a sentence (nothing was bought: the file is read before anything is). */
function unreadable(file: string, err: NodeJS.ErrnoException): CliError {
  const name = file === '-' ? 'stdin' : file;
  const why: Record<string, string> = {
    ENOENT: `There is no file ${name}`,
    EACCES: `${name} cannot be read: permission denied`,
    EPERM: `${name} cannot be read: permission denied`,
    EISDIR: `${name} is a directory, not a CSV file`,
  };
  const sentence = why[err.code ?? ''] ?? `${name} cannot be read (${err.message})`;
  return new CliError(`${sentence}; nothing was bought.`, EXIT.usage, 'csv_unreadable');
}

/** The file (or stdin, for `-`) as a stream of bytes; a file that cannot be opened is refused at once. */
async function openStream(file: string): Promise<Readable> {
  if (file === '-') return process.stdin;
  if (file === '') throw refuse('--from-csv needs a file (or - for stdin), and was given an empty name; nothing was bought.');
  let fd: number;
  try {
    fd = openSync(file, 'r');
    if (fstatSync(fd).isDirectory()) {
      closeSync(fd);
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    }
  } catch (err) {
    throw unreadable(file, err as NodeJS.ErrnoException);
  }
  return createReadStream('', { fd, highWaterMark: CHUNK });
}

/**
 * A batch's file, read twice: first from where it is (checking every row), while its bytes are
 * copied to a private temporary file; then from that copy (buying, or a dry run's rows). The copy
 * is what was checked, byte for byte, whatever happens to the file (or stdin) meanwhile, and it
 * is removed when the batch ends.
 */
export class BatchInput {
  private current: Readable | undefined;
  private delimiter: Delimiter = ',';

  private constructor(
    private readonly file: string,
    private readonly spool: { dir: string; path: string },
  ) {}

  static async open(file: string): Promise<BatchInput> {
    const stream = await openStream(file);
    const dir = mkdtempSync(join(tmpdir(), 'carbon-batch-'));
    const input = new BatchInput(file, { dir, path: join(dir, 'batch.csv') });
    input.current = stream;
    return input;
  }

  /** The records of the file itself, each chunk copied to the spool as it is read. */
  async *first(): AsyncGenerator<CsvRecord> {
    const fd = openSync(this.spool.path, 'wx', 0o600);
    const stream = this.current!;
    async function* copied(): AsyncGenerator<Buffer | string> {
      for await (const chunk of stream as AsyncIterable<Buffer | string>) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        writeSync(fd, bytes);
        yield bytes;
      }
    }
    try {
      yield* readRecords(copied(), stream, (d) => (this.delimiter = d));
    } finally {
      closeSync(fd);
      this.current = undefined;
    }
  }

  /** The records again, from the spool: the bytes that were checked. */
  async *again(): AsyncGenerator<CsvRecord> {
    const stream = await openStream(this.spool.path);
    this.current = stream;
    try {
      yield* readRecords(stream as AsyncIterable<Buffer>, stream, () => {});
    } finally {
      this.current = undefined;
    }
  }

  /** The delimiter the header chose. */
  get style(): Delimiter {
    return this.delimiter;
  }

  /** Stops the reading under way: its loop throws `err`. */
  interrupt(err: Error): void {
    this.current?.destroy(err);
  }

  /** Removes the spool. */
  async close(): Promise<void> {
    this.current?.destroy();
    rmSync(this.spool.dir, { recursive: true, force: true });
  }

  get name(): string {
    return this.file;
  }
}

/**
 * The delimiter, from the header line: a comma, or else semicolons or tabs when the line has
 * none (a spreadsheet saved in a locale whose decimal mark is the comma, or pasted from one).
 */
function delimiterOf(header: string): Delimiter {
  return header.includes(',') ? ',' : header.includes(';') ? ';' : header.includes('\t') ? '\t' : ',';
}

/** The text up to the header line's end (or MAX_RECORD), and whether that was all of it. */
async function headOf(text: AsyncGenerator<string>): Promise<{ head: string; done: boolean }> {
  let head = '';
  while (!/[\r\n]/.test(head) && head.length < MAX_RECORD) {
    const next = await text.next();
    if (next.done) return { head, done: true };
    head += next.value;
  }
  return { head, done: false };
}

async function parserFor(delimiter: Delimiter) {
  const { parse } = await import('csv-parse');
  return parse({
    delimiter,
    skip_empty_lines: true,
    // A line of empty cells (a spreadsheet's trailing rows) is a blank line too.
    skip_records_with_empty_values: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD,
    // The line a record ends on, put in front of its cells (one array a record, not csv-parse's
    // info object and a wrapper: the fewer objects a row makes, the smaller the young generation).
    on_record: (record: string[], context: { lines: number }) => {
      record.unshift(String(context.lines));
      return record;
    },
  });
}

type Parser = Awaited<ReturnType<typeof parserFor>>;

/** Writes the text to the parser as the parser is read: one chunk ahead, never the whole file. */
async function feed(parser: Parser, head: string, rest: AsyncGenerator<string> | null): Promise<void> {
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        parser.off('drain', done);
        parser.off('close', done);
        resolve();
      };
      parser.on('drain', done);
      parser.on('close', done);
    });
  try {
    if (!parser.write(head)) await drained();
    if (rest !== null) {
      for await (const chunk of rest) {
        if (parser.destroyed) return;
        if (!parser.write(chunk)) await drained();
      }
    }
    if (!parser.destroyed) parser.end();
  } catch (err) {
    parser.destroy(err as Error);
  }
}

/** A parser's error as the refusal of the file; `after` is the line the last whole record ended on. */
function unparsable(err: unknown, after: number): Error {
  if (err instanceof CliError) return err;
  const e = err as Error & { code?: string };
  if (e.code === 'CSV_MAX_RECORD_SIZE') {
    return refuse(
      `The CSV cannot be read: the row after line ${after} runs on past ${MAX_RECORD / 1024} KiB (an unclosed quote?). Nothing was bought.`,
    );
  }
  // csv-parse names the line ("… at line 4"); its three quote errors said in carbon's words (its
  // fields count from 0: a person's cells from 1), any other in its own.
  const line = /at line (\d+)/.exec(e.message)?.[1];
  const closed = /got "(.*?)" at line/.exec(e.message)?.[1];
  const opened = /on field (\d+) at line \d+, value is (".*")$/.exec(e.message);
  const why =
    e.code === 'CSV_QUOTE_NOT_CLOSED' && line !== undefined
      ? `a quote is still open at the end of the file (line ${line}): a cell that starts with " must end with "`
      : e.code === 'CSV_INVALID_CLOSING_QUOTE' && line !== undefined && closed !== undefined
        ? `on line ${line}, a quoted cell goes on after its closing quote (${JSON.stringify(closed)}); write a quote inside a quoted cell twice ("")`
        : e.code === 'INVALID_OPENING_QUOTE' && line !== undefined && opened !== null
          ? `on line ${line}, cell ${Number(opened[1]) + 1} has a quote after its start (${opened[2]}); a cell holding a quote is quoted whole, each quote in it written twice ("a ""b"" c")`
          : e.message;
  return refuse(`The CSV cannot be read: ${why}. Nothing was bought.`);
}

/**
 * The records of the bytes, each with the line it starts on; `onDelimiter` is told the delimiter
 * the header line chose. `input` is the stream under the bytes, destroyed when the reading ends.
 */
async function* readRecords(
  bytes: AsyncIterable<Buffer | string>,
  input: Readable,
  onDelimiter: (d: Delimiter) => void,
): AsyncGenerator<CsvRecord> {
  const text = decode(bytes);
  // The header line decides the delimiter.
  const { head, done } = await headOf(text);
  const delimiter = delimiterOf(/^[^\r\n]*/.exec(head)![0]);
  onDelimiter(delimiter);
  const parser = await parserFor(delimiter);
  const feeding = feed(parser, head, done ? null : text);
  let ends = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      ends = Number(record.shift());
      // A record spans as many lines as its line breaks: it starts that many lines before its end.
      let breaks = 0;
      for (const cell of record) for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) breaks++;
      yield { cells: record, line: ends - breaks };
    }
  } catch (err) {
    throw unparsable(err, ends);
  } finally {
    if (!parser.destroyed) parser.destroy();
    input.destroy();
    await feeding.catch(() => {});
  }
}
