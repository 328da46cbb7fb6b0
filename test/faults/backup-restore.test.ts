// A DBA's backup and restore drill (db/README.md "Backup and restore"): pg_dump of the
// live database while the API serves, pg_restore into a new database of the same cluster (whose
// roles the dump does not carry: they are the cluster's), and an API on the copy. Every
// organization is there; an access token issued by the old API still works (its record, the
// signing key and the context key came along), a new one is issued with the same client secret;
// the webhook secret still signs; the BI login reads its organization's rows in the copy.
import t from 'tap';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/app.ts';
import { adminCli, spawnApi, tokenFrom, orgWithClient } from '../helpers/processes.ts';
import { startReceiver, verifySignature, WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { startLoad } from '../helpers/load.ts';
import { withDatabase } from '../../scripts/db.ts';
import { scramVerifier } from '../../src/db/scram.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { DEBIAN_PG } from '../helpers/replica.ts';

const SERVER = process.env.SVC_TEST_SERVER_URL ?? '';
const tools = join(DEBIAN_PG, 'bin');
const serverMajor = async () => {
  const sql = postgres(SERVER, { max: 1, onnotice: () => {} });
  try { return Number((await sql`show server_version_num`)[0]!.server_version_num) / 10000 | 0; } finally { await sql.end(); }
};
// pg_dump refuses a server newer than itself: the embedded PostgreSQL 18 needs a pg_dump 18.
const missing = !existsSync(join(tools, 'pg_dump')) ? `${tools}/pg_dump (Debian's postgresql-client-15)`
  : SERVER && await serverMajor() > 15 ? `pg_dump ${await serverMajor()} for this PostgreSQL ${await serverMajor()} server` : undefined;

// Asynchronous, so that this process's load goes on while pg_dump runs.
const run = (cmd: string, args: string[]) => promisify(execFile)(join(tools, cmd), args);

t.test('pg_dump of a live database, restored into a new one, serves the API', { skip: missing && `needs ${missing}` }, async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { org, client } = await orgWithClient(adminUrl, 'Backup');
  await orgWithClient(adminUrl, 'Backup too');
  const rx = await startReceiver(t);
  const env = { ...WEBHOOK_TEST_ENV, SVC_WORKER: 'on', RATE_LIMIT_REQUESTS: '1000000', LOG_LEVEL: 'warn' };
  const api = await spawnApi(t, { ...env, DATABASE_URL: adminUrl });
  const token = await tokenFrom(api.url, client);
  const post = (base: string, path: string, body: unknown, bearer = token) => fetch(`${base}${path}`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  });
  const ep = await post(api.url, '/v1/webhook-endpoints', { url: rx.url, events: ['project.created'] });
  t.equal(ep.status, 201);
  const secret = (await ep.json()).secret as string;
  const before = await (await post(api.url, '/v1/projects', { code: 'BEFORE', name: 'Before the backup' })).json();
  const bi = await adminCli(adminUrl)('reporting', 'grant', '--org', org, '--roles', 'manager');

  // The dump is taken while the API serves (pg_dump reads one snapshot; it takes no lock that stops writes).
  const load = startLoad(api.url, token, 2);
  await new Promise((r) => setTimeout(r, 500));
  const dir = mkdtempSync(join(tmpdir(), 'svc-backup-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'svc.dump');
  // The bootstrap's schema is a superuser's, made again by db/bootstrap-database.sql, not restored.
  await run('pg_dump', ['--format=custom', '--exclude-schema=svc_bootstrap', `--file=${file}`, `--dbname=${adminUrl}`]);
  await load.stop();
  t.ok(load.answers.length > 0 && load.answers.every((a) => a.status >= 200 && a.status < 300), `${load.answers.length} requests served during the dump`);

  const copy = `${new URL(adminUrl).pathname.slice(1)}_restored`;
  const root = postgres(SERVER, { max: 1, onnotice: () => {} });
  t.teardown(async () => { await root.unsafe(`drop database if exists ${copy} with (force)`); await root.end(); });
  await root.unsafe(`create database ${copy} owner svc_schema template template0`);
  const copyUrl = withDatabase(adminUrl, copy);
  const copyRoot = postgres(copyUrl, { max: 1, onnotice: () => {} });
  await copyRoot.unsafe(`set search_path = pg_catalog, pg_temp; ${readFileSync('db/bootstrap-database.sql', 'utf8')}`);
  await copyRoot.end();
  // The definitions as the superuser (they run no function), then the rows, indexes, constraints and
  // triggers as a login made for the restore like svc_mover (db/README.md): loading rows runs the
  // tables' checks, whose functions a role of the service may change, so not in a superuser's
  // session (one that SET ROLE could RESET).
  await run('pg_restore', ['--exit-on-error', '--single-transaction', '--section=pre-data', `--dbname=${copyUrl}`, file]);
  const restorer = `svc_restore_${process.pid}`;
  const password = randomUUID();
  await root.unsafe(`create role ${restorer} login bypassrls in role svc_schema password '${scramVerifier(password)}'`);
  t.teardown(() => root.unsafe(`drop role if exists ${restorer}`));
  await run('pg_restore', ['--exit-on-error', '--single-transaction', '--section=data', '--section=post-data',
    `--dbname=${editDatabaseUrl(copyUrl, { username: restorer, password })}`, file]);

  const old = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const restored = postgres(copyUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => Promise.all([old.end(), restored.end()]));
  const orgs = (sql: postgres.Sql) => sql`select id from app.organizations order by id`.then((r) => r.map((x) => x.id));
  t.same(await orgs(restored), await orgs(old), 'every organization is in the copy');
  await root.unsafe(`drop role ${restorer}`);
  t.pass('the restore\'s login owns nothing of the copy: it is dropped');

  await api.kill('SIGTERM');
  const api2 = await spawnApi(t, { ...env, DATABASE_URL: copyUrl });
  const list = await fetch(`${api2.url}/v1/projects?limit=200`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(list.status, 200, 'an access token issued before the backup works on the copy');
  t.ok((await list.json()).data.some((p: { id: string }) => p.id === before.id), 'and reads what was there');
  const token2 = await tokenFrom(api2.url, client);
  t.ok(token2, 'the client secret issues new tokens');

  const after = await (await post(api2.url, '/v1/projects', { code: 'AFTER', name: 'After the restore' }, token2)).json();
  const [delivery] = await rx.waitFor((e) => e.some((x) => x.body?.data?.object?.id === after.id), 60_000)
    .then((e) => e.filter((x) => x.body?.data?.object?.id === after.id));
  t.ok(verifySignature(secret, delivery!.headers, delivery!.raw), 'the webhook secret still signs its deliveries');

  const biCopy = postgres(withDatabase(bi.connection_string!, copy), { max: 1, onnotice: () => {} });
  t.teardown(() => biCopy.end());
  const codes = (await biCopy`select code from reporting.projects order by code`).map((r) => r.code);
  t.ok(codes.includes('BEFORE') && codes.includes('AFTER'), 'the BI login reads its organization in the copy');
});
