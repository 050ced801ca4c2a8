import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuntimeConfig } from '../src/runtime-config.js';

describe('loadRuntimeConfig', () => {
  it('applies the documented defaults', () => {
    const settings = loadRuntimeConfig({}, '9.9.9');
    expect(settings).toEqual({
      version: '9.9.9',
      dataDir: resolve('./data'),
      databaseUrl: undefined,
      port: 3000,
      pluginDir: undefined,
      includeAdapters: [],
      excludeAdapters: [],
      trustProxy: false,
      logLevel: 'info',
      localRoots: [resolve('backups'), '/var/backups/holdfast'],
      isDataDirSourceAllowed: false,
      keyFile: undefined,
    });
  });

  it('reads the local path rule: HOLDFAST_LOCAL_ROOTS (absolute, comma or colon separated) and the data-dir source opt-in', () => {
    const settings = loadRuntimeConfig(
      { HOLDFAST_LOCAL_ROOTS: '/srv/backups, /mnt/nas:/media/usb', HOLDFAST_ALLOW_DATA_DIR_SOURCE: 'true', HOLDFAST_ENCRYPTION_KEY_FILE: '/etc/holdfast.key' },
      '1.0.0',
    );
    expect(settings).toMatchObject({
      localRoots: ['/srv/backups', '/mnt/nas', '/media/usb'],
      isDataDirSourceAllowed: true,
      keyFile: '/etc/holdfast.key',
    });
    expect(() => loadRuntimeConfig({ HOLDFAST_LOCAL_ROOTS: 'backups' }, '1.0.0')).toThrow('HOLDFAST_LOCAL_ROOTS entry "backups" must be an absolute path');
  });

  it('reads every variable', () => {
    const settings = loadRuntimeConfig(
      {
        PORT: '8080',
        HOLDFAST_DATA_DIR: '/srv/holdfast',
        DATABASE_URL: 'postgresql://hf@db/holdfast',
        HOLDFAST_PLUGIN_DIR: '/srv/plugins',
        HOLDFAST_ADAPTERS_INCLUDE: 'storage-local, notify-generic-webhook, notification-email',
        HOLDFAST_ADAPTERS_EXCLUDE: 'storage-s3',
        TRUST_PROXY: 'true',
        LOG_LEVEL: 'debug',
      },
      '1.0.0',
    );
    expect(settings).toMatchObject({
      port: 8080,
      dataDir: '/srv/holdfast',
      databaseUrl: 'postgresql://hf@db/holdfast',
      pluginDir: '/srv/plugins',
      // `notification-<id>` is the older spelling of `notify-<id>`, read as the one name.
      includeAdapters: ['storage-local', 'notify-generic-webhook', 'notify-email'],
      excludeAdapters: ['storage-s3'],
      trustProxy: true,
      logLevel: 'debug',
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer between 0 and 65535 (got "eighty")'],
    [{ PORT: '70000' }, 'PORT must be an integer between 0 and 65535'],
    [{ HOLDFAST_ADAPTERS_INCLUDE: 'local' }, 'HOLDFAST_ADAPTERS_INCLUDE entry "local" is not an adapter name like storage-local'],
    [{ HOLDFAST_ADAPTERS_EXCLUDE: 'storage-Bad_Id' }, 'HOLDFAST_ADAPTERS_EXCLUDE entry "storage-Bad_Id" is not an adapter name'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY must be true or false (got "maybe")'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ DATABASE_URL: 'mysql://root:pw@db/x' }, 'DATABASE_URL has an unsupported scheme "mysql"'],
  ])('rejects %j with a message naming the variable', (env, message) => {
    expect(() => loadRuntimeConfig(env, '1.0.0')).toThrow(message);
  });
});
