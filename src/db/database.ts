import postgres from 'postgres';
import { Kysely, type Transaction } from 'kysely';
import { PostgresJSDialect } from 'kysely-postgres-js';
import type { DB } from './schema.ts';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;

export interface Database {
  db: Db;
  sql: postgres.Sql;
  close: () => Promise<void>;
}

/** Kysely's postgres.js adapter runs every query through `unsafe()`, which does not prepare by
 * default: each parameterized query would cost an extra round trip to describe its parameters.
 * Reserved connections here prepare (and cache per connection) every statement, and pipeline
 * `begin` with the transaction's first statement instead of waiting a round trip for it. */
function preparingDriver(sql: postgres.Sql) {
  return {
    async reserve() {
      const connection = await sql.reserve();
      let pendingBegin: Promise<unknown> | undefined;
      return {
        async unsafe(query: string, parameters: unknown[]) {
          if (query === 'begin' && parameters.length === 0) {
            // postgres.js writes queries to the connection in call order; errors surface below.
            pendingBegin = connection.unsafe('begin');
            pendingBegin.catch(() => {});
            return Object.assign([], { command: 'BEGIN', count: 0 });
          }
          const result = connection.unsafe(query, parameters as postgres.ParameterOrJSON<never>[], { prepare: true });
          if (pendingBegin) {
            const begin = pendingBegin;
            pendingBegin = undefined;
            result.catch(() => {});
            await begin;
          }
          return result;
        },
        release: () => connection.release(),
      };
    },
    end: () => sql.end({ timeout: 5 }),
  };
}

export function connect(url: string, max = 10): Database {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    transform: { undefined: null },
    connection: { application_name: 'svc-api' },
  });
  const db = new Kysely<DB>({
    dialect: new PostgresJSDialect({ postgres: (async () => preparingDriver(sql)) as never }),
  });
  // postgres.js can wait forever for idle connections to end (porsager/postgres#925): bound it.
  return { db, sql, close: async () => { await db.destroy(); await sql.end({ timeout: 5 }); } };
}
