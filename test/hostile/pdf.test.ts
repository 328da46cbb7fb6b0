// Sink: the invoice PDF. Client text (line descriptions up to 1,000 characters, 200
// lines, the memo, customer and organization names) is drawn as text by pdfkit, which escapes it:
// nothing a value holds becomes PDF structure (no forged dictionary entry, no JavaScript action),
// a word longer than its column wraps, and the worst invoice the API accepts renders in bounded
// time into a PDF that parses back with the same text.
import t from 'tap';
import { PDFParse } from 'pdf-parse';
import { renderInvoicePdf, type InvoiceLineDoc } from '../../src/invoices/pdf.ts';

const HOSTILE = [
  ') Tj ET /JavaScript (app.alert(1)) BT (',
  '>> endobj 9 0 obj << /Type /Action /S /JavaScript /JS (app.alert(2)) >> endobj',
  '%PDF-1.7\n%%EOF\ntrailer << /Root 1 0 R >>',
  'line one\r\nline two\rline three\u2028four',
  'gnp.\u202eexe \u200f\u061c rtl',
  'W'.repeat(1000),
  '\\) \\\\ \\( unbalanced ( (( ))',
];

const render = (text: (i: number) => string) => renderInvoicePdf({
  invoice: { id: 'inv_x', number: 'INV-000001', currency: 'EUR', issue_date: '2026-11-27', due_date: '2026-12-27',
    memo: HOSTILE.map((_, i) => text(i)).join('\n'),
    lines: Array.from({ length: 200 }, (_, i): InvoiceLineDoc => ({ description: text(i % HOSTILE.length), quantity: '1', unit_price: '-12.50', tax_rate: '0', amount: '-12.50' })),
    subtotal: '-2500.00', tax_total: '0.00', total: '-2500.00', amount_due: '-2500.00', sent_at: '2026-11-27T08:00:00Z' },
  organization: { name: text(0) },
  customer: { id: 'cus_x', name: text(1), email: 'a@b.example' },
});
/** The file's structure: its objects and the names that give them a role. */
const structure = (pdf: Buffer) => {
  const raw = pdf.toString('latin1').replace(/\((?:\\.|[^\\()])*\)/g, '()').replace(/stream\r?\n[\s\S]*?endstream/g, 'stream');
  return { types: [...new Set(raw.match(/\/Type\s*\/\w+/g))].sort(), names: [...new Set(raw.match(/\/(?:S|JS|JavaScript|OpenAction|AA|Launch|URI|Annots)\b/g))].sort() };
};

t.test('hostile text in every field', async (t) => {
  const started = Date.now();
  const pdf = await render((i) => HOSTILE[i]!);
  const ms = Date.now() - started;
  t.ok(ms < 20_000, `rendered in ${ms} ms (${pdf.length} bytes)`);
  // The same invoice with plain text of the same lengths: the hostile one has no kind of object or name more.
  const plain = await render((i) => 'x'.repeat(HOSTILE[i]!.length));
  t.same(structure(pdf), structure(plain), 'the same kinds of PDF object and the same names as a plain invoice (more pages aside)');
  t.notMatch(structure(pdf).names.join(' '), /JavaScript|OpenAction|Launch|\/AA|\/JS/, 'no action or script');
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    const info = await parser.getInfo();
    t.equal(info.info?.Author, HOSTILE[0], 'a name in the document info stays a string');
    const text = (await parser.getText()).text;
    for (const v of [HOSTILE[0]!, HOSTILE[6]!]) t.ok(text.replace(/\s+/g, ' ').includes(v.replace(/\s+/g, ' ')), `the text comes back: ${JSON.stringify(v.slice(0, 30))}`);
  } finally {
    await parser.destroy();
  }
});
