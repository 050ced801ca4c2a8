export { connectSsh, fetchHostKeyFingerprint, hostKeyFingerprint, SshConnectError, type SshTarget } from './ssh-connection.js';
export { shellQuote, startRemoteCommand, type RemoteCommand, type RemoteProcess } from './remote-command.js';
