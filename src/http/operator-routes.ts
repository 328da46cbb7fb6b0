// Routes for operators, outside /v1 and the API's auth: liveness, readiness, metrics.
import type { ServerRoute } from '@hapi/hapi';
import { existsSync, readdirSync } from 'node:fs';
import { timingSafeEqual, createHash } from 'node:crypto';
import { api } from '../db/api.ts';
import type { AppContext } from './context.ts';
import { ApiError, problemResponse } from './errors.ts';
import { requestIdOf } from './operation/route.ts';
import { header } from './headers.ts';

/** The newest migration this code was written for (dbmate's version is the file name's prefix):
 * of db/migrations, and on a Citus coordinator of db/citus/migrations too (scripts/db.ts). */
export function expectedSchemaVersion(cluster = false, root = new URL('../../db/', import.meta.url)): string {
  const dirs = [new URL('migrations/', root), ...(cluster ? [new URL('citus/migrations/', root)] : [])];
  for (const d of dirs) if (!existsSync(d)) throw new Error(`${d.pathname} is missing: this build has no migrations to expect`);
  const versions = dirs.flatMap((d) => readdirSync(d)).map((f) => /^(\d+)_.*\.sql$/.exec(f)?.[1]).filter((v): v is string => !!v).sort();
  return versions[versions.length - 1] ?? '';
}

const sameSecret = (a: string, b: string) => {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
};

export function operatorRoutes(app: AppContext): ServerRoute[] {
  const expected = { one: expectedSchemaVersion(false),
    cluster: expectedSchemaVersion(existsSync(new URL('../../db/citus/migrations/', import.meta.url))) };
  /** The schema version of the last ready answer. */
  let readyAt: string | undefined;
  return [
    // Alive: the process answers. Never touches the database, so a database outage does not get it restarted.
    { method: 'GET', path: '/health', options: { handler: () => ({ status: 'ok' }) } },
    {
      // Ready for traffic: each of the process's pools gets a statement answered within 2 s (a pool
      // that hands out no connection takes the instance out of rotation), and the database has
      // every migration this code expects. On a Citus cluster whose coordinator does not answer, a
      // process that was ready is still ready while the worker nodes it serves answer: its
      // requests need nothing of the coordinator's (docs/scaling.md, "Failover").
      method: 'GET', path: '/ready',
      options: {
        handler: async (request, h) => {
          let applied: string | null;
          try {
            [applied] = await within(2000, Promise.all([
              api.value('service_schema_version').execute(app.database.db).then((r) => r.rows[0]?.value ?? null),
              app.database.ping(),
            ]));
          } catch {
            if (app.database.routed && readyAt !== undefined
              && await within(2000, app.database.pingNodes()).then(() => true, () => false)) {
              return { status: 'ready', database: 'the coordinator does not answer; the worker nodes do', schema_version: readyAt };
            }
            return problemResponse(h, new ApiError('SERVICE_UNAVAILABLE', 'the database is not reachable',
              { headers: { 'Retry-After': '5' } }), requestIdOf(request), request.path);
          }
          // At or past the newest migration this code knows: a later release's migrations only expand
          // (db/README.md, "Migrations on a live database"), so the code of the release before keeps serving.
          const needed = app.database.routed ? expected.cluster : expected.one;
          if (applied === null || applied < needed) {
            return problemResponse(h, new ApiError('SERVICE_UNAVAILABLE',
              `the database schema is at migration ${applied ?? 'none'}, this server needs ${needed}: run the migrations`,
              { headers: { 'Retry-After': '30' } }), requestIdOf(request), request.path);
          }
          readyAt = applied;
          return { status: 'ready', database: 'ok', schema_version: applied };
        },
      },
    },
    {
      // Prometheus text format. Route templates and counts only, no tenant data; optionally behind a token.
      method: 'GET', path: '/metrics',
      options: {
        handler: async (request, h) => {
          const token = app.config.metricsToken;
          if (token && !sameSecret(header(request, 'authorization') ?? '', `Bearer ${token}`)) {
            return problemResponse(h, new ApiError('INVALID_TOKEN', 'send Authorization: Bearer <SVC_METRICS_TOKEN>',
              { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } }), requestIdOf(request), request.path);
          }
          return h.response(await app.metrics.registry.metrics()).type(app.metrics.registry.contentType);
        },
      },
    },
  ];
}

/** `work`, or a rejection after `ms`. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  return Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}
