export * from './codec/index.js';
export { createArchiveRangeReader, type ArchiveRangeReader, type ArchiveRangeReaderOptions } from './archive/range-reader.js';
export { createEnginePlugin, ENGINE, type EnginePluginOptions } from './plugin.js';
export { Engine, type RunTrigger } from './queue/engine.js';
export { DEFAULT_ENGINE_OPTIONS, engineOptionsFrom, type EngineOptions } from './queue/engine-options.js';
export { INTERRUPTED_MESSAGE, abandonedMessage } from './queue/orphans.js';
export { PROCESS_ROLES, processRoleFrom, runsJobs, type ProcessRole } from './queue/process-role.js';
export { compressedClock, schedulerClockFrom, WALL_CLOCK, type SchedulerClock } from './scheduler/scheduler-clock.js';
export { ExecutionStore, type LogEntry, type NewExecution } from './store/execution-store.js';
export {
  ExecutionEntity,
  ExecutionLogEntity,
  EXECUTION_STATUSES,
  EXECUTION_TYPES,
  FINAL_STATUSES,
  TRIGGER_TYPES,
  type Execution,
  type ExecutionStatus,
  type ExecutionType,
  type TriggerType,
} from './store/entities.js';
export { parseMetadata, type ExecutionMetadata, type DestinationOutcome } from './store/metadata.js';
export { createEngineTables } from './store/migration.js';
export { FanOut, startBranch, type FanOutBranch } from './run/fan-out.js';
export { streamBackup, BackupStreamError, type StreamBackupOptions, type StreamedBackup, type BranchOutcome } from './run/backup-pipeline.js';
export type { StorageInstance } from './run/adapters.js';
export { planRetention, applyRetention, mapLimit, PARALLEL_METADATA_READS, type RetentionVerdict } from './run/retention.js';
export { readSidecar, writeSidecar, isSidecarKey, SIDECAR_EXTENSION, SIDECAR_FORMAT_VERSION, type BackupSidecar } from './run/sidecar.js';
export { STAGES, RESTORE_STAGES, VERIFY_STAGES, TEST_RESTORE_STAGES } from './run/run-context.js';
export { integrityRequestSchema, verificationBodySchema, type IntegrityRequest, type VerificationRequest } from './verify/integrity-request.js';
export { checkStoredObject, type ObjectCheck, type VerificationMethod } from './verify/stored-object.js';
export { restoreTimeOf, restoreTimes, type RestoreTime } from './test-restore/restore-times.js';
export { restoreRequestSchema, type RestoreRequest } from './restore/restore-request.js';
export { executionViewSchema, toExecutionView, type ExecutionView } from './routes/representation.js';
export { HistoryStore } from './history/history-store.js';
export type { HistoryFilter } from './history/history-query.js';
export { historyQuerySchema, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, UNPAGED_LIMIT } from './history/history-query.js';
export { JobScheduler, SCHEDULER_TRIGGER, DEFAULT_SCHEDULER_OPTIONS, type SchedulerOptions, type PlannedJob, type SlotOutcome } from './scheduler/scheduler.js';
export type { ReportingOptions } from './scheduler/scheduler-wiring.js';
