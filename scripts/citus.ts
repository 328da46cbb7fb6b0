// A local Citus cluster for `make test-citus` and the cluster benchmarks: a coordinator without
// shards and two workers, each a PostgreSQL 15 from Debian's packages with Citus 13.2
// (scripts/citus/install.sh builds it from ../shared/citus with this project's patches), on ports of their own (CITUS_PG_PORT, then +1, +2) with
// their data under citusDataRoot(). Nodes trust each other's connections on 127.0.0.1: Citus opens
// its worker connections as the querying role, and this cluster is a test bed, not a deployment
// (docs/scaling.md says what a deployment uses instead).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { startEmbedded, throwawayDataRoot, type EmbeddedHandle } from './embedded-pg.ts';
import { editDatabaseUrl } from '../src/db/url.ts';
import { SUPERUSER_SESSION } from './db.ts';

export const CITUS_PG = '/usr/lib/postgresql/15';

/** Why there is no cluster here (one line), or undefined when Citus is installed. */
export function citusMissing(): string | undefined {
  if (!existsSync(join(CITUS_PG, 'bin', 'postgres'))) return `${CITUS_PG} (Debian's postgresql-15) is not installed`;
  if (!existsSync(join(CITUS_PG, 'lib', 'citus.so'))) return `Citus is not installed in ${CITUS_PG} (scripts/citus/install.sh installs it)`;
  return undefined;
}

/** Why the installed Citus is not the one scripts/citus/install.sh builds (its marker holds the
 * version and a digest of this project's patches), or undefined when it is. */
export function citusUnpatched(): string | undefined {
  const dir = fileURLToPath(new URL('./citus/', import.meta.url));
  const patches = readdirSync(dir).filter((f) => f.endsWith('.patch')).sort();
  const digest = createHash('sha256').update(Buffer.concat(patches.map((f) => readFileSync(join(dir, f))))).digest('hex');
  const marker = join('/usr/share/postgresql/15/extension', 'citus.svc-patches');
  const installed = existsSync(marker) ? readFileSync(marker, 'utf8').trim() : '';
  return installed.endsWith(` ${digest}`) ? undefined
    : `the installed Citus lacks this project's patches (${patches.join(', ')}): scripts/citus/install.sh builds it`;
}

export interface Cluster {
  /** The coordinator's postgres database (owner), and each worker's. */
  coordinator: string;
  workers: string[];
  stop: () => Promise<void>;
}

export const citusPort = (): number => Number(process.env.CITUS_PG_PORT ?? 25440);

/** Where the nodes keep their data: CITUS_DATA_ROOT, else in memory (throwawayDataRoot). Every
 * test file clones its database on each node, some 2,000 files on a worker, and drops it again: on
 * ext4 the kernel's inode allocation for that churn took 39 % of the machine's CPU in a loaded run,
 * and eight HTTP test files took 155 s in memory against 260 s (docs/scaling.md). */
export function citusDataRoot(): string {
  return process.env.CITUS_DATA_ROOT ? resolve(process.env.CITUS_DATA_ROOT) : throwawayDataRoot('citus');
}

/** Starts the three nodes (or reuses this checkout's, still running from an earlier start). */
export async function startCluster(basePort = citusPort()): Promise<Cluster> {
  const nodes: EmbeddedHandle[] = [];
  for (const [i, name] of ['citus-coordinator', 'citus-worker1', 'citus-worker2'].entries()) {
    nodes.push(await startCitusNode(name, basePort + i));
  }
  return {
    coordinator: nodes[0]!.url,
    workers: nodes.slice(1).map((n) => n.url),
    stop: async () => { for (const n of nodes) await n.stop(); },
  };
}

/** One node of the cluster (a worker added later starts here too: test/citus/add-worker.test.ts). */
export async function startCitusNode(name: string, port: number): Promise<EmbeddedHandle> {
  const missing = citusMissing();
  if (missing) throw new Error(missing);
  // Two-phase commit for multi-shard writes; the rest as Citus's own test clusters run it.
  // No TLS between nodes on one machine (libpq would also look for client certificates in the
  // starting user's home).
  // A delegated call reaches its worker as text with its arguments written out (a token among
  // them): a worker logs no failing statement and no error context, where they would show.
  // CITUS_LOG_STATEMENTS=1 keeps both, to read why a statement failed on a worker.
  const logging = process.env.CITUS_LOG_STATEMENTS === '1' ? '' : ' -c log_min_error_statement=panic -c log_error_verbosity=terse';
  const options = '-c shared_preload_libraries=citus -c max_prepared_transactions=300 -c max_worker_processes=32 -c citus.node_conninfo=sslmode=disable'
    + logging;
  const node = await startEmbedded(name, port, { root: citusDataRoot(), removeOnStop: !process.env.CITUS_DATA_ROOT, nativeDir: CITUS_PG, version: 'debian-15', options });
  await trustLoopback(node);
  return node;
}

/** Citus connects to the other nodes as the role that runs the query, without a password. */
async function trustLoopback(node: EmbeddedHandle) {
  if (!node.dataDir) return;
  const hba = join(node.dataDir, 'pg_hba.conf');
  const line = 'host all all 127.0.0.1/32 trust # svc: Citus node-to-node';
  const text = readFileSync(hba, 'utf8');
  if (text.includes(line)) return;
  writeFileSync(hba, `${line}\n${text}`);
  const sql = postgres(node.url, SUPERUSER_SESSION);
  try {
    await sql`select pg_reload_conf()`;
  } finally {
    await sql.end();
  }
}

const portOf = (url: string) => Number(new URL(url).port);

/** A server made ready to join a cluster, as a DBA makes one (db/README.md, "Growing the cluster"):
 * the roles (db/bootstrap.sql), each of `databases` owned by svc_schema, the citus extension in
 * the first. Then a superuser adds it on the coordinator with svc_bootstrap.add_node. */
export async function prepareNewNode(serverUrl: string, databases: string[]): Promise<void> {
  const server = postgres(serverUrl, SUPERUSER_SESSION);
  try {
    await server.unsafe(readFileSync('db/bootstrap.sql', 'utf8'));
    for (const name of new Set(databases)) await server.unsafe(`create database ${name} owner svc_schema`);
  } finally {
    await server.end();
  }
  const sql = postgres(editDatabaseUrl(serverUrl, { database: databases[0]! }), SUPERUSER_SESSION);
  try {
    await sql`create extension citus`;
  } finally {
    await sql.end();
  }
}

/** A database on every node with the citus extension, the workers added to the coordinator's.
 * Shard count: CITUS_SHARD_COUNT (default 8: a test database creates every table's shards). */
export async function createClusterDatabase(cluster: Pick<Cluster, 'coordinator' | 'workers'>, database: string): Promise<string> {
  const shardCount = Number(process.env.CITUS_SHARD_COUNT ?? 8);
  for (const url of [cluster.coordinator, ...cluster.workers]) {
    const sql = postgres(url, SUPERUSER_SESSION);
    try {
      await sql.unsafe(`drop database if exists ${database} with (force)`);
      await sql.unsafe(`create database ${database}`);
    } finally {
      await sql.end();
    }
    const db = postgres(editDatabaseUrl(url, { database }), SUPERUSER_SESSION);
    try {
      await db.unsafe('create extension citus');
      await db.unsafe(`alter database ${database} set citus.shard_count = ${shardCount}`);
    } finally {
      await db.end();
    }
  }
  const url = editDatabaseUrl(cluster.coordinator, { database });
  const db = postgres(url, SUPERUSER_SESSION);
  try {
    await db`select citus_set_coordinator_host('127.0.0.1', ${portOf(cluster.coordinator)})`;
    for (const w of cluster.workers) await db`select citus_add_node('127.0.0.1', ${portOf(w)})`;
  } finally {
    await db.end();
  }
  return url;
}

export async function dropClusterDatabase(cluster: Pick<Cluster, 'coordinator' | 'workers'>, database: string): Promise<void> {
  for (const url of [cluster.coordinator, ...cluster.workers]) await dropDatabase(url, database);
}

/** DROP DATABASE … WITH (FORCE) on one server, for a database a test made. FORCE ends sessions but
 * is refused (55006) while a session outlives its 5 s wait (a coordinator's backend on a loaded
 * worker) and while a prepared transaction holds the database: a two-phase commit the coordinator
 * did not finish because its process was killed mid-commit, which Citus would settle only at its
 * next recovery (citus.recover_2pc_interval, a minute). The database goes anyway, so such a
 * transaction is rolled back here. */
export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  const sql = postgres(serverUrl, SUPERUSER_SESSION);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await sql.unsafe(`drop database if exists ${database} with (force)`);
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== '55006' || attempt === 5) throw e;
        const prepared = await sql<{ gid: string }[]>`select gid from pg_prepared_xacts where database = ${database}`;
        if (prepared.length) {
          const db = postgres(editDatabaseUrl(serverUrl, { database }), SUPERUSER_SESSION);
          try {
            for (const { gid } of prepared) await db.unsafe(`rollback prepared '${gid.replaceAll("'", "''")}'`).catch(() => {});
          } finally {
            await db.end();
          }
        } else {
          await new Promise((done) => setTimeout(done, 1000));
        }
      }
    }
  } finally {
    await sql.end();
  }
}
