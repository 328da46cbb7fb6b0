// A login's password as PostgreSQL stores it: a SCRAM-SHA-256 verifier computed here, so that the
// password itself never travels in statement text (where logs and pg_stat_statements keep it).
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802, RFC 7677; its own
 * format: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`). The password as
 * PostgreSQL's SASLprep leaves it: NFKC, which is the same for every password but those holding
 * characters SASLprep maps to nothing or to a space. */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
