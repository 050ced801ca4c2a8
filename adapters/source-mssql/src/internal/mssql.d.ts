// The parts of mssql 11 this adapter uses. @types/mssql has no release for mssql 11 and pulls the newest tedious
// (Node 22 only) as a dependency, so the few signatures needed are declared here.
declare module 'mssql' {
  export interface config {
    server: string;
    port?: number;
    user?: string;
    password?: string;
    database?: string;
    connectionTimeout?: number;
    requestTimeout?: number;
    /** Runs `SELECT 1` through sp_executesql on every pool acquire when true. */
    validateConnection?: boolean;
    pool?: { max?: number; min?: number; idleTimeoutMillis?: number };
    options?: { encrypt?: boolean; trustServerCertificate?: boolean; appName?: string; enableArithAbort?: boolean };
  }

  export interface IResult<T> {
    recordset: T[];
    recordsets: T[][];
    rowsAffected: number[];
  }

  export class Request {
    batch<T = Record<string, unknown>>(command: string): Promise<IResult<T>>;
    cancel(): void;
  }

  export class ConnectionPool {
    constructor(config: config);
    connect(): Promise<ConnectionPool>;
    request(): Request;
    close(): Promise<void>;
  }

  export class MSSQLError extends Error {
    code?: string;
    originalError?: Error & { code?: string; number?: number };
  }
  export class ConnectionError extends MSSQLError {}
  export class RequestError extends MSSQLError {
    number?: number;
    state?: number;
    class?: number;
  }

  const mssql: {
    ConnectionPool: typeof ConnectionPool;
    ConnectionError: typeof ConnectionError;
    RequestError: typeof RequestError;
  };
  export default mssql;
}
