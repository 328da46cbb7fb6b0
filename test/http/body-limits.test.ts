// Bodies built to exhaust the server: a JSON body's nesting, width and number of values
// are bounded before any recursive work, with a 400 problem naming the limit and the container.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { BODY_LIMITS, parseJsonBody } from '../../src/http/body-limits.ts';
import { ApiError } from '../../src/http/errors.ts';
import { assertProblem, startApp } from '../helpers/app.ts';

const refusal = (text: string) => {
  try {
    parseJsonBody(Buffer.from(text));
    return undefined;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { code: e.code, pointer: e.extra.errors?.[0]?.pointer };
  }
};
const nested = (n: number, open = '[', close = ']', inner = '0') => open.repeat(n) + inner + close.repeat(n);

t.test('the scanner', async (t) => {
  t.same(parseJsonBody(Buffer.from('{"a":[1,{"b":"[[[{{{"}],"c":"\\"]"}')), { a: [1, { b: '[[[{{{' }], c: '"]' },
    'brackets and quotes inside strings are not structure');
  t.equal(parseJsonBody(Buffer.alloc(0)), null, 'an empty body is null');
  t.equal(refusal(nested(BODY_LIMITS.depth)), undefined, `${BODY_LIMITS.depth} levels pass`);
  t.same(refusal(nested(BODY_LIMITS.depth + 1)), { code: 'BODY_TOO_DEEP', pointer: '/0'.repeat(BODY_LIMITS.depth) });
  t.same(refusal(nested(5000)), { code: 'BODY_TOO_DEEP', pointer: '/0'.repeat(BODY_LIMITS.depth) }, '5,000 levels: refused at the limit');
  t.same(refusal(`{"metadata":{"x":${nested(40, '{"a/b~":', '}')}}}`)?.code, 'BODY_TOO_DEEP');
  t.match(refusal(`{"metadata":{"x":${nested(40, '{"a/b~":', '}')}}}`)?.pointer, /^\/metadata\/x\/a~1b~0\/a~1b~0/, 'names escaped in the pointer');
  const wide = `{"custom_fields":{${Array.from({ length: BODY_LIMITS.members + 1 }, (_, i) => `"f${i}":1`).join(',')}}}`;
  t.same(refusal(wide), { code: 'BODY_OBJECT_TOO_LARGE', pointer: '/custom_fields' });
  const long = `{"entries":[${Array.from({ length: BODY_LIMITS.items + 1 }, () => '0').join(',')}]}`;
  t.same(refusal(long), { code: 'BODY_ARRAY_TOO_LONG', pointer: '/entries' });
  const many = `[${Array.from({ length: 11 }, () => `[${Array.from({ length: 9_999 }, () => '0').join(',')}]`).join(',')}]`;
  t.same(refusal(many)?.code, 'BODY_TOO_MANY_VALUES');
  t.same(refusal('{"a":1'), { code: 'INVALID_JSON', pointer: undefined }, 'malformed JSON is still INVALID_JSON');
  t.same(refusal('{"a":{"b":["x","y\\u0000z"]}}'), { code: 'VALIDATION_FAILED', pointer: '/a/b/1' }, 'U+0000: cannot be stored');
  t.same(refusal('{"name":"\\ud800x"}'), { code: 'VALIDATION_FAILED', pointer: '/name' }, 'a lone high surrogate');
  t.same(refusal('["\\udc00"]'), { code: 'VALIDATION_FAILED', pointer: '/0' }, 'a lone low surrogate');
  t.same(refusal('{"a":"\\\\uD83D\\uDC00"}'), { code: 'VALIDATION_FAILED', pointer: '/a' }, 'a low surrogate after an escaped backslash and the text uD83D');
  t.same(refusal('{"a":"\\u0g00"}'), { code: 'INVALID_JSON', pointer: undefined }, 'a malformed escape is malformed JSON');
  t.same(parseJsonBody(Buffer.from('{"e":"\\ud83d\\ude00 \\\\u0000"}')), { e: '\u{1F600} \\u0000' }, 'a pair, and an escaped backslash before u0000, are fine');
  try { parseJsonBody(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])); t.fail('invalid UTF-8 accepted'); } catch (e) {
    t.equal((e as ApiError).code, 'INVALID_JSON', 'bytes that are not UTF-8: INVALID_JSON');
  }
  t.same(refusal('{"__proto__":{"x":1}}'), { code: 'INVALID_JSON', pointer: undefined }, 'a __proto__ key is refused, as hapi did');
});

t.test('over HTTP, on every create that takes free-form JSON', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('manager');
  for (const url of ['/v1/projects', '/v1/tasks', '/v1/tickets', '/v1/conversations']) {
    const res = await a.request({ method: 'POST', url, token: p.token, headers: { 'idempotency-key': randomUUID() },
      payload: `{"name":"x","metadata":${nested(5000)}}` });
    assertProblem(t, res, 400, 'BODY_TOO_DEEP');
    t.equal(res.json.errors[0].pointer, '/metadata' + '/0'.repeat(BODY_LIMITS.depth - 1), `${url}: the pointer names where`);
  }
  const ok = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
    payload: { code: 'DEEP', name: 'Still served' } });
  t.equal(ok.statusCode, 201, 'and the server goes on');
});
