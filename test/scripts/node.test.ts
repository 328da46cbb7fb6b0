// scripts/node.sh, which the Makefile puts first on PATH: the machine's Node when it is a supported
// LTS line, else the named one or the newest LTS from .cache/; when none can be had, one sentence says
// what to install and the machine's Node runs.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';

const nodeSh = (env: Record<string, string>) => spawnSync('bash', ['scripts/node.sh'], { encoding: 'utf8', env: { ...process.env, ...env } });

t.test('the Node make runs', async (t) => {
  const major = Number(process.versions.node.split('.')[0]);
  const unset = nodeSh({ SVC_NODE_VERSION: '' });
  t.equal(unset.status, 0);
  const dir = unset.stdout.trim();
  const version = spawnSync(`${dir}/node`, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  t.ok(Number(version.split('.')[0]) >= 24 || unset.stderr.includes('install Node 24 or newer'),
    `Node ${version} from ${dir}${major < 24 ? ` (this process runs ${process.versions.node})` : ''}`);

  const missing = nodeSh({ SVC_NODE_VERSION: '0.0.1-none' });
  t.equal(missing.status, 0, 'a version that cannot be had stops nothing');
  t.match(missing.stderr.trim().split('\n'), [/install Node 24 or newer \(https:\/\/nodejs\.org\), then run make again\.$/], 'one sentence says what to do');
  t.equal(missing.stdout.trim(), dirname(spawnSync('bash', ['-c', 'command -v node'], { encoding: 'utf8' }).stdout.trim()), 'and the machine\'s Node runs');
});
