// `make start`: a database (DATABASE_URL, or an embedded PostgreSQL under .data/), migrations,
// a demo organization on first run, then the server.
import postgres from 'postgres';
import { serverUrl, migrate, withDatabase } from './db.ts';
import { run as admin } from '../src/admin/cli.ts';
import { loadConfig } from '../src/config.ts';
import { serve } from '../src/main.ts';

const DEMO_ORG = 'Demo Organization';

async function seedDemo(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [existing] = await sql`select o.id, c.id as client_id from app.organizations o
    left join app.api_clients c on c.organization_id = o.id and c.status <> 'deleted' where o.name = ${DEMO_ORG} limit 1`;
  await sql.end();
  if (existing) {
    console.log(`Demo organization ${existing.id} already exists; its client is ${existing.client_id}.`);
    console.log(`For a new secret: npx svc-admin client rotate-secret --client ${existing.client_id}`);
    return;
  }
  const call = async (...argv: string[]) => {
    const r = await admin(argv, url);
    if (r.code !== 0) throw new Error(JSON.stringify(r.err));
    return r.out as Record<string, string>;
  };
  const { organization_id: org } = await call('org', 'create', '--name', DEMO_ORG, '--plan', 'business',
    '--timezone', 'Europe/Berlin', '--currency', 'EUR', '--locale', 'en-GB');
  const people: [string, string, string, string][] = [
    ['ada@demo.example', 'Ada Lovelace', 'member,manager', 'Engineering Manager'],
    ['grace@demo.example', 'Grace Hopper', 'member', 'Engineer'],
    ['katherine@demo.example', 'Katherine Johnson', 'member,finance', 'Controller'],
    ['mary@demo.example', 'Mary Jackson', 'member,hr', 'People Partner'],
  ];
  for (const [email, name, roles, title] of people) {
    await call('member', 'add', '--org', org!, '--email', email, '--name', name, '--roles', roles, '--job-title', title,
      '--timezone', 'Europe/Berlin');
  }
  // A billing customer and the sandbox ledger, so invoices can be created, sent (to .data/mail
  // without SMTP settings) and synchronized right away.
  const { customer_id: customer } = await call('customer', 'create', '--org', org!, '--kind', 'billing', '--name', 'Acme Corp',
    '--email', 'billing@acme.example', '--currency', 'EUR');
  await call('integration', 'add', '--org', org!, '--provider', 'sandbox', '--category', 'accounting',
    '--capabilities', 'invoice.export,invoice.void');
  const client = await call('client', 'create', '--org', org!, '--name', 'Demo integration', '--license', 'manager',
    '--roles', 'member,manager,finance');
  console.log(`\nDemo organization ${org} seeded with a Manager-level API Client (member, manager, finance).`);
  console.log(`  client_id:     ${client.client_id}`);
  console.log(`  client_secret: ${client.client_secret}   (shown once; store it now)\n`);
  const port = process.env.PORT ?? '3000';
  console.log('Try it:');
  console.log(`  TOKEN=$(curl -s -u '${client.client_id}:${client.client_secret}' -d grant_type=client_credentials -d scope=svc.api http://127.0.0.1:${port}/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`);
  console.log(`  curl -s -H "Authorization: Bearer $TOKEN" http://127.0.0.1:${port}/v1/me\n`);
  console.log(`Billing customer ${customer} (invoices are emailed to .data/mail/*.eml unless SVC_SMTP_URL is set):`);
  console.log(`  curl -s -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $(uuidgen 2>/dev/null || date +%s%N)" -H 'Content-Type: application/json' \\`);
  console.log(`    -d '{"customer_id":"${customer}","lines":[{"description":"Consulting","quantity":"10","unit_price":"120.00","tax_rate":"19"}]}' http://127.0.0.1:${port}/v1/invoices\n`);
}

const { url: server } = await serverUrl('pg-dev', Number(process.env.EMBEDDED_PG_PORT ?? 54329));
const databaseUrl = process.env.DATABASE_URL ?? withDatabase(server, 'svc');
await migrate(databaseUrl);
await seedDemo(databaseUrl);
const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl });
const { server: http } = await serve(config);
console.log(`Serving on ${http.info.uri}  (API reference: ${http.info.uri}/docs)`);
