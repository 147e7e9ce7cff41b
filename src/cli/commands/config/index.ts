import { MODES } from '../../../api/types.js';
import type { CommandSpec } from '../../command.js';

const KEY = { name: '<key>', description: 'test-key, live-key, mode or base-url', values: 'configKeys' } as const;
/** What get and unset take: the keys, and the signing secret carbon watch made (rotated by unsetting it). */
const READ_KEY = {
  name: '<key>',
  description: 'test-key, live-key, mode, base-url or webhook-secret',
  values: ['test-key', 'live-key', 'mode', 'base-url', 'webhook-secret'],
} as const;

/** carbon config: profiles in config.json. Settings resolve leniently here (see SettingsKind). */
export const config: CommandSpec = {
  name: 'config',
  description: 'profiles: keys, mode and base URL (in $CARBON_HOME/config.json, readable by you only)',
  settings: 'config',
  notes: `Keys: test-key, live-key, mode (test|live), base-url; webhook-secret (made by watch) to get or unset. Every subcommand acts on the profile named by
--profile or CARBON_PROFILE, else the current one ("default" unless \`carbon config use\` chose another).`,
  examples: [
    'carbon config set test-key -',
    'carbon config set --profile staging base-url https://api.example.com/api/v1',
    'carbon config use staging',
    'carbon config list',
  ],
  subcommands: [
    {
      name: 'set',
      description: 'set a key of the profile (a value of - reads it from stdin)',
      args: [KEY, { name: '<value>', description: 'the value; - reads it from stdin', values: ([key]) => (key === 'mode' ? MODES : []) }],
      examples: ['carbon config set test-key -', 'carbon config set mode live', 'pass show carbon/live | carbon config set live-key -'],
      load: () => import('./run.js').then((m) => m.set),
    },
    {
      name: 'get',
      description: 'print one key of the profile, or its webhook-secret (masked unless --reveal); exit 5 when unset',
      args: [READ_KEY],
      flags: [{ flags: '--reveal', description: 'print an API key (or the signing secret) in full' }],
      examples: ['carbon config get base-url', 'carbon config get mode --json | jq -r .value'],
      load: () => import('./run.js').then((m) => m.get),
    },
    {
      name: 'unset',
      description: 'remove a key from the profile; webhook-secret: the next carbon watch --forward-to makes a new one',
      args: [READ_KEY],
      examples: ['carbon config unset base-url', 'carbon config unset live-key --profile staging', 'carbon config unset webhook-secret'],
      load: () => import('./run.js').then((m) => m.unset),
    },
    {
      name: 'list',
      description: 'every profile, API keys masked',
      examples: ['carbon config list', 'carbon config list --json | jq .profiles'],
      load: () => import('./run.js').then((m) => m.list),
    },
    {
      name: 'delete',
      description: 'delete a profile and its keys (the current one: default is current again)',
      args: [{ name: '<profile>', description: "the profile's name", values: 'savedProfiles' }],
      examples: ['carbon config delete staging'],
      load: () => import('./run.js').then((m) => m.remove),
    },
    {
      name: 'use',
      description: 'make a profile the current one',
      args: [{ name: '<profile>', description: "the profile's name", values: 'profiles' }],
      examples: ['carbon config use staging', 'carbon config use default'],
      load: () => import('./run.js').then((m) => m.use),
    },
  ],
};
