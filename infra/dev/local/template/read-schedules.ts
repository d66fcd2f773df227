/** Reads the schedules: AWS::Events::Rule resources with a `rate(...)` expression and a function target. */
import {
  type CloudFormationTemplate,
  isRecord,
  ResourceType,
  resourcesOfType,
} from './cloudformation-template.ts';
import { targetFunction } from './function-target.ts';
import { localName } from './resource-names.ts';
import type { SkippedResource } from './skipped-resource.ts';

/** A function invoked every `rateSeconds` by a rule. */
export interface ScheduleDefinition {
  /** Local name of the rule (its construct path). */
  readonly name: string;
  readonly functionName: string;
  /** As written: `rate(1 minute)`. */
  readonly expression: string;
  readonly rateSeconds: number;
  /** The target's constant `Input`, parsed; the event instead of EventBridge's Scheduled Event when set. */
  readonly input: unknown;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  minute: 60,
  minutes: 60,
  hour: 3_600,
  hours: 3_600,
  day: 86_400,
  days: 86_400,
};

/**
 * Every enabled rate rule targeting a function the runtime runs, one schedule per target. Cron rules, disabled
 * rules, event-pattern rules' targets and targets with input transformation come back as skipped.
 */
export function readSchedules(
  template: CloudFormationTemplate,
  functionIds: ReadonlyMap<string, string>,
): { readonly schedules: ScheduleDefinition[]; readonly skipped: SkippedResource[] } {
  const schedules: ScheduleDefinition[] = [];
  const skipped: SkippedResource[] = [];
  for (const [logicalId, resource] of resourcesOfType(template, ResourceType.EVENT_RULE)) {
    const properties = resource.Properties ?? {};
    const name = localName(logicalId, resource);
    const expression = properties.ScheduleExpression;
    // A rule without a schedule reacts to events, which nothing emits locally.
    if (typeof expression !== 'string') continue;
    const skip = (reason: string): void => {
      skipped.push({ name, type: resource.Type, reason });
    };
    const rateSeconds = parseRateExpression(expression);
    if (properties.State === 'DISABLED') {
      skip(`${expression}: the rule is disabled`);
      continue;
    }
    if (rateSeconds === undefined) {
      skip(`${expression}: only rate(...) schedules run locally; invoke the function with runtime.invoke`);
      continue;
    }
    const targets = Array.isArray(properties.Targets) ? properties.Targets.filter(isRecord) : [];
    for (const target of targets) {
      const functionName = targetFunction(target.Arn, template, functionIds);
      if (functionName === undefined) {
        skip(`${expression}: target ${String(target.Id)} is not a function the runtime runs`);
      } else if (target.InputPath !== undefined || target.InputTransformer !== undefined) {
        skip(`${expression}: target ${String(target.Id)} transforms its input, which is not emulated`);
      } else {
        schedules.push({ name, functionName, expression, rateSeconds, input: parseInput(target.Input) });
      }
    }
  }
  return { schedules, skipped };
}

/** Seconds of an EventBridge `rate(N unit)` expression; `undefined` for anything else (`cron(...)`). */
export function parseRateExpression(expression: string): number | undefined {
  const match = /^rate\((\d+)\s+([a-z]+)\)$/.exec(expression.trim());
  const unit = match?.[2] === undefined ? undefined : UNIT_SECONDS[match[2]];
  const count = Number(match?.[1]);
  return unit === undefined || count <= 0 ? undefined : count * unit;
}

function parseInput(input: unknown): unknown {
  if (typeof input !== 'string') return undefined;
  try {
    return JSON.parse(input);
  } catch {
    // EventBridge passes a constant input that is not JSON as a string.
    return input;
  }
}
