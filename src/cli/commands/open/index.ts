import type { CommandSpec } from '../../command.js';

export const open: CommandSpec = {
  name: 'open',
  description: "the offset's certificate: in the browser, or its address with --print (no display: printed)",
  args: [{ name: '<id>', description: 'a placed live offset (off_…)' }],
  flags: [{ flags: '--print', description: "print the certificate's address (a file on the local engine) instead of opening it" }],
  examples: ['carbon open off_3x8…', 'carbon open off_3x8… --print'],
  load: () => import('./run.js').then((m) => m.run),
};
