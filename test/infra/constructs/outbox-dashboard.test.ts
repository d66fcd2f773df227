import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  idsOfType,
  onlyId,
  propertiesOf,
  references,
  renderString,
  resolvedTarget,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, outboxService } from './outbox-service.ts';

/** One widget of a dashboard body. */
interface Widget {
  readonly type: string;
  readonly width: number;
  readonly height: number;
  readonly x: number;
  readonly y: number;
  readonly properties: {
    readonly title?: string;
    readonly markdown?: string;
    readonly alarms?: readonly string[];
    readonly metrics?: readonly (readonly unknown[])[];
  };
}

/** The widgets of the one dashboard of a template, each `{Ref}` written as `${logicalId}`. */
function widgetsOf(json: CfnTemplate): Widget[] {
  const id = onlyId(idsOfType(json, 'AWS::CloudWatch::Dashboard'), 'dashboard');
  const body = JSON.parse(renderString(propertiesOf(json, id).DashboardBody)) as { widgets: Widget[] };
  return body.widgets;
}

/** The graph titled `title`. */
function graph(widgets: readonly Widget[], title: string): Widget {
  const found = widgets.find((widget) => widget.properties.title === title);
  if (found === undefined) {
    throw new Error(`no graph "${title}" in ${widgets.map((widget) => widget.properties.title)}`);
  }
  return found;
}

/**
 * The plain metrics of a graph as `Namespace MetricName dim=value ... (stat)`, and each math expression as
 * its label and expression. CDK writes a metric like the one before it with `"..."` placeholders.
 */
function metricsOf(widget: Widget): string[] {
  const rendered: string[] = [];
  let previous: readonly unknown[] = [];
  for (const line of widget.properties.metrics ?? []) {
    const options = line.at(-1);
    const hasOptions = typeof options === 'object' && options !== null;
    const parts = (hasOptions ? line.slice(0, -1) : line).map((part, index) =>
      part === '.' ? previous[index] : part,
    );
    previous = parts;
    const { expression, label, stat, visible } = (hasOptions ? options : {}) as Record<string, unknown>;
    if (visible === false) continue;
    if (typeof expression === 'string') {
      rendered.push(`${String(label)} = ${expression}`);
      continue;
    }
    const [namespace, name, ...dimensions] = parts.map(String);
    const pairs: string[] = [];
    for (let index = 0; index < dimensions.length; index += 2) {
      pairs.push(`${dimensions[index]}=${dimensions[index + 1]}`);
    }
    rendered.push(
      `${namespace} ${name} ${pairs.join(' ')} (${String(stat ?? 'Average')})`.replace('  ', ' '),
    );
  }
  return rendered;
}

/** The metrics a math expression of a graph uses, as `id: MetricName service topic`. */
function hiddenMetricsOf(widget: Widget): string[] {
  return (widget.properties.metrics ?? [])
    .filter((line) => (line.at(-1) as { visible?: boolean }).visible === false)
    .map((line) => {
      const options = line.at(-1) as { id: string };
      const [, name, , service, , topic] = line.map(String);
      return `${options.id}: ${name} ${service} ${topic}`;
    });
}

let json: CfnTemplate;
let widgets: Widget[];
let service: ReturnType<typeof outboxService>;

beforeAll(() => {
  service = outboxService({
    queues: {
      orders: { topics: ['order.created'] },
      payments: { topics: ['payment.captured'] },
    },
  });
  service.outbox.addConsumer('InventoryConsumer', { queue: 'orders', entry: CONSUMER_ENTRY });
  json = templateOf(service.stack);
  widgets = widgetsOf(json);
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox dashboard', () => {
  it('is one dashboard named after the deployed stack and the outbox', () => {
    const id = onlyId(idsOfType(json, 'AWS::CloudWatch::Dashboard'), 'dashboard');
    const name = renderString(propertiesOf(json, id).DashboardName, {
      ref: (target) => (target === 'AWS::StackName' ? 'Shop' : target),
    });
    expect(name).toBe('Shop-outbox');
    expect(resolvedTarget(service.stack, service.outbox.dashboard.dashboardName)).toBe(id);
  });

  it('takes the name it is given', () => {
    const named = outboxService({ dashboardName: 'orders-outbox' });
    const namedJson = templateOf(named.stack);
    const id = onlyId(idsOfType(namedJson, 'AWS::CloudWatch::Dashboard'), 'dashboard');
    expect(propertiesOf(namedJson, id).DashboardName).toBe('orders-outbox');
  });

  it('shows the state of every alarm, the consumer’s included, by the alarm’s name', () => {
    const status = widgets.filter((widget) => widget.type === 'alarm');
    expect(status).toHaveLength(1);
    const alarms = idsOfType(json, 'AWS::CloudWatch::Alarm');
    const arns = status[0]?.properties.alarms ?? [];
    expect(arns).toHaveLength(alarms.length);
    for (const id of alarms) {
      const name = renderString(propertiesOf(json, id).AlarmName);
      expect(arns, id).toContain(
        `arn:\${AWS::Partition}:cloudwatch:\${AWS::Region}:\${AWS::AccountId}:alarm:${name}`,
      );
    }
  });

  it('reads no attribute of an alarm, which an emulator that does not model alarms could not resolve', () => {
    const id = onlyId(idsOfType(json, 'AWS::CloudWatch::Dashboard'), 'dashboard');
    for (const alarm of idsOfType(json, 'AWS::CloudWatch::Alarm')) {
      expect(references(propertiesOf(json, id), alarm), alarm).toBe(false);
    }
  });

  it('draws the dead letters, the relay failures, the iterator age, and each function’s errors and throttles', () => {
    expect(metricsOf(graph(widgets, 'Dead letters and relay failures (visible messages)'))).toHaveLength(3);
    expect(metricsOf(graph(widgets, 'Relay stream iterator age (ms)'))).toEqual([
      expect.stringMatching(/^AWS\/Lambda IteratorAge FunctionName=\$\{\w+\} \(Maximum\)$/),
    ]);
    expect(metricsOf(graph(widgets, 'Function errors'))).toHaveLength(3);
    expect(metricsOf(graph(widgets, 'Function throttles'))).toHaveLength(3);
  });

  it.each(['order.created', 'payment.captured'])(
    'draws what the relay and the sweeper sent of %s, summed over both',
    (topic) => {
      const sends = graph(widgets, `${topic}: sends`);
      expect(metricsOf(sends)).toEqual([
        'MessagesSent = FILL(sentRelay, 0) + FILL(sentSweeper, 0)',
        'SendFailures = FILL(sendFailuresRelay, 0) + FILL(sendFailuresSweeper, 0)',
        'RetriesScheduled = FILL(retriesRelay, 0) + FILL(retriesSweeper, 0)',
        'MessagesFailed = FILL(failedRelay, 0) + FILL(failedSweeper, 0)',
      ]);
      expect(hiddenMetricsOf(sends).sort()).toEqual(
        [
          `sentRelay: MessagesSent outbox-relay ${topic}`,
          `sentSweeper: MessagesSent outbox-sweeper ${topic}`,
          `sendFailuresRelay: SendFailures outbox-relay ${topic}`,
          `sendFailuresSweeper: SendFailures outbox-sweeper ${topic}`,
          `retriesRelay: RetriesScheduled outbox-relay ${topic}`,
          `retriesSweeper: RetriesScheduled outbox-sweeper ${topic}`,
          `failedRelay: MessagesFailed outbox-relay ${topic}`,
          `failedSweeper: MessagesFailed outbox-sweeper ${topic}`,
        ].sort(),
      );
    },
  );

  it.each(['order.created', 'payment.captured'])(
    'draws the backlog of %s from the sweeper’s gauges',
    (topic) => {
      const metric = (name: string) =>
        `ServerlessOutbox ${name} service=outbox-sweeper topic=${topic} (Maximum)`;
      expect(metricsOf(graph(widgets, `${topic}: backlog`)).sort()).toEqual(
        [
          metric('BacklogPending'),
          metric('BacklogSentUnconfirmed'),
          metric('FailedMessages'),
          metric('OldestPendingAgeSeconds'),
        ].sort(),
      );
    },
  );

  it('draws the consumer’s outcomes and its created → confirmed latency, p50 and p99', () => {
    const metric = (name: string, stat = 'Sum') =>
      `ServerlessOutbox ${name} service=inventory-consumer topic=order.created (${stat})`;
    expect(metricsOf(graph(widgets, 'InventoryConsumer order.created: outcomes'))).toEqual([
      metric('MessagesApplied'),
      metric('DuplicatesSuppressed'),
      metric('BusinessRejections'),
      metric('DeadLettered'),
      metric('Requeued'),
    ]);
    expect(metricsOf(graph(widgets, 'InventoryConsumer order.created: created → confirmed (ms)'))).toEqual([
      metric('ConfirmLatencyMs', 'p50'),
      metric('ConfirmLatencyMs', 'p99'),
    ]);
  });

  it('draws nothing of a consumer for a topic that has none', () => {
    const titles = widgets.map((widget) => widget.properties.title ?? widget.properties.markdown ?? '');
    expect(titles.filter((title) => title.includes('payment.captured'))).toEqual([
      '## Topic `payment.captured`',
      'payment.captured: sends',
      'payment.captured: backlog',
    ]);
  });

  it('lays the widgets out on CloudWatch’s 24-column grid without overlaps', () => {
    const cells = new Set<string>();
    for (const widget of widgets) {
      expect(widget.x + widget.width).toBeLessThanOrEqual(24);
      for (let x = widget.x; x < widget.x + widget.width; x += 1) {
        for (let y = widget.y; y < widget.y + widget.height; y += 1) {
          const cell = `${x},${y}`;
          expect(cells.has(cell), cell).toBe(false);
          cells.add(cell);
        }
      }
    }
  });
});

describe('TransactionalOutbox dashboard per subscriber', () => {
  let subscribedJson: CfnTemplate;
  let subscribedWidgets: Widget[];

  beforeAll(() => {
    const subscribed = outboxService({
      queues: { payments: { topics: ['payment.captured'] } },
      subscribers: {
        inventory: { topics: ['order.created', 'order.cancelled'] },
        loyalty: { topics: ['order.created'] },
      },
    });
    subscribedJson = templateOf(subscribed.stack);
    subscribedWidgets = widgetsOf(subscribedJson);
  }, SYNTH_TIMEOUT_MS);

  it('gives each subscriber a row after the topics: its backlog, its waiting, its failed deliveries, its sends', () => {
    const titles = subscribedWidgets.map((widget) => widget.properties.title ?? widget.properties.markdown);
    const row = (subscriber: string) => [
      `## Subscriber \`${subscriber}\``,
      `${subscriber}: backlog`,
      `${subscriber}: waiting (s)`,
      `${subscriber}: failed deliveries`,
      `${subscriber}: sends`,
    ];
    const first = titles.indexOf('## Subscriber `inventory`');
    expect(titles.slice(first)).toEqual([...row('inventory'), ...row('loyalty')]);
    expect(titles.slice(0, first)).toContain('## Topic `order.cancelled`');
    const graphs = subscribedWidgets.slice(first + 1, first + 5);
    // One row of four.
    expect(new Set(graphs.map((widget) => widget.y)).size).toBe(1);
    expect(graphs.map((widget) => widget.width)).toEqual([6, 6, 6, 6]);
  });

  it('draws a subscriber’s backlog, waiting and failed deliveries from the sweeper’s gauges over its topics', () => {
    const gauge = (name: string) =>
      `ServerlessOutbox ${name} service=outbox-sweeper subscriber=inventory (Maximum)`;
    expect(metricsOf(graph(subscribedWidgets, 'inventory: backlog'))).toEqual([
      gauge('BacklogPending'),
      gauge('BacklogSentUnconfirmed'),
    ]);
    expect(metricsOf(graph(subscribedWidgets, 'inventory: waiting (s)'))).toEqual([
      gauge('OldestUnconfirmedAgeSeconds'),
      gauge('OldestPendingAgeSeconds'),
    ]);
    expect(metricsOf(graph(subscribedWidgets, 'inventory: failed deliveries'))).toEqual([
      gauge('FailedMessages'),
      'MessagesFailed = FILL(failedRelay, 0) + FILL(failedSweeper, 0)',
    ]);
  });

  it('draws what the relay and the sweeper sent to a subscriber, summed over both', () => {
    const sends = graph(subscribedWidgets, 'loyalty: sends');
    expect(metricsOf(sends)).toEqual([
      'MessagesSent = FILL(sentRelay, 0) + FILL(sentSweeper, 0)',
      'SendFailures = FILL(sendFailuresRelay, 0) + FILL(sendFailuresSweeper, 0)',
    ]);
    // As `id: MetricName service <dimension value>`: the subscriber's figures over all its topics.
    expect(hiddenMetricsOf(sends).sort()).toEqual(
      [
        'sentRelay: MessagesSent outbox-relay loyalty',
        'sentSweeper: MessagesSent outbox-sweeper loyalty',
        'sendFailuresRelay: SendFailures outbox-relay loyalty',
        'sendFailuresSweeper: SendFailures outbox-sweeper loyalty',
      ].sort(),
    );
    const line = (sends.properties.metrics ?? []).find(
      (metric) => (metric.at(-1) as { id?: string }).id === 'sentRelay',
    );
    expect(line?.slice(2, 6)).toEqual(['service', 'outbox-relay', 'subscriber', 'loyalty']);
  });

  it('shows the subscribers’ alarms with the others, and lays the widgets out without overlaps', () => {
    const status = subscribedWidgets.find((widget) => widget.type === 'alarm');
    const arns = status?.properties.alarms ?? [];
    expect(arns).toHaveLength(idsOfType(subscribedJson, 'AWS::CloudWatch::Alarm').length);
    expect(arns.filter((arn) => /-(failedDeliveries|unconfirmedAge)-/.test(arn))).toHaveLength(4);
    const cells = new Set<string>();
    for (const widget of subscribedWidgets) {
      expect(widget.x + widget.width).toBeLessThanOrEqual(24);
      for (let x = widget.x; x < widget.x + widget.width; x += 1) {
        for (let y = widget.y; y < widget.y + widget.height; y += 1) {
          expect(cells.has(`${x},${y}`), `${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });
});
