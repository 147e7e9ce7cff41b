import type { Output } from '../output.js';

/** A progress bar on stderr (ora) when stderr is a terminal; nothing at all otherwise. */
export interface Progress {
  update(done: number, total: number, note?: string): void;
  stop(): void;
}

/** No bar: where stderr is no terminal, or while a person types on it. */
export const SILENT: Progress = { update() {}, stop() {} };

function bar(done: number, total: number, cells = 20): string {
  const full = total === 0 ? cells : Math.round((done / total) * cells);
  return `${'█'.repeat(full)}${'░'.repeat(cells - full)}`;
}

export async function progress(out: Output, verb: string): Promise<Progress> {
  // As for --wait's spinner (offsets/wait.ts): a pty nobody sized reports 0 columns, and ora never clears there.
  if (!out.spinners || (out.stderr as { columns?: number }).columns === 0) return SILENT;
  const { default: ora } = await import('ora');
  // --no-color and NO_COLOR reach its spinner too (ora's own colours know neither).
  const spinner = ora({
    text: verb,
    stream: out.stderr,
    isEnabled: true,
    discardStdin: false,
    color: out.stderrColor ? 'cyan' : false,
  }).start();
  let drawn = 0;
  return {
    update(done, total, note) {
      spinner.text = `${verb} ${bar(done, total)} ${done}/${total}${note === undefined ? '' : ` · ${note}`}`;
      // On the local engine a purchase never waits for I/O, so ora's timer would not get a turn:
      // drawn here, ten times a second at most.
      const now = Date.now();
      if (now - drawn >= 100) {
        drawn = now;
        spinner.render();
      }
    },
    stop: () => spinner.stop(),
  };
}
