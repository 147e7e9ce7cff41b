declare module 'pgpass' {
  /** The password file's password for a connection (PGPASSFILE, or ~/.pgpass), or undefined where it has none. */
  export default function pgpass(connection: Record<string, unknown>, found: (password: string | undefined) => void): void;
}
