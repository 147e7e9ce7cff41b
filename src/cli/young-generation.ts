/**
 * Commands that stream a great many rows (`list --all`, `buy --from-csv`) make a few short-lived
 * objects a row and keep none of them. V8 grows its young generation to the rate they are made
 * at (semi-spaces of 16 to 32 MB on this machine's memory), which is resident memory the stream
 * never needs. Kept at its starting size, `list --all` over a million offsets peaks near 80 MB
 * RSS on Node 24 instead of 110 (BENCHMARKS.md, streaming), at the same speed.
 *
 * Node 22's V8 puts the growth factor back to 2 whenever a worker thread's heap is made (the
 * ledger's checkpointer starts with the first commit, the request journal's), and a stream gives
 * the event loop no turn in which to hear that a worker started: so the stream calls what this
 * returns once a batch, which sets it again (two microseconds on Node 22). Without it, `list --all`
 * peaked at 117 MB there.
 */
export async function keepYoungGenerationSmall(): Promise<() => void> {
  const v8 = await import('node:v8');
  const keep = () => v8.setFlagsFromString('--semi-space-growth-factor=1');
  keep();
  return keep;
}
