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
  const started = Date.now();
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
  console.log(timingReport(out, (Date.now() - started) / 1000));
  if (summary) console.log(summary);
  return code;
}

/** Where a run's time went, for CI's time budget: the files' own time against the wall clock, and
 * the slowest files. A file's `# time=` counts from when it imports tap: the rest of the slots tap
 * had went to starting and ending processes (measured: about 4 CPU-s to load a test file's
 * imports) and to waiting. tap prints files in order, not as they end, so no end time is shown. */
function timingReport(tap: string, wall: number): string {
  const files = [...tap.matchAll(/^(?:not )?ok \d+ - (\S+\.test\.ts)[^\n]*# time=([\d.]+)ms/gm)]
    .map((m) => ({ file: m[1]!, seconds: Number(m[2]) / 1000 }));
  if (files.length === 0) return '';
  const total = files.reduce((a, f) => a + f.seconds, 0);
  const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, 8)
    .map((f) => `#   ${f.seconds.toFixed(1).padStart(6)} s  ${f.file}`).join('\n');
  return `\n# timing: ${files.length} files, ${total.toFixed(0)} s of file time in ${wall.toFixed(0)} s of wall time; slowest:\n${slowest}`;
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
