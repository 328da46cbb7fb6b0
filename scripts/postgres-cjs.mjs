// postgres.js ships its CommonJS build (cjs/src/) beside its ES modules (src/), made from them by
// its own transpile.cjs, which the package does not ship. patches/postgres+3.4.9.patch changes src/
// only; after patch-package (package.json "postinstall") this makes cjs/src/ from the patched src/
// with the same transformation, so each change is carried once. Upstream's transpile function,
// porsager/postgres transpile.cjs at v3.4.9 (The Unlicense), for src/ only.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', 'node_modules', 'postgres');

function transpile(x) {
  return x.replace(/export default function ([^(]+)/, 'module.exports = $1;function $1')
    .replace(/export class ([a-z0-9_$]+)/gi, 'const $1 = module.exports.$1 = class $1')
    .replace(/export default /, 'module.exports = ')
    .replace(/export {/g, 'module.exports = {')
    .replace(/export const ([a-z0-9_$]+)/gi, 'const $1 = module.exports.$1')
    .replace(/export function ([a-z0-9_$]+)/gi, 'module.exports.$1 = $1;function $1')
    .replace(/import {([^{}]*?)} from (['"].*?['"])/gi, 'const {$1} = require($2)')
    .replace(/import (.*?) from (['"].*?['"])/gi, 'const $1 = require($2)')
    .replace(/import (['"].*?['"])/gi, 'require($1)')
    .replace('new URL(x, import.meta.url)', 'require("path").join(__dirname, x)');
}

for (const name of readdirSync(join(root, 'src'))) {
  writeFileSync(join(root, 'cjs', 'src', name), transpile(readFileSync(join(root, 'src', name), 'utf8')));
}
