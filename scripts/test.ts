// `make test`: one template database migrated per run (plus test-only fixtures); every test file
// clones its own database from it, so files run in parallel without sharing state.
import postgres from 'postgres';
import { serverUrl, migrate, withDatabase, embeddedPort, loadTestFixtures } from './db.ts';
import { runTap } from './tap.ts';

const { url: server, embedded } = await serverUrl('pg-test', embeddedPort('test'), { throwaway: true });
const template = `svc_tpl_${process.pid}`;
const admin = postgres(server, { max: 1, onnotice: () => {} });
let code = 1;
try {
  await admin.unsafe(`drop database if exists ${template} with (force)`);
  await migrate(withDatabase(server, template));
  await loadTestFixtures(withDatabase(server, template));
  code = await runTap(process.argv.slice(2),
    { SVC_TEST_SERVER_URL: server, SVC_TEST_TEMPLATE: template, SVC_TEST_RUN: String(process.pid) });
} finally {
  const leftovers = await admin`select datname from pg_database where datname like ${`svc_t_${process.pid}_%`} or datname = ${template}`;
  for (const { datname } of leftovers) await admin.unsafe(`drop database if exists ${datname} with (force)`);
  await admin.end();
  await embedded?.stop();
}
process.exit(code);

