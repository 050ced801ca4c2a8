import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { CliOutput } from '../output.js';

/** `holdfast secrets rotate-key --new-key-file F`: re-encrypts every stored secret under a new system key. */
export function addSecretsCommand(program: Command, output: CliOutput): void {
  program
    .command('secrets')
    .description('manage the system encryption key')
    .command('rotate-key')
    .description('re-encrypt every stored secret under a new system key, in one transaction')
    .requiredOption('--new-key-file <file>', 'file holding the new 32-byte key (64 hex characters or base64)')
    .option('--json', 'print JSON instead of text')
    .action(async (options: { newKeyFile: string; json?: boolean }) => {
      const { loadRuntimeConfig, serverVersion, withOfflineStack } = await import('@holdfast/server');
      const { SecretBox, loadSystemKey, parseKeyText, rotateSystemKey, SYSTEM_KEY_FILE } = await import('@holdfast/catalog');
      const { silentLogger, SEALED_SECRET_HOLDERS } = await import('@holdfast/kernel');
      const settings = loadRuntimeConfig(process.env, serverVersion());
      const current = loadSystemKey(process.env, settings.dataDir, silentLogger);
      const next = new SecretBox(parseKeyText(await readFile(options.newKeyFile, 'utf8'), `The key file ${options.newKeyFile}`));
      const report = await withOfflineStack(
        ({ database, container }) => {
          // Plugins that keep values sealed outside the catalog (identity: TOTP and SSO secrets) are re-sealed too.
          const holders = container.isRegistered(SEALED_SECRET_HOLDERS, true) ? container.resolveAll(SEALED_SECRET_HOLDERS) : [];
          return rotateSystemKey(database.em(), new SecretBox(current.key), next, holders);
        },
        { discover: false },
      );
      const isKeyFile = current.source === 'data-dir' || current.source === 'generated';
      const path = join(settings.dataDir, SYSTEM_KEY_FILE);
      if (isKeyFile) {
        // Replace the key file atomically so a crash never leaves a half-written key.
        await writeFile(`${path}.new`, await readFile(options.newKeyFile, 'utf8'), { mode: 0o600 });
        await rename(`${path}.new`, path);
      }
      if (options.json) {
        output.write(`${JSON.stringify({ ...report, fingerprint: next.fingerprint, keyFile: isKeyFile ? path : null })}\n`);
        return;
      }
      output.write(
        `Re-encrypted ${report.adapterSecrets} adapter secret(s), ${report.credentialProfiles} credential profile(s), ` +
          `${report.encryptionProfiles} encryption profile key(s)` +
          report.otherSecrets.map((other) => ` and ${other.count} ${other.label}`).join('') +
          `; new key fingerprint ${next.fingerprint}\n`,
      );
      if (isKeyFile) output.write(`Replaced ${path} with the new key\n`);
      else output.write('Now set HOLDFAST_ENCRYPTION_KEY or HOLDFAST_ENCRYPTION_KEY_FILE to the new key before the next start\n');
    });
}
