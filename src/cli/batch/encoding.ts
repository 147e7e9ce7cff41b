import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

/**
 * A `--from-csv` file's bytes as text: UTF-8, or refused with how to save it. A file that is not
 * text at all (a workbook, an archive, an image, a program) is named as what its first bytes say
 * it is, not taken for text in another encoding.
 */

/**
 * The bytes read and decoded at a time. Small on purpose: the records of a chunk are alive
 * together, and V8 grows its young generation to what survives its collections (64 KiB chunks
 * took the peak of a 300,000-row check from about 110 MB to 180 MB).
 */
export const CHUNK = 4 * 1024;

/** A refusal of the file: a usage error (exit 2), nothing bought. */
export const csvRefusal = (message: string, hint?: string) => new CliError(message, EXIT.usage, 'csv_invalid', hint);

const SAVE_AS_CSV = 'Open it in its program and save it as "CSV UTF-8" (Excel: File > Save As), then give carbon that file.';

/** What a file's first bytes say it is, by its signature, and the way on. */
const SIGNATURES: Array<{ bytes: number[]; what: string; hint: string }> = [
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'a zip archive, as an Excel (.xlsx) or OpenDocument (.ods) workbook is', hint: SAVE_AS_CSV },
  { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], what: 'an Excel 97–2003 workbook (.xls)', hint: SAVE_AS_CSV },
  {
    bytes: [0x1f, 0x8b],
    what: 'gzip-compressed',
    hint: 'Decompress it first (gunzip -k FILE), or pipe it in: gunzip -c FILE | carbon buy --from-csv -.',
  },
  { bytes: [0x25, 0x50, 0x44, 0x46], what: 'a PDF document', hint: 'Export the table as CSV UTF-8 from the program that made it.' },
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image', hint: 'Give carbon the CSV file itself.' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image', hint: 'Give carbon the CSV file itself.' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: 'a program (ELF)', hint: 'Give carbon the CSV file itself.' },
  {
    bytes: [...Buffer.from('SQLite format 3\0', 'latin1')],
    what: 'an SQLite database',
    hint: 'Export the table as CSV (sqlite3 -csv -header FILE "SELECT …").',
  },
];

/**
 * Zero bytes among the first 512 past which a file is binary, not text with a stray NUL in a cell
 * (that one is the cell's to refuse, row by row, as any control character).
 */
const BINARY_ZEROS = 8;

/**
 * Throws when the first bytes say the file is not UTF-8 text: a known signature (a workbook, an
 * archive), UTF-16 (a byte-order mark, or zero bytes beside ASCII ones, all at even or all at odd
 * offsets), or zero bytes past BINARY_ZEROS otherwise.
 */
function refuseNonText(head: Uint8Array): void {
  const signed = SIGNATURES.find((s) => s.bytes.every((b, i) => head[i] === b));
  if (signed !== undefined) throw csvRefusal(`The file is not text: it is ${signed.what}. Nothing was bought.`, signed.hint);
  const n = Math.min(head.length, 512);
  const zeros = [0, 0];
  for (let i = 0; i < n; i++) if (head[i] === 0) zeros[i % 2]!++;
  const bom = (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff);
  if (bom || (n >= 4 && Math.max(zeros[0]!, zeros[1]!) >= n / 4 && Math.min(zeros[0]!, zeros[1]!) === 0)) {
    throw csvRefusal(
      'The CSV is UTF-16 text (Excel\'s "Unicode Text"); carbon reads UTF-8. Nothing was bought.',
      'Save it as "CSV UTF-8" (Excel) or convert it: iconv -f UTF-16 -t UTF-8 FILE > FILE-utf8.csv.',
    );
  }
  if (zeros[0]! + zeros[1]! >= BINARY_ZEROS)
    throw csvRefusal('The file is not text: it holds binary data (zero bytes). Nothing was bought.', SAVE_AS_CSV);
}

const notUtf8 = () =>
  csvRefusal(
    'The CSV is not UTF-8 text; nothing was bought.',
    'Save it as "CSV UTF-8" (Excel) or convert it: iconv -f WINDOWS-1252 -t UTF-8.',
  );

/** The text of the byte stream, a chunk at a time: UTF-8 (a BOM is dropped), or refused with how to save it. */
export async function* decode(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let first = true;
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (first && bytes.length > 0) {
      refuseNonText(bytes);
      first = false;
    }
    // A pipe's chunks (up to 64 KiB) are parsed CHUNK bytes at a time too.
    for (let at = 0; at < bytes.length; at += CHUNK) {
      try {
        yield decoder.decode(bytes.subarray(at, at + CHUNK), { stream: true });
      } catch {
        throw notUtf8();
      }
    }
  }
  try {
    yield decoder.decode();
  } catch {
    throw notUtf8();
  }
}
