// `npm ci`, what deploy pipelines and container builds run, installs from the committed lockfile
// on Linux, macOS and Windows: it refuses a lockfile that lacks an entry for any optional platform
// package of a dependency (dbmate's and squawk-cli's binaries), whatever the platform it runs on.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingOptional } from '../../scripts/lockfile-platforms.ts';
import { REPOSITORY } from '../helpers/repository.ts';

const ROOT = REPOSITORY;

t.test('the lockfile names every optional platform package', async (t) => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  t.same(missingOptional(lock).map(([path, version]) => `${path}@${version}`), [],
    'none missing (npx tsx scripts/lockfile-platforms.ts adds them)');
});

t.test('npm ci accepts the lockfile on every platform', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-npm-ci-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(dir, f));
  for (const [os, cpu] of [['linux', 'x64'], ['linux', 'arm64'], ['darwin', 'arm64'], ['win32', 'x64']]) {
    // --dry-run: the lockfile's agreement with package.json and the plan for that platform, offline.
    const ci = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', '--offline',
      `--os=${os}`, `--cpu=${cpu}`], { cwd: dir, encoding: 'utf8' });
    t.equal(ci.status, 0, `npm ci on ${os}-${cpu}: ${ci.stderr.slice(0, 1500)}`);
  }
});
