// The run event stream with a real SSE client: replay, Last-Event-ID, heartbeats, reconnect,
// the end, and the per-client limit on open streams.
import t from 'tap';
import { EventSource } from 'eventsource';
import { startWorker } from '../../src/worker/index.ts';
import { key, world, liveServer, startRun, triageProject } from '../helpers/agents.ts';
import { runWakeName } from '../../src/agents/hub.ts';
import postgres from 'postgres';
import { inRequest, tokenSha256 } from '../helpers/sql.ts';

/** A promise that rejects after `ms` instead of hanging the file until tap's timeout. */
const within = <T>(ms: number, what: string, p: Promise<T>) => Promise.race([p,
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms).unref())]);

t.test('the event stream: a real SSE client, replay, Last-Event-ID, heartbeats, reconnect, the end', async (t) => {
  const { a, p } = await world(t, { SVC_STREAM_HEARTBEAT_MS: '200' });
  const base = await liveServer(t, a);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const tasks = await triageProject(a, p.token);

  const open = (runId: string) => {
    const events: { id: string; type: string; data: any }[] = [];
    const es = new EventSource(`${base}/v1/runs/${runId}/events`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${p.token}` } }),
    });
    const waitFor = (type: string) => new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} within 15 s; got ${events.map((e) => e.type).join(', ')}`)), 15_000);
      const check = () => { if (events.some((e) => e.type === type)) { clearTimeout(timer); resolve(); } else setTimeout(check, 20); };
      check();
    });
    for (const type of ['run.started', 'run.progress', 'run.tool.started', 'run.tool.completed', 'run.requires_action', 'run.completed', 'run.failed', 'run.cancelled']) {
      es.addEventListener(type, (m) => events.push({ id: m.lastEventId, type, data: JSON.parse(m.data) }));
    }
    return { es, events, waitFor };
  };

  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  const s = open(run.id);
  await s.waitFor('run.requires_action');
  t.same(s.events.map((e) => e.type), ['run.started', 'run.tool.started', 'run.tool.completed', 'run.progress', 'run.requires_action']);
  t.match(s.events[2]!.data, { id: '3', type: 'run.tool.completed', created_at: /Z$/,
    data: { skill: 'tasks.find_attention', status: 'completed', resources: [{ type: 'task' }] } });
  // The server ends the stream (as a restart would): the client reconnects with Last-Event-ID and misses nothing.
  a.app.runEvents.close();
  await new Promise((r) => setTimeout(r, 200));
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'dismiss' } } })).statusCode, 202);
  await s.waitFor('run.completed');
  s.es.close();
  const ids = s.events.map((e) => Number(e.id));
  t.same(ids, ids.map((_, i) => i + 1), 'every event once, in order, across the reconnect');
  t.same(s.events.slice(5).map((e) => e.type), ['run.started', 'run.completed']);
  t.match(s.events.at(-1)!.data.data, { status: 'succeeded', output: { dismissed: true } });

  // A finished run replays after Last-Event-ID and ends; heartbeats on an idle stream.
  const res = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}`, 'last-event-id': '5' } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const text = await res.text();
  t.match(text, /^retry: 2000\n\nid: 6\nevent: run\.started\ndata: \{.*\}\n\nid: 7\nevent: run\.completed\n/);
  t.notMatch(text, /id: 5\n/);
  // Resumed after the last event of a finished run: 204, so an EventSource stops reconnecting.
  const over = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}`, 'last-event-id': '7' } });
  t.equal(over.status, 204, 'nothing after the terminal event: 204');
  t.equal(await over.text(), '');
  const es = new EventSource(`${base}/v1/runs/${run.id}/events`, {
    fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${p.token}`, 'last-event-id': '7' } }),
  });
  await within(10_000, 'the 204 closes the EventSource', new Promise<void>((resolve) => { es.onerror = () => resolve(); }));
  t.equal(es.readyState, EventSource.CLOSED, 'an EventSource given 204 closes for good');
  es.close();
  const bad = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}`, 'last-event-id': 'abc' } });
  t.equal(bad.status, 400);

  // An idle stream: heartbeats, and no database connection held while idle.
  const idle = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  await a.request({ method: 'POST', url: `/v1/runs/${idle.id}/cancel`, token: p.token, headers: key() });
  const waitingRun = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  await new Promise((r) => setTimeout(r, 500));
  const ctrl = new AbortController();
  const stream = await fetch(`${base}/v1/runs/${waitingRun.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: ctrl.signal });
  const reader = stream.body!.getReader();
  let got = '';
  const until = Date.now() + 5000;
  while (!got.includes(': ping') && Date.now() < until) got += new TextDecoder().decode((await within(5000, 'a heartbeat', reader.read())).value);
  t.match(got, /: ping\n\n/);
  // The client is disabled: the idle stream ends at its next heartbeat.
  await a.cli('client', 'disable', '--client', p.id);
  let ended = false;
  const deadline = Date.now() + 5000;
  while (!ended && Date.now() < deadline) ended = (await within(5000, 'the end of a disabled client\'s stream', reader.read())).done;
  t.ok(ended, 'the stream of a disabled client ends');
  ctrl.abort();
  t.ok(a.app.runEvents.streams <= 1);
});

t.test('event streams: one client holds at most SVC_STREAMS_PER_CLIENT open at once (429 RATE_LIMITED)', async (t) => {
  const { a, p } = await world(t, { SVC_STREAMS_PER_CLIENT: '1' });
  const base = await liveServer(t, a);
  const run = (await startRun(a, p.token, 'agt_echo', { input: { message: 'one' } })).json;
  const ctrl = new AbortController();
  const first = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: ctrl.signal });
  t.equal(first.status, 200);
  const second = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` } });
  t.equal(second.status, 429);
  t.match(second.headers.get('content-type'), /^application\/problem\+json/);
  t.equal(second.headers.get('retry-after'), '5');
  t.equal((await second.json() as any).code, 'RATE_LIMITED');
  // Another client is not affected.
  const other = await a.principal('member,manager', { org: p.orgId });
  const mine = (await startRun(a, other.token, 'agt_echo', { input: { message: 'two' } })).json;
  const theirs = await fetch(`${base}/v1/runs/${mine.id}/events`, { headers: { authorization: `Bearer ${other.token}` }, signal: ctrl.signal });
  t.equal(theirs.status, 200);
  ctrl.abort();
  // Closed streams free their place.
  let again = 0;
  for (const until = Date.now() + 5000; Date.now() < until;) {
    const c2 = new AbortController();
    const r = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: c2.signal });
    again = r.status;
    c2.abort();
    if (again === 200) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  t.equal(again, 200, 'a new stream once the first is closed');
});


t.test('the wake-up names no run: any role may LISTEN, so the payload is a keyed name only the owner and the API can compute', async (t) => {
  const { a, p } = await world(t);
  const base = await liveServer(t, a);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const heard: string[] = [];
  const listener = await a.admin.listen('svc_run_events', (payload) => heard.push(payload));
  t.teardown(() => listener.unlisten());
  const run = (await startRun(a, p.token, 'agt_echo', { input: { message: 'quiet' } })).json;
  // The stream still hears its run's events (the listener computes the same name).
  const text = await within(10_000, 'the echo run\'s stream', fetch(`${base}/v1/runs/${run.id}/events`,
    { headers: { authorization: `Bearer ${p.token}` } }).then((r) => r.text()));
  t.match(text, /event: run\.completed\n/);
  for (let i = 0; i < 50 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(heard.length >= 2, `the run's events were notified (${heard.length})`);
  const { key } = (await a.admin<{ key: Buffer }[]>`select key from app_private.run_wake_key`)[0]!;
  t.same([...new Set(heard)], [runWakeName(key, run.id)], 'every payload is the run\'s keyed name');
  t.notOk(heard.some((h) => h.includes(run.id) || h.includes(run.id.slice(4))), 'and never its id');
  t.match(heard[0], /^[0-9a-f]{32}$/);
  t.equal(key.length, 32);
  // The key is not readable by the runtime role except through the API listener's function.
  const [priv] = await a.admin`select has_table_privilege('svc_runtime', 'app_private.run_wake_key', 'select') as tbl,
    has_function_privilege('svc_runtime', 'app_private.run_wake_name(text)', 'execute') as fn`;
  t.same(priv, { tbl: false, fn: false });
});


t.test('a run cancelled through the API is announced after the commit, not from the request\'s transaction (NOTIFY\'s lock would serialize commits)', async (t) => {
  // Heartbeats far apart: a stream that hears the cancel at once was woken by the notification.
  const { a, p } = await world(t, { SVC_STREAM_HEARTBEAT_MS: '60000' });
  const base = await liveServer(t, a);
  const heard: string[] = [];
  const listener = await a.admin.listen('svc_run_events', (payload) => heard.push(payload));
  t.teardown(() => listener.unlisten());
  const nameOf = async (id: string) => (await a.admin<{ name: string }[]>`select app_private.run_wake_name(${id}) as name`)[0]!.name;

  // Inside, as svc_runtime: a request's transaction (begin_request's context) collects the name, and its commit notifies nothing.
  const quiet = (await startRun(a, p.token, 'agt_echo', { input: { message: 'quiet' } })).json;
  const rt = postgres(a.runtimeUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => rt.end());
  const collected = await rt.begin(async (tx) => {
    const [b] = await tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(p.token)}, null)`;
    t.equal(b!.outcome, 'ok');
    const q = await inRequest(t, a.runtimeUrl, tx, p.orgId);
    await q`select api.run_cancel(${quiet.id})`;
    return (await q`select current_setting('svc.run_wake', true) as names`)[0]!.names;
  });
  t.equal(collected, await nameOf(quiet.id), 'the transaction collected the run\'s wake name');
  await new Promise((r) => setTimeout(r, 300));
  t.same(heard, [], 'and its commit notified nothing');

  // Through HTTP: the request notifies once committed, and an open stream hears the cancel at once.
  const run = (await startRun(a, p.token, 'agt_echo', { input: { message: 'loud' } })).json;
  const ctrl = new AbortController();
  t.teardown(() => ctrl.abort());
  const stream = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: ctrl.signal });
  t.equal(stream.status, 200);
  const reader = stream.body!.getReader();
  const cancelled = await a.request({ method: 'POST', url: `/v1/runs/${run.id}/cancel`, token: p.token, headers: key() });
  t.equal(cancelled.statusCode, 200);
  let got = '';
  while (!got.includes('event: run.cancelled')) got += new TextDecoder().decode((await within(5000, 'the cancel on the stream', reader.read())).value);
  t.match(got, /event: run\.cancelled\n/);
  // The stream's process and this listener hear the same NOTIFY on two connections, in no set order.
  const name = await nameOf(run.id);
  for (let i = 0; i < 100 && !heard.includes(name); i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(heard.includes(name), 'the wake-up came by NOTIFY, after the commit');
});
