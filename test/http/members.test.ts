// Organization and members over HTTP: getOrganization, the member field policy per Role,
// getMember, listMembers filters and limits, and cursor pagination (including under
// concurrent inserts and with tampered or reused cursors).
import t from 'tap';
import postgres from 'postgres';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';

const BASIC = ['object', 'id', 'display_name', 'email', 'status'];
const WORK = ['svc_roles', 'job_title', 'timezone'];
const HR = ['employee_number', 'hire_date', 'employment_type'];

/** Walks every page of a listing; returns the ids in the order received and the last page. */
async function walk(a: TestApp, token: string, base: string, between?: (page: number, seen: string[]) => Promise<void>) {
  const ids: string[] = [];
  let after: string | null = null;
  let last: any;
  for (let page = 0; page < 100; page++) {
    const sep = base.includes('?') ? '&' : '?';
    const res = await a.request({ url: after ? `${base}${sep}after=${encodeURIComponent(after)}` : base, token });
    if (res.statusCode !== 200) throw new Error(`page ${page}: ${res.statusCode} ${res.body}`);
    last = res.json;
    for (const m of res.json.data) ids.push(m.id);
    if (!res.json.has_more) break;
    after = res.json.next_cursor;
    if (between) await between(page, ids);
  }
  return { ids, last };
}

t.test('getOrganization: the spec fields exactly, and an ETag', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('finance');
  const res = await a.request({ url: '/v1/organization', token: p.token });
  t.equal(res.statusCode, 200, res.body);
  t.same(Object.keys(res.json).sort(),
    ['object', 'id', 'name', 'status', 'timezone', 'currency', 'locale', 'created_at', 'links'].sort(), 'exact field set');
  t.same(Object.keys(res.json.links), ['web'], 'links has only web');
  t.equal(res.json.object, 'organization');
  t.equal(res.json.id, p.orgId);
  t.match(res.json.id, /^org_/);
  t.equal(res.json.status, 'active');
  t.equal(res.json.timezone, 'Europe/Berlin');
  t.equal(res.json.currency, 'EUR');
  t.equal(res.json.locale, 'en-GB');
  t.type(res.json.name, 'string');
  t.match(res.json.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  t.ok(!Number.isNaN(Date.parse(res.json.created_at)));
  t.match(res.json.links.web, /^https?:\/\//);
  for (const k of ['plan', 'billing', 'subscription', 'license', 'version', 'web_url', 'updated_at']) {
    t.notOk(k in res.json, `no ${k}`);
  }
  t.match(String(res.headers.etag), /^"\d+"$/, 'strong ETag "<n>"');
});

t.test('member field policy per Role', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  await a.cli('member', 'add', '--org', org, '--email', 'hr.person@example.com', '--name', 'HR Person', '--roles', 'member',
    '--employee-number', 'E-1', '--hire-date', '2020-01-02', '--employment-type', 'employee',
    '--job-title', 'Engineer', '--timezone', 'Europe/Paris');
  const table: { roles: string; work: boolean; hr: boolean }[] = [
    { roles: 'member', work: true, hr: false },
    { roles: 'manager', work: true, hr: false },
    { roles: 'finance', work: false, hr: false },
    { roles: 'hr', work: true, hr: true },
    { roles: 'finance,hr', work: true, hr: true },
    { roles: 'member,finance', work: true, hr: false },
  ];
  for (const row of table) {
    const c = await a.createClient(org, { roles: row.roles });
    const token = await a.token(c);
    const expected = [...BASIC, ...(row.work ? WORK : []), ...(row.hr ? HR : [])].sort();
    const one = await a.request({ url: '/v1/members/hr.person%40example.com', token });
    t.equal(one.statusCode, 200, `${row.roles}: getMember ${one.body}`);
    t.same(Object.keys(one.json).sort(), expected, `${row.roles}: getMember keys`);
    const list = await a.request({ url: '/v1/members', token });
    t.equal(list.statusCode, 200, `${row.roles}: listMembers ${list.body}`);
    const item = list.json.data.find((m: any) => m.id === 'hr.person@example.com');
    t.ok(item, `${row.roles}: member listed`);
    t.same(Object.keys(item ?? {}).sort(), expected, `${row.roles}: list item keys`);
    t.same(item, one.json, `${row.roles}: list item equals getMember`);
    t.equal(one.json.object, 'member');
    t.equal(one.json.email, 'hr.person@example.com');
    t.equal(one.json.display_name, 'HR Person');
    t.equal(one.json.status, 'active');
    if (row.work) {
      t.same(one.json.svc_roles, ['member']);
      t.equal(one.json.job_title, 'Engineer');
      t.equal(one.json.timezone, 'Europe/Paris');
    }
    if (row.hr) {
      t.equal(one.json.employee_number, 'E-1');
      t.equal(one.json.hire_date, '2020-01-02');
      t.equal(one.json.employment_type, 'employee');
    }
  }
});

t.test('getMember', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member');
  const other = await a.principal('member');
  await a.addMember(p.orgId, 'ada@example.com', { name: 'Ada' });
  await a.addMember(other.orgId, 'bob@example.com', { name: 'Bob' });

  const res = await a.request({ url: '/v1/members/%20Ada%40Example.COM', token: p.token });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json.id, 'ada@example.com');
  t.equal(res.json.email, 'ada@example.com');
  t.match(String(res.headers.etag), /^"\d+"$/, 'strong ETag "<n>"');
  t.equal(res.headers.etag, '"1"', 'a fresh member is version 1');

  const plain = await a.request({ url: '/v1/members/ada@example.com', token: p.token });
  t.equal(plain.statusCode, 200, 'unencoded @ works too');

  const unknown = await a.request({ url: '/v1/members/nobody%40example.com', token: p.token });
  assertProblem(t, unknown, 404, 'MEMBER_NOT_FOUND');

  const foreign = await a.request({ url: '/v1/members/bob%40example.com', token: p.token });
  assertProblem(t, foreign, 404, 'MEMBER_NOT_FOUND');
  t.notMatch(foreign.body, /Bob/, 'nothing about the other organization\'s member leaks');

  const own = await a.request({ url: '/v1/members/bob%40example.com', token: other.token });
  t.equal(own.statusCode, 200, 'the other organization sees its own member');
});

t.test('listMembers: filters and limits', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager,finance,hr');
  const fin = await a.principal('finance', { org: p.orgId });
  const other = await a.principal('member');
  await a.addMember(p.orgId, 'ada@example.com', { name: 'Ada Lovelace', roles: 'member,manager' });
  await a.addMember(p.orgId, 'grace@example.com', { name: 'Grace Hopper', roles: 'member' });
  await a.addMember(p.orgId, 'old@example.com', { name: 'Old Timer', status: 'inactive' });
  await a.addMember(p.orgId, 'pct@example.com', { name: '100% Done' });
  await a.addMember(p.orgId, 'under@example.com', { name: 'Snake_Case' });
  await a.addMember(p.orgId, 'fin@example.com', { name: 'Fin Ance', roles: 'finance' });
  await a.addMember(other.orgId, 'ada@other.example', { name: 'Ada Other' });
  await a.addMember(other.orgId, 'stranger@other.example', { name: 'Stranger' });

  const ids = async (qs: string, token = p.token) => {
    const res = await a.request({ url: `/v1/members${qs}`, token });
    t.equal(res.statusCode, 200, `${qs}: ${res.body}`);
    t.equal(res.json.object, 'list');
    return (res.json.data as any[]).map((m) => m.id);
  };

  const active = await ids('');
  t.same(active, ['ada@example.com', 'fin@example.com', 'grace@example.com', 'pct@example.com', 'under@example.com'].sort(),
    'default: active members only, sorted by id');
  t.notOk(active.includes('old@example.com'), 'inactive excluded by default');
  t.same(await ids('?status=inactive'), ['old@example.com'], 'status=inactive returns only inactive');
  t.same(await ids('?status=active'), active);

  const bogus = await a.request({ url: '/v1/members?status=bogus', token: p.token });
  assertProblem(t, bogus, 400, 'INVALID_REQUEST');
  t.ok(bogus.json?.errors?.some((e: any) => e.pointer === '/status'), 'errors[].pointer /status');

  t.same(await ids('?search=lovel'), ['ada@example.com'], 'name substring');
  t.same(await ids('?search=HOPPER'), ['grace@example.com'], 'case-insensitive');
  t.same(await ids('?search=grace%40example.com'), ['grace@example.com'], 'exact email');
  t.same(await ids('?search=GRACE%40Example.com'), ['grace@example.com'], 'exact email, case-insensitive');
  t.same(await ids('?search=grace%40example'), [], 'partial email is not a match');
  t.same(await ids('?search=%25'), ['pct@example.com'], "'%' is literal");
  t.same(await ids('?search=_'), ['under@example.com'], "'_' is literal");
  t.same(await ids('?search=e_c'), ['under@example.com'], "'_' inside a term is literal");
  t.same(await ids('?search=a%25'), [], "'a%' is literal (no name contains it)");
  t.same(await ids('?search=old'), [], 'search respects the default status');
  t.same(await ids('?search=old&status=inactive'), ['old@example.com']);
  t.same(await ids('?search=Ada'), ['ada@example.com'], 'other organizations never appear in search');

  t.same(await ids('?role=manager'), ['ada@example.com'], 'role filter');
  t.same(await ids('?role=finance'), ['fin@example.com']);
  t.same(await ids('?role=hr'), []);
  const badRole = await a.request({ url: '/v1/members?role=boss', token: p.token });
  assertProblem(t, badRole, 400, 'INVALID_REQUEST');

  const finRole = await a.request({ url: '/v1/members?role=member', token: fin.token });
  assertProblem(t, finRole, 403, 'ROLE_REQUIRED');
  const finList = await a.request({ url: '/v1/members', token: fin.token });
  t.equal(finList.statusCode, 200, 'finance can list without role filter');

  for (const limit of ['0', '201', '-1', 'abc', '1.5']) {
    const res = await a.request({ url: `/v1/members?limit=${limit}`, token: p.token });
    assertProblem(t, res, 400, 'INVALID_REQUEST');
  }
  const l200 = await a.request({ url: '/v1/members?limit=200', token: p.token });
  t.equal(l200.statusCode, 200, l200.body);
  const l1 = await a.request({ url: '/v1/members?limit=1', token: p.token });
  t.equal(l1.statusCode, 200);
  t.equal(l1.json.data.length, 1);
  t.equal(l1.json.has_more, true);
  t.type(l1.json.next_cursor, 'string');

  for (const token of [p.token, fin.token]) {
    const all = [...await ids('', token), ...await ids('?status=inactive', token), ...await ids('?limit=200', token)];
    t.notOk(all.some((id) => id.endsWith('@other.example')), 'members of other organizations never appear');
  }
  const theirs = await ids('', other.token);
  t.same(theirs, ['ada@other.example', 'stranger@other.example'], 'the other organization sees only its own');
});

t.test('pagination', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member');
  const q = await a.principal('member');
  await a.admin`insert into app.members (organization_id, id, display_name)
    select ${p.orgId}, 'p' || lpad(g::text, 4, '0') || 'x@seed.test', 'Seed ' || g from generate_series(1, 300) g`;
  await a.admin`insert into app.members (organization_id, id, display_name)
    select ${q.orgId}, 'q' || lpad(g::text, 4, '0') || 'x@seed.test', 'Other ' || g from generate_series(1, 20) g`;
  // Sort order is the database's (collation of id), which is what the API promises.
  const expected = (await a.admin`select id from app.members where organization_id = ${p.orgId} and status = 'active'
    order by id`).map((r) => r.id as string);
  t.equal(expected.length, 300);

  t.test('walk with limit 37', async (t) => {
    let pages = 0;
    const { ids, last } = await walk(a, p.token, '/v1/members?limit=37', async () => { pages++; });
    t.equal(pages + 1, Math.ceil(300 / 37), 'number of pages');
    t.same(ids, expected, 'every id exactly once, in sorted order');
    t.equal(new Set(ids).size, 300, 'no duplicates');
    t.equal(last.has_more, false);
    t.equal(last.next_cursor, null);
    t.equal(last.data.length, 300 % 37);
  });

  t.test('exact multiple of limit ends with has_more false', async (t) => {
    const { ids, last } = await walk(a, p.token, '/v1/members?limit=100');
    t.same(ids, expected);
    t.equal(last.has_more, false);
    t.equal(last.next_cursor, null);
  });

  t.test('tampered and reused cursors', async (t) => {
    const first = await a.request({ url: '/v1/members?limit=10', token: p.token });
    const cursor: string = first.json.next_cursor;
    t.type(cursor, 'string');
    const ok = await a.request({ url: `/v1/members?limit=10&after=${encodeURIComponent(cursor)}`, token: p.token });
    t.equal(ok.statusCode, 200);
    t.equal(ok.json.data[0].id, expected[10]);
    // A different limit is not a different filter.
    const otherLimit = await a.request({ url: `/v1/members?limit=5&after=${encodeURIComponent(cursor)}`, token: p.token });
    t.equal(otherLimit.statusCode, 200, 'limit may change between pages');

    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const i of [0, Math.floor(cursor.length / 3), cursor.indexOf('.') + 1, cursor.length - 1]) {
      const bad = flip(cursor, i);
      t.not(bad, cursor);
      const res = await a.request({ url: `/v1/members?limit=10&after=${encodeURIComponent(bad)}`, token: p.token });
      assertProblem(t, res, 400, 'INVALID_CURSOR');
    }
    for (const bad of ['garbage', 'a.b.c', '.', '']) {
      const res = await a.request({ url: `/v1/members?after=${encodeURIComponent(bad)}`, token: p.token });
      t.equal(res.statusCode, 400, `after=${JSON.stringify(bad)} is rejected`);
    }

    const reused = await a.request({ url: `/v1/members?limit=10&search=x&after=${encodeURIComponent(cursor)}`, token: p.token });
    assertProblem(t, reused, 400, 'INVALID_CURSOR');
    const reusedStatus = await a.request({ url: `/v1/members?status=inactive&after=${encodeURIComponent(cursor)}`, token: p.token });
    assertProblem(t, reusedStatus, 400, 'INVALID_CURSOR');

    // A cursor from another organization's listing carries only a sort key: still only the caller's members.
    const theirs = await a.request({ url: '/v1/members?limit=5', token: q.token });
    const foreignCursor: string = theirs.json.next_cursor;
    t.type(foreignCursor, 'string');
    const res = await a.request({ url: `/v1/members?limit=200&after=${encodeURIComponent(foreignCursor)}`, token: p.token });
    if (res.statusCode === 200) {
      t.ok(res.json.data.every((m: any) => expected.includes(m.id)), 'only the caller\'s members');
      t.notOk(res.json.data.some((m: any) => m.id.startsWith('q')), 'no members of the other organization');
    } else {
      assertProblem(t, res, 400, 'INVALID_CURSOR');
    }
  });

  t.test('walk under concurrent inserts', async (t) => {
    const before = new Set(expected);
    const inserted: string[] = [];
    const other = postgres(a.adminUrl, { max: 1, onnotice: () => {} });
    t.teardown(() => other.end());
    const { ids, last } = await walk(a, p.token, '/v1/members?limit=37', async (page, seen) => {
      const lastId = [...seen].reverse().find((id) => before.has(id))!;
      // Six or seven new members per gap: some sort before the cursor position, some after.
      const pos = expected.indexOf(lastId);
      const around = [expected[Math.max(0, pos - 20)]!, expected[Math.max(0, pos - 1)]!, lastId,
        expected[Math.min(299, pos + 1)]!, expected[Math.min(299, pos + 30)]!, expected[299]!, expected[0]!];
      for (const [i, base] of around.entries()) {
        if (inserted.length >= 50) break;
        const id = base.replace('x@', `${'y'.repeat(i + 1)}${page}@`);
        await other`insert into app.members (organization_id, id, display_name) values (${p.orgId}, ${id}, ${'New ' + id})`;
        inserted.push(id);
      }
    });
    while (inserted.length < 50) {
      const id = `zz${inserted.length}@late.test`;
      await other`insert into app.members (organization_id, id, display_name) values (${p.orgId}, ${id}, 'Late')`;
      inserted.push(id);
    }
    t.equal(inserted.length, 50);
    t.equal(last.has_more, false);
    t.equal(last.next_cursor, null);
    t.equal(new Set(ids).size, ids.length, 'no duplicates at all');
    const counts = new Map<string, number>();
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    const missing = [...before].filter((id) => counts.get(id) !== 1);
    t.same(missing, [], 'every member that existed before the walk appears exactly once');
    t.ok(ids.every((id) => before.has(id) || inserted.includes(id)), 'nothing unexpected');
    const finalOrder = (await a.admin`select id from app.members where organization_id = ${p.orgId} order by id`)
      .map((r) => r.id as string);
    const rank = new Map(finalOrder.map((id, i) => [id, i]));
    t.ok(ids.every((id, i) => i === 0 || rank.get(ids[i - 1]!)! < rank.get(id)!), 'received in ascending id order');
    t.ok(ids.length > 300, 'some members inserted after the cursor position were seen');
  });
});
