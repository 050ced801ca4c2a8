// Regression (issue 10.13): groups switched off by an option or a capability vanished from the test report. They
// must be registered as skipped tests whose names carry the reason, so a reader (and the summary line) sees them.
import { describe, expect, it } from 'vitest';
import type { RunnerTestCase, RunnerTestSuite } from 'vitest';
import { describeAdapterDefinition, describeNotificationChannel, disabledGroups, notificationChannelChecks } from '../src/index.js';
import { fixtureChannel } from './fixtures/fixture-channel.js';

const options = {
  definition: fixtureChannel,
  configFor: (baseUrl: string) => ({ url: `${baseUrl}/notify`, token: 't', flaws: [] }),
  invalidConfig: { url: 'not a url', token: 't' },
  secrets: [],
  disable: ['timeouts', 'delivery'] as ('timeouts' | 'delivery')[],
  disableReasons: { timeouts: 'the fixture has no hanging mode' },
};

describeNotificationChannel('fixture with switched-off groups', options);
describeAdapterDefinition(fixtureChannel);

function testsOf(suite: RunnerTestSuite): RunnerTestCase[] {
  return suite.tasks.flatMap((task) => (task.type === 'suite' ? testsOf(task) : [task as RunnerTestCase]));
}

describe('switched-off groups in the report', () => {
  it('registers every check of a disabled group as a skipped test naming the reason', ({ task }) => {
    const all = testsOf(task.file as unknown as RunnerTestSuite);
    const skipped = all.filter((test) => test.mode === 'skip').map((test) => test.name);
    const disabledCount = notificationChannelChecks({ ...options, disable: ['failures', 'config validation', 'redirects'] }).length;
    expect(skipped.length).toBe(disabledCount + 2);
    expect(skipped.filter((name) => name.endsWith('[skipped: the fixture has no hanging mode]')).length).toBeGreaterThan(0);
    expect(skipped.filter((name) => name.endsWith("[skipped: switched off by this adapter's test (disable option)]")).length).toBeGreaterThan(0);
    expect(skipped).toContain('package.json holdfast block and dependencies [skipped: no packageJson given]');
    expect(skipped).toContain('resolves lazily through instantiateAdapter [skipped: no sampleConfig given]');
  });

  it('gives each disabled group its own reason or the default', () => {
    expect([...disabledGroups(['a', 'b'], { a: 'why' })]).toEqual([
      ['a', 'why'],
      ['b', "switched off by this adapter's test (disable option)"],
    ]);
  });
});
