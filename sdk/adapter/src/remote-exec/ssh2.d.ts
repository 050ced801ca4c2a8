// ssh2 1.17 ships no types; its client is described in ssh-client.ts, which the SDK exports (a `declare module`
// does not reach the builds of the packages that use the SDK, an exported interface does).
declare module 'ssh2' {
  export const Client: new () => import('./ssh-client.js').UnconnectedSshClient;
}
