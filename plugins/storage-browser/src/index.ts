export { createStorageBrowserPlugin, STORAGE_BROWSER, type StorageBrowserPluginOptions } from './plugin.js';
export { StorageBrowser, backupKey, type Listing } from './storage-browser.js';
export { DownloadTokenStore, TOKEN_LIFETIME_MS, USED_TOKEN_RETENTION_MS, TOKEN_CLEANUP_INTERVAL_MS, type DownloadGrant, type DownloadTokenRecord, type TokenStoreClock } from './download-tokens.js';
export { DatabaseDownloadTokens, MemoryDownloadTokens, createDownloadTokensTable, type DownloadTokens } from './shared-download-tokens.js';
export { StorageListCache, StorageListCacheEntity, createStorageListCacheTable, DEFAULT_LIST_CACHE_TTL_MS } from './list-cache.js';
export { attachmentHeader } from './routes/storage-routes.js';
export type { FileEntry } from './file-listing.js';
