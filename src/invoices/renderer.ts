// Invoice PDFs are drawn off the event loop, in worker threads (piscina): one large invoice takes
// pdfkit seconds of synchronous layout, which would stall every other request of every tenant.
import { Piscina } from 'piscina';
import type { InvoicePdfInput } from './pdf.ts';

export interface PdfRenderer {
  render(input: InvoicePdfInput): Promise<Buffer>;
  /** Starts a thread if none is running, so a cold start is not paid while holding locks. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export function createPdfRenderer(threads: number): PdfRenderer {
  const pool = new Piscina({
    // The thread's module sits beside this one: .ts under tsx, .js when compiled to dist/.
    filename: new URL(`./pdf-thread${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url).href,
    minThreads: 0, maxThreads: threads, idleTimeout: 60_000,
  });
  return {
    async render(input) {
      return Buffer.from(await pool.run(input) as Uint8Array);
    },
    async warm() {
      await pool.run(null);
    },
    close: () => pool.destroy().catch(() => undefined),
  };
}
