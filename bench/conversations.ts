// The conversations benchmark, run by bench/run.ts on the same server and database: 20
// conversations at once, each sending messages one after another; for each, createConversationMessage
// → the assistant's reply stored (the run's completion and the reply are one transaction, so the
// end of the run's event stream marks it), p50/p99. The model is a scripted OpenAI-compatible
// provider on loopback in this process (BENCH_MODEL_PORT), answering at once.
import http from 'node:http';
import type { BenchOptions, BenchResult } from './common.ts';
import { logger } from './common.ts';

const log = logger('conversations');
const CONVERSATIONS = 20;
const MESSAGES_EACH = 15;
export const BENCH_MODEL_PORT = Number(process.env.BENCH_MODEL_PORT ?? 3911);

/** The scripted provider: every chat completion is a short answer, no tool calls. */
export async function startScriptedModel(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices":[{"index":0,"message":{"role":"assistant","content":"Noted."},"finish_reason":"stop"}]}');
    });
  });
  await new Promise<void>((r) => server.listen(BENCH_MODEL_PORT, '127.0.0.1', r));
  return server;
}

export const BENCH_MODEL_ENV = { SVC_MODEL_URL: `http://127.0.0.1:${BENCH_MODEL_PORT}/v1` };

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]!; };

export async function runConversationBench(o: BenchOptions): Promise<BenchResult> {
  const failed: string[] = [];
  const auth = { authorization: `Bearer ${o.token}` };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${o.base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json',
      'idempotency-key': `cnv-bench-${Date.now()}-${Math.random()}` }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  log(`${CONVERSATIONS} conversations × ${MESSAGES_EACH} messages`);
  const latencies: number[] = [];
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONVERSATIONS }, async (_, i) => {
    const cnv = await post('/v1/conversations', { title: `bench ${i}` });
    for (let m = 0; m < MESSAGES_EACH; m++) {
      const start = process.hrtime.bigint();
      try {
        const sent = await post(`/v1/conversations/${cnv.id}/messages`, { content: [{ type: 'text', text: `message ${m} of conversation ${i}` }] });
        const text = await (await fetch(`${o.base}/v1/runs/${sent.run.id}/events`, { headers: auth })).text();
        if (!text.includes('event: run.completed')) throw new Error(`run ${sent.run.id}: ${text.slice(-300)}`);
        latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
      } catch (e) {
        failed.push('conversation message');
        log(String(e));
      }
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const markdown = [
    '### Conversations (issue 18)', '',
    `${CONVERSATIONS} conversations at once, ${MESSAGES_EACH} messages each in turn; a scripted OpenAI-compatible model on loopback answering at once; the server's in-process worker.`, '',
    '| measure | value |', '|---|---|',
    `| createConversationMessage → assistant message stored, p50 | ${pct(latencies, 0.5).toFixed(1)} ms |`,
    `| createConversationMessage → assistant message stored, p99 | ${pct(latencies, 0.99).toFixed(1)} ms |`,
    `| messages answered per second | ${(latencies.length / seconds).toFixed(0)} |`,
    '',
  ].join('\n');
  return { markdown, failed };
}
