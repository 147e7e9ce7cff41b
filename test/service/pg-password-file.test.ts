import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { passwordFileRefused } from '../../src/store/postgres/client.js';
import { tempDirs } from '../support/temp.js';

/** The password file libpq passes over (no plain file, or others may read it): said, not left to a warning line. */

const dirs = tempDirs('carbon-pgpass-');
afterAll(() => dirs.removeAll());

test('a file of mode 0600 (or none) is read; 0640, 0604 or a directory is not, and the reason names the file', () => {
  const dir = dirs.make();
  const file = join(dir, 'pgpass');
  expect(passwordFileRefused({ PGPASSFILE: file }, 'linux')).toBeUndefined();
  writeFileSync(file, '*:*:*:u:p\n');
  chmodSync(file, 0o600);
  expect(passwordFileRefused({ PGPASSFILE: file }, 'linux')).toBeUndefined();
  for (const mode of [0o640, 0o604, 0o620]) {
    chmodSync(file, mode);
    expect(passwordFileRefused({ PGPASSFILE: file }, 'linux')).toBe(
      `the password file ${file} can be read or written by others (mode 0${mode.toString(8)}), so it is not read`,
    );
  }
  // ~/.pgpass when PGPASSFILE is not set; PGPASSWORD set: no file is read at all; Windows keeps no such modes.
  expect(passwordFileRefused({ HOME: dir }, 'linux')).toBeUndefined();
  writeFileSync(join(dir, '.pgpass'), '');
  chmodSync(join(dir, '.pgpass'), 0o644);
  expect(passwordFileRefused({ HOME: dir }, 'linux')).toMatch(/\.pgpass can be read or written by others \(mode 0644\)/);
  expect(passwordFileRefused({ HOME: dir, PGPASSWORD: '' }, 'linux')).toBeUndefined();
  expect(passwordFileRefused({ HOME: dir }, 'win32')).toBeUndefined();
  const folder = join(dir, 'folder');
  mkdirSync(folder);
  expect(passwordFileRefused({ PGPASSFILE: folder }, 'linux')).toBe(`the password file ${folder} is not a plain file, so it is not read`);
});
