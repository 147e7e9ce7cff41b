/**
 * SHA-256 (FIPS 180-4) in plain JavaScript: a stand-in for node:crypto's
 * `createHash('sha256')`, for the API key digests (service/keys.ts, and the stores' key lookups).
 *
 * Why not node:crypto: loading it pulls in some 35 of Node's internal modules (streams among
 * them), ~3.5 ms of every `carbon balance` on a machine where the whole command takes ~40.
 * A command needs a digest of a 40-character key or two, which this computes in microseconds;
 * random bytes come from the OS without node:crypto too (random.ts), so neither a read nor a
 * write loads it. Checked against node:crypto on the FIPS examples and on random inputs
 * (test/service/keys.test.ts).
 *
 * Written for V8's interpreter, which is what runs it in a command that hashes one key: the
 * rotations inline (no call in the 64 rounds), every value kept an int32, so none is boxed as a
 * heap number. 0.2 % of a `carbon balance`'s instructions against the version with a rotr()
 * helper and Uint32Arrays (BENCHMARKS.md).
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const H0 = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
/** The message schedule and the hash state, reused by every digest. */
const W = new Int32Array(64);
const H = new Int32Array(8);

export function sha256(data: Uint8Array): Buffer {
  const blocks = padded(data);
  H.set(H0);
  for (let offset = 0; offset < blocks.length; offset += 64) compress(blocks, offset);
  const out = Buffer.allocUnsafe(32);
  for (let i = 0; i < 8; i++) out.writeInt32BE(H[i]!, i * 4);
  return out;
}

/** The message, a 1 bit, zeros, and its length in bits (64-bit big-endian): whole 64-byte blocks. */
function padded(data: Uint8Array): Uint8Array {
  const n = data.length;
  const blocks = new Uint8Array((((n + 8) >> 6) + 1) << 6);
  blocks.set(data);
  blocks[n] = 0x80;
  const end = blocks.length;
  const hi = Math.floor(n / 0x20000000);
  const lo = (n * 8) >>> 0;
  for (let i = 0; i < 4; i++) {
    blocks[end - 8 + i] = hi >>> (24 - 8 * i);
    blocks[end - 4 + i] = lo >>> (24 - 8 * i);
  }
  return blocks;
}

/** Folds the 64-byte block at `o` into H. */
function compress(blocks: Uint8Array, o: number): void {
  for (let i = 0; i < 16; i++) {
    const j = o + i * 4;
    W[i] = (blocks[j]! << 24) | (blocks[j + 1]! << 16) | (blocks[j + 2]! << 8) | blocks[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15]!;
    const y = W[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (((W[i - 16]! + s0) | 0) + ((W[i - 7]! + s1) | 0)) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (((((h + S1) | 0) + ((e & f) ^ (~e & g))) | 0) + ((K[i]! + W[i]!) | 0)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}
