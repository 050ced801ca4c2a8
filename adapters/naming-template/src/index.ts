import { defineNamingStrategy } from '@holdfast/sdk';
import { namingConfigSchema } from './config.js';
import { TemplateNaming } from './template-naming.js';

export { DEFAULT_NAMING_PATTERN, namingConfigSchema } from './config.js';
export type { NamingConfig } from './config.js';
export { DATE_TOKENS, FIELD_TOKENS } from './internal/pattern.js';
export { TemplateNaming } from './template-naming.js';

/** File names from patterns such as `{job_name}_yyyy-MM-dd_HH-mm-ss`, rendered in a time zone. */
export default defineNamingStrategy({
  id: 'template',
  displayName: 'Name template',
  description: 'Builds backup file names from {job_name}, {db_name}, {chain} and date tokens in the system time zone.',
  configSchema: namingConfigSchema,
  capabilities: {},
  implementation: TemplateNaming,
});
