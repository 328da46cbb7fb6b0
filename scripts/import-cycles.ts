// Import circles among the modules under a directory (src/ by default). Every import counts:
// `import type` too (erased at runtime, but a circle of types is still two modules that cannot be
// understood apart), `export … from`, and `import()`. test/scripts/import-cycles.test.ts fails
// when src/ has one; `npx tsx scripts/import-cycles.ts [dir]` prints them.
import ts from 'typescript';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { isMain } from '../src/is-main.ts';

/** The project's compiler options, so that specifiers resolve as tsc resolves them. */
function projectOptions(): ts.CompilerOptions {
  const path = resolve(import.meta.dirname, '../tsconfig.json');
  const { config } = ts.readConfigFile(path, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config, ts.sys, resolve(import.meta.dirname, '..')).options;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.[cm]?tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Each module under `dir` (absolute path) and the modules under `dir` it imports. */
export function importGraph(dir: string): Map<string, string[]> {
  const options = projectOptions();
  const files = tsFiles(resolve(dir));
  const inside = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((i) => ts.resolveModuleName(i.fileName, file, options, ts.sys).resolvedModule?.resolvedFileName)
      .filter((f): f is string => f !== undefined && inside.has(resolve(f)))
      .map((f) => resolve(f));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** One circle per strongly connected component of the graph, each as a path that ends where it
 * starts (a → b → a); a module importing itself is a circle too. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative: a long chain of imports must not exhaust the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next); low.set(root, next++); stack.push(root); onStack.add(root);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next); low.set(to, next++); stack.push(to); onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do { member = stack.pop()!; onStack.delete(member); component.push(member); } while (member !== frame.node);
        if (component.length > 1 || edges.includes(frame.node)) components.push(component);
      }
    }
  }
  return components.map((component) => shortestCircle(graph, new Set(component)));
}

/** The shortest circle through the component's alphabetically first module (breadth-first). */
function shortestCircle(graph: Map<string, string[]>, component: Set<string>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!component.has(to)) continue;
      if (to === start) {
        const between: string[] = [];
        for (let at = node; at !== start; at = cameFrom.get(at)!) between.unshift(at);
        return [start, ...between, start];
      }
      if (!cameFrom.has(to)) { cameFrom.set(to, node); queue.push(to); }
    }
  }
  throw new Error(`no circle through ${start}`);
}

export const describeCycle = (cycle: string[], base = process.cwd()) => cycle.map((f) => relative(base, f)).join(' → ');

if (isMain(import.meta.url)) {
  const cycles = importCycles(importGraph(process.argv[2] ?? 'src'));
  for (const cycle of cycles) process.stdout.write(describeCycle(cycle) + '\n');
  process.stdout.write(`${cycles.length} import circle${cycles.length === 1 ? '' : 's'}\n`);
  process.exitCode = cycles.length ? 1 : 0;
}
