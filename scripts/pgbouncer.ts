// A PgBouncer (Debian's package) in transaction pooling mode in front of a PostgreSQL server,
// for the tests and benchmarks that prove the service works behind a pooler (docs/scaling.md).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';

export const PGBOUNCER_BIN = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => spawnSync(p, ['--version']).status === 0);

export interface PgBouncer { port: number; stop: () => void }

const freePort = () => new Promise<number>((done) => {
  const srv = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as net.AddressInfo;
    srv.close(() => done(port));
  });
});

/** Starts PgBouncer for every database of `serverUrl`'s server; `users` are the logins (and
 * their passwords) it may use towards the server. */
export async function startPgBouncer(serverUrl: string, users: Record<string, string>, poolSize: number): Promise<PgBouncer> {
  if (!PGBOUNCER_BIN) throw new Error('pgbouncer is not installed (Debian package pgbouncer)');
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pgbouncer-'));
  // PgBouncer will not run as root: it switches to the postgres user, which must read these files.
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'userlist.txt'), Object.entries(users).map(([u, p]) => `"${u}" "${p}"\n`).join(''), { mode: 0o644 });
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    // Loopback only, for tests and benchmarks: clients are trusted; the userlist holds the passwords for the server.
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 1000',
    // PgBouncer 1.18 forwards no other start-up parameters: statement_timeout belongs on the role there.
    'ignore_startup_parameters = extra_float_digits,statement_timeout',
    // Logs go to stderr (the postgres user cannot write into this root-owned folder); no pid file.
    'logfile =',
    'pidfile =',
  ].join('\n') + '\n', { mode: 0o644 });
  const ini = join(dir, 'pgbouncer.ini');
  const child: ChildProcess = spawn(PGBOUNCER_BIN, process.getuid?.() === 0 ? ['-u', 'postgres', ini] : [ini],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (c: Buffer) => { log = (log + c).slice(-4000); });
  const stop = () => { child.kill('SIGTERM'); rmSync(dir, { recursive: true, force: true }); };
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const up = await new Promise<boolean>((done) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); done(true); });
      s.once('error', () => done(false));
    });
    if (up) return { port, stop };
    await new Promise((r) => setTimeout(r, 50));
  }
  stop();
  throw new Error(`PgBouncer did not start: ${log}`);
}
