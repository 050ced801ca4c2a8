import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeNamingStrategy } from '@holdfast/testkit';
import definition, { DEFAULT_NAMING_PATTERN } from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: {} });

describeNamingStrategy('template', {
  definition,
  patterns: [
    DEFAULT_NAMING_PATTERN,
    '{job_name}_{db_name}_{chain}_yyyy-MM-dd_HH-mm-ss',
    'yyyyMMdd-HHmmss.SSS_{job_name}',
    "{chain}-'daily'-dd MMM yy",
  ],
  invalidPatterns: ['{job_name}', '{job}_yyyy', 'a/b_yyyy', 'x\\yyyy', 'HH:mm', "'open_yyyy", '{job_name'],
});

describeNamingStrategy('template (replacement "-", maxLength 64)', {
  definition,
  config: { replacement: '-', maxLength: 64 },
  patterns: [DEFAULT_NAMING_PATTERN],
  numRuns: 50,
});
