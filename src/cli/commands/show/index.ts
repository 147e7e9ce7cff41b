import type { CommandSpec } from '../../command.js';
import { QUIET_FLAG } from '../../flags.js';

export const show: CommandSpec = {
  name: 'show',
  description: 'show one offset',
  args: [{ name: '<id>', description: 'the offset id (off_…)', values: 'offsetIds' }],
  flags: [
    { flags: '--wait', description: 'wait until it is placed or refunded' },
    { ...QUIET_FLAG, description: 'print only the offset id (for scripts)' },
  ],
  examples: ['carbon show off_3x8…', 'carbon show off_3x8… --wait --timeout 300'],
  load: () => import('./run.js').then((m) => m.run),
};
