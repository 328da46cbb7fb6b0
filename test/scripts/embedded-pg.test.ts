// The embedded PostgreSQL starts from a checkout that only its owner can enter: as root, the
// server runs as the unprivileged postgres user, which cannot reach a mode-700 parent, so the
// binaries and the data must move to where it can (scripts/embedded-pg.ts).
import t from 'tap';
import { cpSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import net from 'node:net';
import postgres from 'postgres';
import { packagedBinaries, startEmbedded } from '../../scripts/embedded-pg.ts';

const freePort = () => new Promise<number>((done) => {
  const srv = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as net.AddressInfo;
    srv.close(() => done(port));
  });
});

t.test('a checkout under a mode-700 parent', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'svc-700-'));
  t.equal(statSync(parent).mode & 0o777, 0o700, 'the parent is mode 700');
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  // The binaries inside the private checkout too, as node_modules would be.
  const packaged = packagedBinaries();
  const nativeDir = join(parent, 'checkout', 'node_modules', 'native');
  cpSync(packaged.nativeDir, nativeDir, { recursive: true, verbatimSymlinks: true });

  const pg = await startEmbedded('pg-700', await freePort(), { root: join(parent, 'checkout', '.data'), nativeDir, version: packaged.version });
  t.teardown(async () => {
    await pg.stop();
    // Relocated data: its per-checkout folder goes too.
    if (!pg.dataDir.startsWith(parent)) rmSync(dirname(pg.dataDir), { recursive: true, force: true });
  });
  if (process.getuid?.() === 0) {
    t.notOk(pg.dataDir.startsWith(parent), `as root the data moves out of reach of the mode-700 parent (${pg.dataDir})`);
  } else {
    t.ok(pg.dataDir.startsWith(parent), 'as a normal user the data stays in the checkout');
  }
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [row] = await sql`select current_setting('server_version_num')::int >= 150000 as ok`;
  t.ok(row!.ok, 'the server answers');
});

t.test('two checkouts side by side: each its own server, whatever port it asks for', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'svc-two-'));
  const stops: (() => Promise<void>)[] = [];
  t.teardown(async () => {
    for (const stop of stops) await stop();
    rmSync(parent, { recursive: true, force: true });
  });
  const start = async (checkout: string, port: number) => {
    const pg = await startEmbedded('pg-dev', port, { root: join(parent, checkout, '.data') });
    stops.push(async () => {
      await pg.stop();
      if (!pg.dataDir.startsWith(parent)) rmSync(dirname(pg.dataDir), { recursive: true, force: true });
    });
    return pg;
  };
  const dataDirOf = async (url: string) => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      return (await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`)[0]!.dir;
    } finally {
      await sql.end();
    }
  };
  const portOf = (url: string) => Number(new URL(url).port);

  const port = await freePort();
  const first = await start('first', port);
  // (The port asked for, or the next free one: a free port can be taken before the server binds it.)
  t.ok(portOf(first.url) >= port, 'the first checkout\'s server on the port it asked for');
  const second = await start('second', portOf(first.url));
  t.not(portOf(second.url), portOf(first.url), `the second checkout's on another (${portOf(second.url)}), not the first one's`);
  t.equal(await dataDirOf(second.url), second.dataDir, 'on its own data');
  t.equal(await dataDirOf(first.url), first.dataDir, 'the first one\'s on its own');

  // A checkout started again (`make start` after one that was killed) finds its own server, on
  // whatever port it listens, even when another port is asked for.
  const again = await start('second', port);
  t.equal(again.url, second.url, 'the second checkout started again reuses its server');
  const elsewhere = await start('first', await freePort());
  t.equal(elsewhere.url, first.url, 'and so does the first, asked for another port');
});
