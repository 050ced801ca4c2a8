export { identityMigrations, identitySchemaMigration } from './001-identity-schema.js';
