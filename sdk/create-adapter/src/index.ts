export { runCli, type CliOutput } from './cli.js';
export { parseCommandLine, titleFromId, USAGE, ID_PATTERN, type ScaffoldOptions, type ParsedCommandLine } from './options.js';
export { scaffoldAdapter, templateValues, devDependencySpecs, ScaffoldError, TEMPLATES_DIR, type ScaffoldResult } from './scaffold.js';
export { SCAFFOLD_KINDS, KIND_PROFILES, isScaffoldKind, type ScaffoldKind, type KindProfile } from './kinds.js';
export { renderTemplate, outputPath, pascalCase, camelCase, type TemplateValues } from './render.js';
export { GENERATED_VERSIONS } from './versions.js';
export { findInstallation, missingBuildOutputs, LINKED_PACKAGES, type InstallationLinks, type LinkedPackage } from './installation.js';
