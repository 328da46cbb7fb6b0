// Guard: every SQLSTATE the SQL raises is registered, and every HTTP-facing one maps to a known problem code.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { SQLSTATES, CONTROL_SQLSTATES, PROBLEMS } from '../../src/http/errors.ts';

const sources = [
  ...readdirSync('db/migrations').map((f) => `db/migrations/${f}`),
  ...readdirSync('db/citus/migrations').map((f) => `db/citus/migrations/${f}`),
  ...readdirSync('test/fixtures').filter((f) => f.endsWith('.sql')).map((f) => `test/fixtures/${f}`),
];

t.test('every raised SQLSTATE is registered', async (t) => {
  const raised = new Map<string, Set<string>>();
  for (const file of sources) {
    for (const m of readFileSync(file, 'utf8').matchAll(/raise\('(SV[0-9A-Z]{3})', '([A-Z_]+)'/g)) {
      if (!raised.has(m[1]!)) raised.set(m[1]!, new Set());
      raised.get(m[1]!)!.add(m[2]!);
    }
  }
  t.ok(raised.size > 0, 'found raises');
  for (const [state, codes] of raised) {
    const http = state in SQLSTATES;
    const control = (CONTROL_SQLSTATES as readonly string[]).includes(state);
    t.ok(http !== control, `${state} is registered exactly once (http: ${http}, control: ${control})`);
    if (http) for (const code of codes) t.ok(code in PROBLEMS, `${state} ${code} is a known problem code`);
  }
  t.notOk(Object.keys(SQLSTATES).some((s) => (CONTROL_SQLSTATES as readonly string[]).includes(s)), 'no SQLSTATE is in both lists');
});

t.test('raise() with a bare errcode is never used', async (t) => {
  for (const file of sources) {
    const text = readFileSync(file, 'utf8');
    const bare = [...text.matchAll(/raise exception '[^']*'/g)];
    t.equal(bare.length, 0, `${file}: every error goes through app_private.raise with a registered SQLSTATE`);
  }
});
