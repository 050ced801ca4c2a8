/** Placeholder values a template may use as `{{name}}`. */
export type TemplateValues = Readonly<Record<string, string>>;

const PLACEHOLDER = /\{\{([a-zA-Z][a-zA-Z0-9]*)\}\}/g;

/**
 * Replaces every `{{name}}` in `text`. An unknown name throws, naming the template, so a typo in a template is
 * caught by the scaffolder's own tests instead of landing in someone's package.
 */
export function renderTemplate(text: string, values: TemplateValues, templateName: string): string {
  return text.replace(PLACEHOLDER, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`template ${templateName} uses unknown placeholder {{${name}}}`);
    return value;
  });
}

/**
 * Maps a template's relative path to the generated file's path: `__id__`/`__kind__` are substituted, the `.tmpl`
 * suffix dropped, and a leading `_` becomes `.` (npm strips dotfiles such as `.gitignore` from published packages).
 */
export function outputPath(templatePath: string, values: TemplateValues): string {
  const substituted = templatePath
    .replaceAll('__id__', values.id ?? '__id__')
    .replaceAll('__kind__', values.kind ?? '__kind__')
    .replace(/\.tmpl$/, '');
  return substituted
    .split('/')
    .map((segment) => (segment.startsWith('_') ? `.${segment.slice(1)}` : segment))
    .join('/');
}

/** `my-cloud` -> `MyCloud`. */
export function pascalCase(id: string): string {
  return id
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `my-cloud` -> `myCloud`. */
export function camelCase(id: string): string {
  const pascal = pascalCase(id);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}
