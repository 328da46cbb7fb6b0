// Whether a module is the script Node was started with. Comparing import.meta.url with
// `file://${process.argv[1]}` fails for a path through a symlink (systemd's /srv/app/current/…),
// one with a space or non-ASCII character (percent-encoded in the URL) and on Windows: the entry
// point then exits 0 having done nothing.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
