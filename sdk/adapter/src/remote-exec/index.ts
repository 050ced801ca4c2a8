export { connectSsh, fetchHostKeyFingerprint, hostKeyFingerprint, SshConnectError, type SshTarget } from './ssh-connection.js';
export { shellQuote, startRemoteCommand, type RemoteCommand, type RemoteProcess } from './remote-command.js';
export type { SftpSession, SftpStats, SshCallback, SshClient, SshExecChannel } from './ssh-client.js';
export { resolveSshTarget, sshConnectError, type SshModeConfig } from './ssh-mode.js';
export { sshBlockFields, sshLoginSecretFields } from './ssh-config-fields.js';
