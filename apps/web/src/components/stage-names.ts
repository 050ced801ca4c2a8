/** Readable names of the pipeline stages (SPEC: 01-initialize ... 05-retention) and the queue. */
const STAGE_NAMES: Record<string, string> = {
  queued: 'Waiting in the queue',
  '01-initialize': 'Preparing',
  '02-dump': 'Reading the source',
  '03-upload': 'Uploading to the destinations',
  '04-completion': 'Finishing',
  '05-retention': 'Applying retention',
};

/** "02-dump" reads "Reading the source"; a stage this list does not know loses its number and dashes. */
export function stageName(stage: string | null | undefined): string {
  if (!stage) return '—';
  const known = STAGE_NAMES[stage];
  if (known) return known;
  const words = stage.replace(/^\d+-/, '').replace(/[-_]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : stage;
}
