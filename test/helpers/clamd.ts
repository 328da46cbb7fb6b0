// A real clamd for the tests, with a signature database the tests make themselves (the official
// one cannot be downloaded here): the EICAR test file's MD5, as a ClamAV hash signature (.hdb).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { createHash } from 'node:crypto';
import type { Test } from 'tap';

export const CLAMD = '/usr/sbin/clamd';

/** The EICAR anti-virus test file (68 bytes), assembled so that this source is not itself a match. */
export const EICAR = Buffer.from(['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join(''));

const ping = (socket: string) => new Promise<boolean>((resolve) => {
  const c = net.connect({ path: socket });
  c.on('connect', () => c.end('zPING\0'));
  let out = '';
  c.on('data', (d) => { out += d.toString(); });
  c.on('end', () => resolve(out.startsWith('PONG')));
  c.on('error', () => resolve(false));
});

/** Why tests that need clamd skip, or false when it is installed. */
export const CLAMD_MISSING: string | false = existsSync(CLAMD) ? false : 'clamd not installed (Debian package clamav-daemon)';

/** Starts clamd on a Unix socket of its own. */
export async function startClamd(t: Test): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-clamd-'));
  mkdirSync(join(dir, 'db'));
  writeFileSync(join(dir, 'db', 'test.hdb'), `${createHash('md5').update(EICAR).digest('hex')}:${EICAR.length}:Eicar-Test-Signature\n`);
  const socket = join(dir, 'clamd.sock');
  writeFileSync(join(dir, 'clamd.conf'), [
    `LocalSocket ${socket}`, `DatabaseDirectory ${join(dir, 'db')}`, 'Foreground yes', `PidFile ${join(dir, 'clamd.pid')}`,
    'StreamMaxLength 200M', 'MaxThreads 4', // root runs it as root: no User line, nothing to drop to
  ].join('\n') + '\n');
  const child = spawn(CLAMD, ['-c', join(dir, 'clamd.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d.toString(); });
  t.teardown(() => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`clamd exited: ${stderr}`);
    if (await ping(socket)) return socket;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`clamd did not start in 30 s: ${stderr}`);
}
