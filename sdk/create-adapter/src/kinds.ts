/** The adapter kinds the scaffolder knows, with the names their generated code uses. */
export const SCAFFOLD_KINDS = ['source', 'storage', 'notification', 'retention', 'naming'] as const;

/** One of {@link SCAFFOLD_KINDS}. */
export type ScaffoldKind = (typeof SCAFFOLD_KINDS)[number];

/** How a kind's generated code names things; the template files hold everything else. */
export interface KindProfile {
  /** The sdk helper that makes the definition. */
  defineFunction: string;
  /** The kernel contract the generated class implements. */
  contractType: string;
  /** Suffix of the generated class name: `MyThing` + `Storage`. */
  classSuffix: string;
  /** The testkit suite an author adds once the methods are written. */
  fullSuite: string;
}

/** Naming per kind; kept beside the templates' placeholders so both change together. */
export const KIND_PROFILES: Readonly<Record<ScaffoldKind, KindProfile>> = {
  source: {
    defineFunction: 'defineSourceAdapter',
    contractType: 'SourceAdapter',
    classSuffix: 'Source',
    fullSuite: 'describeSourceAdapter',
  },
  storage: {
    defineFunction: 'defineStorageAdapter',
    contractType: 'StorageAdapter',
    classSuffix: 'Storage',
    fullSuite: 'describeStorageAdapter',
  },
  notification: {
    defineFunction: 'defineNotificationAdapter',
    contractType: 'NotificationChannel',
    classSuffix: 'Channel',
    fullSuite: 'describeNotificationChannel',
  },
  retention: {
    defineFunction: 'defineRetentionStrategy',
    contractType: 'RetentionStrategy',
    classSuffix: 'Retention',
    fullSuite: 'describeRetentionStrategy',
  },
  naming: {
    defineFunction: 'defineNamingStrategy',
    contractType: 'NamingStrategy',
    classSuffix: 'Naming',
    fullSuite: 'describeNamingStrategy',
  },
};

/** True when `value` names a kind the scaffolder can generate. */
export function isScaffoldKind(value: string): value is ScaffoldKind {
  return (SCAFFOLD_KINDS as readonly string[]).includes(value);
}
