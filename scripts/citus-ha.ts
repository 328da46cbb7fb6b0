// A Citus formation whose every node has a streaming standby, kept by pg_auto_failover (Debian's
// packages postgresql-15-auto-failover and pg-auto-failover-cli): a monitor, a coordinator group and
// worker groups, each a primary and a secondary that the monitor promotes when its primary fails,
// then points the coordinator's pg_dist_node at (citus_update_node). For the failover tests and
// benchmarks (docs/scaling.md, "Failover"). pg_autoctl will not run as root: as root,
// every node runs as the postgres user.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { CITUS_PG, citusMissing } from './citus.ts';
import { migrate, SUPERUSER_SESSION } from './db.ts';
import { editDatabaseUrl } from '../src/db/url.ts';

const PG_AUTOCTL = '/usr/bin/pg_autoctl';

/** Why a formation cannot start here, or undefined. */
export function haMissing(): string | undefined {
  return citusMissing() ?? (existsSync(PG_AUTOCTL) && existsSync(join(CITUS_PG, 'lib', 'pgautofailover.so'))
    ? undefined : 'pg_auto_failover (Debian packages postgresql-15-auto-failover and pg-auto-failover-cli)');
}

export interface HaNode { name: string; group: number; port: number; pgdata: string; url: string }

export interface HaFormation {
  database: string;
  monitor: string;
  /** Group 0 (the coordinator) first, then each worker group; the first node of each was its first primary. */
  groups: HaNode[][];
  /** A superuser's URL of the formation's database on `node`. */
  urlOf(node: HaNode): string;
  /** The node of `group` the monitor has as primary now. */
  primary(group: number): Promise<HaNode>;
  /** Stops a node as a machine failure would: its PostgreSQL and its keeper killed. */
  kill(node: HaNode): void;
  /** Every node's state as the monitor reports it. */
  states(): Promise<{ name: string; group: number; reported: string; assigned: string }[]>;
  /** Until every node of the formation is a settled primary or secondary (or `timeoutMs`). */
  settled(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

/** Starts a monitor, a coordinator group and `workers` worker groups of `perGroup` nodes each, on
 * ports from `basePort`, for `database`; returns when every node is settled. */
export async function startHaFormation({ basePort = 26000, workers = 2, perGroup = 2, database = 'svc_ha' } = {}): Promise<HaFormation> {
  const missing = haMissing();
  if (missing) throw new Error(`needs ${missing}`);
  // In memory where there is one (the nodes' data outlives no run), readable by the postgres user.
  const root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'svc-citus-ha-'));
  chmodSync(root, 0o755);
  for (const d of [root, join(root, 'config'), join(root, 'share')]) {
    mkdirSync(d, { recursive: true });
    if (asRoot) chownSync(d, uid('postgres'), gid('postgres'));
  }
  const env = { ...process.env, PATH: `${CITUS_PG}/bin:${process.env.PATH}`, XDG_CONFIG_HOME: join(root, 'config'), XDG_DATA_HOME: join(root, 'share') };
  const children = new Map<string, ChildProcess>();
  /** The end of each process's log, for the error when a state is not reached. */
  const logs = new Map<string, string>();
  const run = (name: string, args: string[]) => {
    const child = spawn(asRoot ? 'runuser' : PG_AUTOCTL, asRoot ? ['-u', 'postgres', '--', PG_AUTOCTL, ...args] : args,
      { env, cwd: root, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    child.stderr!.on('data', (c: Buffer) => logs.set(name, ((logs.get(name) ?? '') + c).slice(-8000)));
    children.set(name, child);
  };
  const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl'];
  const monitor = `postgres://autoctl_node@127.0.0.1:${basePort}/pg_auto_failover?sslmode=disable`;
  run('monitor', ['create', 'monitor', '--pgdata', join(root, 'monitor'), '--pgport', String(basePort), ...common, '--run']);
  const watch = postgres(monitor, { max: 1, onnotice: () => {}, connect_timeout: 2 });
  const states = async () => [...(await watch<{ name: string; group: number; reported: string; assigned: string }[]>`
    select nodename as name, groupid as "group", reportedstate::text as reported, goalstate::text as assigned
      from pgautofailover.node order by nodeid`)];
  const until = async (what: string, ok: () => Promise<boolean>, timeoutMs: number) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (await ok().catch(() => false)) return;
      if (Date.now() > end) {
        const last = [...logs].map(([n, l]) => `${n}: ${l.split('\n').slice(-5).join('\n')}`).join('\n');
        throw new Error(`pg_auto_failover: ${what} not reached in ${timeoutMs} ms\n${last}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  const killAll = () => {
    for (const child of children.values()) if (child.pid && child.exitCode === null) try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
  };
  /** A formation that did not start: its processes killed, its data removed. */
  const abandon = async () => {
    killAll();
    await watch.end({ timeout: 1 });
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(root, { recursive: true, force: true });
  };
  const groups: HaNode[][] = [];
  try {
    await until('the monitor', async () => (await states(), true), 60_000);
    let port = basePort + 10;
    for (let g = 0; g <= workers; g++) {
      const nodes: HaNode[] = [];
      for (let i = 0; i < perGroup; i++) {
        const name = g === 0 ? `coord0${'abc'[i]}` : `worker${g}${'abc'[i]}`;
        const node = { name, group: g, port: port++, pgdata: join(root, name), url: `postgres://postgres@127.0.0.1:${port - 1}/postgres` };
        run(name, ['create', g === 0 ? 'coordinator' : 'worker', '--pgdata', node.pgdata, '--pgport', String(node.port), ...common,
          '--dbname', database, '--name', name, ...(g === 0 ? [] : ['--group', String(g)]), '--monitor', monitor, '--run']);
        nodes.push(node);
        // The first node of a group becomes its primary before the next one registers as its standby.
        if (i === 0) await until(`${name} as primary`, async () => (await states()).some((s) => s.name === name && ['single', 'primary', 'wait_primary'].includes(s.reported)), 120_000);
      }
      groups.push(nodes);
    }
  } catch (e) {
    await abandon();
    throw e;
  }
  const all = groups.flat();
  const settled = (timeoutMs = 240_000) => until('every node settled', async () => {
    const s = await states();
    return s.length === all.length && s.every((n) => n.reported === n.assigned && ['primary', 'secondary'].includes(n.reported));
  }, timeoutMs);
  await settled().catch(async (e) => { await abandon(); throw e; });
  // A promoted coordinator updates its own row of pg_dist_node, which marks every worker's
  // metadata out of sync until its maintenance daemon syncs it again; meanwhile it delegates no
  // call (its functions' owners may not log in to the workers, so such calls fail). The daemon
  // looks every citus.metadata_sync_interval: 60 s by default, 5 s here (about 5 s out of sync
  // after a promotion, against 32 s).
  for (const node of groups.flat()) {
    const server = postgres(node.url, { max: 1, onnotice: () => {} });
    try {
      await server.unsafe('alter system set citus.metadata_sync_interval = 5000');
      await server.unsafe('select pg_reload_conf()');
    } finally {
      await server.end();
    }
  }
  const urlOf = (node: HaNode) => editDatabaseUrl(node.url, { database });
  return {
    database, monitor, groups, urlOf, states, settled,
    primary: async (group) => {
      // A killed primary's last report stays "primary": the monitor's assignment is what changed.
      const writable = ['primary', 'wait_primary', 'single'];
      const s = (await states()).find((n) => n.group === group && writable.includes(n.assigned) && writable.includes(n.reported));
      const node = s && all.find((n) => n.name === s.name);
      if (!node) throw new Error(`no primary in group ${group}`);
      return node;
    },
    kill: (node) => {
      const pid = Number(readFileSync(join(node.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const keeper = children.get(node.name);
      if (keeper?.pid) try { process.kill(-keeper.pid, 'SIGKILL'); } catch { /* gone already */ }
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone already */ }
    },
    stop: async () => {
      await watch.end({ timeout: 1 });
      // The nodes before the monitor, each keeper stopping its PostgreSQL.
      for (const child of [...children.values()].reverse()) {
        if (child.exitCode !== null || !child.pid) continue;
        try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
        await new Promise((r) => { child.once('exit', r); setTimeout(r, 10_000); });
        if (child.exitCode === null) try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The formation's database made ready as a DBA makes a cluster's (db/README.md): the roles on each
 * group's primary (its standby replicates them), the database owned by svc_schema, the migrations
 * applied through the coordinator. Returns the coordinator's superuser URL. */
export async function migrateHaFormation(f: HaFormation): Promise<string> {
  for (let g = 0; g < f.groups.length; g++) {
    const node = await f.primary(g);
    const server = postgres(node.url, SUPERUSER_SESSION);
    try {
      await server.unsafe(readFileSync('db/bootstrap.sql', 'utf8'));
      await server.unsafe(`alter database ${f.database} owner to svc_schema`);
    } finally {
      await server.end();
    }
  }
  const url = f.urlOf(await f.primary(0));
  await migrate(url);
  return url;
}

function uid(user: string): number {
  return Number(spawnSync('id', ['-u', user]).stdout.toString().trim());
}
function gid(user: string): number {
  return Number(spawnSync('id', ['-g', user]).stdout.toString().trim());
}
