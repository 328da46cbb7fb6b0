// An attacker's week, compressed: generated bodies to every write operation of the
// OpenAPI document, on a real API process. Structural bombs (deep, wide, huge, not UTF-8, not
// JSON), and bodies shaped by each operation's own schema whose values are hostile (every Unicode
// category, lone surrogates, U+0000, huge strings, extreme numbers, wrong types). Every answer is
// a success or a 4xx problem+json, never a 5xx, never a hang; afterwards the process is alive and
// its memory is back near its baseline. Seeded: SVC_FUZZ_SEED repeats a run, SVC_FUZZ_ROUNDS
// sends more (default 1 round after the warm-up).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createTestDatabase } from '../helpers/app.ts';
import { adminCli, spawnApi, tokenFrom } from '../helpers/processes.ts';

const SEED = Number(process.env.SVC_FUZZ_SEED ?? 20261127);
const ROUNDS = Number(process.env.SVC_FUZZ_ROUNDS ?? 1);

/** mulberry32: small, seeded, good enough to pick cases. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

/** One sample of each Unicode general category family, and the strings parsers and sinks trip on. */
const STRINGS = [
  '', ' ', 'x', 'Ǆ', 'ʰ', 'ǅ', 'ß', 'ǂ', '\u0301', '\u0903', '\u20dd', '٣', 'Ⅻ', '½', '_', '-', '(', ')', '«', '»', '!', '+',
  '$', '^', '©', ' ', '\u2028', '\u2029', '\u0007', '\u00ad', '\ue000', '\uffff', '\ufeff', '\u202e', '\u200b', '😀', '👩‍👩‍👧', '\ud800', '\udfff',
  '\u0000', 'a\u0000b', '\r\n', '=1+1', '@SUM(A1)', '../../etc/passwd', '..\\..\\x', "'; drop table app.projects; --", '{{7*7}}', '${7*7}',
  '<script>alert(1)</script>', '%00', '%s%n', 'NaN', '-0', '1e309', 'null', 'true', '[]', '{}', 'prj_x', 'tsk_' + 'a'.repeat(64),
  'x'.repeat(1000), 'x'.repeat(100_001), 'é'.repeat(50_000), '2026-02-30', '9999-12-31T23:59:59.999Z', '0000-01-01',
];
const NUMBERS = [0, -0, 1, -1, 0.5, 1e308, -1e308, 2 ** 53 + 1, 1e-320, 123456789.123456789, 2 ** 31, -(2 ** 31) - 1];

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; required?: string[]; enum?: unknown[];
  anyOf?: Schema[]; oneOf?: Schema[]; additionalProperties?: boolean | Schema };

/** A value of the schema's shape (so that it passes type checks and reaches deeper code), hostile
 * in its leaves; now and then of the wrong type altogether. */
function valueFor(r: ReturnType<typeof prng>, s: Schema | undefined, depth = 0): unknown {
  if (!s || depth > 6) return r.pick(STRINGS);
  if (r.next() < 0.08) return r.pick<unknown>([null, true, 7, 'str', [], {}, [[[]]], r.pick(NUMBERS)]);
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return valueFor(r, r.pick(alt), depth);
  if (s.enum && r.next() < 0.6) return r.pick(s.enum);
  const type = Array.isArray(s.type) ? r.pick(s.type) : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) if ((s.required ?? []).includes(k) || r.next() < 0.7) out[k] = valueFor(r, v, depth + 1);
      if (r.next() < 0.2) out[r.pick(STRINGS).slice(0, 50) || 'extra'] = r.pick(STRINGS);
      return out;
    }
    case 'array': return Array.from({ length: r.pick([0, 1, 2, 3, 150]) }, () => valueFor(r, s.items, depth + 1));
    case 'integer': case 'number': return r.pick(NUMBERS);
    case 'boolean': return r.next() < 0.5;
    case 'null': return null;
    default: return r.pick(STRINGS);
  }
}

/** Bodies no schema describes. */
const STRUCTURAL: (string | Buffer)[] = [
  '['.repeat(5000) + ']'.repeat(5000),
  '{"a":' + '{"a":'.repeat(3000) + '1' + '}'.repeat(3001),
  '{' + Array.from({ length: 20_000 }, (_, i) => `"k${i}":${i}`).join(',') + '}',
  '[' + Array.from({ length: 50_000 }, () => '0').join(',') + ']',
  JSON.stringify({ name: 'x'.repeat(900_000) }),
  Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d]),
  '{"name": "unterminated', '{"a":1,}', 'null', '[]', '"a string"', '42', '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}', '\ufeff{}',
];

interface Op { method: string; path: string; operationId: string; schema?: Schema }

function operations(doc: any): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      out.push({ method: method.toUpperCase(), path, operationId: op.operationId, schema: op.requestBody?.content?.['application/json']?.schema });
    }
  }
  return out;
}

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

t.test('generated bodies to every write operation', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const cli = adminCli(adminUrl);
  const org = (await cli('org', 'create', '--name', 'Fuzz', '--plan', 'business', '--timezone', 'UTC', '--currency', 'EUR', '--locale', 'en-GB')).organization_id!;
  const c = await cli('client', 'create', '--org', org, '--name', 'fuzz', '--license', 'manager', '--roles', 'member,manager,finance,hr');
  const api = await spawnApi(t, { DATABASE_URL: adminUrl, RATE_LIMIT_REQUESTS: '100000000', LOG_LEVEL: 'error' });
  const token = await tokenFrom(api.url, { id: c.client_id!, secret: c.client_secret! });
  const doc = await (await fetch(`${api.url}/openapi.json`)).json();
  const ops = operations(doc);
  t.ok(ops.length >= 40, `${ops.length} write operations in the OpenAPI document`);

  // Real ids where the world has them, so that bodies reach the operations' own checks.
  const post = async (path: string, body: unknown) => (await (await fetch(`${api.url}${path}`, { method: 'POST', body: JSON.stringify(body),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() } })).json()) as { id: string };
  const project = await post('/v1/projects', { code: 'FZ', name: 'Fuzz' });
  const task = await post('/v1/tasks', { project_id: project.id, name: 'Fuzz task' });
  const ids: Record<string, string> = { project_id: project.id, task_id: task.id };

  const failures: string[] = [];
  let sent = 0;
  const send = async (op: Op, body: string | Buffer | undefined, r: ReturnType<typeof prng>) => {
    // A lone surrogate has no percent-encoding: its would-be UTF-8 bytes go instead (not UTF-8 at all).
    const encode = (v: string) => { try { return encodeURIComponent(v); } catch { return '%ED%A0%80'; } };
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encode(ids[name] && r.next() < 0.7 ? ids[name] : r.pick(STRINGS.slice(0, 60)) || 'x'));
    const started = Date.now();
    sent++;
    try {
      const res = await fetch(`${api.url}${path}`, {
        method: op.method, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body), signal: AbortSignal.timeout(15_000),
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      });
      const text = await res.text();
      const type = res.headers.get('content-type') ?? '';
      if (res.status >= 500) failures.push(`${op.operationId} ${res.status} ${text.slice(0, 300)} ← ${String(body).slice(0, 200)}`);
      // The token endpoint answers in OAuth's own format (RFC 6749 §5.2), every other one with a problem.
      else if (res.status >= 400 && !(op.path === '/oauth/token'
        ? type.startsWith('application/json') && JSON.parse(text).error
        : type.startsWith('application/problem+json') && JSON.parse(text).code)) {
        failures.push(`${op.operationId} ${res.status} not a problem document: ${type} ${text.slice(0, 200)}`);
      }
    } catch (e) {
      failures.push(`${op.operationId} no answer after ${Date.now() - started} ms: ${(e as Error).message} ← ${String(body).slice(0, 200)}`);
    }
  };
  const round = async (seed: number) => {
    const r = prng(seed);
    for (const op of ops) {
      const bodies: (string | Buffer | undefined)[] = op.method === 'DELETE' ? [undefined, '{}']
        : [...STRUCTURAL, ...Array.from({ length: 12 }, () => JSON.stringify(valueFor(r, op.schema)))];
      // Four at a time: concurrency is part of the test, and the run stays short.
      for (let i = 0; i < bodies.length; i += 4) await Promise.all(bodies.slice(i, i + 4).map((b) => send(op, b, r)));
    }
  };

  await round(SEED - 1); // warm-up: JIT, caches, prepared statements
  await new Promise((r) => setTimeout(r, 1000));
  const baseline = rssKb(api.child.pid!);
  for (let i = 0; i < ROUNDS; i++) await round(SEED + i);
  await new Promise((r) => setTimeout(r, 3000));
  const after = rssKb(api.child.pid!);

  t.same([...new Set(failures.map((f) => f.slice(0, 160)))].slice(0, 20), [], `${sent} requests: every answer a success or a 4xx problem, none lost or late`);
  t.equal(api.child.exitCode, null, 'the process is alive');
  t.equal((await fetch(`${api.url}/health`)).status, 200);
  t.equal((await fetch(`${api.url}/v1/projects/${project.id}`, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'and serves');
  t.ok(after - baseline < 96 * 1024, `RSS ${Math.round(baseline / 1024)} MiB after the warm-up, ${Math.round(after / 1024)} MiB after the fuzz`);
  t.notMatch(api.stdout(), /"level":"error"/, 'no error logged');
});
