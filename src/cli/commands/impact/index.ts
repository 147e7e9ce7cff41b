import type { CommandSpec } from '../../command.js';

export const impact: CommandSpec = {
  name: 'impact',
  description: "kg offset through the API, for the key's mode",
  examples: ['carbon impact', 'carbon impact --live --json'],
  load: () => import('./run.js').then((m) => m.run),
};
