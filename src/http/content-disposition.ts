// Content-Disposition for a download (RFC 6266 with RFC 8187's filename*): both forms name the
// same file, and neither can carry a path, a control character, a quote or a parameter of its own
// (so `..\..\report.png` keeps no path in filename*). The stored name stays as the client
// gave it; only the header's is reduced to a last segment.

/** The last segment of `name` (after any `/` or `\`), without control characters, and without
 * leading dots or spaces (no hidden file, no `..`) or trailing ones (Windows drops them). */
export function downloadName(name: string, fallback = 'download'): string {
  const last = name.split(/[/\\]/).pop() ?? '';
  const clean = last.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
  return clean || fallback;
}

/** RFC 8187 ext-value: UTF-8, every byte outside attr-char percent-encoded. */
const extValue = (s: string) => "UTF-8''" + encodeURIComponent(s).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

export function contentDisposition(name: string): string {
  const file = downloadName(name);
  // The quoted fallback: printable ASCII only, without the characters a quoted-string or a naive
  // parser would take for structure.
  const ascii = file.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  return `attachment; filename="${ascii}"; filename*=${extValue(file)}`;
}
