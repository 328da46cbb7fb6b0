// `make start`: a database (DATABASE_URL, or an embedded PostgreSQL under .data/), migrations,
// a demo organization with content on first run, then the server.
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { serverUrl, migrate, withDatabase, embeddedPort, SUPERUSER_SESSION } from './db.ts';
import { run as admin } from '../src/admin/cli.ts';
import { loadConfig } from '../src/config.ts';
import { serve } from '../src/main.ts';

const DEMO_ORG = 'Demo Organization';

interface DemoClient { org: string; clientId: string; clientSecret: string; customer: string }

/** The organization, its people, customers and API Client: the control plane's part. */
async function seedOrganization(url: string): Promise<DemoClient | undefined> {
  const sql = postgres(url, SUPERUSER_SESSION);
  const [existing] = await sql`select o.id, c.id as client_id from app.organizations o
    left join app.api_clients c on c.organization_id = o.id and c.status <> 'deleted' where o.name = ${DEMO_ORG} limit 1`;
  await sql.end();
  if (existing) {
    console.log(`Demo organization ${existing.id} already exists; its client is ${existing.client_id}.`);
    console.log(`For a new secret: npx svc-admin client rotate-secret --client ${existing.client_id}`);
    return undefined;
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
  return { org: org!, clientId: client.client_id!, clientSecret: client.client_secret!, customer: customer! };
}

/** Content, created through the API itself as the demo client: what a first list shows. */
async function seedContent(server: Awaited<ReturnType<typeof serve>>['server'], demo: DemoClient): Promise<void> {
  const basic = Buffer.from(`${encodeURIComponent(demo.clientId)}:${encodeURIComponent(demo.clientSecret)}`).toString('base64');
  const tokenRes = await server.inject({ method: 'POST', url: '/oauth/token', payload: 'grant_type=client_credentials&scope=svc.api',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' } });
  const token = JSON.parse(tokenRes.payload).access_token as string;
  const call = async (method: string, url: string, payload?: unknown) => {
    const res = await server.inject({ method, url, payload: payload as object,
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() } });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.payload}`);
    return JSON.parse(res.payload) as Record<string, any>;
  };
  const today = new Date();
  const daysAgo = (n: number) => new Date(today.getTime() - n * 86_400_000).toISOString().slice(0, 10);
  const project = await call('POST', '/v1/projects', { code: 'WEB', name: 'Website relaunch',
    description: 'New public website for Acme', manager_member_id: 'ada@demo.example', start_date: daysAgo(30) });
  const tasks: [string, string, string[], string[]][] = [
    ['Collect requirements', 'high', ['ada@demo.example'], ['start', 'complete']],
    ['Design the page templates', 'high', ['grace@demo.example'], ['start']],
    ['Migrate the blog posts', 'medium', ['grace@demo.example'], ['start', 'block']],
    ['Set up analytics', 'low', [], []],
    ['Launch checklist', 'urgent', ['ada@demo.example'], []],
  ];
  const ids: string[] = [];
  for (const [name, priority, assignees, transitions] of tasks) {
    const task = await call('POST', '/v1/tasks', { project_id: project.id, name, priority, assignee_member_ids: assignees,
      due_at: new Date(today.getTime() + 14 * 86_400_000).toISOString() });
    for (const transition of transitions) await call('POST', `/v1/tasks/${task.id}/transitions`, { transition });
    ids.push(task.id);
  }
  const entries: [string, number, string, number][] = [
    ['ada@demo.example', 0, 'Requirements workshop', 180],
    ['grace@demo.example', 1, 'Template drafts', 240],
    ['grace@demo.example', 2, 'Blog export script', 90],
  ];
  for (const [member, task, notes, minutes] of entries) {
    await call('POST', '/v1/time-entries', { subject: { member_id: member }, project_id: project.id, task_id: ids[task],
      work_date: daysAgo(task + 1), minutes, billable: true, notes });
  }
  await call('POST', '/v1/invoices', { customer_id: demo.customer,
    lines: [{ description: 'Website relaunch: discovery', quantity: '7.5', unit_price: '120.00', tax_rate: '19' }] });
}

const { url: server, embedded } = await serverUrl('pg-dev', embeddedPort('dev'));
const databaseUrl = process.env.DATABASE_URL ?? withDatabase(server, 'svc');
await migrate(databaseUrl);
const demo = await seedOrganization(databaseUrl);
const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl });
const { server: http } = await serve(config, { onStopped: async () => { await embedded?.stop(); } });
if (demo) {
  await seedContent(http, demo);
  const base = http.info.uri;
  console.log(`\nDemo organization ${demo.org} seeded with a Manager-level API Client (member, manager, finance),`);
  console.log('a project with five tasks in several statuses, three time entries and a draft invoice.');
  console.log(`  client_id:     ${demo.clientId}`);
  console.log(`  client_secret: ${demo.clientSecret}   (shown once; store it now)\n`);
  console.log('Try it:');
  console.log(`  TOKEN=$(curl -s -u '${demo.clientId}:${demo.clientSecret}' -d grant_type=client_credentials -d scope=svc.api ${base}/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`);
  console.log(`  curl -s -H "Authorization: Bearer $TOKEN" ${base}/v1/tasks`);
  console.log(`  curl -s -H "Authorization: Bearer $TOKEN" ${base}/v1/invoices\n`);
  console.log(`Create an invoice for Acme Corp (${demo.customer}; emails go to .data/mail/*.eml unless SVC_SMTP_URL is set):`);
  console.log(`  curl -s -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $(date +%s%N)" -H 'Content-Type: application/json' \\`);
  console.log(`    -d '{"customer_id":"${demo.customer}","lines":[{"description":"Consulting","quantity":"10","unit_price":"120.00","tax_rate":"19"}]}' ${base}/v1/invoices\n`);
}
console.log(`Serving on ${http.info.uri}  (API reference: ${http.info.uri}/docs, metrics: ${http.info.uri}/metrics)`);
