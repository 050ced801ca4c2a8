import { ORM_DATABASE } from '@holdfast/orm-port';
import { TOKENS, type AdapterRegistry, type KernelLogger, type RouteDefinition } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import { AdapterConfigService } from './adapter-configs/adapter-config-service.js';
import { browsableDestinationsRoute } from './adapter-configs/browsable-destinations-route.js';
import { adapterRoutes } from './adapter-configs/adapter-routes.js';
import { credentialRoutes } from './credentials/credential-routes.js';
import { tokenValidationRoutes } from './credentials/token-validation-routes.js';
import { CredentialService } from './credentials/credential-service.js';
import { verifyKeyCanary } from './crypto/key-canary.js';
import { SecretBox } from './crypto/secret-box.js';
import { loadSystemKey } from './crypto/system-key.js';
import { jobRoutes } from './jobs/job-routes.js';
import { JobService } from './jobs/job-service.js';
import { CatalogJobResolver } from './jobs/run-plan.js';
import { settingsRoutes } from './settings/settings-routes.js';
import { SettingsService } from './settings/settings-service.js';
import { AuditTrail } from './shared/audit.js';
import type { CatalogDeps } from './shared/deps.js';
import { seedSystemRecords } from './templates/seed.js';
import { TemplateStores } from './templates/template-stores.js';
import { transferRoutes } from './transfer/transfer-routes.js';
import { TransferService } from './transfer/transfer-service.js';
import { vaultRoutes } from './vault/vault-routes.js';
import { VaultService } from './vault/vault-service.js';

/** Options of the catalog. */
export interface CatalogOptions {
  /** Where HOLDFAST_ENCRYPTION_KEY(_FILE) are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** How long saving a point-in-time job waits for its source's readiness check (default 10 000 ms). */
  pointInTimeReadinessTimeoutMs?: number;
}

/** Every catalog service, built once per container from its ports. */
export class Catalog {
  readonly deps: CatalogDeps;
  readonly adapters: AdapterConfigService;
  readonly credentials: CredentialService;
  readonly vault: VaultService;
  readonly templates: TemplateStores;
  readonly jobs: JobService;
  readonly settings: SettingsService;
  readonly transfer: TransferService;
  readonly jobCatalog: CatalogJobResolver;
  private secretBox: SecretBox | undefined;

  constructor(container: DependencyContainer, options: CatalogOptions = {}) {
    const logger: KernelLogger = container.resolve(TOKENS.Logger);
    const env = options.env ?? process.env;
    this.deps = {
      container,
      logger,
      audit: new AuditTrail(container, logger),
      ...(options.pointInTimeReadinessTimeoutMs === undefined ? {} : { pointInTimeReadinessTimeoutMs: options.pointInTimeReadinessTimeoutMs }),
      em: () => container.resolve(ORM_DATABASE).em(),
      registry: () => container.resolve(TOKENS.AdapterRegistry) as AdapterRegistry,
      box: () => {
        if (!this.secretBox) {
          const loaded = loadSystemKey(env, container.resolve(TOKENS.RuntimeConfig).dataDir, logger);
          this.secretBox = new SecretBox(loaded.key);
          logger.info({ source: loaded.source, path: loaded.path, fingerprint: this.secretBox.fingerprint }, 'system encryption key loaded');
        }
        return this.secretBox;
      },
    };
    this.adapters = new AdapterConfigService(this.deps);
    this.credentials = new CredentialService(this.deps);
    this.vault = new VaultService(this.deps);
    this.templates = new TemplateStores(this.deps);
    this.jobs = new JobService(this.deps);
    this.settings = new SettingsService(this.deps);
    this.transfer = new TransferService(this);
    this.jobCatalog = new CatalogJobResolver(this.deps, this.adapters);
  }

  /** Checks the system key against the canary, then seeds system records (idempotent). */
  async start(): Promise<void> {
    await verifyKeyCanary(this.deps.em(), this.deps.box());
    const created = await seedSystemRecords(this.deps.em());
    if (created > 0) this.deps.logger.info({ created }, 'catalog system records seeded');
  }

  routes(): RouteDefinition[] {
    return [
      ...adapterRoutes(this.deps, this.adapters),
      browsableDestinationsRoute(this.deps, this.adapters),
      ...credentialRoutes(this.deps, this.credentials),
      ...tokenValidationRoutes(this.deps, this.adapters),
      ...vaultRoutes(this.deps, this.vault),
      ...this.templates.routes(),
      ...jobRoutes(this.deps, this.jobs),
      ...settingsRoutes(this.settings),
      ...transferRoutes(this.transfer),
    ];
  }
}
