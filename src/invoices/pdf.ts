// The invoice PDF, drawn with pdfkit from the issued invoice exactly as the database returned it:
// every amount is the decimal string SQL computed; nothing is recalculated here.
import PDFDocument from 'pdfkit';

export interface InvoiceLineDoc { description: string; quantity: string; unit_price: string; tax_rate: string; amount: string }
export interface InvoiceDoc {
  id: string; number: string; currency: string; issue_date: string; due_date: string; memo: string | null;
  lines: InvoiceLineDoc[]; subtotal: string; tax_total: string; total: string; amount_due: string; sent_at: string;
}
export interface InvoicePdfInput {
  invoice: InvoiceDoc;
  organization: { name: string };
  customer: { id: string; name: string; email: string | null };
}

const COLUMNS = [
  { title: 'Description', x: 50, width: 230, align: 'left' },
  { title: 'Quantity', x: 285, width: 55, align: 'right' },
  { title: 'Unit price', x: 345, width: 75, align: 'right' },
  { title: 'Tax %', x: 425, width: 40, align: 'right' },
  { title: 'Amount', x: 470, width: 75, align: 'right' },
] as const;

export function renderInvoicePdf({ invoice, organization, customer }: InvoicePdfInput): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4', margin: 50,
    // Fixed metadata: the same invoice always renders to the same bytes (its checksum is stored).
    info: { Title: `Invoice ${invoice.number}`, Author: organization.name, Subject: `Invoice ${invoice.number} for ${customer.name}`,
      Producer: 'Work-Management Service', Creator: 'Work-Management Service', CreationDate: new Date(invoice.sent_at) },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font('Helvetica-Bold').fontSize(18).text(organization.name, { width: 300 });
  doc.font('Helvetica').fontSize(10).moveDown(0.5);
  doc.text(`Invoice ${invoice.number}`, 350, 50, { width: 195, align: 'right' });
  doc.text(`Issue date: ${invoice.issue_date}`, { width: 195, align: 'right' });
  doc.text(`Due date: ${invoice.due_date}`, { width: 195, align: 'right' });

  doc.moveDown(2).font('Helvetica-Bold').text('Bill to', 50, 130);
  doc.font('Helvetica').text(customer.name);
  if (customer.email) doc.text(customer.email);

  let y = 200;
  doc.font('Helvetica-Bold');
  for (const c of COLUMNS) doc.text(c.title, c.x, y, { width: c.width, align: c.align });
  y += 18;
  doc.moveTo(50, y - 4).lineTo(545, y - 4).stroke();
  doc.font('Helvetica');
  for (const l of invoice.lines) {
    const cells = [l.description, l.quantity, l.unit_price, l.tax_rate, l.amount];
    const height = Math.max(...cells.map((v, i) => doc.heightOfString(v, { width: COLUMNS[i]!.width })));
    if (y + height > doc.page.height - 140) {
      doc.addPage();
      y = 50;
    }
    cells.forEach((v, i) => doc.text(v, COLUMNS[i]!.x, y, { width: COLUMNS[i]!.width, align: COLUMNS[i]!.align }));
    y += height + 6;
  }
  doc.moveTo(50, y).lineTo(545, y).stroke();
  y += 10;
  const total = (label: string, value: string, bold = false) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica');
    doc.text(label, 345, y, { width: 120, align: 'right' });
    doc.text(`${value} ${invoice.currency}`, 470, y, { width: 75, align: 'right' });
    y += 16;
  };
  total('Subtotal', invoice.subtotal);
  total('Tax', invoice.tax_total);
  total('Total', invoice.total, true);
  total('Amount due', invoice.amount_due, true);
  if (invoice.memo) doc.font('Helvetica').text(invoice.memo, 50, y + 20, { width: 495 });
  doc.end();
  return done;
}
