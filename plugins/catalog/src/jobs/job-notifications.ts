import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { NotificationTemplateEntity } from '../entities/templates.js';
import { parseJsonColumn } from '../shared/deps.js';
import type { JobView } from './job-schemas.js';

interface StoredBinding {
  channelId: string;
  onSuccess?: boolean;
  onPartial?: boolean;
  onFailed?: boolean;
}

/**
 * The channels a job notifies (SPEC Job `notifications`): the bindings of its own notification template, else of the
 * default template, with each channel's name and adapter. Channels deleted behind a template's back are left out,
 * as the dispatcher skips them.
 */
export async function linkedNotifications(em: EntityManager, templateId: string | null): Promise<JobView['notifications']> {
  const own = templateId ? await em.findOne(NotificationTemplateEntity, { id: templateId }) : null;
  const template = own ?? (await em.findOne(NotificationTemplateEntity, { isDefault: true }));
  if (!template) return [];
  const bindings = parseJsonColumn<StoredBinding[]>(template.bindings, []);
  if (bindings.length === 0) return [];
  const channels = await em.find(AdapterConfigEntity, { id: { $in: bindings.map((binding) => binding.channelId) }, type: 'notification' });
  const byId = new Map(channels.map((channel) => [channel.id, channel]));
  return bindings.flatMap((binding) => {
    const channel = byId.get(binding.channelId);
    if (!channel) return [];
    return [
      {
        channelId: channel.id,
        name: channel.name,
        adapterId: channel.adapterId,
        templateId: template.id,
        isDefaultTemplate: own === null,
        onSuccess: binding.onSuccess === true,
        onPartial: binding.onPartial === true,
        onFailed: binding.onFailed === true,
      },
    ];
  });
}
