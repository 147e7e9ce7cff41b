import type { CommandSpec } from '../../command.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

// Shell completion: completion/ prints the scripts in completions/, complete/ answers them. Neither
// needs settings or an engine up front (settings: 'bare'), so a broken config never breaks them.

export const completion: CommandSpec = {
  name: 'completion',
  description: 'print the completion script for bash, zsh or fish (or --install it)',
  settings: 'bare',
  args: [{ name: '[shell]', description: 'bash, zsh or fish (default with --install: the one $SHELL names)', values: SHELLS }],
  flags: [{ flags: '--install', description: 'write the script where that shell looks for it, and say where' }],
  examples: [
    'carbon completion --install                     # for the shell $SHELL names',
    'mkdir -p ~/.local/share/bash-completion/completions',
    'carbon completion bash > ~/.local/share/bash-completion/completions/carbon',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh's own ${fpath[1]}, for the shell to expand
    'carbon completion zsh > "${fpath[1]}/_carbon"   # before compinit',
    'mkdir -p ~/.config/fish/completions',
    'carbon completion fish > ~/.config/fish/completions/carbon.fish',
    'source <(carbon completion bash)                # or zsh, for this shell only',
  ],
  epilogue: `Completes commands, options, option values (--format, --profile names, ...), for
\`carbon show\` the newest offset ids, and file names where a file goes (buy --from-csv, watch
--cursor, sandbox snapshot save|load). Open a new shell after installing.`,
  load: () => import('./run.js').then((m) => m.run),
};
