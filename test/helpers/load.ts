// Shared by the fault tests: a steady mixed load (reads and creates with Idempotency-Keys) on a
// real API process, every answer recorded with its time, and the checks every fault must pass.
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { startReceiver, type Receiver } from './receiver.ts';

export interface Answer { at: number; ms?: number; method: string; status: number; problem?: string; retryAfter?: string | null; key?: string; body?: unknown; error?: string;
  /** A create's resource id, when it was answered 201. */
  id?: string }

export interface Load { answers: Answer[]; created: Map<string, { key: string; body: { code: string; name: string } }>; stop: () => Promise<void> }

/** `workers` loops, each alternating GET /v1/projects and POST /v1/projects, until stopped; a
 * request unanswered after `timeoutMs` is recorded as failed (status 0). A loop starts a request
 * every `paceMs` at most (0: as soon as the last is answered). Projects are coded `<prefix><n>`: a
 * second load of one organization takes another prefix. */
export function startLoad(base: string, token: string, workers = 4, { timeoutMs = 20_000, prefix = 'L', paceMs = 0 } = {}): Load {
  const answers: Answer[] = [];
  const created = new Map<string, { key: string; body: { code: string; name: string } }>();
  let running = true;
  let n = 0;
  const one = async (method: 'GET' | 'POST') => {
    const key = randomUUID();
    const body = { code: `${prefix}${++n}`, name: `Load ${prefix}${n}` };
    const at = Date.now();
    try {
      const res = await fetch(`${base}/v1/projects${method === 'GET' ? '?limit=20' : ''}`, {
        method, signal: AbortSignal.timeout(timeoutMs),
        headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json', 'idempotency-key': key } : {}) },
        body: method === 'POST' ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) : undefined;
      answers.push({ at, ms: Date.now() - at, method, status: res.status, problem: res.headers.get('content-type')?.startsWith('application/problem+json') ? json?.code : undefined,
        retryAfter: res.headers.get('retry-after'), key: method === 'POST' ? key : undefined, body: method === 'POST' ? body : undefined,
        id: method === 'POST' && res.status === 201 ? json?.id : undefined });
      if (method === 'POST') created.set(body.code, { key, body });
    } catch (e) {
      answers.push({ at, ms: Date.now() - at, method, status: 0, error: String(e), key: method === 'POST' ? key : undefined, body: method === 'POST' ? body : undefined });
      if (method === 'POST') created.set(body.code, { key, body });
    }
  };
  const loops = Array.from({ length: workers }, async (_, i) => {
    let k = i;
    while (running) {
      const at = Date.now();
      await one(k++ % 2 ? 'POST' : 'GET');
      const rest = paceMs - (Date.now() - at);
      if (rest > 0 && running) await new Promise((r) => setTimeout(r, rest));
    }
  });
  return { answers, created, stop: async () => { running = false; await Promise.all(loops); } };
}

/** How many answers and their latency, for a test's comment. */
export const percentiles = (answers: Answer[]) => {
  const ms = answers.map((a) => a.ms ?? 0).sort((x, y) => x - y);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
  return `${answers.length} answers, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${ms.at(-1) ?? 0} ms`;
};

/** Every answer is a success or a 503 problem with Retry-After: never a 500, never a hang. */
export function assertOnlyOutages(t: Test, answers: Answer[]) {
  const bad = answers.filter((a) => !(a.status >= 200 && a.status < 300)
    && !(a.status === 503 && a.problem === 'SERVICE_UNAVAILABLE' && Number(a.retryAfter) > 0));
  t.same(bad.slice(0, 5), [], `${answers.length} answers: only 2xx and 503 SERVICE_UNAVAILABLE with Retry-After`);
  const outage = answers.filter((a) => a.status === 503).length;
  t.comment(`${answers.length - outage} successes, ${outage} × 503 during the fault`);
}

/** After `since`, every answer succeeded (the service resumed by itself). When one did not, the
 * server's log lines (other than per-request lines) written while it waited are printed: the pool's
 * state at the deadline is in them. */
export function assertRecovered(t: Test, answers: Answer[], since: number, serverLog?: () => string): boolean {
  const after = answers.filter((a) => a.at >= since);
  t.ok(after.length > 10, `${after.length} answers after recovery`);
  const failed = after.filter((a) => !(a.status >= 200 && a.status < 300));
  t.same(failed.slice(0, 5).map((a) => ({ method: a.method, after_ms: a.at - since, ms: a.ms, status: a.status, problem: a.problem,
    retry_after: a.retryAfter, error: a.error })), [],
    'all of them succeeded');
  if (failed.length > 0 && serverLog) {
    const during = (time: number) => failed.some((a) => time >= a.at - 500 && time <= a.at + (a.ms ?? 0) + 500);
    const lines = serverLog().split('\n').filter((l) => !l.includes('"msg":"request"')
      && during(Date.parse(/"time":"([^"]+)"/.exec(l)?.[1] ?? '')));
    t.comment(`the server's log while the failed answers waited:\n${lines.slice(0, 40).join('\n')}`);
  }
  return failed.length === 0;
}

/** Retries every create that did not get a 201 with its own Idempotency-Key and body, as a client
 * would; then each code must exist exactly once. */
export async function retryAndCount(t: Test, base: string, token: string, load: Load, answers: Answer[],
  count: (code: string) => Promise<number>) {
  const unsure = answers.filter((a) => a.method === 'POST' && a.status !== 201);
  const retried: number[] = [];
  for (const a of unsure) {
    const res = await fetch(`${base}/v1/projects`, {
      method: 'POST', body: JSON.stringify(a.body),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': a.key! },
    });
    retried.push(res.status);
  }
  t.ok(retried.every((s) => s === 201), `${unsure.length} creates retried with their own Idempotency-Key: all 201 (created or replayed)`);
  let duplicates = 0;
  let missing = 0;
  for (const code of load.created.keys()) {
    const n = await count(code);
    if (n > 1) duplicates++;
    if (n === 0) missing++;
  }
  t.equal(duplicates, 0, `no create ran twice (${load.created.size} creates, ${unsure.length} retried)`);
  t.equal(missing, 0, 'every create exists once its client retried');
}

/** A receiver of project.created events and its endpoint on the API, as every fault test sets them up. */
export async function projectEvents(t: Test, base: string, token: string): Promise<Receiver> {
  const rx = await startReceiver(t);
  const ep = await fetch(`${base}/v1/webhook-endpoints`, {
    method: 'POST', body: JSON.stringify({ url: rx.url, events: ['project.created'] }),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  });
  t.equal(ep.status, 201, 'webhook endpoint created');
  return rx;
}
