import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The process's one pool of random bytes, and what is drawn from it: bytes, ids' text, UUIDs.
 * Bytes from the operating system's CSPRNG. On Linux and macOS they are read from /dev/urandom
 * (the same source node:crypto draws from), because loading node:crypto costs a one-shot command
 * such as `carbon buy` several milliseconds of its start-up; elsewhere, or if that fails, from
 * node:crypto (which the CLI's build loads only on that first use: scripts/build.mjs). Small
 * requests are served from a 4 KiB pool read at once, as node's randomUUID() batches: one
 * open/read/close per purchase cost an in-process purchase loop 13 % of its time.
 */
const POOL_SIZE = 4096;
let pool: Buffer = Buffer.alloc(0);
let used = 0;

export function randomBytes(size: number): Buffer {
  if (size > POOL_SIZE / 4) return readRandom(size);
  if (used + size > pool.length) {
    pool = readRandom(POOL_SIZE);
    used = 0;
  }
  const out = Buffer.from(pool.subarray(used, used + size));
  // Bytes handed out are not kept where they could be handed out again.
  pool.fill(0, used, used + size);
  used += size;
  return out;
}

/** One byte from the pool, refilled 4 KiB at a time (one call per character of an id must stay cheap). */
function nextByte(): number {
  if (used >= pool.length) {
    pool = readRandom(POOL_SIZE);
    used = 0;
  }
  const b = pool[used]!;
  pool[used++] = 0;
  return b;
}

/** The 62 letters and digits of ids and keys. */
export const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random base62 text (ids, API keys); 62 does not divide 256, so bytes ≥ 248 are skipped to stay uniform. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

/** `bytes` random bytes as lowercase hex. */
export function randomHex(bytes: number): string {
  let out = '';
  for (let i = 0; i < bytes; i++) out += nextByte().toString(16).padStart(2, '0');
  return out;
}

function readRandom(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  if (process.platform !== 'win32') {
    try {
      const fd = openSync('/dev/urandom', 'r');
      try {
        let done = 0;
        while (done < size) {
          const n = readSync(fd, bytes, done, size - done, null);
          if (n <= 0) throw new Error('short read from /dev/urandom');
          done += n;
        }
        return bytes;
      } finally {
        closeSync(fd);
      }
    } catch {
      // No /dev/urandom here (a chroot, a sandbox): node:crypto below.
    }
  }
  return cryptoRandomBytes(size);
}

/** A random (version 4) UUID, as crypto.randomUUID() makes: for Idempotency-Keys. */
export function randomUUID(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
