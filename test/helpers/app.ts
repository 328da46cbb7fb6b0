// Test harness: every call to startApp() gets its own database cloned from the migrated
// template, a real hapi server on a real PostgreSQL connection as svc_runtime, and helpers
// that act as the control plane.
import type { Test } from 'tap';
import type { DestinationStream } from 'pino';
import postgres from 'postgres';
import { appendFileSync } from 'node:fs';
import { loadConfig, type Config } from '../../src/config.ts';
import { connectRuntime, type Database } from '../../src/db/database.ts';
import { createAppContext, type AppContext } from '../../src/http/context.ts';
import { createServer } from '../../src/http/server.ts';
import type { Operation } from '../../src/http/operation.ts';
import { run as admin } from '../../src/admin/cli.ts';
import { createTestDatabase } from './database.ts';
import { testOperations } from './test-routes.ts';
import { ContractChecker } from './contract.ts';

export { createTestDatabase, CITUS_WORKERS, oneServer } from './database.ts';

export interface Client { id: string; secret: string; secretId: string; orgId: string }

export interface TestApp {
  app: AppContext;
  server: Awaited<ReturnType<typeof createServer>>;
  config: Config;
  database: Database;
  /** Owner connection: the control plane and test setup. */
  admin: postgres.Sql;
  adminUrl: string;
  runtimeUrl: string;
  cli: (...argv: string[]) => Promise<Record<string, any>>;
  createOrg: (opts?: { plan?: string; name?: string }) => Promise<string>;
  addMember: (org: string, email: string, opts?: { name?: string; roles?: string; status?: string; jobTitle?: string }) => Promise<string>;
  createClient: (org: string, opts?: { roles?: string; license?: string; name?: string }) => Promise<Client>;
  token: (client: Pick<Client, 'id' | 'secret'>) => Promise<string>;
  /** A fresh organization with one client holding the given Roles, and a token for it. */
  principal: (roles?: string, opts?: { org?: string; license?: string }) => Promise<Client & { token: string }>;
  request: (opts: { method?: string; url: string; token?: string; payload?: unknown; headers?: Record<string, string> }) =>
    Promise<{ statusCode: number; headers: Record<string, any>; json: any; body: string }>;
}

/** One checker per document in a test process: compiling its validators is the costly part. */
const checkers = new Map<string, ContractChecker>();
async function contractFor(server: Awaited<ReturnType<typeof createServer>>) {
  const doc = (await server.inject('/openapi.json')).payload;
  let checker = checkers.get(doc);
  if (!checker) checkers.set(doc, checker = new ContractChecker(JSON.parse(doc)));
  return checker;
}

export async function startApp(t: Test, env: Record<string, string> = {}, extra: Operation[] = testOperations,
  opts: { logDestination?: DestinationStream; runtimeUrlFor?: (database: string) => string } = {}): Promise<TestApp> {
  const { adminUrl, runtimeUrl, name } = await createTestDatabase(t);
  // The errors the server logs are kept (the last few) so that a 500's body in a test's failure
  // carries the server's own line for it; SVC_TEST_ERROR_LOG=<file> appends every one there too (a
  // survey of the 500s of a run, such as the first runs of a file on a Citus cluster).
  const errorLog = process.env.SVC_TEST_ERROR_LOG;
  const logged: string[] = [];
  const config = loadConfig({ ...process.env, RATE_LIMIT_REQUESTS: '100000', LOG_LEVEL: 'error', ...env,
    DATABASE_URL: adminUrl, ...(opts.runtimeUrlFor ? { RUNTIME_DATABASE_URL: opts.runtimeUrlFor(name) } : {}) });
  const database = connectRuntime(config, 5);
  const app = await createAppContext(config, database, {
    logDestination: opts.logDestination ?? { write: (line: string) => {
      if (logged.push(line) > 20) logged.shift();
      if (errorLog) appendFileSync(errorLog, line);
    } },
  });
  const server = await createServer(app, extra);
  await server.initialize();
  const adminSql = postgres(adminUrl, { max: 2, onnotice: () => {} });
  t.teardown(async () => {
    await server.stop();
    await database.close();
    await adminSql.end();
  });

  let n = 0;
  const cli = async (...argv: string[]) => {
    const r = await admin(argv, adminUrl);
    if (r.code !== 0) throw Object.assign(new Error(`svc-admin ${argv.join(' ')}: ${JSON.stringify(r.err)}`), { result: r });
    return r.out as Record<string, any>;
  };
  const createOrg: TestApp['createOrg'] = async (opts = {}) => (await cli('org', 'create', '--name', opts.name ?? `Org ${++n}`,
    '--plan', opts.plan ?? 'business', '--timezone', 'Europe/Berlin', '--currency', 'EUR', '--locale', 'en-GB')).organization_id;
  const addMember: TestApp['addMember'] = async (org, email, opts = {}) => (await cli('member', 'add', '--org', org, '--email', email,
    '--name', opts.name ?? email.split('@')[0]!, '--roles', opts.roles ?? 'member', '--status', opts.status ?? 'active',
    ...(opts.jobTitle ? ['--job-title', opts.jobTitle] : []))).member_id;
  const createClient: TestApp['createClient'] = async (org, opts = {}) => {
    const r = await cli('client', 'create', '--org', org, '--name', opts.name ?? `client ${++n}`,
      '--license', opts.license ?? 'manager', '--roles', opts.roles ?? 'member,manager,finance,hr');
    return { id: r.client_id, secret: r.client_secret, secretId: r.secret_id, orgId: org };
  };
  // Every response is checked against the document this server serves (test/helpers/contract.ts).
  let contract: ContractChecker | undefined;
  const request: TestApp['request'] = async ({ method = 'GET', url, token, payload, headers = {} }) => {
    const allHeaders = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers };
    const res = await server.inject({ method, url, payload: payload as any, headers: allHeaders });
    let json: unknown;
    try { json = res.payload ? JSON.parse(res.payload) : undefined; } catch { json = undefined; }
    contract ??= await contractFor(server);
    const route = (res.request as { route?: { path?: string } }).route?.path;
    const problems = contract.violations({
      method, routePath: route, path: new URL(url, 'http://x').pathname, requestBody: payload,
      requestContentType: Object.entries(allHeaders).find(([k]) => k.toLowerCase() === 'content-type')?.[1],
      status: res.statusCode, contentType: res.headers['content-type'] as string | undefined, body: res.payload,
    });
    if (problems.length && process.env.SVC_CONTRACT_LOG) {
      // Survey mode (while fixing the document): record every violation instead of failing at the first.
      appendFileSync(process.env.SVC_CONTRACT_LOG, problems.map((p) => p + '\n').join(''));
    } else if (problems.length) {
      throw new Error(`the response does not match the OpenAPI document:\n  ${problems.join('\n  ')}`);
    }
    // A 500 is a bug: its body, a failing assertion's message, carries what the server logged for it.
    const id = res.statusCode === 500 ? (json as { request_id?: string } | undefined)?.request_id : undefined;
    const why = id ? logged.filter((l) => l.includes(id)).join('') : '';
    return { statusCode: res.statusCode, headers: res.headers, json, body: why ? `${res.payload}\nlogged: ${why}` : res.payload };
  };
  const token: TestApp['token'] = async (client) => {
    const res = await request({
      method: 'POST', url: '/oauth/token', payload: 'grant_type=client_credentials&scope=svc.api',
      headers: { 'content-type': 'application/x-www-form-urlencoded',
        authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64') },
    });
    if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`);
    return res.json.access_token;
  };
  const principal: TestApp['principal'] = async (roles = 'member,manager,finance,hr', opts = {}) => {
    const org = opts.org ?? await createOrg();
    const c = await createClient(org, { roles, license: opts.license ?? 'manager' });
    return { ...c, token: await token(c) };
  };
  return { app, server, config, database, admin: adminSql, adminUrl, runtimeUrl, cli, createOrg, addMember, createClient, token, principal, request };
}

/** Asserts a problem+json response with the given status and code. */
export function assertProblem(t: Test, res: { statusCode: number; headers: Record<string, any>; json: any }, status: number, code: string) {
  t.equal(res.statusCode, status, `status ${status} (${code})`);
  t.match(String(res.headers['content-type']), /^application\/problem\+json/, 'problem+json');
  t.equal(res.json?.code, code, `code ${code}`);
  t.equal(res.json?.status, status, 'status member equals the HTTP status');
  t.type(res.json?.request_id, 'string', 'request_id present');
  t.type(res.json?.type, 'string');
  t.type(res.json?.title, 'string');
}
