// The files benchmarks, run by bench/run.ts on the same server and database:
//  - one 25 MiB file, ROUNDS times: createFileUpload, PUT of the bytes to the upload URL,
//    completeFileUpload, until ready (the in-process worker, no scanner), createFileDownload, GET
//    of the whole file; MB/s of the PUT, of the GET and of the whole round;
//  - next to it, psql's \copy of the same bytes, as the same 256 KiB chunks in hex (COPY's text
//    format for bytea), into a table of the same database, ROUNDS times; and \copy out of them;
//  - the server's resident memory (VmRSS of its node process, sampled every 20 ms) while
//    CONCURRENT clients each upload and complete a 25 MiB file at once (then 100 MiB), and while
//    CONCURRENT clients each download a 25 MiB file at once: peak minus the level before.
// Returns a markdown section that run.ts appends to its output and to bench/results/latest.md.
import { execFileSync } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { serverRssKb, logger, ms, type BenchOptions, type BenchResult } from './common.ts';

const MIB = 1024 * 1024;
const SIZE = 25 * MIB;
const ROUNDS = 3;
const CONCURRENT = 8;
const CHUNK = 32768;
const log = logger('files');

/** 25 MiB of text (base64 of random bytes, in lines): text/plain, and no compression helps anyone. */
function payload(size = SIZE): Buffer {
  const out = Buffer.alloc(size);
  let at = 0;
  while (at < size) at += out.write(randomBytes(57).toString('base64') + '\n', at);
  out[size - 1] = 0x0a;
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mbps = (bytes: number, msTaken: number) => bytes / MIB / (msTaken / 1000);

/** CONCURRENT runs of `one` at once, with the server's RSS sampled every 20 ms: a table row of the
 * level before, the peak, the growth and the time. */
async function rssRow(group: number, size: number, one: () => Promise<unknown>): Promise<string> {
  await new Promise((r) => setTimeout(r, 1000));
  const before = serverRssKb(group);
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, serverRssKb(group)); }, 20);
  const t0 = process.hrtime.bigint();
  try {
    await Promise.all(Array.from({ length: CONCURRENT }, one));
  } finally {
    clearInterval(sampler);
  }
  const took = ms(t0);
  return `| ${CONCURRENT} × ${size / MIB} MiB | ${Math.round(before / 1024)} MiB | ${Math.round(peak / 1024)} MiB | **${Math.round((peak - before) / 1024)} MiB** | ` +
    `${(took / 1000).toFixed(1)} s, ${mbps(CONCURRENT * size, took).toFixed(1)} MB/s together |`;
}

export async function runFileBench(opts: BenchOptions & { serverGroup?: number }): Promise<BenchResult> {
  const failed: string[] = [];
  const auth = { authorization: `Bearer ${opts.token}` };
  let n = 0;
  const post = async (path: string, body?: unknown) => {
    const res = await fetch(`${opts.base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json',
      'idempotency-key': `files-bench-${Date.now()}-${++n}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const project = (await post('/v1/projects', { code: `FILES-${randomBytes(3).toString('hex')}`, name: 'File bench' })).id as string;
  const text = payload();
  const sha256 = createHash('sha256').update(text).digest('hex');

  /** Upload and complete; the times of the PUT and of the rest. */
  const upload = async (bytes = text, digest = sha256) => {
    const u = await post('/v1/files/uploads', { name: 'bench.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: digest,
      linked_resource: { type: 'project', id: project } });
    const t0 = process.hrtime.bigint();
    const put = await fetch(u.upload_url, { method: 'PUT', body: bytes as unknown as BodyInit, headers: u.headers });
    if (!put.ok) throw new Error(`PUT: ${put.status} ${await put.text()}`);
    await put.arrayBuffer();
    const putMs = ms(t0);
    const file = await post(`/v1/files/uploads/${u.id}/complete`);
    return { file: file.id as string, putMs };
  };
  const ready = async (id: string) => {
    for (;;) {
      const f = await (await fetch(`${opts.base}/v1/files/${id}`, { headers: auth })).json() as { status: string };
      if (f.status === 'ready') return;
      if (f.status !== 'processing') throw new Error(`file ${id} is ${f.status}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  log(`${ROUNDS} rounds of upload, complete, ready, download of ${SIZE / MIB} MiB`);
  const rounds: { put: number; complete: number; get: number; total: number }[] = [];
  for (let i = 0; i <= ROUNDS; i++) {
    const t0 = process.hrtime.bigint();
    const { file, putMs } = await upload();
    await ready(file);
    const completeMs = ms(t0) - putMs;
    const d = await post(`/v1/files/${file}/download`);
    const t1 = process.hrtime.bigint();
    const res = await fetch(d.download_url);
    const hash = createHash('sha256');
    let got = 0;
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) { hash.update(part); got += part.length; }
    const getMs = ms(t1);
    if (got !== text.length || hash.digest('hex') !== sha256) { failed.push('file download'); log('the download differs from the upload'); }
    if (i > 0) rounds.push({ put: putMs, complete: completeMs, get: getMs, total: ms(t0) }); // round 0 warms up
  }

  log('psql \\copy of the same bytes, in the same chunks, in and out');
  const dir = mkdtempSync(join(tmpdir(), 'svc-files-bench-'));
  const sql = postgres(opts.url, { max: 1, onnotice: () => {} });
  const copyIn: number[] = [];
  const copyOut: number[] = [];
  try {
    const lines: string[] = [];
    for (let seq = 0; seq * CHUNK < text.length; seq++) lines.push(`${seq}\t\\\\x${text.subarray(seq * CHUNK, (seq + 1) * CHUNK).toString('hex')}`);
    writeFileSync(join(dir, 'chunks.copy'), lines.join('\n') + '\n');
    await sql`drop table if exists bench_file_copy`;
    await sql`create table bench_file_copy (seq integer primary key, data bytea not null)`;
    for (let i = 0; i <= ROUNDS; i++) {
      await sql`truncate bench_file_copy`;
      const t0 = process.hrtime.bigint();
      execFileSync('psql', [opts.url, '-qX', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy bench_file_copy (seq, data) from '${join(dir, 'chunks.copy')}'`]);
      if (i > 0) copyIn.push(ms(t0));
      const t1 = process.hrtime.bigint();
      execFileSync('psql', [opts.url, '-qX', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy (select data from bench_file_copy order by seq) to '${join(dir, 'out.copy')}'`]);
      if (i > 0) copyOut.push(ms(t1));
    }
    await sql`drop table bench_file_copy`;
  } finally {
    await sql.end();
    rmSync(dir, { recursive: true, force: true });
  }

  const memory: string[] = [];
  let downloads = '';
  if (opts.serverGroup) {
    // Two file sizes: what grows with the size of the files would be buffering; what does not is the runtime's own.
    for (const size of [SIZE, 4 * SIZE]) {
      const bytes = size === SIZE ? text : payload(size);
      const digest = createHash('sha256').update(bytes).digest('hex');
      log(`${CONCURRENT} clients upload ${size / MIB} MiB each at once; sampling the server's RSS`);
      memory.push(await rssRow(opts.serverGroup, size, () => upload(bytes, digest)));
    }
    // The way out: as many clients download a ready 25 MiB file each at once, reading as fast as they can.
    const { file } = await upload();
    await ready(file);
    log(`${CONCURRENT} clients download ${SIZE / MIB} MiB each at once; sampling the server's RSS`);
    downloads = await rssRow(opts.serverGroup, SIZE, async () => {
      const d = await post(`/v1/files/${file}/download`);
      const res = await fetch(d.download_url);
      let got = 0;
      for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) got += part.length;
      if (got !== SIZE) { failed.push('concurrent download'); log(`a download ended after ${got} bytes`); }
    });
  }

  const m = (k: 'put' | 'complete' | 'get' | 'total') => median(rounds.map((r) => r[k]));
  const inMs = median(copyIn);
  const outMs = median(copyOut);
  const markdown = [
    '### Files (issue 14)',
    '',
    `One ${SIZE / MIB} MiB text file, ${ROUNDS} rounds after one warm-up, medians (MB = MiB):`,
    '',
    '| step | time | MB/s | psql \\copy of the same 32 KiB chunks (hex) | ratio |',
    '|---|---:|---:|---:|---:|',
    `| PUT to the upload URL (store) | ${m('put').toFixed(0)} ms | ${mbps(SIZE, m('put')).toFixed(1)} | in: ${inMs.toFixed(0)} ms, ${mbps(SIZE, inMs).toFixed(1)} MB/s | **${(inMs / m('put')).toFixed(2)}** |`,
    `| completeFileUpload until ready | ${m('complete').toFixed(0)} ms | | | |`,
    `| GET of the download URL | ${m('get').toFixed(0)} ms | ${mbps(SIZE, m('get')).toFixed(1)} | out: ${outMs.toFixed(0)} ms, ${mbps(SIZE, outMs).toFixed(1)} MB/s | ${(outMs / m('get')).toFixed(2)} |`,
    `| the whole round (upload, complete, ready, download URL, download) | ${m('total').toFixed(0)} ms | ${mbps(SIZE, m('total')).toFixed(1)} | | |`,
    '',
    `The server's resident memory while ${CONCURRENT} clients upload and complete a file each at once (aim: grows by < 64 MiB):`,
    '',
    '| uploads | RSS before | peak | growth | time |',
    '|---|---:|---:|---:|---|',
    ...(memory.length ? memory : ['| not measured (no server process group) | | | | |']),
    '',
    `The same while ${CONCURRENT} clients download a ${SIZE / MIB} MiB file each at once:`,
    '',
    '| downloads | RSS before | peak | growth | time |',
    '|---|---:|---:|---:|---|',
    downloads || '| not measured (no server process group) | | | | |',
    '',
  ].join('\n');
  return { markdown, failed };
}
