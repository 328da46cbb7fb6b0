import t from 'tap';
import { startApp } from '../helpers/app.ts';

t.test('me', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const res = await a.request({ url: '/v1/me', token: p.token });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json.id, p.id);
});
