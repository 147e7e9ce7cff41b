// What the benches read of other processes from /proc: the CPU a process has used, and which
// processes are PostgreSQL's (its CPU is counted beside carbon's: bench/postgres.mjs, bench/journal.mjs).
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used, from /proc; 0 when it is gone. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The PostgreSQL server's processes (the postmaster and its backends). */
export function postgresPids() {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
      } catch {
        return false;
      }
    });
}

/** CPU seconds PostgreSQL's processes have used since `before` (postgresPids() with cpuSeconds(), by pid); new backends count from 0. */
export const postgresCpuSince = (before) => postgresPids().reduce((t, p) => t + cpuSeconds(p) - (before.get(p) ?? 0), 0);

/** CPU seconds of PostgreSQL's processes now, by pid (for postgresCpuSince). */
export const postgresCpu = () => new Map(postgresPids().map((p) => [p, cpuSeconds(p)]));
