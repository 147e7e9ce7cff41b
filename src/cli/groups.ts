import type { Command } from 'commander';
import { usage } from './errors.js';
import type { GlobalOptions } from './settings.js';

/**
 * What a group of commands (`carbon`, `carbon sandbox`, `carbon sandbox keys`) does with a word
 * that is none of its commands, and with `help`: the registry (registry.ts) sets these on each
 * group it builds. commander's own answers were help on stderr with exit 0, or an error naming
 * the wrong word; these make them the usage error `carbon bogus` is, or the help asked for.
 */

/**
 * A group that does nothing alone (`carbon`, `carbon config`, `carbon sandbox`) prints its help on
 * stdout and exits 0, as `gh`, `git` and `npm` do, and as `--help` does: asked for or not, help is
 * not an error. (commander's own answer is the help on stderr, as after a usage error.) A word
 * that is none of its commands is still one, with commander's suggestion. With --json it is a
 * usage error (the envelope on stderr, nothing on stdout): a script that asked for JSON never
 * gets prose where it reads JSON. Help asked for by name (`--help`, `carbon help`) is still help.
 */
export function helpWhenBare(cmd: Command): void {
  // An action would turn off the implicit `help` command (`carbon help buy`): kept on by name.
  cmd
    .helpCommand(true)
    .allowExcessArguments()
    .action(() => {
      if (cmd.args.length > 0) (cmd as Group).unknownCommand();
      if (cmd.optsWithGlobals<GlobalOptions>().json === true) {
        const path = pathOf(cmd);
        throw usage(`${path} --json needs a command: only a command prints JSON (\`${path} help\` lists them).`);
      }
      cmd.help();
    });
  wordBeforeOptionsIsTheError(cmd, cmd);
}

/** commander's own methods that name an unknown command or option, and run `help X` or a command (not in its typings). */
type Group = Command & {
  unknownCommand(): never;
  unknownOption(flag: string): never;
  _dispatchHelpCommand(name?: string): unknown;
  _dispatchSubcommand(name: string, operands: string[], unknown: string[]): unknown;
};

/**
 * `carbon help X` is `carbon X`'s help, or the usage error `carbon X` is, with the suggestion.
 * commander printed the whole help on stderr for a name that is none of the group's commands, and
 * ended as help does (exit 0); it read one word, so `carbon help sandbox bye` was sandbox's help
 * (exit 0) where `carbon sandbox bye` is the error, and `carbon help sandbox keys create` was
 * sandbox's help too. The words after a group are its commands: `help sandbox bye` is
 * `sandbox help bye`. `help` is a command of every group, not in `commands`: `help help` is the
 * group's help (it was "unknown command 'help' (Did you mean help?)").
 */
export function helpNamesACommand(cmd: Command): void {
  const self = cmd as Group;
  const dispatch = self._dispatchHelpCommand.bind(self);
  self._dispatchHelpCommand = (name) => {
    if (name === undefined || name === 'help') return cmd.help();
    const named = cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (named === undefined) {
      cmd.args = [name];
      return self.unknownCommand();
    }
    // cmd.args: `help`, the name, the words after it, then from the first option commander did not know.
    const after = cmd.args.slice(2);
    const options = after.findIndex((word) => word.startsWith('-'));
    const words = options === -1 ? after : after.slice(0, options);
    if (named.commands.length > 0 && words.length > 0) {
      return self._dispatchSubcommand(name, ['help', ...words], after.slice(words.length));
    }
    // A command that is not a group shows its help, whatever follows (as `carbon balance extra --help` does).
    return dispatch(name);
  };
}

/** The group an unknown command was none of, by its words (`carbon sandbox`): where its commands are listed. */
const unknownIn = new WeakMap<Error, string>();

/**
 * What follows "unknown command 'X'": commander's suggestion when one is close, else where the
 * group's commands are listed. "(add --help for usage)" sent `carbon help bye` to `--help`, and
 * `carbon bye --help` is carbon's help, not bye's.
 */
export function unknownCommandHint(err: Error): string | undefined {
  if (err.message.includes('\n(Did you mean')) return undefined;
  return `(\`${unknownIn.get(err) ?? 'carbon'} help\` lists the commands)`;
}

/**
 * A group's other commands, given a flag of its default command (`carbon logs show req_… --follow`):
 * commander suggests from the group's options too, which name the default's (registry.ts,
 * helpNamesDefaultFlags), so it said "unknown option '--follow' (Did you mean --follow?)". Said as
 * whose option it is instead.
 */
export function defaultFlagsNamedAsSuch(group: Command, fallback: Command): void {
  for (const sub of group.commands) {
    if (sub === fallback) continue;
    const self = sub as Group;
    const unknownOption = self.unknownOption.bind(self);
    self.unknownOption = (flag: string) => {
      const name = flag.split('=')[0]!;
      if (!fallback.options.some((o) => o.long === name || o.short === name)) return unknownOption(flag);
      throw usage(
        `unknown option '${name}': it is an option of \`${pathOf(fallback)}\`, not of \`${pathOf(sub)}\`.`,
        '(add --help for usage)',
      );
    };
  }
}

/** Keeps, with the error commander throws for an unknown command, the group it was none of. */
export function unknownCommandNamesItsGroup(cmd: Command): void {
  const self = cmd as Group;
  const unknownCommand = self.unknownCommand.bind(self);
  self.unknownCommand = () => {
    try {
      return unknownCommand();
    } catch (err) {
      if (err instanceof Error) unknownIn.set(err, pathOf(cmd));
      throw err;
    }
  };
}

/** A command's words: `carbon sandbox keys`. */
function pathOf(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/**
 * `carbon byu --kg 5`: commander checks the options before the action that names the unknown
 * command, so the error was `unknown option '--kg'`, an option of the command meant. A word
 * before the options is what is wrong: the unknown command, with commander's suggestion.
 * (`cmd` runs the action; `group`, the command whose commands the word is none of.)
 */
function wordBeforeOptionsIsTheError(cmd: Command, group: Command): void {
  const self = cmd as Group;
  const unknownOption = self.unknownOption.bind(self);
  self.unknownOption = (flag) => {
    const word = cmd.args[0];
    if (word !== undefined && !word.startsWith('-')) {
      group.args = cmd.args;
      (group as Group).unknownCommand();
    }
    return unknownOption(flag);
  };
}

/**
 * A group's default command (`carbon sandbox faults` is `faults show`) takes no words, so a word
 * after the group is a command it does not have: `carbon sandbox faults clear` says so, with
 * commander's suggestion, as `carbon config sett` does, not "too many arguments for 'show'".
 */
export function unknownWordsAreCommands(cmd: Command, group: Command): void {
  cmd.allowExcessArguments().hook('preAction', () => {
    if (cmd.args.length === 0) return;
    // `carbon logs list show`: the word is a command of the group, given after the default command
    // named: "unknown command 'show' (Did you mean show?)" would say nothing.
    const word = cmd.args[0]!;
    if (group.commands.some((c) => c !== cmd && (c.name() === word || c.aliases().includes(word)))) {
      throw usage(`\`${pathOf(cmd)}\` takes no words, and '${word}' is a command of its own: \`${pathOf(group)} ${word}\`.`);
    }
    // commander names the group's first word; the group's may be an option of the default command.
    group.args = cmd.args;
    (group as Group).unknownCommand();
  });
  wordBeforeOptionsIsTheError(cmd, group);
}
