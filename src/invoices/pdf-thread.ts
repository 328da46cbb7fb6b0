// Runs in a worker thread (piscina): pdfkit lays out text synchronously, and a large invoice takes
// seconds, which must not stop the server's event loop for every other request.
import { renderInvoicePdf, type InvoicePdfInput } from './pdf.ts';

export default async function render(input: InvoicePdfInput | null): Promise<Uint8Array> {
  // null: a warm-up call that only makes sure the thread (and pdfkit) is loaded.
  return input ? new Uint8Array(await renderInvoicePdf(input)) : new Uint8Array();
}
