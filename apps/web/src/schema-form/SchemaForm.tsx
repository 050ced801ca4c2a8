import { Accordion, Fieldset, JsonInput, NumberInput, PasswordInput, Select, Stack, Switch, TagsInput, TextInput, Textarea } from '@mantine/core';
import { isAdvancedField } from './advanced-fields';
import { labelOf, typeOf, type FormValues, type JsonSchema } from './json-schema';

interface SchemaFormProps {
  schema: JsonSchema;
  values: FormValues;
  onChange(values: FormValues): void;
  errors: Record<string, string>;
  /** Secret fields with a stored value: shown as "stored" and kept when left empty. */
  storedSecrets: ReadonlySet<string>;
  /** Prefix of nested field paths (internal). */
  path?: string;
}

const MULTILINE = /privatekey|certificate|json|pem/i;

/** Draws an adapter's config form from its JSON Schema: one input per property, nested objects as fieldsets. */
export function SchemaForm({ schema, values, onChange, errors, storedSecrets, path = '' }: SchemaFormProps) {
  const required = new Set(schema.required ?? []);
  const set = (name: string, value: unknown) => onChange({ ...values, [name]: value });
  const properties = Object.entries(schema.properties ?? {});
  // Only the top level splits: inside a fieldset (the SSH block) every field belongs to what the block is for.
  const advanced = path ? [] : properties.filter(([name, property]) => isAdvancedField(name, property, required.has(name)));
  const basic = properties.filter((entry) => !advanced.includes(entry));
  const field = ([name, property]: [string, JsonSchema]) => {
    const key = path ? `${path}.${name}` : name;
    const label = labelOf(name, property);
    const common = {
      label,
      description: property.description,
      error: errors[key],
      required: required.has(name) && !storedSecrets.has(key),
      'data-field': key,
    };
    const value = values[name];
    const type = typeOf(property);
    if (property.secret) {
      const stored = storedSecrets.has(key);
      const props = {
        ...common,
        placeholder: stored ? 'stored (leave empty to keep)' : undefined,
        description: stored ? `${property.description ?? ''} A value is stored; type a new one to replace it.`.trim() : property.description,
        value: typeof value === 'string' ? value : '',
        autoComplete: 'new-password',
        onChange: (event: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => set(name, event.currentTarget.value),
      };
      return MULTILINE.test(name) ? <Textarea key={key} {...props} autosize minRows={2} /> : <PasswordInput key={key} {...props} />;
    }
    if (type === 'object' && property.properties) {
      return (
        <Fieldset key={key} legend={label}>
          {property.description && <p style={{ marginTop: 0, fontSize: 'var(--mantine-font-size-sm)' }}>{property.description} (optional: leave empty to skip)</p>}
          <SchemaForm
            schema={property}
            values={(value as FormValues | undefined) ?? {}}
            onChange={(inner) => set(name, inner)}
            errors={errors}
            storedSecrets={storedSecrets}
            path={key}
          />
        </Fieldset>
      );
    }
    if (property.enum) {
      return (
        <Select
          key={key}
          {...common}
          data={property.enum.map(String)}
          value={value === undefined ? null : String(value)}
          onChange={(next) => set(name, next ?? undefined)}
          clearable={!common.required}
        />
      );
    }
    if (type === 'boolean') {
      return <Switch key={key} {...common} checked={value === true} onChange={(event) => set(name, event.currentTarget.checked)} />;
    }
    if (type === 'integer' || type === 'number') {
      return (
        <NumberInput
          key={key}
          {...common}
          min={property.minimum}
          max={property.maximum}
          allowDecimal={type === 'number'}
          value={typeof value === 'number' ? value : ''}
          onChange={(next) => set(name, typeof next === 'number' ? next : undefined)}
        />
      );
    }
    if (type === 'array' && typeOf(property.items ?? {}) === 'string') {
      return <TagsInput key={key} {...common} value={Array.isArray(value) ? value.map(String) : []} onChange={(next) => set(name, next)} />;
    }
    if (type === 'array' || type === 'object') {
      return (
        <JsonInput
          key={key}
          {...common}
          autosize
          minRows={2}
          defaultValue={value === undefined ? '' : JSON.stringify(value, null, 2)}
          onBlur={(event) => {
            try {
              set(name, event.currentTarget.value.trim() ? JSON.parse(event.currentTarget.value) : undefined);
            } catch {
              // JsonInput shows the parse error itself; keep the last valid value
            }
          }}
        />
      );
    }
    return (
      <TextInput
        key={key}
        {...common}
        value={typeof value === 'string' ? value : value === undefined ? '' : String(value)}
        onChange={(event) => set(name, event.currentTarget.value)}
      />
    );
  };
  // An advanced field with an error opens the section: a hidden field must never be why Save does nothing.
  const hasAdvancedError = advanced.some(([name]) => Object.keys(errors).some((key) => key === name || key.startsWith(`${name}.`)));
  return (
    <Stack gap="sm">
      {basic.map(field)}
      {advanced.length > 0 && (
        <Accordion variant="contained" key={hasAdvancedError ? 'open' : 'as-chosen'} defaultValue={hasAdvancedError ? 'advanced' : null} data-testid="advanced-settings">
          <Accordion.Item value="advanced">
            <Accordion.Control>Advanced settings ({advanced.length})</Accordion.Control>
            <Accordion.Panel>
              <Stack gap="sm">{advanced.map(field)}</Stack>
            </Accordion.Panel>
          </Accordion.Item>
        </Accordion>
      )}
    </Stack>
  );
}
