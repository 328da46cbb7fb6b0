// What an operator sees: structured logs that never carry credentials, capability URLs or query
// strings; Prometheus metrics; liveness and readiness.
import t from 'tap';
import { startApp, assertProblem } from '../helpers/app.ts';
import type { DestinationStream } from 'pino';

/** A pino destination that keeps the parsed lines. */
function captureLogs() {
  const lines: Record<string, any>[] = [];
  const stream: DestinationStream = { write: (s: string) => { for (const l of s.split('\n').filter(Boolean)) lines.push(JSON.parse(l)); } };
  return { lines, stream };
}

t.test('request logs: route template, request id, status; never tokens, paths or query strings', async (t) => {
  const logs = captureLogs();
  const a = await startApp(t, { LOG_LEVEL: 'info' }, undefined, { logDestination: logs.stream });
  const p = await a.principal('manager');
  const secretish = 'prj_00000000000000000000deadbeef';
  const res = await a.request({ url: `/v1/projects/${secretish}?search=confidential`, token: p.token,
    headers: { 'x-client-request-id': 'crid-1', cookie: 'session=abc' } });
  t.equal(res.statusCode, 404, 'an unknown project');
  await a.request({ url: '/v1/me', token: p.token });
  const requestLines = logs.lines.filter((l) => l.msg === 'request');
  const line = requestLines.find((l) => l.route === '/v1/projects/{project_id}');
  t.ok(line, 'a line for the request, by route template');
  t.equal(line?.status, 404);
  t.equal(line?.method, 'GET');
  t.equal(line?.request_id, res.headers['x-request-id'], 'the request id the client saw');
  t.equal(line?.client_request_id, 'crid-1');
  t.equal(line?.level, 'info');
  t.type(line?.ms, 'number');
  t.ok(requestLines.some((l) => l.route === '/v1/me' && l.status === 200));
  const all = JSON.stringify(logs.lines);
  for (const leak of [p.token, p.secret, secretish, 'confidential', 'session=abc', 'Bearer ']) {
    t.notOk(all.includes(leak), `no log line contains ${leak.slice(0, 12)}…`);
  }
});

t.test('redaction catches what is logged by accident', async (t) => {
  const logs = captureLogs();
  const a = await startApp(t, { LOG_LEVEL: 'info' }, undefined, { logDestination: logs.stream });
  a.app.logger.info({ req: { url: '/files/uploads/upl_x?sig=capability', headers: { authorization: 'Bearer abc', cookie: 'c=1' } },
    client_secret: 'svcsk_x' }, 'oops');
  const line = logs.lines.find((l) => l.msg === 'oops')!;
  t.equal(line.req.url, '[redacted]');
  t.equal(line.req.headers.authorization, '[redacted]');
  t.equal(line.req.headers.cookie, '[redacted]');
  t.equal(line.client_secret, '[redacted]');
});

t.test('/metrics: requests by route template, latency, pool, outbox', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('manager');
  await a.request({ url: '/v1/me', token: p.token });
  await a.request({ url: '/v1/projects/prj_unknown1', token: p.token });
  const res = await a.request({ url: '/metrics' });
  t.equal(res.statusCode, 200);
  t.match(String(res.headers['content-type']), /^text\/plain/);
  const text = res.body;
  t.match(text, 'svc_http_requests_total{method="GET",route="/v1/me",status="200"} 1');
  t.match(text, 'svc_http_requests_total{method="GET",route="/v1/projects/{project_id}",status="404"} 1');
  t.match(text, /svc_http_request_duration_seconds_bucket\{le="[\d.]+",method="GET",route="\/v1\/me",status="200"\} \d/);
  t.match(text, /\nsvc_db_pool_size 5\n/);
  t.match(text, /\nsvc_db_pool_in_use \d+\n/);
  t.match(text, /\nsvc_db_pool_waiting \d+\n/);
  t.match(text, /\nsvc_outbox_oldest_pending_event_seconds [\d.e+-]+\n/);
  t.match(text, /\nsvc_webhook_deliveries_pending \d+\n/);
  t.match(text, /\nsvc_webhook_oldest_due_delivery_seconds [\d.e+-]+\n/);
  t.match(text, '# HELP svc_worker_jobs_total');
  t.match(text, '# HELP svc_webhook_attempts_total');
  t.match(text, /\nsvc_process_resident_memory_bytes \d+/);
  t.notMatch(text, 'prj_unknown1', 'paths never become labels');
});

t.test('/metrics behind SVC_METRICS_TOKEN', async (t) => {
  const a = await startApp(t, { SVC_METRICS_TOKEN: 'scrape-me' });
  assertProblem(t, await a.request({ url: '/metrics' }), 401, 'INVALID_TOKEN');
  assertProblem(t, await a.request({ url: '/metrics', headers: { authorization: 'Bearer wrong' } }), 401, 'INVALID_TOKEN');
  const ok = await a.request({ url: '/metrics', headers: { authorization: 'Bearer scrape-me' } });
  t.equal(ok.statusCode, 200);
});

t.test('/health and /ready', async (t) => {
  const a = await startApp(t);
  const health = await a.request({ url: '/health' });
  t.equal(health.statusCode, 200);
  t.same(health.json, { status: 'ok' });
  const ready = await a.request({ url: '/ready' });
  t.equal(ready.statusCode, 200);
  t.equal(ready.json.status, 'ready');
  t.match(ready.json.schema_version, /^\d{14}$/);

  t.test('a database behind on migrations is not ready', async (t) => {
    const [latest] = await a.admin`select max(version) as v from public.schema_migrations`;
    await a.admin`delete from public.schema_migrations where version = ${latest!.v}`;
    const res = await a.request({ url: '/ready' });
    assertProblem(t, res, 503, 'SERVICE_UNAVAILABLE');
    t.match(res.json.detail, 'run the migrations');
    t.ok(res.headers['retry-after']);
    await a.admin`insert into public.schema_migrations (version) values (${latest!.v})`;
    t.equal((await a.request({ url: '/ready' })).statusCode, 200, 'ready again');
  });

  t.test('a database a later release migrated is ready (its migrations expand, they do not break this code)', async (t) => {
    await a.admin`insert into public.schema_migrations (version) values ('29991231235959')`;
    t.teardown(async () => { await a.admin`delete from public.schema_migrations where version = '29991231235959'`; });
    const res = await a.request({ url: '/ready' });
    t.equal(res.statusCode, 200);
    t.equal(res.json.schema_version, '29991231235959');
  });

  t.test('an unreachable database is not ready; the process stays alive', async (t) => {
    await a.database.close();
    const res = await a.request({ url: '/ready' });
    assertProblem(t, res, 503, 'SERVICE_UNAVAILABLE');
    t.equal((await a.request({ url: '/health' })).statusCode, 200, 'still alive');
  });
});

t.test('the reference page and its assets load from this server', async (t) => {
  const a = await startApp(t);
  const page = await a.request({ url: '/docs' });
  t.equal(page.statusCode, 200);
  t.match(String(page.headers['content-type']), /^text\/html/);
  t.notMatch(page.body, /https?:\/\/(?!svc\.example)/, 'no asset from another origin');
  const src = /<script src="([^"]+)"/.exec(page.body)?.[1];
  t.match(src, /^\/docs\/assets\/redoc\.[0-9a-f]{12}\.js$/);
  const asset = await a.request({ url: src! });
  t.equal(asset.statusCode, 200);
  t.match(String(asset.headers['content-type']), /javascript/);
  t.ok(asset.body.length > 500_000, 'the Redoc bundle');
  t.match(String(asset.headers['cache-control']), 'immutable');
  t.match(page.body, "Redoc.init('/openapi.json'");
  const doc = await a.request({ url: '/openapi.json' });
  t.equal(doc.statusCode, 200);
});
