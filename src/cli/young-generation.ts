/**
 * Commands that stream a great many rows (`list --all`, `buy --from-csv`) make a few short-lived
 * objects a row and keep none of them. V8 grows its young generation to the rate they are made
 * at (semi-spaces of 16 to 32 MB on this machine's memory), which is resident memory the stream
 * never needs. Kept at its starting size, `list --all` over a million offsets peaks near 80 MB
 * RSS on Node 24 instead of 110 (BENCHMARKS.md, streaming), at the same speed.
 */
export async function keepYoungGenerationSmall(): Promise<void> {
  (await import('node:v8')).setFlagsFromString('--semi-space-growth-factor=1');
}
