/**
 * Versions written into a generated package.json. The sdk and testkit ranges follow the 0.x line this scaffolder
 * ships with; the tool versions are the ones Holdfast itself is tested with on Node 20.
 */
export const GENERATED_VERSIONS = {
  sdkRange: '^0.1.0',
  testkitRange: '^0.1.0',
  vitest: '4.1.12',
  typescript: '5.9.3',
  reflectMetadata: '0.2.2',
  typesNode: '20.19.43',
} as const;
