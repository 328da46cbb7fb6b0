// A primary and a synchronous streaming standby of PostgreSQL 15 from Debian's packages (the
// embedded binaries have no pg_basebackup), private to one test: `pg_basebackup -R` makes the
// standby, `synchronous_standby_names` makes every acknowledged commit wait for it, and the test
// stops the primary hard and promotes the standby. As root, the servers run as `postgres`.
import type { Test } from 'tap';
import { existsSync, mkdirSync, chownSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import postgres from 'postgres';
import { run, serverUser, startEmbedded } from '../../scripts/embedded-pg.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { freePort } from './processes.ts';

export const DEBIAN_PG = '/usr/lib/postgresql/15';

/** What is missing for a primary and a standby here, or undefined when nothing is. */
export function replicaMissing(): string | undefined {
  return existsSync(join(DEBIAN_PG, 'bin', 'pg_basebackup')) ? undefined
    : `${DEBIAN_PG}/bin/pg_basebackup (Debian's postgresql-15)`;
}

export interface Replicated {
  /** The primary alone (owner), then the standby alone, for checks. */
  primaryUrl: string;
  standbyUrl: string;
  /** Both hosts, the primary first, with target_session_attrs=read-write: what the service gets. */
  bothUrl: string;
  /** pg_ctl stop -m immediate: no shutdown checkpoint, sessions cut as by a crash. */
  killPrimary: () => void;
  /** pg_ctl promote, waiting until the standby accepts writes. */
  promote: () => void;
}

export async function primaryAndStandby(t: Test, database: string): Promise<Replicated> {
  const root = mkdtempSync(join(tmpdir(), 'svc-failover-'));
  const [p1, p2] = [await freePort(), await freePort()];
  const as = serverUser();
  const bin = join(DEBIAN_PG, 'bin');
  const primary = await startEmbedded('primary', p1, { root: join(root, '.data'), nativeDir: DEBIAN_PG, version: 'debian-15' });
  const standbyDir = join(dirname(primary.dataDir), 'standby');
  const pgCtl = (...args: string[]) => run(join(bin, 'pg_ctl'), args, as);
  t.teardown(() => {
    pgCtl('stop', '-D', standbyDir, '-m', 'immediate', '-w', '-s');
    pgCtl('stop', '-D', primary.dataDir, '-m', 'immediate', '-w', '-s');
    rmSync(root, { recursive: true, force: true });
    if (!primary.dataDir.startsWith(root)) rmSync(dirname(primary.dataDir), { recursive: true, force: true });
  });
  const primaryServer = primary.url;
  const admin = postgres(primaryServer, { max: 1, onnotice: () => {} });
  t.teardown(() => admin.end({ timeout: 1 }));
  await admin.unsafe(`create database ${database}`);

  mkdirSync(standbyDir, { recursive: true, mode: 0o700 });
  if (as) chownSync(standbyDir, as.uid, as.gid);
  const backup = run(join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(p1), '-U', 'postgres', '-D', standbyDir,
    '-R', '-X', 'stream', '-c', 'fast'], as, { PGPASSWORD: 'postgres' });
  if (backup.status !== 0) throw new Error(`pg_basebackup: ${backup.stderr}`);
  const started = pgCtl('start', '-D', standbyDir, '-w', '-t', '60', '-s', '-l', join(standbyDir, 'server.log'), '-o',
    `-p ${p2} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c cluster_name=standby`);
  if (started.status !== 0) throw new Error(`the standby did not start: ${started.stderr}`);
  // Synchronous once it streams: from here a commit the primary acknowledges is on the standby too.
  for (let i = 0; ; i++) {
    const [row] = await admin`select state from pg_stat_replication where application_name = 'standby'`;
    if (row?.state === 'streaming') break;
    if (i > 200) throw new Error('the standby does not stream');
    await new Promise((r) => setTimeout(r, 50));
  }
  await admin`alter system set synchronous_standby_names = 'standby'`;
  await admin`select pg_reload_conf()`;
  for (let i = 0; ; i++) {
    const [row] = await admin`select sync_state from pg_stat_replication where application_name = 'standby'`;
    if (row?.sync_state === 'sync') break;
    if (i > 200) throw new Error('the standby did not become synchronous');
    await new Promise((r) => setTimeout(r, 50));
  }
  const primaryUrl = editDatabaseUrl(primaryServer, { database });
  return {
    primaryUrl,
    standbyUrl: editDatabaseUrl(primaryUrl, { hosts: `127.0.0.1:${p2}` }),
    bothUrl: editDatabaseUrl(primaryUrl, { hosts: `127.0.0.1:${p1},127.0.0.1:${p2}` }) + '?target_session_attrs=read-write',
    killPrimary: () => { pgCtl('stop', '-D', primary.dataDir, '-m', 'immediate', '-w', '-s'); },
    promote: () => {
      const r = pgCtl('promote', '-D', standbyDir, '-w', '-t', '60', '-s');
      if (r.status !== 0) throw new Error(`pg_ctl promote: ${r.stderr}`);
    },
  };
}
