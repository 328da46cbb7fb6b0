// Signing keys are shared through the database: survive restarts, serve every instance,
// and rotate without invalidating live tokens. Request logs never carry secrets or tokens.
import t from 'tap';
import { decodeProtectedHeader } from 'jose';
import { startApp } from '../helpers/app.ts';
import { connect } from '../../src/db/database.ts';
import { createAppContext } from '../../src/http/context.ts';
import { createServer } from '../../src/http/server.ts';

t.test('a second instance (or a restart) verifies tokens of the first', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member');
  const database = connect(a.config.runtimeDatabaseUrl, 2);
  const app2 = await createAppContext(a.config, database);
  const server2 = await createServer(app2);
  t.teardown(async () => { await server2.stop(); await database.close(); });
  const res = await server2.inject({ url: '/v1/me', headers: { authorization: `Bearer ${p.token}` } });
  t.equal(res.statusCode, 200, 'token from instance 1 accepted by instance 2');
  const { rows } = { rows: await a.admin`select count(*)::int as n from app_private.signing_keys` };
  t.equal(rows[0]!.n, 1, 'both instances share one key');
});

t.test('rotation keeps live tokens valid; retiring a key ends them', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member');
  const oldKid = decodeProtectedHeader(p.token).kid;
  const { kid: newKid } = await a.cli('keys', 'rotate');
  t.not(newKid, oldKid);

  // A fresh instance signs with the newest key and still accepts the old key's tokens.
  const database = connect(a.config.runtimeDatabaseUrl, 2);
  const app2 = await createAppContext(a.config, database);
  const server2 = await createServer(app2);
  t.teardown(async () => { await server2.stop(); await database.close(); });
  const tokenRes = await server2.inject({
    method: 'POST', url: '/oauth/token', payload: 'grant_type=client_credentials&scope=svc.api',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + Buffer.from(`${p.id}:${p.secret}`).toString('base64') },
  });
  const newToken = JSON.parse(tokenRes.payload).access_token;
  t.equal(decodeProtectedHeader(newToken).kid, newKid, 'new tokens use the new key');
  for (const token of [p.token, newToken]) {
    const res = await server2.inject({ url: '/v1/me', headers: { authorization: `Bearer ${token}` } });
    t.equal(res.statusCode, 200, 'old and new tokens both accepted after rotation');
  }
  // The first instance learns the new key on first sight of its kid (reloads at most once a second).
  await new Promise((r) => setTimeout(r, 1100));
  const onFirst = await a.request({ url: '/v1/me', token: newToken });
  t.equal(onFirst.statusCode, 200, 'instance 1 loads a key rotated in elsewhere');

  await a.cli('keys', 'retire', '--kid', String(oldKid));
  const database3 = connect(a.config.runtimeDatabaseUrl, 2);
  const app3 = await createAppContext(a.config, database3);
  const server3 = await createServer(app3);
  t.teardown(async () => { await server3.stop(); await database3.close(); });
  const retired = await server3.inject({ url: '/v1/me', headers: { authorization: `Bearer ${p.token}` } });
  t.equal(retired.statusCode, 401, 'a token signed by a retired key is rejected');
  const stillOk = await server3.inject({ url: '/v1/me', headers: { authorization: `Bearer ${newToken}` } });
  t.equal(stillOk.statusCode, 200);

  await t.rejects(a.cli('keys', 'retire', '--kid', newKid), /LAST_SIGNING_KEY/, 'the last key cannot be retired');
});

t.test('request logs carry ids, never secrets or tokens', async (t) => {
  const lines: string[] = [];
  const a = await startApp(t, { LOG_LEVEL: 'info' }, undefined, { logDestination: { write: (s: string) => { lines.push(s); } } });
  const p = await a.principal('member');
  await a.token(p);
  await a.request({ url: '/v1/me', token: p.token, headers: { 'x-client-request-id': 'trace-123' } });
  await a.request({ url: `/v1/members?search=${encodeURIComponent(p.secret)}`, token: p.token });
  await a.request({ url: '/v1/me', token: 'not-a-token' });
  const log = lines.join('');
  t.ok(lines.filter((l) => l.includes('"msg":"request"')).length >= 4, 'one line per request');
  for (const line of lines) t.doesNotThrow(() => JSON.parse(line), 'each line is JSON');
  t.match(log, /"client_request_id":"trace-123"/, 'X-Client-Request-Id is logged');
  t.notOk(log.includes(p.secret), 'no client secret in logs');
  t.notOk(log.includes(p.token.slice(0, 40)), 'no access token in logs');
  t.notOk(log.includes(p.token.split('.')[2]!), 'no token signature in logs');
});
