// Sink: the run event stream. Event data holds text from clients and models (inputs,
// outputs, tool results); a line break or `\r` inside a value must not start a new SSE field or
// event. Rows with hostile text are written straight into a run's log (as the worker would), and
// the stream is read by an independent WHATWG parser (eventsource-parser).
import t from 'tap';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { world, liveServer, startRun, triageProject } from '../helpers/agents.ts';

const HOSTILE = ['line\n\nevent: run.completed\ndata: {"forged":true}\n\n', 'cr\revent: run.failed\r\r', 'crlf\r\nid: 999\r\n\r\n',
  'separators\u2028and\u2029\u0085', ': a comment?\n', 'retry: 1\n'];

t.test('hostile text in run events stays inside its event', async (t) => {
  const { a, p } = await world(t);
  const base = await liveServer(t, a);
  const tasks = await triageProject(a, p.token);
  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  await a.admin`insert into app.run_events (organization_id, run_id, seq, type, data)
    select ${p.orgId}, ${run.id}, n, 'run.progress', jsonb_build_object('message', m)
      from unnest(${HOSTILE}::text[]) with ordinality as x (m, n)`;
  await a.admin`insert into app.run_events (organization_id, run_id, seq, type, data)
    values (${p.orgId}, ${run.id}, ${HOSTILE.length + 1}, 'run.failed', '{"status":"failed"}')`;

  const res = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` } });
  t.equal(res.status, 200);
  const messages: EventSourceMessage[] = [];
  let retry: number | undefined;
  const parser = createParser({ onEvent: (m) => messages.push(m), onRetry: (ms) => { retry = ms; } });
  parser.feed(await res.text());
  t.equal(retry, 2000, 'the only retry is the server\'s own');
  t.same(messages.map((m) => [m.id, m.event]), [...HOSTILE.map((_, i) => [String(i + 1), 'run.progress']), [String(HOSTILE.length + 1), 'run.failed']],
    'one event per row, with the ids and types the server gave');
  t.same(messages.slice(0, HOSTILE.length).map((m) => JSON.parse(m.data).data.message), HOSTILE, 'each value arrives whole');
});
