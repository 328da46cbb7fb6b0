// Invoice tests' shared world: an app whose invoice emails go to a real SMTP server on loopback,
// a manager+finance client, a billing customer, and short-hands for drafts, sends and reads.
import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { startApp } from './app.ts';
import { startSmtp } from './smtp.ts';

export const idem = () => ({ 'idempotency-key': randomUUID() });
export const LINES = [
  { description: 'Consulting, November', quantity: '1.5', unit_price: '100.05', tax_rate: '19' },
  { description: 'Travel', quantity: '1', unit_price: '68.55' },
];

export async function world(t: Test, env: Record<string, string> = {}) {
  const smtp = await startSmtp(t);
  const a = await startApp(t, { SVC_SMTP_URL: smtp.url, SVC_SMTP_TIMEOUT_MS: '10000', ...env });
  const p = await a.principal('manager,finance');
  const customer = async (email: string | null, name = 'Acme GmbH') => (await a.cli('customer', 'create', '--org', p.orgId,
    '--kind', 'billing', '--name', name, ...(email ? ['--email', email] : []), '--currency', 'EUR')).customer_id as string;
  const acme = await customer('billing@acme.example');
  const draft = async (body: Record<string, unknown> = {}) => {
    const res = await a.request({ method: 'POST', url: '/v1/invoices', token: p.token, headers: idem(),
      payload: { customer_id: acme, lines: LINES, ...body } });
    if (res.statusCode !== 201) throw new Error(res.body);
    return res.json;
  };
  const send = (id: string, payload?: unknown, headers: Record<string, string> = idem(), token = p.token) =>
    a.request({ method: 'POST', url: `/v1/invoices/${id}/send`, token, headers, payload });
  const get = async (id: string) => (await a.request({ url: `/v1/invoices/${id}`, token: p.token })).json;
  const events = async (id: string) => (await a.admin`select type from app.events where resource_id = ${id} order by created_at, id`)
    .map((r) => r.type as string);
  return { a, p, smtp, customer, acme, draft, send, get, events };
}
