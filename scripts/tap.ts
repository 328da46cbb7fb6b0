// Runs tap with the test environment, streams its output, and ends with the failures repeated and
// one plain summary line (CI keeps only the tail of the output). Shared by `make test` and
// `make test-citus`.
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** Where the tests run from: their JavaScript, compiled by `tsc -p tsconfig.test.json`, in a mirror of
 * the repository whose other files are links to the originals (so a test's paths relative to its own
 * file, or to the working directory, reach what they reach in the repository). Loaded through tsx, a
 * test process cost 1.4 CPU-s more (3.7 against 2.3 for test/http/smoke.test.ts): its loader hooks
 * answer each of the ~1,100 modules a server imports from another thread. */
const BUILD = join(ROOT, '.build');
/** Linked whole, never walked: nothing in them is compiled. */
const LINKED_WHOLE = new Set(['node_modules', 'dist', '.data', 'tmp', '.scratch']);
/** Not in the mirror: the mirror itself, git's directory (git finds it above), tap's own state. */
const LEFT_OUT = new Set(['.build', '.git', '.tap']);

/** The test files a directory holds, at any depth: tap expands a directory by the extensions of its
 * loaders, so runTap is given the files. */
export function testFiles(path: string): string[] {
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return [path];
  return (readdirSync(path, { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts')).sort()
    .map((f) => join(path, f));
}

export async function runTap(args: string[], env: Record<string, string>): Promise<number> {
  args = args.flatMap((a) => (a.startsWith('-') ? [a] : testFiles(a).map((f) => relative(ROOT, resolve(f)).replace(/\.ts$/, '.js'))));
  compileTests();
  let summary = '';
  let out = '';
  const started = Date.now();
  const code = await new Promise<number>((done) => {
    const child = spawn('npx', ['tap', ...args], {
      cwd: BUILD,
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

/** Type-checks the project and compiles it into BUILD (incremental: a second run compiles what
 * changed; 13.5 s cold, 3.8 s warm), then links every other file of the repository beside it. A type
 * error ends the run before any test, as `tsc --noEmit` did. */
function compileTests(): void {
  if (lstatSync(BUILD, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(BUILD);
  mkdirSync(BUILD, { recursive: true });
  // Links first gone: tsc must not write through a link to a directory into the repository.
  unlinkLinks(BUILD);
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.test.json')],
    { cwd: ROOT, encoding: 'utf8' });
  if (tsc.status !== 0) throw new Error(`the project does not type-check:\n${tsc.stdout}${tsc.stderr}`);
  // tap reads its configuration from here: the same, for the compiled files and without tsx.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  delete pkg.tap['node-arg'];
  pkg.tap.include = ['test/**/*.test.js'];
  writeFileSync(join(BUILD, 'package.json'), JSON.stringify(pkg, null, 2));
  mirror(ROOT, BUILD);
}

function unlinkLinks(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) unlinkSync(path);
    else if (entry.isDirectory()) unlinkLinks(path);
  }
}

function mirror(from: string, to: string): void {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (from === ROOT && LEFT_OUT.has(entry.name)) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    const there = lstatSync(target, { throwIfNoEntry: false });
    if (entry.isDirectory() && !LINKED_WHOLE.has(entry.name) && holdsTypeScript(source)) {
      if (there && !there.isDirectory()) rmSync(target, { recursive: true });
      mkdirSync(target, { recursive: true });
      mirror(source, target);
    } else if (!there) {
      symlinkSync(source, target);
    }
  }
}

function holdsTypeScript(dir: string): boolean {
  return (readdirSync(dir, { recursive: true }) as string[]).some((f) => f.endsWith('.ts'));
}

/** Where a run's time went, for CI's time budget: the files' own time against the wall clock, and
 * the slowest files. A file's `# time=` counts from when it imports tap: the rest of the slots tap
 * had went to starting and ending processes (measured: about 4 CPU-s to load a test file's
 * imports) and to waiting. tap prints files in order, not as they end, so no end time is shown. */
function timingReport(tap: string, wall: number): string {
  const files = [...tap.matchAll(/^(?:not )?ok \d+ - (\S+\.test\.[jt]s)[^\n]*# time=([\d.]+)ms/gm)]
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
