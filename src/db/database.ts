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

export function connect(url: string, max = 10): Database {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    // Dates and timestamps stay strings: the views format the wire representation.
    types: {},
    transform: { undefined: null },
    connection: { application_name: 'svc-api' },
  });
  const db = new Kysely<DB>({ dialect: new PostgresJSDialect({ postgres: sql }) });
  return { db, sql, close: () => db.destroy() };
}
