// Completes package-lock.json with the platform packages of dbmate and squawk-cli that the
// registry this lockfile was made against does not serve (it offers linux-x64 only). Without
// their entries `npm ci` refuses the lockfile on every platform ("Missing: @dbmate/darwin-arm64
// from lock file"). An entry with `os`, `cpu` and `optional` lets npm skip it off its platform
// without asking the registry; on its own platform npm fetches it by name and version (the
// entry carries no integrity, as none could be read here). Run after `npm install` changes
// the lockfile: `npx tsx scripts/lockfile-platforms.ts`; test/scripts/lockfile.test.ts checks.
import { readFileSync, writeFileSync } from 'node:fs';
import { isMain } from '../src/is-main.ts';

interface LockEntry { version?: string; optionalDependencies?: Record<string, string>; [k: string]: unknown }
interface Lockfile { packages: Record<string, LockEntry>; [k: string]: unknown }

const PLATFORM = /[/-](darwin|linux|win32|freebsd)-(x64|arm64|arm|ia32)$/;

/** The optional dependencies a lockfile names but has no entry for: [entry path, version]. */
export function missingOptional(lock: Lockfile): Array<[string, string, LockEntry]> {
  const missing: Array<[string, string, LockEntry]> = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const nested = path ? `${path}/node_modules/${name}` : `node_modules/${name}`;
      if (!lock.packages[nested] && !lock.packages[`node_modules/${name}`]) missing.push([`node_modules/${name}`, version, entry]);
    }
  }
  return missing;
}

export function completeLockfile(lock: Lockfile): { lock: Lockfile; added: string[]; unknown: string[] } {
  const added: string[] = [], unknown: string[] = [];
  const packages = { ...lock.packages };
  for (const [path, version, parent] of missingOptional(lock)) {
    const platform = PLATFORM.exec(path);
    if (!platform) { unknown.push(path); continue; }
        // The platform packages carry their parent's licence (dbmate's and squawk-cli's do).
    // and its dev flag: `npm ci --omit=dev` leaves a devDependency's binaries out.
    packages[path] = { version, cpu: [platform[2]], ...(parent.dev ? { dev: true } : {}), license: parent.license, optional: true,
      os: [platform[1]] };
    added.push(`${path}@${version}`);
  }
  // npm writes the entries sorted by path, the root ('') first.
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { lock: { ...lock, packages: sorted }, added, unknown };
}

if (isMain(import.meta.url)) {
  const file = new URL('../package-lock.json', import.meta.url);
  const { lock, added, unknown } = completeLockfile(JSON.parse(readFileSync(file, 'utf8')));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  for (const a of added) console.log(`added ${a}`);
  for (const u of unknown) console.error(`not a platform package, add it by hand: ${u}`);
  process.exit(unknown.length ? 1 : 0);
}
