import type { BaseBackupInfo, DumpStats } from '@holdfast/kernel';

/** The `pointInTime` field of a base backup's sidecar (docs/formats/sidecar.md): the base's place in the log, dates in ISO 8601. */
export interface PointInTimeSidecar {
  logKind: BaseBackupInfo['logKind'];
  startPosition: string;
  stopPosition: string;
  startSegment: string;
  timeline: number;
  systemId: string;
  serverVersion: string;
  startedAt: string;
  consistentAt: string;
}

/** The base backup facts of a dump's stats (a physical-mode source's `BaseBackupStats`), or undefined for any other dump. */
export function baseBackupOf(stats: DumpStats): BaseBackupInfo | undefined {
  const base = (stats as DumpStats & { base?: BaseBackupInfo }).base;
  if (!base || typeof base !== 'object' || typeof base.startSegment !== 'string') return undefined;
  return base;
}

/** The sidecar form of {@link BaseBackupInfo}. */
export function pointInTimeSidecar(base: BaseBackupInfo): PointInTimeSidecar {
  return {
    logKind: base.logKind,
    startPosition: base.startPosition,
    stopPosition: base.stopPosition,
    startSegment: base.startSegment,
    timeline: base.timeline,
    systemId: base.systemId,
    serverVersion: base.serverVersion,
    startedAt: new Date(base.startedAt).toISOString(),
    consistentAt: new Date(base.consistentAt).toISOString(),
  };
}

/** Just the {@link BaseBackupInfo} of a stored base's record (which carries its storage and execution besides). */
export function baseBackupInfoOf(base: BaseBackupInfo): BaseBackupInfo {
  return {
    logKind: base.logKind,
    startPosition: base.startPosition,
    stopPosition: base.stopPosition,
    startSegment: base.startSegment,
    timeline: base.timeline,
    systemId: base.systemId,
    serverVersion: base.serverVersion,
    startedAt: base.startedAt,
    consistentAt: base.consistentAt,
  };
}
