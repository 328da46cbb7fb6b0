// Runs in a worker thread (piscina): pdfkit lays out text synchronously, and a large invoice takes
// seconds, which must not stop the server's event loop for every other request.
import { renderInvoicePdf, type InvoicePdfInput } from './pdf.ts';

export default async function render(input: InvoicePdfInput): Promise<Uint8Array> {
  return new Uint8Array(await renderInvoicePdf(input));
}
