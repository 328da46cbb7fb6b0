// The repository's own directory. The tests run compiled, from a mirror in .build/ whose other files
// are links to the repository's (scripts/tap.ts); a test that reads the sources, runs git, builds or
// starts a process from them does it here.
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY = dirname(realpathSync(fileURLToPath(new URL('../../package-lock.json', import.meta.url))));
