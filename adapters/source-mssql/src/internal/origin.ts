/** How errors name this adapter. */
export const ORIGIN = { kind: 'source', id: 'mssql' } as const;
