// ClamAV's clamd over its INSTREAM protocol (clamd(8)): "zINSTREAM\0", then chunks each prefixed
// with their length as a 4-byte big-endian integer, then a zero length; clamd answers
// "stream: OK", "stream: <signature> FOUND" or "... ERROR", NUL-terminated.
import net from 'node:net';

export type ScanResult = { clean: true } | { clean: false; signature: string };

export class ScannerUnavailable extends Error {}

/** `target`: a Unix socket path, or host:port. */
export function connectOptions(target: string): net.NetConnectOpts {
  const m = /^([^/:]+):(\d+)$/.exec(target);
  return m ? { host: m[1]!, port: Number(m[2]) } : { path: target };
}

export async function scan(target: string, chunks: AsyncIterable<Buffer>, timeoutMs: number): Promise<ScanResult> {
  const socket = net.connect(connectOptions(target));
  socket.setTimeout(timeoutMs);
  const reply: Buffer[] = [];
  const done = new Promise<string>((resolve, reject) => {
    socket.on('data', (d) => reply.push(d));
    socket.on('end', () => resolve(Buffer.concat(reply).toString('utf8').replace(/\0+$/, '').trim()));
    socket.on('timeout', () => socket.destroy(new ScannerUnavailable('clamd did not answer in time')));
    socket.on('error', (e) => reject(e instanceof ScannerUnavailable ? e : new ScannerUnavailable(`clamd: ${e.message}`)));
  });
  done.catch(() => undefined);
  const write = (b: Buffer) => new Promise<void>((resolve, reject) => {
    if (socket.destroyed) return reject(new ScannerUnavailable('clamd closed the connection'));
    socket.write(b, (e) => (e ? reject(new ScannerUnavailable(`clamd: ${e.message}`)) : resolve()));
  });
  try {
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
    await write(Buffer.from('zINSTREAM\0'));
    for await (const chunk of chunks) {
      // clamd closes the stream once StreamMaxLength is exceeded; its answer then says so.
      if (socket.destroyed || socket.writableEnded) break;
      const len = Buffer.alloc(4);
      len.writeUInt32BE(chunk.length);
      await write(Buffer.concat([len, chunk]));
    }
    if (!socket.destroyed) await write(Buffer.alloc(4));
  } catch (e) {
    socket.destroy();
    throw e instanceof ScannerUnavailable ? e : new ScannerUnavailable(`clamd: ${(e as Error).message}`);
  }
  const answer = await done;
  const found = /^stream: (.+) FOUND$/.exec(answer);
  if (found) return { clean: false, signature: found[1]! };
  if (answer === 'stream: OK') return { clean: true };
  throw new ScannerUnavailable(`clamd could not scan the file: ${answer.slice(0, 200)}`);
}
