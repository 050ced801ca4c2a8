/** The number settings of `PUT /api/settings` shown on the Settings page, in groups, with the API's bounds. */
export interface NumberSetting {
  key: 'maxConcurrentJobs' | 'maxConcurrentFiles' | 'authPoints' | 'authDuration' | 'apiPoints' | 'apiDuration' | 'mutationPoints' | 'mutationDuration' | 'audit.retentionDays' | 'notification.logRetentionDays' | 'pitr.lagAlertBytes';
  label: string;
  description?: string;
  min: number;
  max: number;
}

export const NUMBER_SETTING_GROUPS: ReadonlyArray<{ title: string; fields: readonly NumberSetting[] }> = [
  {
    title: 'Runs',
    fields: [
      { key: 'maxConcurrentJobs', label: 'Concurrent jobs', description: 'Runs at once; the rest wait in the queue', min: 1, max: 256 },
      { key: 'maxConcurrentFiles', label: 'Concurrent files per job', description: 'File transfers at once for directory sources (at most 16)', min: 1, max: 16 },
    ],
  },
  {
    title: 'Rate limits (per IP address; a signed-in browser gets five times the read limit per user)',
    fields: [
      { key: 'authPoints', label: 'Sign-in requests', description: 'Per window', min: 1, max: 100_000 },
      { key: 'authDuration', label: 'Sign-in window (seconds)', min: 1, max: 86_400 },
      { key: 'apiPoints', label: 'Read requests (GET)', description: 'Per window', min: 1, max: 100_000 },
      { key: 'apiDuration', label: 'Read window (seconds)', min: 1, max: 86_400 },
      { key: 'mutationPoints', label: 'Change requests (POST, PUT, DELETE)', description: 'Per window', min: 1, max: 100_000 },
      { key: 'mutationDuration', label: 'Change window (seconds)', min: 1, max: 86_400 },
    ],
  },
  {
    title: 'Retention of records',
    fields: [
      { key: 'audit.retentionDays', label: 'Keep audit entries (days)', min: 1, max: 3650 },
      { key: 'notification.logRetentionDays', label: 'Keep notification log entries (days)', min: 1, max: 3650 },
    ],
  },
  {
    title: 'Point-in-time recovery',
    fields: [
      {
        key: 'pitr.lagAlertBytes',
        label: 'WAL stream lag alert (bytes)',
        description: 'WAL held on the database server and not yet archived that raises pitr_lag (1073741824 = 1 GiB)',
        min: 1024 ** 2,
        max: 1024 ** 5,
      },
    ],
  },
];
