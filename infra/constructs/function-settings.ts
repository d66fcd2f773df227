/**
 * A function's environment, written from the list of settings it reads (`RELAY_SETTINGS`, `CONSUMER_SETTINGS`,
 * ...): every variable is named by the settings contract and its value checked and formatted by the same rule the
 * function applies when it starts, so a value it would refuse fails `cdk synth` instead, naming the prop.
 */
import { type Duration, Token } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { OutboxSettings } from '../../shared/settings/outbox-settings.ts';
import type { Setting } from '../../shared/settings/setting.ts';

type Settings = typeof OutboxSettings;

/** A setting by its key in `OutboxSettings`: `outboxTable`, `dueShards`, ... */
export type SettingKey = keyof Settings;

/** What a setting holds: `number` for `dueShards`, the routes object for `topicQueues`, ... */
type ValueOf<K extends SettingKey> = Settings[K] extends Setting<infer T> ? T : never;

/**
 * A setting's value as a construct has it: the value and the prop it came from (checked and formatted at synth; a
 * bad one is reported under that prop), or the variable's finished text when it holds tokens that only
 * CloudFormation resolves (a JSON object of queue URLs, a list produced at synth).
 */
export type SettingValue<T> = { readonly value: T; readonly prop: string } | { readonly text: string };

/** Setting values by key. A function's environment takes the values of the settings it reads and no others. */
export type SettingValues = { readonly [K in SettingKey]?: SettingValue<ValueOf<K>> };

/** How a construct reports a bad prop: the message fails `cdk synth`. */
export type ReportProblem = (problem: string) => void;

const CONTRACT: ReadonlySet<Setting<unknown>> = new Set(Object.values(OutboxSettings));

/**
 * The environment of a function that reads `settings`: the text of each value in `values` whose setting is in
 * that list, in the order of `values` (the order the variables have always been written in, which a function
 * version's hash depends on). A value of a setting the function does not read is left out, and so is a setting
 * without a value: the function then takes its default, or does without it.
 * @example
 * const environment = settingsEnvironment(RELAY_SETTINGS, { dueShards: { value: 8, prop: 'dueShards' } }, report);
 */
export function settingsEnvironment(
  settings: readonly Setting<unknown>[],
  values: SettingValues,
  report: ReportProblem,
): Record<string, string> {
  for (const setting of settings) {
    if (!CONTRACT.has(setting)) throw new Error(`${setting.name} is not a setting of OutboxSettings`);
  }
  const read = new Set(settings);
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(values) as [SettingKey, SettingValue<unknown> | undefined][]) {
    const setting: Setting<unknown> = OutboxSettings[key];
    if (value !== undefined && read.has(setting)) {
      environment[setting.name] = settingText(setting, value, report);
    }
  }
  return environment;
}

/**
 * Adds `environment` (from {@link settingsEnvironment}) to `fn`'s: for a function the construct binds rather
 * than builds.
 * @example
 * addToEnvironment(fn, settingsEnvironment(READER_SETTINGS, values, report));
 */
export function addToEnvironment(fn: lambda.Function, environment: Readonly<Record<string, string>>): void {
  for (const [name, text] of Object.entries(environment)) fn.addEnvironment(name, text);
}

/** A Duration prop in milliseconds (fractions kept, for the setting to refuse), or the setting's default. */
export function millisecondsOf(
  duration: Duration | undefined,
  setting: Setting<number>,
  report: ReportProblem,
): number {
  if (duration === undefined || !isKnown(duration, setting, report)) return setting.defaultValue ?? 0;
  return duration.toMilliseconds({ integral: false });
}

/** A Duration prop in days (fractions kept, for the setting to refuse), or the setting's default. */
export function daysOf(
  duration: Duration | undefined,
  setting: Setting<number>,
  report: ReportProblem,
): number {
  if (duration === undefined || !isKnown(duration, setting, report)) return setting.defaultValue ?? 0;
  return duration.toDays({ integral: false });
}

function isKnown(duration: Duration, setting: Setting<number>, report: ReportProblem): boolean {
  if (!duration.isUnresolved()) return true;
  report(`${setting.name} must be known at synth`);
  return false;
}

/** The variable's text for `value`, checked by the rule the function applies at start. */
function settingText(setting: Setting<unknown>, value: SettingValue<unknown>, report: ReportProblem): string {
  if ('text' in value) return value.text;
  const given = value.value;
  // A token (a table's name, say) is CloudFormation's to resolve; the rule would only see its placeholder.
  if (typeof given === 'string' && Token.isUnresolved(given)) return given;
  try {
    return setting.format(given);
  } catch (error) {
    report(`${value.prop}: ${error instanceof Error ? error.message : String(error)}`);
    return typeof given === 'string' ? given : JSON.stringify(given);
  }
}
