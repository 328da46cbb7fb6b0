// Shared by the in-database tests.

/** Runs a query and returns `${SQLSTATE} ${message}` (the message is the problem code), or 'ok'. */
export async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e: any) {
    return `${e?.code} ${e?.message}`;
  }
}

export const oneConnection = { max: 1, onnotice: () => {} } as const;
