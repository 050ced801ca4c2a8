// The system events page keeps its own copy of the server's event table (server code is not bundled into the web
// app). This test keeps the two the same: a new server event (the pitr_* events were missed once) shows up here.
import { describe, expect, it } from 'vitest';
import { SYSTEM_EVENT_DEFAULTS } from '../../plugins/notifications/src/dispatch/messages.js';
import { SYSTEM_EVENTS } from '../../apps/web/src/pages/system-events.js';

describe('system events page', () => {
  it('lists every system event of the server with its default', () => {
    const page = Object.fromEntries(SYSTEM_EVENTS.map((event) => [event.name, event.enabledByDefault]));
    expect(page).toEqual({ ...SYSTEM_EVENT_DEFAULTS });
  });
});
