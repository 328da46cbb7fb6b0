// Real server and worker processes for the tests that need more than one (scale-out, faults):
// `node --import tsx src/main.ts` and `src/worker/main.ts`, or the compiled `dist/main.js` and
// `dist/worker/main.js` as production runs them.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { Test } from 'tap';
import { run as admin } from '../../src/admin/cli.ts';
import { REPOSITORY } from './repository.ts';

const ROOT = REPOSITORY;

export const freePort = () => new Promise<number>((done) => {
  const srv = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as net.AddressInfo;
    srv.close(() => done(port));
  });
});

export interface Proc {
  child: ChildProcess;
  /** stderr so far (startup failures, crashes). */
  stderr: () => string;
  /** The last 200 kB of stdout (its JSON log lines when LOG_LEVEL is set). */
  stdout: () => string;
  exited: Promise<number | null>;
  kill: (signal?: NodeJS.Signals) => Promise<number | null>;
}

function start(t: Test, script: string, env: Record<string, string>): Proc {
  const child = spawn(process.execPath, script.endsWith('.ts') ? ['--import', 'tsx', script] : [script], {
    cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr!.on('data', (c: Buffer) => { err += c; });
  child.stdout!.on('data', (c: Buffer) => { out = (out + c).slice(-200_000); });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  t.teardown(() => kill());
  return { child, stderr: () => err, stdout: () => out, exited, kill };
}

export interface ApiProc extends Proc { url: string }

/** An API process (no in-process worker unless asked) listening on a free port, once /ready answers. */
export async function spawnApi(t: Test, env: Record<string, string>, entry = 'src/main.ts'): Promise<ApiProc> {
  const port = await freePort();
  const proc = start(t, entry, { SVC_WORKER: 'off', HOST: '127.0.0.1', ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  // A bound for a process that never becomes ready, not a measure of start-up: on a 2-core machine
  // under CI's cluster pass (load average 14), start-up to /ready took 10.5-13.7 s against one
  // server, and one start on the cluster passed 30 s (test/faults/terminate.test.ts).
  const until = Date.now() + 90_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`the API process exited: ${proc.stderr()}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) break;
    } catch { /* not listening yet */ }
    if (Date.now() > until) throw new Error(`the API process did not become ready: ${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ...proc, url };
}

export function spawnWorker(t: Test, env: Record<string, string>, entry = 'src/worker/main.ts'): Proc {
  return start(t, entry, env);
}

/** Form-encoded client credentials for the token endpoint (RFC 6749 §2.3.1). */
export async function tokenFrom(baseUrl: string, client: { id: string; secret: string }): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64'),
    },
    body: 'grant_type=client_credentials&scope=svc.api',
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** svc-admin in-process against `url`, failing the test on a non-zero exit. */
export function adminCli(url: string) {
  return async (...argv: string[]) => {
    const r = await admin(argv, url);
    if (r.code !== 0) throw new Error(JSON.stringify(r.err));
    return r.out as Record<string, string>;
  };
}

/** A business organization with one manager/member client, made with svc-admin. */
export async function orgWithClient(url: string, orgName: string, clientName = 'load') {
  const cli = adminCli(url);
  const org = (await cli('org', 'create', '--name', orgName, '--plan', 'business', '--timezone', 'UTC', '--currency', 'EUR',
    '--locale', 'en-GB')).organization_id!;
  const c = await cli('client', 'create', '--org', org, '--name', clientName, '--license', 'manager', '--roles', 'member,manager');
  return { org, client: { id: c.client_id!, secret: c.client_secret! } };
}
