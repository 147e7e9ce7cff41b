import type { CommandSpec } from '../../command.js';

export const balance: CommandSpec = {
  name: 'balance',
  description: "the prepaid balance of the key's mode",
  examples: ['carbon balance', 'carbon balance --json | jq .available_cents'],
  load: () => import('./run.js').then((m) => m.run),
};
