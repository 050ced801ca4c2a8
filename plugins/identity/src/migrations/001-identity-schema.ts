import { defineMigration } from '@holdfast/orm-port';
import type { Knex } from '@mikro-orm/knex';

type Table = Knex.CreateTableBuilder;

// Timestamps carry a time zone on PostgreSQL; SQLite has one datetime type.
function timestamp(table: Table, name: string): Knex.ColumnBuilder {
  return table.datetime(name, { useTz: true });
}

function createPeopleTables(schema: Knex.SchemaBuilder): Knex.SchemaBuilder {
  return schema
    .createTable('users', (t) => {
      t.string('id', 36).primary();
      t.string('name', 255).notNullable();
      t.string('email', 255).notNullable().unique({ indexName: 'users_email_unique' });
      t.boolean('email_verified').notNullable().defaultTo(false);
      t.text('image').nullable();
      t.string('timezone', 255).notNullable().defaultTo('');
      t.string('date_format', 255).notNullable().defaultTo('P');
      t.string('time_format', 255).notNullable().defaultTo('p');
      t.boolean('auto_redirect_on_job_start').notNullable().defaultTo(true);
      t.boolean('two_factor_enabled').nullable();
      t.boolean('passkey_two_factor').nullable();
      t.boolean('is_super_admin').notNullable().defaultTo(false);
      t.string('group_id', 36).nullable().index('users_group_id_index');
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
    })
    .createTable('groups', (t) => {
      t.string('id', 36).primary();
      t.string('name', 255).notNullable().unique({ indexName: 'groups_name_unique' });
      t.text('permissions').notNullable().defaultTo('[]');
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
    })
    .createTable('group_grants', (t) => {
      t.string('id', 36).primary();
      t.string('group_id', 36).notNullable().index('group_grants_group_id_index');
      t.string('permission', 255).notNullable();
      t.string('resource_type', 255).notNullable();
      t.text('resource_ids').notNullable().defaultTo('[]');
      timestamp(t, 'created_at').notNullable();
    });
}

function createCredentialTables(schema: Knex.SchemaBuilder): Knex.SchemaBuilder {
  return schema
    .createTable('sessions', (t) => {
      t.string('id', 36).primary();
      t.string('user_id', 36).notNullable().index('sessions_user_id_index');
      t.string('token_hash', 64).notNullable().unique({ indexName: 'sessions_token_hash_unique' });
      timestamp(t, 'expires_at').notNullable();
      t.string('ip_address', 255).nullable();
      t.text('user_agent').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
    })
    .createTable('accounts', (t) => {
      t.string('id', 36).primary();
      t.string('user_id', 36).notNullable().index('accounts_user_id_index');
      t.string('provider_id', 255).notNullable();
      t.string('account_id', 255).notNullable();
      t.text('password').nullable();
      t.text('access_token').nullable();
      t.text('refresh_token').nullable();
      t.text('id_token').nullable();
      timestamp(t, 'access_token_expires_at').nullable();
      timestamp(t, 'refresh_token_expires_at').nullable();
      t.text('scope').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
      t.unique(['provider_id', 'account_id'], { indexName: 'accounts_provider_account_unique' });
    })
    .createTable('api_keys', (t) => {
      t.string('id', 36).primary();
      t.string('name', 255).notNullable();
      t.string('prefix', 16).notNullable().index('api_keys_prefix_index');
      t.string('hashed_key', 255).notNullable().unique({ indexName: 'api_keys_hashed_key_unique' });
      t.text('permissions').notNullable().defaultTo('[]');
      t.string('user_id', 36).notNullable().index('api_keys_user_id_index');
      timestamp(t, 'expires_at').nullable();
      timestamp(t, 'last_used_at').nullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      timestamp(t, 'created_at').notNullable();
    });
}

function createSecondFactorTables(schema: Knex.SchemaBuilder): Knex.SchemaBuilder {
  return schema
    .createTable('two_factors', (t) => {
      t.string('id', 36).primary();
      t.string('user_id', 36).notNullable().unique({ indexName: 'two_factors_user_id_unique' });
      t.text('secret').notNullable();
      t.text('backup_codes').notNullable();
      timestamp(t, 'created_at').notNullable();
    })
    .createTable('passkeys', (t) => {
      t.string('id', 36).primary();
      t.string('user_id', 36).notNullable().index('passkeys_user_id_index');
      t.string('name', 255).nullable();
      t.string('credential_id', 255).notNullable().unique({ indexName: 'passkeys_credential_id_unique' });
      t.text('public_key').notNullable();
      t.integer('counter').notNullable().defaultTo(0);
      t.string('device_type', 255).notNullable();
      t.boolean('backed_up').notNullable().defaultTo(false);
      t.string('transports', 255).nullable();
      t.string('aaguid', 255).nullable();
      timestamp(t, 'created_at').notNullable();
    })
    .createTable('verifications', (t) => {
      t.string('id', 36).primary();
      t.string('identifier', 255).notNullable().index('verifications_identifier_index');
      t.text('value').notNullable();
      timestamp(t, 'expires_at').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
    })
    .createTable('sso_providers', (t) => {
      t.string('id', 36).primary();
      t.string('provider_id', 255).notNullable().unique({ indexName: 'sso_providers_provider_id_unique' });
      t.string('type', 255).notNullable().defaultTo('oidc');
      t.string('name', 255).notNullable();
      t.string('adapter_id', 255).notNullable();
      t.string('domain', 255).nullable();
      t.boolean('domain_verified').notNullable().defaultTo(false);
      for (const column of ['issuer', 'discovery_endpoint', 'authorization_endpoint', 'token_endpoint']) {
        t.text(column).nullable();
      }
      for (const column of ['user_info_endpoint', 'jwks_endpoint', 'saml_entry_point', 'saml_certificate']) {
        t.text(column).nullable();
      }
      t.text('client_id').notNullable();
      t.text('client_secret').notNullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      t.boolean('allow_provisioning').notNullable().defaultTo(true);
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
    });
}

function createRecordTables(schema: Knex.SchemaBuilder): Knex.SchemaBuilder {
  return schema
    .createTable('audit_logs', (t) => {
      t.string('id', 36).primary();
      t.string('user_id', 36).nullable();
      t.string('action', 255).notNullable();
      t.string('resource', 255).notNullable();
      t.string('resource_id', 255).nullable();
      t.text('details').nullable();
      t.string('ip_address', 255).nullable();
      t.text('user_agent').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['created_at'], 'audit_logs_created_at_index');
      t.index(['user_id', 'created_at'], 'audit_logs_user_id_created_at_index');
      t.index(['action', 'created_at'], 'audit_logs_action_created_at_index');
      t.index(['resource', 'created_at'], 'audit_logs_resource_created_at_index');
    });
  // `system_settings` belongs to the catalog (its migration creates it); identity reads it through TOKENS.Settings.
}

/**
 * Creates every identity table. On PostgreSQL it also creates `rate_limits`, the shared counter table that
 * rate-limiter-flexible's PostgreSQL store reads (same columns that library would create itself).
 */
export const identitySchemaMigration = defineMigration('20260101-identity-001-schema', async (knex, dialect) => {
  await createPeopleTables(knex.schema);
  await createCredentialTables(knex.schema);
  await createSecondFactorTables(knex.schema);
  await createRecordTables(knex.schema);
  if (dialect === 'postgresql') {
    await knex.schema.createTable('rate_limits', (t) => {
      t.string('key', 255).primary();
      t.integer('points').notNullable().defaultTo(0);
      t.bigInteger('expire').nullable();
    });
  }
});
