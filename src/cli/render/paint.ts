import { Chalk } from 'chalk';
import { noPaint, type Paint } from './resources.js';

/** chalk at a level we chose (output.ts decided whether colour is on), never its own guess. */
export function makePaint(on: boolean): Paint {
  if (!on) return noPaint;
  const chalk = new Chalk({ level: 1 });
  return { bold: chalk.bold, dim: chalk.dim, green: chalk.green, yellow: chalk.yellow, red: chalk.red, cyan: chalk.cyan };
}
