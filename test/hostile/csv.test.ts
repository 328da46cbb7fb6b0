// Sink: a report's CSV download. A value valid for the API must not become a live
// formula in the spreadsheet that opens the export (OWASP "CSV Injection"): a text cell starting
// with =, +, -, @, a tab or a carriage return gets a leading single quote; decimal numbers in the
// columns a report declares numeric stay numbers; the JSON export keeps every value exactly.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { startApp } from '../helpers/app.ts';
import { startWorker } from '../../src/worker/index.ts';
import { stringify } from 'csv-stringify/sync';
import { csvLine, csvText } from '../../src/routes/reports.ts';

const HOSTILE = ['=HYPERLINK("https://evil.example","x")', '+1+1', '-2+3', '@SUM(A1:A9)', '\t=1', '\r=1', '=cmd|\' /C calc\'!A0', '-12.50'];

t.test('the rule', async (t) => {
  for (const v of HOSTILE) t.equal(csvText(v, false), `'${v}`, JSON.stringify(v));
  t.equal(csvText('-12.50', true), '-12.50', 'a decimal in a numeric column stays a number');
  t.equal(csvText('=1+1', true), "'=1+1", 'a numeric column holds nothing else unneutralised');
  t.equal(csvText('Roadmap - phase 2', false), 'Roadmap - phase 2', 'a dash inside is nothing');
  t.equal(csvText('', false), '');
});

// The download writes its records itself (csvLine); csv-stringify, given the same rules, is the
// reference: the two agree on every kind of value a result row can hold.
t.test('records are the ones csv-stringify makes', async (t) => {
  const values: unknown[] = [...HOSTILE, 'Plain', '', 'a,b', 'say "hi"', 'line\nbreak', 'cr\rx', '\r\n', '"', ' lead', '١٢',
    '-12.50', '-1e3', '12.', '.5', '0', 0, 42, -7, 1.5, 1234567890123, true, false, null, undefined, 'Ünïcødé ✓', '=', '-',
    { a: 1, b: 'x,y' }, [1, '"'], [], {}];
  for (const numeric of [false, true]) {
    for (const v of values) {
      const expected = stringify([[v, 'next']], { record_delimiter: 'windows', quote_record_delimiter: true,
        cast: { boolean: (b) => String(b), string: (s, context) => csvText(s, numeric && context.index === 0) } });
      t.equal(csvLine([v, 'next'], [numeric, false]), expected, `${JSON.stringify(v)}${numeric ? ' in a numeric column' : ''}`);
    }
  }
});

t.test('project names in the CSV and JSON downloads of a report', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  for (const [i, name] of [...HOSTILE, 'Plain'].entries()) {
    const res = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
      payload: { code: `H${i}`, name } });
    t.equal(res.statusCode, 201, `${JSON.stringify(name)} is a valid name`);
  }
  const download = async (format: string) => {
    const run = (await a.request({ method: 'POST', url: '/v1/reports/rpt_project_progress/runs', token: p.token,
      headers: { 'idempotency-key': randomUUID() }, payload: { format } })).json;
    for (let i = 0; i < 200; i++) {
      const r = (await a.request({ url: `/v1/reports/rpt_project_progress/runs/${run.id}`, token: p.token })).json;
      if (r.status === 'succeeded') break;
      await new Promise((res) => setTimeout(res, 50));
    }
    const d = await a.request({ method: 'POST', url: `/v1/reports/rpt_project_progress/runs/${run.id}/download`, token: p.token });
    return (await a.server.inject({ url: new URL(d.json.download_url).pathname })).payload;
  };
  const csv = await download('csv');
  // RFC 4180 quotes a field holding a line break: a lone CR too, which a parser could take for one.
  t.ok(csv.includes('"\'\r=1"'), 'a cell holding a CR is quoted');
  const rows = parse(csv, { columns: true, relax_quotes: false }) as Record<string, string>[];
  const names = rows.map((r) => r.project_name!).sort();
  t.same(names, [...HOSTILE.map((v) => `'${v}`), 'Plain'].sort(), 'every cell a spreadsheet would evaluate starts with a quote');
  t.ok(rows.every((r) => /^\d+$/.test(r.tasks_total!)), 'counts are plain numbers');
  const json = JSON.parse(await download('json')) as { project_name: string }[];
  t.same(json.map((r) => r.project_name).sort(), [...HOSTILE, 'Plain'].sort(), 'the JSON export keeps the values exactly');
});
