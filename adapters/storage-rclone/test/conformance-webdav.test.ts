import { describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { removeFolder, webdav, webdavConfig, webdavConfigFile } from './server.js';

// A file of its own, so vitest runs it beside the :local: suite (each check spawns several rclone processes).
describeStorageAdapter<Record<string, unknown>>('storage-rclone against Apache mod_dav (WebDAV remote)', {
  definition,
  config: async () => webdavConfig(await webdav()),
  badConfig: async () => ({ remote: 'dav:', configFile: webdavConfigFile(await webdav(), 'wrong-password') }),
  cleanup: removeFolder,
});
