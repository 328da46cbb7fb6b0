// svc-admin reporting: read-only PostgreSQL logins for BI tools (README, "Reporting access for BI tools").
import { randomBytes } from 'node:crypto';
import { scramVerifier } from '../db/scram.ts';
import { editDatabaseUrl } from '../db/url.ts';
import { ORG, ROLES_HINT, need, list, type CommandGroup } from './command.ts';

export const reportingCommands: CommandGroup = {
  name: 'reporting',
  summary: 'Read-only database logins for BI tools',
  commands: {
    grant: {
      summary: 'A read-only database login for a BI tool, bound to one organization and Roles (the reporting views, a 30 s statement timeout); the password is shown once',
      prints: '{"role","password","connection_string"}',
      flags: [ORG, { name: 'roles', value: 'LIST', required: true, description: ROLES_HINT }],
      run: async (sql, f, url) => {
        // The server gets the verifier only: the password is shown here, once, and kept nowhere.
        const password = randomBytes(32).toString('hex');
        const [r] = await sql`select * from control.reporting_grant(${need(f, 'org')}, ${list(f.roles)}::text[], ${scramVerifier(password)})`;
        const conn = editDatabaseUrl(url, { username: r!.role_name, password });
        return { role: r!.role_name, password, connection_string: conn };
      },
    },
    revoke: {
      summary: 'Remove a BI login (its open sessions end)',
      prints: '{"role","revoked"}',
      flags: [{ name: 'role', value: 'NAME', required: true, description: 'The login (svc_bi_…)' }],
      run: async (sql, f) => {
        await sql`select control.reporting_revoke(${need(f, 'role')})`;
        return { role: f.role, revoked: true };
      },
    },
  },
};
