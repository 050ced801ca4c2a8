import type { Catalog } from '../catalog.js';
import type { Actor } from '../shared/deps.js';
import { exportCatalog } from './export-catalog.js';
import type { ExportDocument } from './export-format.js';
import { importCatalog } from './import-catalog.js';
import type { ImportInput, ImportResult } from './import-records.js';

/** Export and import of the whole catalog; the HTTP routes and the CLI both call this. */
export class TransferService {
  constructor(private readonly catalog: Catalog) {}

  async export(actor: Actor, encryptionProfileId?: string): Promise<ExportDocument> {
    const document = await exportCatalog(this.catalog, encryptionProfileId);
    await this.catalog.deps.audit.record(actor, 'EXPORT', 'config', null, { secrets: document.secrets, encryptionProfileId: encryptionProfileId ?? null });
    return document;
  }

  import(input: ImportInput, actor: Actor): Promise<ImportResult> {
    return importCatalog(this.catalog, input, actor);
  }
}
