// Runs tap with the test environment, streams its output, and ends with the failures repeated and
// one plain summary line (CI keeps only the tail of the output). Shared by `make test` and
// `make test-citus`.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The test files a directory holds, at any depth: tap expands a directory by the extensions of its
 * loaders, and TypeScript is loaded by tsx (package.json `node-arg`), not by a tap plugin. */
export function testFiles(path: string): string[] {
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return [path];
  return (readdirSync(path, { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts')).sort()
    .map((f) => join(path, f));
}

export async function runTap(args: string[], env: Record<string, string>): Promise<number> {
  args = args.flatMap((a) => (a.startsWith('-') ? [a] : testFiles(a)));
  let summary = '';
  let out = '';
  const code = await new Promise<number>((done) => {
    const child = spawn('npx', ['tap', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      out += chunk.toString();
      const m = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(chunk.toString());
      if (m) summary = `tests: ${m[2]} passed, ${m[3] ?? 0} failed`;
    });
    child.on('exit', (c) => done(c ?? 1));
  });
  const failures = failureReport(out);
  if (failures) console.log(`\n# failures, repeated:\n${failures}`);
  if (summary) console.log(summary);
  return code;
}

function failureReport(tap: string): string {
  const lines = tap.split('\n');
  const picked: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!/^\s*not ok /.test(line)) continue;
    picked.push(line);
    // The YAML block that follows a failure ends with an indented '...'; a file's own block
    // (unindented) only repeats the command line.
    if (/^\s+not ok /.test(line) && /^\s*---\s*$/.test(lines[i + 1] ?? '')) {
      for (let j = i + 1; j < lines.length && j < i + 40; j++) {
        picked.push(lines[j]!);
        if (/^\s*\.\.\.\s*$/.test(lines[j]!)) break;
      }
    }
  }
  return picked.join('\n');
}
