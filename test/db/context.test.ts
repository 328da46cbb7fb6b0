// The request context cannot be forged by the runtime role: as svc_runtime with plain
// SQL, settings copied with set_config (in another transaction or another session), bare client
// and secret ids, and the token of a revoked secret or a disabled client show nothing in any api
// view or view function, and no base table is readable at all.
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { startApp, type TestApp } from '../helpers/app.ts';
import { beginRequest, inRequest, oneConnection, tokenSha256 } from '../helpers/sql.ts';
import { fromDatabaseError, PROBLEMS } from '../../src/http/errors.ts';

type Tagged = (strings: TemplateStringsArray, ...values: any[]) => Promise<any[]>;

/** Everything the runtime role can see, per relation: api views (rows) and base tables (42501). */
async function everything(a: TestApp, q: Tagged) {
  const views = await a.admin<{ rel: string }[]>`select format('%I.%I', schemaname, viewname) as rel from pg_views
    where schemaname = 'api' order by 1`;
  const seen: Record<string, number> = {};
  for (const { rel } of views) {
    const text = `select count(*)::int as n from ${rel}`;
    seen[rel] = (await q(Object.assign([text], { raw: [text] })))[0]!.n;
  }
  // Each view's function of the same name (what the commands read their row through).
  const functions = await a.admin<{ fn: string }[]>`select format('%I.%I', n.nspname, p.proname) as fn
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace join pg_views v on v.schemaname = n.nspname and v.viewname = p.proname
   where n.nspname = 'api' and p.pronargs = 1 order by 1`;
  for (const { fn } of functions) {
    const text = `select count(*)::int as n from ${fn}()`;
    seen[`${fn}()`] = (await q(Object.assign([text], { raw: [text] })))[0]!.n;
  }
  return seen;
}

/** The transaction's statements where a request's would run: on a cluster, in the organization's
 * worker, where begin_request signs its context and a forged one would have to be (inRequest). */
const where = (t: Test, a: TestApp, tx: postgres.TransactionSql, org: string) => inRequest(t, a.runtimeUrl, tx as never, org);

async function world(t: Test) {
  const a = await startApp(t);
  const p = await a.principal('member,manager,finance,hr');
  const key = (() => { let n = 0; return () => ({ 'idempotency-key': `c${++n}` }); })();
  const proj = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'C', name: 'C' } })).json;
  await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: proj.id, name: 'T' } });
  const rt = postgres(a.runtimeUrl, oneConnection);
  const rt2 = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => Promise.all([rt.end(), rt2.end()]));
  return { a, p, rt, rt2 };
}

const settings = ['svc.organization_id', 'svc.client_id', 'svc.roles', 'svc.read_flags', 'svc.context_mac'];

t.test('a legitimate context works, and its settings copied elsewhere show nothing', async (t) => {
  const { a, p, rt, rt2 } = await world(t);
  const legit = await rt.begin(async (tx) => {
    const b = await beginRequest(tx, p);
    const q = await where(t, a, tx, p.orgId);
    const copied = await q`select name, current_setting(name, true) as value from unnest(${settings}::text[]) name`;
    return { b, copied, seen: await everything(a, q) };
  });
  t.equal(legit.b.outcome, 'ok');
  t.ok(legit.seen['api.projects']! >= 1 && legit.seen['api.tasks']! >= 1, 'with its token, the client sees its projects and tasks');
  t.ok(legit.seen['api.tasks()']! >= 1, 'and reads them through the view\'s function');
  const forge = (q: Tagged) => q`select set_config(name, value, true) from jsonb_to_recordset(${JSON.stringify(legit.copied)}::text::jsonb)
    as s(name text, value text)`;
  for (const [label, sql] of [['the same session, a later transaction', rt], ['another session', rt2]] as const) {
    const seen = await sql.begin(async (tx) => { const q = await where(t, a, tx, p.orgId); await forge(q); return everything(a, q); });
    t.same(Object.entries(seen).filter(([, n]) => n > 0), [], `copied settings in ${label}: every api view is empty`);
  }
  // The settings alone, without the signature, as anyone who knows the ids could set them.
  const bare = await rt.begin(async (tx) => {
    const q = await where(t, a, tx, p.orgId);
    await q`select set_config('svc.organization_id', ${p.orgId}, true), set_config('svc.client_id', ${p.id}, true),
      set_config('svc.roles', 'member,manager,finance,hr', true)`;
    return everything(a, q);
  });
  t.same(Object.entries(bare).filter(([, n]) => n > 0), [], 'forged settings: every api view is empty');
  const [acc] = await rt.begin(async (tx) => {
    const q = await where(t, a, tx, p.orgId);
    await forge(q);
    return q`select app.current_organization_id() as org, app.current_client_id() as client, app.current_roles() as roles`;
  });
  t.same(acc, { org: null, client: null, roles: [] }, 'the accessors the policies read return nothing');
});

t.test('the read flags are signed with the context: widened, the context is gone', async (t) => {
  const { a, rt } = await world(t);
  // A member-only client: no time entries, and tickets only as a member (the module is on).
  const m = await a.createClient(await a.createOrg(), { roles: 'member' });
  const r = await rt.begin(async (tx) => {
    await beginRequest(tx, m);
    const q = await where(t, a, tx, m.orgId);
    const [before] = await q`select current_setting('svc.read_flags') as flags, app_private.may_read_time_entries() as time,
      app.current_organization_id() is not null as context`;
    await q`select set_config('svc.read_flags', 'tickets,internal_notes,time_entries', true)`;
    const [after] = await q`select app_private.may_read_time_entries() as time, app.current_organization_id() is not null as context`;
    return { before, after, seen: await everything(a, q) };
  });
  t.same(r.before, { flags: 'tickets,internal_notes', time: false, context: true }, 'the member\'s flags: tickets and notes');
  t.same(r.after, { time: false, context: false }, 'time entries flag added by hand: the signature fails, no context at all');
  t.same(Object.entries(r.seen).filter(([, n]) => n > 0), [], 'and every api view is empty');
});

t.test('ids are not credentials; revoked secrets and disabled clients end the context at once', async (t) => {
  const { a, p, rt } = await world(t);
  for (const token of [p.id, p.secretId, `${p.id}:${p.secretId}`, randomBytes(24).toString('base64url')]) {
    const r = await rt.begin(async (tx) => {
      const [b] = await tx`select * from api.begin_request(${p.orgId}, ${tokenSha256(token)}, null)`;
      return { b, seen: await everything(a, await where(t, a, tx, p.orgId)) };
    });
    t.equal(r.b!.outcome, 'invalid_token', `begin_request with ${token.slice(0, 8)}…: invalid_token`);
    t.same(Object.entries(r.seen).filter(([, n]) => n > 0), [], 'and nothing visible');
  }
  // A recorded token stops working when its secret is revoked or its client disabled.
  const rotated = await a.cli('client', 'rotate-secret', '--client', p.id);
  const token = randomBytes(24).toString('base64url');
  await a.admin`select api.access_token_record(${p.orgId}, ${p.id}, ${p.secret}, sha256(convert_to(${token}, 'UTF8')), now() + interval '1 hour')`;
  const outcome = async () => (await rt.begin(async (tx) => tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(token)}, null)`))[0]!.outcome;
  t.equal(await outcome(), 'ok', 'the recorded token works');
  // The database is named the token by its SHA-256 only: the token itself, as a statement's text
  // would show it, is no credential there (nor is its hash in another case, or a prefix of it).
  for (const [name, given] of [['the token itself', token], ['its hash in capitals', tokenSha256(token).toUpperCase()],
    ['a prefix of its hash', tokenSha256(token).slice(0, 63)]] as const) {
    const [r] = await rt.begin(async (tx) => tx`select outcome from api.begin_request(${p.orgId}, ${given}, null)`);
    t.equal(r!.outcome, 'invalid_token', `${name}: refused`);
  }
  await a.cli('client', 'revoke-secret', '--client', p.id, '--secret-id', p.secretId);
  t.equal(await outcome(), 'invalid_token', 'its secret revoked: refused at once');
  const other = { ...p, secret: rotated.client_secret, secretId: rotated.secret_id };
  const token2 = randomBytes(24).toString('base64url');
  await a.admin`select api.access_token_record(${other.orgId}, ${other.id}, ${other.secret}, sha256(convert_to(${token2}, 'UTF8')), now() + interval '1 hour')`;
  await a.cli('client', 'disable', '--client', p.id);
  const [d] = await rt.begin(async (tx) => tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(token2)}, null)`);
  t.equal(d!.outcome, 'client_disabled', 'its client disabled: refused at once');
  // A revoked secret cannot record new tokens either.
  const [late] = await rt`select api.access_token_record(${p.orgId}, ${p.id}, ${p.secret}, sha256('x'::bytea), now() + interval '1 hour') as ok`;
  t.equal(late!.ok, false, 'a revoked secret records no token');
});

t.test('expired token records are refused and purged', async (t) => {
  const { a, p, rt } = await world(t);
  const token = randomBytes(24).toString('base64url');
  await a.admin`insert into app_private.access_tokens (organization_id, token_sha256, client_id, secret_id, expires_at)
    values (${p.orgId}, sha256(convert_to(${token}, 'UTF8')), ${p.id}, ${p.secretId}, now() - interval '1 hour')`;
  const [b] = await rt.begin(async (tx) => tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(token)}, null)`);
  t.equal(b!.outcome, 'invalid_token', 'an expired record is refused');
  const [{ n }] = await a.admin`select control.purge_expired_access_tokens() as n` as any;
  t.ok(n >= 1, `${n} expired record(s) purged`);
  const [{ left }] = await a.admin`select count(*)::int as left from app_private.access_tokens where expires_at < now()` as any;
  t.equal(left, 0);
  t.equal((await a.admin`select has_function_privilege('svc_runtime', 'control.purge_expired_access_tokens()', 'execute') as x`)[0]!.x, false,
    'the runtime role cannot purge');
});

t.test('no base table is readable by the runtime role, with or without a context', async (t) => {
  const { a, p, rt } = await world(t);
  const tables = await a.admin<{ rel: string }[]>`select format('%I.%I', n.nspname, c.relname) as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname in ('app', 'app_private') and c.relkind = 'r'
    order by 1`;
  t.ok(tables.length > 30);
  const readable: string[] = [];
  for (const { rel } of tables) {
    const [r] = await rt`select has_table_privilege('svc_runtime', ${rel}, 'select') or has_any_column_privilege('svc_runtime', ${rel}, 'select') as x`;
    if (r!.x) readable.push(rel);
  }
  t.same(readable, [], 'svc_runtime holds no SELECT on any base table or column');
  const denied = await rt.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await where(t, a, tx, p.orgId);
    return q`select custom_fields, priority from app.tasks where organization_id = ${p.orgId}`;
  }).then(() => 'read', (e) => e.code);
  t.equal(denied, '42501', 'Role-restricted columns (task custom_fields, priority) are out of reach even with a context');
});

t.test('api.idempotency_claim (reads the context once): without a signed context it refuses and writes nothing', async (t) => {
  const { a, p, rt } = await world(t);
  const claim = (q: Tagged, key: string) =>
    q`select * from api.idempotency_claim('POST', '/v1/projects', ${key}, 'f1')`;
  const keysOf = async () => (await a.admin`select count(*)::int as n from app.idempotency_keys where key like 'ctx-%'`)[0]!.n;
  const refused = async (setup: (q: Tagged) => Promise<unknown>) =>
    rt.begin(async (tx) => { const q = await where(t, a, tx, p.orgId); await setup(q); return claim(q, 'ctx-forged'); })
      .then(() => 'claimed', (e) => e.message);
  t.equal(await refused(async () => undefined), 'CONTEXT_MISSING', 'no context: CONTEXT_MISSING');
  t.equal(await refused((q) => q`select set_config('svc.organization_id', ${p.orgId}, true), set_config('svc.client_id', ${p.id}, true),
    set_config('svc.roles', 'manager', true)`), 'CONTEXT_MISSING', 'forged settings: CONTEXT_MISSING');
  t.equal(await keysOf(), 0, 'nothing written');
  const states = await rt.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await where(t, a, tx, p.orgId);
    const state = (await claim(q, 'ctx-real'))[0]!.state;
    await q`select api.idempotency_complete('POST', '/v1/projects', 'ctx-real', 'f1', 201, '{}'::jsonb, '{}')`;
    return [state];
  });
  const again = await rt.begin(async (tx) => {
    await beginRequest(tx, p);
    return (await claim(await where(t, a, tx, p.orgId), 'ctx-real'))[0]!.state;
  });
  t.same([...states, again], ['claimed', 'replay'], 'with its token: claimed, then the same key, written with its response, is found again');
  t.equal(await keysOf(), 1);
  // The key is written once, by the completion: over a live key it refuses; an expired one it replaces.
  const complete = (fingerprint: string) => rt.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await where(t, a, tx, p.orgId);
    const state = (await claim(q, 'ctx-real'))[0]!.state;
    await q`select api.idempotency_complete('POST', '/v1/projects', 'ctx-real', ${fingerprint}, 201, '{}'::jsonb, '{"again":true}')`;
    return state;
  }).then((state) => state, (e) => e.message);
  t.equal(await complete('f1'), 'IDEMPOTENCY_KEY_IN_USE', 'a completion over a live key fails its transaction');
  const inUse = await rt.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await where(t, a, tx, p.orgId);
    await q`select api.idempotency_complete('POST', '/v1/projects', 'ctx-real', 'f1', 201, '{}'::jsonb, '{}')`;
  }).then(() => undefined, (e) => fromDatabaseError(e));
  t.same(inUse && { code: inUse.code, status: PROBLEMS[inUse.code].status, headers: inUse.extra.headers },
    { code: 'IDEMPOTENCY_KEY_IN_USE', status: 409, headers: { 'Retry-After': '1' } }, 'which the API answers 409 with Retry-After');
  await a.admin`update app.idempotency_keys set expires_at = now() - interval '1 second' where key = 'ctx-real'`;
  t.equal(await complete('f2'), 'claimed', 'an expired key is claimed again and replaced');
  t.same(await a.admin`select fingerprint, response_body from app.idempotency_keys where key = 'ctx-real'`,
    [{ fingerprint: 'f2', response_body: '{"again":true}' }]);
});

t.test('one-round-trip creates, as the runtime role in SQL: only a fresh claim marks the transaction, the gated command runs only under it, and a command answering other than one row fails', async (t) => {
  const { a, p, rt } = await world(t);
  const projects = async () => (await a.admin`select count(*)::int as n from app.projects where organization_id = ${p.orgId} and code like 'G%'`)[0]!.n;
  // The statement the API sends behind the claim (src/http/operation/command.ts, sendTogether), reduced to its gate.
  const gated = (q: Tagged, code: string) => q`select c.doc from api.project_create(${JSON.stringify({ code, name: 'gated' })}::text::jsonb, null::integer) c
    where current_setting('svc.claimed', true) = 'yes'`;
  const attempt = (key: string, fingerprint: string, code: string) => rt.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await where(t, a, tx, p.orgId);
    const [c] = await q`select state from api.idempotency_claim('POST', '/v1/projects', ${key}, ${fingerprint})`;
    const rows = (await gated(q, code)).length;
    if (rows) await q`select api.idempotency_complete('POST', '/v1/projects', ${key}, ${fingerprint}, 201, '{}'::jsonb, '{}')`;
    return { state: c!.state as string, rows };
  });
  t.same(await attempt('gate-1', 'f1', 'G1'), { state: 'claimed', rows: 1 }, 'a fresh claim: the command runs');
  t.same(await attempt('gate-1', 'f1', 'G2'), { state: 'replay', rows: 0 }, 'the same key again: nothing runs');
  t.same(await attempt('gate-1', 'f2', 'G3'), { state: 'mismatch', rows: 0 }, 'the key with another request: nothing runs');
  t.equal(await projects(), 1, 'one project');
  // The mark is not a permission: set by hand without a context, the command still refuses.
  const forged = await rt.begin(async (tx) => {
    const q = await where(t, a, tx, p.orgId);
    await q`select set_config('svc.claimed', 'yes', true)`;
    return gated(q, 'G4');
  }).then(() => 'ran', (e) => e.message);
  t.equal(forged, 'ROLE_REQUIRED', 'a forged mark without a context creates nothing (no context, no Role)');
  t.equal(await projects(), 1);
  // Set only for the transaction: the next one on the same session starts unmarked.
  t.equal((await rt`select current_setting('svc.claimed', true) as v`)[0]!.v ?? '', '', 'no mark outside the transaction');
  const answered = async (n: number) => rt`select api.command_answered(${n}::bigint)`.then(() => 'ok', (e) => `${e.code} ${e.message}`);
  t.equal(await answered(1), 'ok');
  t.equal(await answered(0), 'SV500 COMMAND_ROW_COUNT');
  t.equal(await answered(2), 'SV500 COMMAND_ROW_COUNT');
});
