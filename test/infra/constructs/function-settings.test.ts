import { Duration, Lazy, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { daysOf, millisecondsOf, settingsEnvironment } from '../../../infra/constructs/function-settings.ts';
import {
  CONSUMER_SETTINGS,
  OutboxSettings,
  RELAY_SETTINGS,
} from '../../../shared/settings/outbox-settings.ts';
import { textSetting } from '../../../shared/settings/setting.ts';
import { testApp } from '../template-queries.ts';

/** A problem list and the report that fills it. */
function problems() {
  const found: string[] = [];
  return { found, report: (problem: string) => found.push(problem) };
}

describe('settingsEnvironment', () => {
  it('writes the values of the settings the function reads, formatted by their settings, in the order given', () => {
    const { found, report } = problems();
    const environment = settingsEnvironment(
      RELAY_SETTINGS,
      {
        dueShards: { value: 4, prop: 'dueShards' },
        retryPolicies: { value: {}, prop: 'retryPolicies' },
        // The relay reads no inbox: left out.
        inboxTable: { value: 'inbox', prop: 'inbox' },
        outboxTable: { value: 'outbox', prop: 'table' },
      },
      report,
    );

    expect(Object.entries(environment)).toEqual([
      ['DUE_SHARDS', '4'],
      ['RETRY_POLICIES', '{}'],
      ['OUTBOX_TABLE', 'outbox'],
    ]);
    expect(found).toEqual([]);
  });

  it('leaves a token to CloudFormation and writes a finished text as it is', () => {
    const stack = new Stack(testApp(), 'Service');
    const lazy = Lazy.string({ produce: () => '{}' });
    const environment = settingsEnvironment(
      CONSUMER_SETTINGS,
      {
        inboxTable: { value: lazy, prop: 'inbox' },
        orderedTopics: { text: Stack.of(stack).toJsonString({}) },
      },
      problems().report,
    );

    expect(environment).toEqual({ INBOX_TABLE: lazy, ORDERED_TOPICS: expect.any(String) });
    expect(stack.resolve(environment.ORDERED_TOPICS)).toBe('{}');
  });

  it('reports a value the function would refuse under the prop it came from, with the setting’s message', () => {
    const { found, report } = problems();
    settingsEnvironment(RELAY_SETTINGS, { dueShards: { value: 0, prop: 'dueShards' } }, report);

    expect(found).toEqual([expect.stringMatching(/^dueShards: DUE_SHARDS must be an integer from 1 to/)]);
  });

  it('refuses a list that names a setting outside the settings contract', () => {
    const stray = textSetting({ name: 'STRAY', description: 'not in OutboxSettings' });

    expect(() => settingsEnvironment([stray], {}, problems().report)).toThrow(/STRAY is not a setting/);
  });
});

describe('millisecondsOf and daysOf', () => {
  it('read a known Duration, keep a fraction for the setting to refuse, and default an absent one', () => {
    const { found, report } = problems();

    expect(millisecondsOf(Duration.seconds(2), OutboxSettings.confirmDeadlineMs, report)).toBe(2_000);
    expect(daysOf(Duration.hours(36), OutboxSettings.retentionDays, report)).toBe(1.5);
    expect(daysOf(undefined, OutboxSettings.retentionDays, report)).toBe(
      OutboxSettings.retentionDays.defaultValue,
    );
    expect(found).toEqual([]);
  });

  it('report a Duration unknown at synth and give the default instead', () => {
    const { found, report } = problems();
    const unknown = Duration.seconds(Lazy.number({ produce: () => 1 }));

    expect(millisecondsOf(unknown, OutboxSettings.confirmDeadlineMs, report)).toBe(
      OutboxSettings.confirmDeadlineMs.defaultValue,
    );
    expect(found).toEqual(['CONFIRM_DEADLINE_MS must be known at synth']);
  });
});
