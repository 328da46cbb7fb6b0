// Where a job's statements run. On a Citus cluster each job of an organization, and the fan-out's
// claim and record of that organization's events, runs on the worker that holds the organization's
// shard group, as svc_worker, so that its calls execute there and the coordinator is out of their
// path; the coordinator keeps the job queue, the statements of no organization (the purges, the
// lease recovery, the job outboxes' drain, the fan-out's list of organizations with events waiting)
// and the wake-ups that its listeners wait for. The placements are Citus's own, read as the API
// reads them (src/db/cluster.ts). A job sent to a node that no longer holds its group is still
// right: Citus forwards the call to the group's node.
import type postgres from 'postgres';
import { placementsOn } from '../db/cluster.ts';
import { isConnectionFailure, reconnectBackoff } from '../db/faults.ts';
import { postgresFor } from '../db/hosts.ts';
import { editDatabaseUrl } from '../db/url.ts';

/** How long a node this process could not reach is left out before one statement tries it again
 * (its organizations' statements go through the coordinator meanwhile, which reaches it its own
 * way or reports it down). */
const AWAY_MS = 1000;
/** A node that refused svc_worker's login (its pg_hba.conf, the role's password): left out longer. */
const REFUSED_MS = 60_000;
/** A node that holds no shard group any more: its pool ends once unused this long. */
const UNUSED_MS = 30_000;

/** Failures of a connection's start, before any statement was sent: the statement may be sent
 * again elsewhere. */
const NOT_STARTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'CONNECT_TIMEOUT']);
const loginRefused = (e: unknown) => /^28/.test(String((e as { code?: unknown } | undefined)?.code ?? ''));

export interface JobConnections {
  /** `statement` on svc_worker's connections where `organization`'s rows are: its worker node's,
   * once its placement is known, else the coordinator's. A node whose connection could not start
   * is left out for a while, and the statement is sent to the coordinator instead. */
  run<T>(organization: string, statement: (sql: postgres.Sql) => Promise<T>): Promise<T>;
  /** The nodes with a pool of their own now (`host:port`). */
  nodes(): string[];
  close(): Promise<void>;
}

interface Pool {
  sql: postgres.Sql;
  used: number;
  /** Statements running on it now: a pool in use is not ended. */
  running: number;
  /** Left out until then (0: in); once past, one statement tries it (`trying`). */
  awayUntil: number;
  trying: boolean;
}

/** On one server (`onCitus` false), or with `direct` off, every organization's statements run on
 * `coordinator`. */
export function jobConnections(coordinator: postgres.Sql, o: {
  url: string; max: number; connectTimeoutMs: number; direct: boolean; onCitus: () => boolean | undefined;
  /** Where the shard groups are (default: Citus's catalog, read on `coordinator`). */
  placements?: () => Pick<ReturnType<typeof placementsOn>, 'node' | 'nodes' | 'ready' | 'stop'>;
  unusedMs?: number;
  log?: (message: string, node: string, error: unknown) => void;
}): JobConnections {
  let where: ReturnType<NonNullable<typeof o.placements>> | undefined;
  const pools = new Map<string, Pool>();
  let closed = false;
  const unusedMs = o.unusedMs ?? UNUSED_MS;
  const sweep = setInterval(() => {
    if (!where) return;
    const holding = where.nodes();
    for (const [node, pool] of pools) {
      if (holding.has(node) || pool.running > 0 || Date.now() - pool.used <= unusedMs) continue;
      pools.delete(node);
      void pool.sql.end({ timeout: 5 }).catch(() => undefined);
    }
  }, Math.max(10, unusedMs / 3));
  sweep.unref();

  /** The organization's node and its pool, or undefined for the coordinator. */
  const poolOf = (organization: string): [string, Pool] | undefined => {
    if (closed || !o.direct || o.onCitus() !== true) return undefined;
    if (!where) {
      where = o.placements?.() ?? placementsOn(coordinator);
      void where.ready();
    }
    const node = where.node(organization);
    if (node === undefined) return undefined;
    let pool = pools.get(node);
    if (!pool) {
      pool = {
        sql: postgresFor(editDatabaseUrl(o.url, { hosts: node }), {
          max: o.max, backoff: reconnectBackoff, onnotice: () => {},
          connect_timeout: Math.max(1, Math.ceil(o.connectTimeoutMs / 1000)),
          connection: { application_name: 'svc-worker-node' },
        }),
        used: 0, running: 0, awayUntil: 0, trying: false,
      };
      pools.set(node, pool);
    }
    const now = Date.now();
    if (pool.awayUntil > now || (pool.awayUntil > 0 && pool.trying)) return undefined;
    if (pool.awayUntil > 0) pool.trying = true;
    pool.used = now;
    return [node, pool];
  };

  return {
    async run(organization, statement) {
      const on = poolOf(organization);
      if (!on) return statement(coordinator);
      const [node, pool] = on;
      const trying = pool.trying;
      pool.running++;
      try {
        const result = await statement(pool.sql);
        if (trying) pool.awayUntil = 0;
        return result;
      } catch (e) {
        const refused = loginRefused(e);
        if (refused || isConnectionFailure(e)) {
          pool.awayUntil = Date.now() + (refused ? REFUSED_MS : AWAY_MS);
          if (refused) o.log?.('a worker node refused svc_worker\'s login: its organizations\' jobs go through the coordinator', node, e);
        } else if (trying) {
          pool.awayUntil = 0;
        }
        // Nothing was sent: the coordinator delegates the statement to the group's node its own way.
        if (refused || NOT_STARTED.has(String((e as { code?: unknown }).code))) return statement(coordinator);
        throw e;
      } finally {
        if (trying) pool.trying = false;
        pool.running--;
      }
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
