import type { CommandSpec } from '../../command.js';

/** `carbon __complete`: what the completion scripts ask for the word being completed (see run.ts). */
export const complete: CommandSpec = {
  name: '__complete',
  description: 'used by the completion scripts: the candidates for the word being completed',
  settings: 'bare',
  hidden: true,
  lenient: true,
  load: () => import('./run.js').then((m) => m.run),
};
