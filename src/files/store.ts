// Where the bytes of files live, behind a small interface so that an S3-compatible adapter can
// take the place of the default: PostgreSQL, in fixed-size chunks (app.file_chunks), streamed in
// and out chunk by chunk, so memory stays flat whatever the file size.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { api, type SetRow } from '../db/api.ts';
import type { Db, Tx } from '../db/database.ts';
import { SNIFF_BYTES } from './sniff.ts';

export interface Stored { size: number; sha256: string; head: Buffer }

export class TooLarge extends Error {}

export interface FileStore {
  /** Stores an upload's bytes in the transaction that holds the upload (api.file_upload_begin ran
   * in it): a rollback leaves nothing. Throws TooLarge once more than `limit` bytes arrive, without
   * reading further. */
  put(tx: Tx, upload: { id: string; chunkSize: number }, source: AsyncIterable<Buffer>, limit: number): Promise<Stored>;
  /** Bytes start..end (inclusive) of a ready file, in order. `open` runs each read with the
   * download's credential, so access is checked again as the download goes on. */
  get(db: Db, file: { id: string; chunkSize: number; token: string }, start: number, end: number): AsyncIterable<Buffer>;
}

/** Chunks written per statement (at 32 KiB chunks: 256 KiB per round trip). Chunks travel as
 * bytea parameters in binary format (patches/postgres+3.4.9.patch, change 16): no string of them
 * is made in the JS heap, where base64 text held until the statement answered was promoted to the
 * old generation and piled up until a full collection (bench/files.ts, docs/benchmarks.md). */
const WRITE_BATCH = 8;
/** Chunks read per statement when streaming out (1 MiB). */
const READ_BATCH = 32;

export const postgresStore: FileStore = {
  async put(tx, upload, source, limit) {
    const hash = createHash('sha256');
    const heads: Buffer[] = [];
    let headLength = 0;
    let size = 0;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingLength = 0;
    let batch: Buffer[] = [];
    const write = async () => {
      if (!batch.length) return;
      await api.value('file_upload_chunks(text, integer, bytea[])', upload.id, seq, batch).execute(tx);
      seq += batch.length;
      batch = [];
    };
    const flush = async (data: Buffer) => {
      batch.push(data);
      if (batch.length >= WRITE_BATCH) await write();
    };
    for await (const part of source) {
      size += part.length;
      if (size > limit) throw new TooLarge();
      hash.update(part);
      if (headLength < SNIFF_BYTES) {
        heads.push(part.subarray(0, SNIFF_BYTES - headLength));
        headLength += Math.min(part.length, SNIFF_BYTES - headLength);
      }
      pending.push(part);
      pendingLength += part.length;
      while (pendingLength >= upload.chunkSize) {
        const all = Buffer.concat(pending, pendingLength);
        await flush(all.subarray(0, upload.chunkSize));
        const rest = all.subarray(upload.chunkSize);
        pending = rest.length ? [rest] : [];
        pendingLength = rest.length;
      }
    }
    if (pendingLength > 0) await flush(Buffer.concat(pending, pendingLength));
    await write();
    return { size, sha256: hash.digest('hex'), head: Buffer.concat(heads, headLength) };
  },

  async *get(db, file, start, end) {
    const first = Math.floor(start / file.chunkSize);
    const last = Math.floor(end / file.chunkSize);
    for (let from = first; from <= last; from += READ_BATCH) {
      const to = Math.min(last, from + READ_BATCH - 1);
      // One statement: the token sets the context (its transaction is the statement's), then the chunks.
      // bytea: postgres.js receives it in binary format once the statement is described (change 17
      // of patches/postgres+3.4.9.patch), so no string of the bytes is made in the JS heap.
      const { rows } = await sql<SetRow<'file_chunks'>>`
        select c.seq, c.data from ${api.table('file_download_begin', file.token)} b,
               lateral ${api.table('file_chunks', sql<string>`b.file_id`, from, to)} c
         where b.outcome = 'ok' and b.file_id = ${file.id}
         order by c.seq`.execute(db);
      if (rows.length !== to - from + 1) throw new Error('the file is no longer available');
      for (const { seq, data } of rows) {
        const offset = seq * file.chunkSize;
        const a = Math.max(start - offset, 0);
        const b = Math.min(end - offset + 1, data.length);
        if (b > a) yield data.subarray(a, b);
      }
    }
  },
};
