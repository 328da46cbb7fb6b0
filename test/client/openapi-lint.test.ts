// The OpenAPI document passes Redocly's recommended ruleset (redocly.yaml) with no errors and no
// warnings beyond the ones .redocly.lint-ignore.yaml names. client/openapi.json is the served
// document (test/client/client.test.ts keeps it fresh).
import t from 'tap';
import { spawnSync } from 'node:child_process';

t.test('redocly lint client/openapi.json', async (t) => {
  const r = spawnSync('npx', ['redocly', 'lint', 'client/openapi.json', '--format=json'], { encoding: 'utf8' });
  const json = r.stdout.slice(r.stdout.indexOf('{'));
  let report: { totals?: { errors: number; warnings: number }; problems?: { ruleId: string; message: string; location: { pointer: string }[] }[] };
  try { report = JSON.parse(json); } catch { report = {}; }
  t.ok(report.totals, `redocly produced a report (exit ${r.status}${r.stderr ? `, stderr: ${r.stderr.slice(-500)}` : ''})`);
  const shown = (report.problems ?? []).slice(0, 10).map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`).join('\n');
  t.equal(report.totals?.errors, 0, `no lint errors${shown ? `\n${shown}` : ''}`);
  t.equal(report.totals?.warnings, 0, `no lint warnings${shown ? `\n${shown}` : ''}`);
});
