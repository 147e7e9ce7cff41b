import type { CommandSpec } from '../../command.js';
import { purchaseFlags } from '../../flags.js';

export const quote: CommandSpec = {
  name: 'quote',
  description: 'what a purchase would buy and cost; buys nothing',
  get flags() {
    return purchaseFlags();
  },
  examples: ['carbon quote --kg 500', 'carbon quote --amount-cents 1250 --json | jq .kg'],
  load: () => import('./run.js').then((m) => m.run),
};
