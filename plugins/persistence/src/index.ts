export { createPersistencePlugin, ensureInstanceRecord } from './plugin.js';
export { InstanceRecord, createInstanceTable } from './entities/instance-record.js';
