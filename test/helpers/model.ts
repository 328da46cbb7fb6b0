// A scripted model provider on loopback (the OpenAI chat-completions shape the service speaks):
// replies in order, each a function of the request or a fixed message; every request is kept.
import type { Test } from 'tap';
import http from 'node:http';

/** Replies in order (a function of the request, or a fixed message); every request is kept. */
export async function provider(t: Test, replies: ((body: any) => unknown)[]) {
  const requests: any[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const parsed = JSON.parse(body);
      requests.push(parsed);
      const reply = replies.shift();
      res.writeHead(reply ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply ? { choices: [{ index: 0, message: reply(parsed), finish_reason: 'stop' }] } : {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, requests, replies };
}
export const say = (text: string) => () => ({ role: 'assistant', content: text });

