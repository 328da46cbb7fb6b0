// svc-admin client: API Clients, their Roles, secrets, licences and lifecycle.
import { ORG, ROLES_HINT, need, list, opt, type CommandGroup, type FlagSpec } from './command.ts';

const LICENSES = ['regular', 'manager'] as const;
const CLIENT: FlagSpec = { name: 'client', value: 'ID', required: true, description: 'API Client id' };

export const clientCommands: CommandGroup = {
  name: 'client',
  summary: 'API Clients: Roles, secrets, licences and lifecycle',
  commands: {
    create: {
      summary: 'Create an API Client and its first secret (shown once)',
      prints: '{"client_id","client_secret","secret_id"}',
      flags: [
        ORG,
        { name: 'name', value: 'NAME', required: true, description: 'Name of the client' },
        { name: 'license', required: true, values: LICENSES, description: 'Licence level; a regular licence holds only member' },
        { name: 'roles', kind: 'list', value: 'ROLES', required: true, description: ROLES_HINT },
        { name: 'description', value: 'TEXT', description: 'Free-text description' },
      ],
      run: async (sql, f) => {
        const [r] = await sql`select * from control.client_create(${need(f, 'org')}, ${need(f, 'name')}, ${need(f, 'license')},
          ${list(need(f, 'roles'))}::text[], ${opt(f, 'description')})`;
        return { client_id: r!.client_id, client_secret: r!.client_secret, secret_id: r!.secret_id };
      },
    },
    'set-roles': {
      summary: "Replace an API Client's Roles",
      prints: '{"client_id","svc_roles"}',
      flags: [CLIENT, { name: 'roles', kind: 'list', value: 'ROLES', required: true, description: ROLES_HINT }],
      run: async (sql, f) => {
        await sql`select control.client_set_roles(${need(f, 'client')}, ${list(need(f, 'roles'))}::text[])`;
        return { client_id: f.client, svc_roles: list(f.roles) };
      },
    },
    'rotate-secret': {
      summary: 'Add a new secret (at most two are active; revoke the old one after switching)',
      prints: '{"client_secret","secret_id"}',
      flags: [CLIENT],
      run: async (sql, f) => {
        const [r] = await sql`select * from control.client_rotate_secret(${need(f, 'client')})`;
        return { client_secret: r!.client_secret, secret_id: r!.secret_id };
      },
    },
    'revoke-secret': {
      summary: 'Revoke one secret of an API Client',
      prints: '{"client_id","secret_id","revoked"}',
      flags: [CLIENT, { name: 'secret-id', value: 'ID', required: true, description: 'Id of the secret to revoke' }],
      run: async (sql, f) => {
        await sql`select control.client_revoke_secret(${need(f, 'client')}, ${need(f, 'secret-id')})`;
        return { client_id: f.client, secret_id: f['secret-id'], revoked: true };
      },
    },
    disable: {
      summary: 'Disable an active API Client (its tokens stop working)',
      prints: '{"client_id","status"}',
      flags: [CLIENT],
      run: async (sql, f) => {
        await sql`select control.client_disable(${need(f, 'client')})`;
        return { client_id: f.client, status: 'disabled' };
      },
    },
    enable: {
      summary: 'Enable a disabled API Client',
      prints: '{"client_id","status"}',
      flags: [CLIENT],
      run: async (sql, f) => {
        await sql`select control.client_enable(${need(f, 'client')})`;
        return { client_id: f.client, status: 'active' };
      },
    },
    'release-license': {
      summary: "Release an API Client's licence back to the organization",
      prints: '{"client_id","license_status"}',
      flags: [CLIENT],
      run: async (sql, f) => {
        await sql`select control.client_release_license(${need(f, 'client')})`;
        return { client_id: f.client, license_status: 'released' };
      },
    },
    delete: {
      summary: 'Delete an API Client (kept for audit; secrets revoked, licence released)',
      prints: '{"client_id","status"}',
      flags: [CLIENT],
      run: async (sql, f) => {
        await sql`select control.client_delete(${need(f, 'client')})`;
        return { client_id: f.client, status: 'deleted' };
      },
    },
  },
};
