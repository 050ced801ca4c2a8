import { defineSourceAdapter } from '@holdfast/sdk';
import { directorySourceConfig } from './config.js';
import { DirectorySource } from './directory-source.js';

export { directorySourceConfig, type DirectorySourceConfig } from './config.js';
export { DirectorySource, ARCHIVE_LAYOUT_VERSION } from './directory-source.js';

/** The `source-directory` adapter: folders and files archived as one tar stream. */
export default defineSourceAdapter({
  id: 'directory',
  displayName: 'Directories',
  description: 'Archives one or more folders (or files) as a single streamed tar, keeping symlinks, modes and times.',
  configSchema: directorySourceConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: true, fileArchive: true, seekableArchive: true },
  implementation: DirectorySource,
});
