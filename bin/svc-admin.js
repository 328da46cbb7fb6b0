#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';
register();
process.env.SVC_ADMIN_MAIN = '1';
await import('../src/admin/cli.ts');
