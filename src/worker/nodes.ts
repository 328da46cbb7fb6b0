// Where a job's statements run. On a Citus cluster each job of an organization, and the fan-out's
// claim and record of that organization's events, runs on the worker that holds the organization's
// shard group, as svc_worker, so that its calls execute there and the coordinator is out of their
// path; the coordinator keeps the job queue, the statements of no organization (the purges, the
// lease recovery, the job outboxes' drain) and the wake-ups that its listeners wait for. The
// placements are Citus's own, read as the API reads them (src/db/cluster.ts). A job sent to a node
// that no longer holds its group is still right: Citus forwards the call to the group's node.
import type postgres from 'postgres';
import { placementsOn } from '../db/cluster.ts';
import { isConnectionFailure, reconnectBackoff } from '../db/faults.ts';
import { postgresFor } from '../db/hosts.ts';
import { editDatabaseUrl } from '../db/url.ts';

/** How long a node this process could not reach is left out (its organizations' statements go
 * through the coordinator, which reaches it its own way or reports it down). */
const AWAY_MS = 1000;
/** A node that holds no shard group any more: its pool ends once unused this long. */
const UNUSED_MS = 30_000;

export interface JobConnections {
  /** svc_worker's connections where `organization`'s rows are: its worker's, once its placement
   * is known, else the coordinator's. */
  of(organization: string): postgres.Sql;
  /** A statement on `sql` (one of `of`'s) failed: a connection's failure leaves that node out for a moment. */
  failed(sql: postgres.Sql, error: unknown): void;
  /** The nodes with a pool of their own now (`host:port`). */
  nodes(): string[];
  close(): Promise<void>;
}

/** On one server (`onCitus` false), or with `direct` off, every organization's statements run on
 * `coordinator`. */
export function jobConnections(coordinator: postgres.Sql, o: {
  url: string; max: number; connectTimeoutMs: number; direct: boolean; onCitus: () => boolean | undefined;
  /** Where the shard groups are (default: Citus's catalog, read on `coordinator`). */
  placements?: () => Pick<ReturnType<typeof placementsOn>, 'node' | 'nodes' | 'ready' | 'stop'>;
}): JobConnections {
  let where: ReturnType<NonNullable<typeof o.placements>> | undefined;
  const pools = new Map<string, { sql: postgres.Sql; used: number; awayUntil: number }>();
  const nodeOf = new Map<postgres.Sql, string>();
  let closed = false;
  const end = (node: string) => {
    const pool = pools.get(node)!;
    pools.delete(node);
    nodeOf.delete(pool.sql);
    // Statements already sent finish; a job that took this pool and sends later fails, and is retried.
    void pool.sql.end({ timeout: 5 }).catch(() => undefined);
  };
  const sweep = setInterval(() => {
    if (!where) return;
    const holding = where.nodes();
    for (const [node, pool] of pools) if (!holding.has(node) && Date.now() - pool.used > UNUSED_MS) end(node);
  }, UNUSED_MS / 3);
  sweep.unref();
  return {
    of(organization) {
      if (closed || !o.direct || o.onCitus() !== true) return coordinator;
      if (!where) {
        where = o.placements?.() ?? placementsOn(coordinator);
        void where.ready();
      }
      const node = where.node(organization);
      if (node === undefined) return coordinator;
      let pool = pools.get(node);
      if (!pool) {
        pool = {
          sql: postgresFor(editDatabaseUrl(o.url, { hosts: node }), {
            max: o.max, backoff: reconnectBackoff, onnotice: () => {},
            connect_timeout: Math.max(1, Math.ceil(o.connectTimeoutMs / 1000)),
            connection: { application_name: 'svc-worker-node' },
          }),
          used: 0, awayUntil: 0,
        };
        pools.set(node, pool);
        nodeOf.set(pool.sql, node);
      }
      const now = Date.now();
      if (pool.awayUntil > now) return coordinator;
      pool.used = now;
      return pool.sql;
    },
    failed(sql, error) {
      const node = nodeOf.get(sql);
      if (node !== undefined && isConnectionFailure(error)) pools.get(node)!.awayUntil = Date.now() + AWAY_MS;
    },
    nodes: () => [...pools.keys()],
    close: async () => {
      closed = true;
      clearInterval(sweep);
      where?.stop();
      await Promise.all([...pools.values()].map((p) => p.sql.end({ timeout: 5 }).catch(() => undefined)));
      pools.clear();
    },
  };
}
