// What the bytes of an upload are, next to what the client declared (file-type reads the magic
// numbers of the first bytes; text has none, so it is judged as text).
import { fileTypeFromBuffer } from 'file-type';

/** Bytes file-type needs to recognise every type it knows. */
export const SNIFF_BYTES = 4100;

/** Declared types that are text and carry no magic number. */
const TEXT_TYPES = new Set(['text/plain', 'text/csv', 'application/json', 'text/markdown', 'application/xml', 'text/xml']);

export interface Sniffed { detected: string; verified: boolean }

/** `head`: the first SNIFF_BYTES bytes (or all of a shorter file). */
export async function sniff(head: Buffer, declared: string): Promise<Sniffed> {
  const found = await fileTypeFromBuffer(head);
  if (found) return { detected: found.mime, verified: found.mime === declared };
  const text = looksLikeText(head);
  return { detected: text ? 'text/plain' : 'application/octet-stream', verified: text && TEXT_TYPES.has(declared) };
}

/** UTF-8 without NUL or other control characters than tab, line feed, carriage return and form feed.
 * A multi-byte character cut at the end of the head is allowed. */
function looksLikeText(head: Buffer): boolean {
  for (const b of head) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) return false;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let cut = 0; cut < 4 && cut <= head.length; cut++) {
    try {
      decoder.decode(head.subarray(0, head.length - cut));
      return true;
    } catch { /* try without a cut trailing character */ }
  }
  return false;
}
