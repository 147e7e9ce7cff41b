import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Bytes from the operating system's CSPRNG. On Linux and macOS they are read from /dev/urandom
 * (the same source node:crypto draws from), because loading node:crypto costs a one-shot command
 * such as `carbon buy` several milliseconds of its start-up; elsewhere, or if that fails, from
 * node:crypto (which the CLI's build loads only on that first use: scripts/build.mjs).
 */
export function randomBytes(size: number): Buffer {
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
