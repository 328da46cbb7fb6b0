// svc-admin keys: the keys that sign access tokens.
import { newSigningKey } from '../auth/tokens.ts';
import { masterKey } from '../config.ts';
import { need, type CommandGroup } from './command.ts';

export const signingKeyCommands: CommandGroup = {
  name: 'keys',
  summary: 'Token signing keys',
  commands: {
    rotate: {
      summary: 'Add a token signing key (signs from now on; older keys still verify)',
      prints: '{"kid"}',
      flags: [],
      run: async (sql) => {
        const k = await newSigningKey(masterKey());
        await sql`select control.signing_key_add(${k.kid}, ${k.alg}, ${sql.json(k.publicJwk)}, ${k.sealed})`;
        return { kid: k.kid };
      },
    },
    retire: {
      summary: 'Retire a signing key, once the longest token lifetime has passed',
      prints: '{"kid","retired"}',
      flags: [{ name: 'kid', value: 'KID', required: true, description: 'Key id' }],
      run: async (sql, f) => {
        await sql`select control.signing_key_retire(${need(f, 'kid')})`;
        return { kid: f.kid, retired: true };
      },
    },
  },
};
