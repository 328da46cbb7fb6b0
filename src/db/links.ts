// Capability links (an upload or download URL) carry no access token: the link's own token names its
// organization, after the resource's id (`upl_….org_….<mac>`; the signature covers it, and the
// database checks that).
import { createHash } from 'node:crypto';
import type { Connections, Database } from './database.ts';

/** The connections a link's statements go through: on a Citus coordinator, those of the organization
 * its token names (its worker's); undefined there when the token names none (no link, without asking
 * the database). On one server, the database's own. */
export function linkConnections(database: Database, token: string): Connections | undefined {
  if (!database.routed) return database;
  const organizationId = token.split('.', 3)[1];
  // Not kept: the organization is the token's word until the database has checked its signature.
  return organizationId?.startsWith('org_') ? database.of(organizationId, { keep: false }) : undefined;
}

/** A link's token as the database takes it (api.file_upload_begin and the download beginnings): its
 * signature, the last part, replaced by the signature's SHA-256, so that no statement's text holds a
 * link that works. */
export function linkForDatabase(token: string): string {
  const dot = token.lastIndexOf('.');
  return `${token.slice(0, dot + 1)}${createHash('sha256').update(token.slice(dot + 1)).digest('hex')}`;
}

/** `fn` with the connections of the link's organization (linkConnections), or `none` when its token names none. */
export function withLink<T>(database: Database, token: string, fn: (link: Connections) => T, none: () => T): T {
  const link = linkConnections(database, token);
  return link ? fn(link) : none();
}
