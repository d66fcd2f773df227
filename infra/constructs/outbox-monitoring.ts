import { Aws, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { OrderedTopic } from '../../shared/ordering/ordering.ts';
import { ALARM_DEFAULTS } from './defaults.ts';
import { checkedThresholds, type OutboxAlarmThresholds } from './outbox-alarm-thresholds.ts';
import { kebabCase, type OutboxFunction } from './outbox-function.ts';
import { OutboxMetricName, outboxMetric, outboxSubscriberMetric } from './outbox-metrics.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { receiptQueueName, subscriberQueueName } from './subscription-names.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** Props of {@link OutboxMonitoring}. */
export interface OutboxMonitoringProps {
  /** CloudWatch namespace of the outbox metrics. */
  readonly namespace: string;
  /** @default - a new topic encrypted with a new KMS key */
  readonly alarmTopic?: sns.ITopic;
  /** @default - ALARM_DEFAULTS */
  readonly thresholds?: OutboxAlarmThresholds;
  /** The dashboard's name. */
  readonly dashboardName: string;
  /**
   * Every alarm's name starts with this (the deployed stack's name and the outbox's path), so alarm names are
   * unique in a region.
   */
  readonly alarmNamePrefix: string;
  /** What happens to the topic's key when it leaves the stack. */
  readonly removalPolicy?: RemovalPolicy;
}

/** The publishers of a topic's outbox-side metrics. */
export interface TopicPublishers {
  readonly relay: string;
  readonly sweeper: string;
}

/** What the alarms of a subscriber's deliveries read, and what their text names. */
export interface SubscriberMonitoring extends TopicPublishers {
  /** The subscriber's queue, which its own stack creates (`<outbox name>-<subscriber>`). */
  readonly queueName: string;
  /** The outbox's receipt queue, where the subscriber's receipts arrive. */
  readonly receiptQueueName: string;
  /** The subscriber's account and region, when the outbox declares them. */
  readonly account?: string;
  readonly region?: string;
}

/** An ordered topic's sweeper, and the gap timeout the alarm's text names. */
export interface OrderedTopicMonitoring {
  readonly sweeper: string;
  readonly scope: string;
  readonly gapTimeoutMs: number;
}

/** Dashboard widths: CloudWatch's grid is 24 columns. */
const FULL_WIDTH = 24;
const QUARTER_WIDTH = FULL_WIDTH / 4;
const GRAPH_HEIGHT = 6;

/**
 * Entries of a dashboard list (a graph's lines, the alarm status) in a fixed order whatever order they were added
 * in: the admin API's after everything else's, so that adding the admin API before or after the consumers draws
 * the same dashboard.
 */
class AdminLast<T> {
  readonly #others: T[] = [];
  readonly #admin: T[] = [];

  add(entry: T, admin: boolean): void {
    (admin ? this.#admin : this.#others).push(entry);
  }

  get entries(): T[] {
    return [...this.#others, ...this.#admin];
  }
}

/** A widget built when the dashboard is rendered (at synth), from lists that may grow until then. */
class RenderedWidget extends cloudwatch.ConcreteWidget {
  readonly #build: () => cloudwatch.IWidget;

  constructor(width: number, height: number, build: () => cloudwatch.IWidget) {
    super(width, height);
    this.#build = build;
  }

  override toJson(): unknown[] {
    const widget = this.#build();
    if (this.x !== undefined && this.y !== undefined) widget.position(this.x, this.y);
    return widget.toJson();
  }
}

/**
 * The outbox's alarms, all sent to one SNS topic (alarm and back to OK), and its CloudWatch dashboard. The
 * {@link TransactionalOutbox} adds what it builds; consumers add their own when they are added.
 */
export class OutboxMonitoring extends Construct {
  /** The topic every alarm notifies. */
  public readonly alarmTopic: sns.ITopic;
  /**
   * The alarms by name: `deadLetters/<queue>`, `failedMessages/<topic>`, `failedDeliveries/<subscriber>`,
   * `errors/<function id>`, ...
   */
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** The outbox's dashboard. */
  public readonly dashboard: cloudwatch.Dashboard;

  readonly #props: OutboxMonitoringProps;
  readonly #thresholds: Required<OutboxAlarmThresholds>;
  readonly #alarms: Record<string, cloudwatch.Alarm> = {};
  /** Every alarm, for the dashboard's status widget. */
  readonly #alarmList = new AdminLast<cloudwatch.IAlarm>();
  readonly #queueGraph: cloudwatch.GraphWidget;
  /** The lines of the errors and the throttles graphs: one per function. */
  readonly #errorLines = new AdminLast<cloudwatch.IMetric>();
  readonly #throttleLines = new AdminLast<cloudwatch.IMetric>();
  readonly #problems: string[] = [];

  constructor(scope: Construct, id: string, props: OutboxMonitoringProps) {
    super(scope, id);
    this.#props = props;
    this.node.addValidation({ validate: () => this.#problems });
    this.#thresholds = checkedThresholds(props.thresholds ?? {}, (problem) => this.#problems.push(problem));
    this.alarms = this.#alarms;
    this.alarmTopic = props.alarmTopic ?? this.#newAlarmTopic();

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName });
    this.#queueGraph = this.#graph('Dead letters and relay failures (visible messages)');
    const statusHeight = 4;
    this.dashboard.addWidgets(
      new RenderedWidget(
        FULL_WIDTH,
        statusHeight,
        () =>
          new cloudwatch.AlarmStatusWidget({
            title: 'Outbox alarms',
            alarms: this.#alarmList.entries,
            width: FULL_WIDTH,
            height: statusHeight,
          }),
      ),
    );
    const linesGraph = (title: string, lines: AdminLast<cloudwatch.IMetric>) =>
      new RenderedWidget(FULL_WIDTH / 3, GRAPH_HEIGHT, () => this.#graph(title, lines.entries));
    this.dashboard.addWidgets(
      this.#queueGraph,
      linesGraph('Function errors', this.#errorLines),
      linesGraph('Function throttles', this.#throttleLines),
    );
  }

  /** Alarms when the dead-letter queue of topic queue `queueName` holds a message. */
  watchDeadLetters(queueName: string, deadLetterQueue: sqs.IQueue): void {
    const metric = deadLetterQueue.metricApproximateNumberOfMessagesVisible({
      statistic: cloudwatch.Stats.MAXIMUM,
      period: this.#thresholds.period,
    });
    this.#queueGraph.addLeftMetric(metric.with({ label: `${queueName} dead letters` }));
    this.#alarm(`deadLetters/${queueName}`, {
      metric,
      threshold: this.#thresholds.deadLetterMessages,
      description:
        `Messages in the dead-letter queue of ${queueName}: its consumer could not apply them. Fix the ` +
        'consumer, then redrive them (`npx outbox redrive`, or `npx outbox recover --topic <topic>`).',
    });
  }

  /**
   * Alarms when the oldest message of queue `name` is older than `queueMessageAge` (`queueAge/<name>`), and draws
   * that age: its consumer is not keeping up, failing or not running.
   */
  watchQueueAge(name: string, queue: sqs.IQueue): void {
    const metric = queue.metricApproximateAgeOfOldestMessage({
      statistic: cloudwatch.Stats.MAXIMUM,
      period: this.#thresholds.period,
    });
    this.dashboard.addWidgets(
      this.#graph(`${name}: age of the oldest message (s)`, [metric.with({ label: name })], FULL_WIDTH),
    );
    const maxAge = this.#thresholds.queueMessageAge.toSeconds();
    this.#alarm(`queueAge/${name}`, {
      metric,
      threshold: maxAge,
      description:
        `The oldest message in the ${name} queue has waited more than ${maxAge} s: its consumer is not keeping ` +
        'up (raise its concurrency), failing (its errors alarm, its logs) or not running (its event source mapping). ' +
        'A message it cannot apply goes to the dead-letter queue (its deadLetters alarm). ' +
        '`npx outbox stats --stack <this stack>` shows the queue and its dead letters.',
    });
  }

  /** Alarms when the relay's failure queue holds a record. */
  watchFailureQueue(failureQueue: sqs.IQueue): void {
    const metric = failureQueue.metricApproximateNumberOfMessagesVisible({
      statistic: cloudwatch.Stats.MAXIMUM,
      period: this.#thresholds.period,
    });
    this.#queueGraph.addLeftMetric(metric.with({ label: 'relay failures' }));
    this.#alarm('relayFailures', {
      metric,
      threshold: this.#thresholds.failureQueueMessages,
      description:
        'The relay gave up on stream batches; their metadata is in the failure queue for 14 days. The sweeper ' +
        "still delivers their messages: look at the relay's errors (`npx outbox stats` shows the backlog).",
    });
  }

  /** Alarms when the relay falls behind the outbox stream, fails or is throttled. */
  watchRelay(relay: lambda.IFunction): void {
    const metric = relay.metric('IteratorAge', {
      statistic: cloudwatch.Stats.MAXIMUM,
      period: this.#thresholds.period,
    });
    this.dashboard.addWidgets(
      this.#graph('Relay stream iterator age (ms)', [metric.with({ label: 'relay' })], FULL_WIDTH),
    );
    const threshold = this.#thresholds.relayIteratorAge.toMilliseconds();
    this.#alarm('relayIteratorAge', {
      metric,
      threshold,
      description:
        `The relay is more than ${threshold} ms behind the outbox stream: new messages wait. Look at the ` +
        "relay's errors, throttles and duration; the sweeper sends whatever waits past the grace period.",
    });
    this.watchFunction(relay);
  }

  /** Alarms when `fn` fails or is throttled, by its construct id. */
  watchFunction(fn: lambda.IFunction): void {
    this.#watchFunction(fn, false);
  }

  /**
   * Alarms when the admin function fails or is throttled, as {@link OutboxMonitoring.watchFunction} does; its
   * lines and alarms stay after every consumer's, whether the consumers were added before or after it.
   */
  watchAdmin(fn: lambda.IFunction): void {
    this.#watchFunction(fn, true);
  }

  #watchFunction(fn: lambda.IFunction, admin: boolean): void {
    const name = fn.node.id;
    const period = this.#thresholds.period;
    const errors = fn.metricErrors({ statistic: cloudwatch.Stats.SUM, period });
    const throttles = fn.metricThrottles({ statistic: cloudwatch.Stats.SUM, period });
    this.#errorLines.add(errors.with({ label: name }), admin);
    this.#throttleLines.add(throttles.with({ label: name }), admin);
    this.#alarm(`errors/${name}`, {
      metric: errors,
      threshold: this.#thresholds.errors,
      description: `${name} failed invocations: read its logs (every line names the messageId and topic).`,
      admin,
    });
    this.#alarm(`throttles/${name}`, {
      metric: throttles,
      threshold: this.#thresholds.throttles,
      description: `${name} was throttled: raise the account's or the function's concurrency.`,
      admin,
    });
  }

  /**
   * Alarms on a topic's FAILED messages and its oldest PENDING age, and draws its sends and backlog, from the
   * metrics the relay and the sweeper publish.
   */
  watchTopic(topic: string, publishers: TopicPublishers): void {
    const { namespace } = this.#props;
    const period = this.#thresholds.period;
    const sweeperMetric = (name: OutboxMetricName, statistic: string = cloudwatch.Stats.MAXIMUM) =>
      outboxMetric({ namespace, name, service: publishers.sweeper, topic, statistic, period });
    // Both the relay and the sweeper send, so a topic's counts are the sum of the two.
    const sent = (name: OutboxMetricName, id: string) =>
      new cloudwatch.MathExpression({
        expression: `FILL(${id}Relay, 0) + FILL(${id}Sweeper, 0)`,
        usingMetrics: {
          [`${id}Relay`]: outboxMetric({ namespace, name, service: publishers.relay, topic, period }),
          [`${id}Sweeper`]: outboxMetric({ namespace, name, service: publishers.sweeper, topic, period }),
        },
        label: name,
        period,
      });
    const failed = sweeperMetric(OutboxMetricName.FAILED_MESSAGES);
    const oldestPending = sweeperMetric(OutboxMetricName.OLDEST_PENDING_AGE_SECONDS);
    const labelled = (metric: cloudwatch.Metric) => metric.with({ label: metric.metricName });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({ markdown: `## Topic \`${topic}\``, width: FULL_WIDTH, height: 1 }),
    );
    this.dashboard.addWidgets(
      this.#graph(`${topic}: sends`, [
        sent(OutboxMetricName.MESSAGES_SENT, 'sent'),
        sent(OutboxMetricName.SEND_FAILURES, 'sendFailures'),
        sent(OutboxMetricName.RETRIES_SCHEDULED, 'retries'),
        sent(OutboxMetricName.MESSAGES_FAILED, 'failed'),
      ]),
      new cloudwatch.GraphWidget({
        title: `${topic}: backlog`,
        left: [
          sweeperMetric(OutboxMetricName.BACKLOG_PENDING),
          sweeperMetric(OutboxMetricName.BACKLOG_SENT_UNCONFIRMED),
          failed,
        ].map(labelled),
        right: [labelled(oldestPending)],
        rightYAxis: { label: 'seconds', showUnits: false },
        width: FULL_WIDTH / 2,
        height: GRAPH_HEIGHT,
      }),
    );
    this.#alarm(`failedMessages/${topic}`, {
      metric: failed,
      threshold: this.#thresholds.failedMessages,
      description:
        `FAILED messages of topic ${topic}: nothing retries them. Fix the downstream, then ` +
        `\`npx outbox recover --topic ${topic}\` (or \`npx outbox list --status FAILED\`, \`show\`, \`replay\`).`,
    });
    const maxAge = this.#thresholds.oldestPendingAge.toSeconds();
    this.#alarm(`oldestPendingAge/${topic}`, {
      metric: oldestPending,
      threshold: maxAge,
      description:
        `A message of topic ${topic} has been PENDING for more than ${maxAge} s: its sends keep failing, or ` +
        'neither the relay nor the sweeper runs. `npx outbox stats` shows the backlog; look at the relay and ' +
        "the sweeper's errors and at the topic queue.",
    });
  }

  /**
   * Alarms on a subscriber's FAILED deliveries (`failedDeliveries/<subscriber>`) and on its oldest delivery
   * waiting for a receipt (`unconfirmedAge/<subscriber>`), over all its topics, and draws its backlog, that age,
   * its failed deliveries and its sends, from the metrics the relay and the sweeper publish per subscriber.
   */
  watchSubscriber(subscriber: string, watched: SubscriberMonitoring): void {
    const { namespace } = this.#props;
    const period = this.#thresholds.period;
    const gauge = (name: OutboxMetricName) =>
      outboxSubscriberMetric({
        namespace,
        name,
        service: watched.sweeper,
        subscriber,
        statistic: cloudwatch.Stats.MAXIMUM,
        period,
      });
    // Both the relay and the sweeper send, so a subscriber's counts are the sum of the two.
    const sent = (name: OutboxMetricName, id: string) =>
      new cloudwatch.MathExpression({
        expression: `FILL(${id}Relay, 0) + FILL(${id}Sweeper, 0)`,
        usingMetrics: {
          [`${id}Relay`]: outboxSubscriberMetric({
            namespace,
            name,
            service: watched.relay,
            subscriber,
            period,
          }),
          [`${id}Sweeper`]: outboxSubscriberMetric({
            namespace,
            name,
            service: watched.sweeper,
            subscriber,
            period,
          }),
        },
        label: name,
        period,
      });
    const failed = gauge(OutboxMetricName.FAILED_MESSAGES);
    const unconfirmedAge = gauge(OutboxMetricName.OLDEST_UNCONFIRMED_AGE_SECONDS);
    const labelled = (metric: cloudwatch.Metric) => metric.with({ label: metric.metricName });
    const graph = (title: string, metrics: cloudwatch.IMetric[]) =>
      this.#graph(`${subscriber}: ${title}`, metrics, QUARTER_WIDTH);
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `## Subscriber \`${subscriber}\``,
        width: FULL_WIDTH,
        height: 1,
      }),
    );
    this.dashboard.addWidgets(
      graph('backlog', [
        labelled(gauge(OutboxMetricName.BACKLOG_PENDING)),
        labelled(gauge(OutboxMetricName.BACKLOG_SENT_UNCONFIRMED)),
      ]),
      graph('waiting (s)', [
        labelled(unconfirmedAge),
        labelled(gauge(OutboxMetricName.OLDEST_PENDING_AGE_SECONDS)),
      ]),
      graph('failed deliveries', [labelled(failed), sent(OutboxMetricName.MESSAGES_FAILED, 'failed')]),
      graph('sends', [
        sent(OutboxMetricName.MESSAGES_SENT, 'sent'),
        sent(OutboxMetricName.SEND_FAILURES, 'sendFailures'),
      ]),
    );
    const where = [
      watched.account === undefined ? [] : [`account ${watched.account}`],
      watched.region === undefined ? [] : [`region ${watched.region}`],
    ].flat();
    const ownStack =
      `its queue ${watched.queueName} (its age, its dead letters) and its consumer have their alarms in its own stack ` +
      `(its OutboxSubscription${where.length === 0 ? '' : `, ${where.join(', ')}`}): ` +
      '`npx outbox stats --stack <its stack>`.';
    this.#alarm(`failedDeliveries/${subscriber}`, {
      metric: failed,
      threshold: this.#thresholds.failedMessages,
      description:
        `FAILED deliveries to subscriber ${subscriber}: nothing retries them. ` +
        `\`npx outbox stats --subscriber ${subscriber}\`, ` +
        `\`npx outbox list --status FAILED --subscriber ${subscriber}\`, \`npx outbox show <id>\` (lastError says ` +
        `why); fix the cause, then \`npx outbox replay <id> --subscriber ${subscriber} --reason <why>\` (a topic's: ` +
        `\`npx outbox replay --topic <topic> --subscriber ${subscriber} --reason <why>\`). For ${subscriber}, ${ownStack}`,
    });
    const maxAge = this.#thresholds.unconfirmedAge.toSeconds();
    this.#alarm(`unconfirmedAge/${subscriber}`, {
      metric: unconfirmedAge,
      threshold: maxAge,
      description:
        `A delivery to subscriber ${subscriber} has waited more than ${maxAge} s for its receipt (SENT, not ` +
        `confirmed): ${subscriber}'s consumer is down, failing or behind, or its receipts do not reach the receipt ` +
        `queue ${watched.receiptQueueName}. The sweeper resends it past each confirm deadline until its attempts run out ` +
        `(then FAILED). \`npx outbox stats --subscriber ${subscriber}\`, ` +
        `\`npx outbox list --status SENT --subscriber ${subscriber}\`. For ${subscriber}, ${ownStack}`,
    });
  }

  /**
   * Alarms on the gaps the sweeper finds in an ordered topic (`orderingGaps/<topic>`) and draws them: a consumer
   * held a message past the gap timeout because its predecessor never arrived.
   */
  watchOrderingGaps(topic: string, ordering: OrderedTopicMonitoring): void {
    const gaps = outboxMetric({
      namespace: this.#props.namespace,
      name: OutboxMetricName.ORDERING_GAPS,
      service: ordering.sweeper,
      topic,
      period: this.#thresholds.period,
    });
    this.dashboard.addWidgets(
      this.#graph(`${topic}: ordering gaps`, [gaps.with({ label: gaps.metricName })], FULL_WIDTH),
    );
    this.#alarm(`orderingGaps/${topic}`, {
      metric: gaps,
      threshold: this.#thresholds.orderingGaps,
      description:
        `A consumer of ordered topic ${topic} (scope ${ordering.scope}) has held a message for more than ` +
        `${ordering.gapTimeoutMs / 1000} s waiting for its predecessor. The sweeper resends a SENT predecessor; ` +
        'a FAILED or CANCELLED one stays a gap (the sweeper logs its order key and seq): replay it ' +
        '(`npx outbox replay`) or skip it (`npx outbox skip --order-key <key> --seq <n> --reason <why>`).',
    });
  }

  /** Alarms when consumer `fn` fails or is throttled, and draws what it applied and how fast, per topic. */
  watchConsumer(fn: lambda.IFunction, options: { service: string; topics: readonly string[] }): void {
    this.watchFunction(fn);
    const { namespace } = this.#props;
    const period = this.#thresholds.period;
    for (const topic of options.topics) {
      const metric = (name: OutboxMetricName, statistic?: string, label?: string) =>
        outboxMetric({
          namespace,
          name,
          service: options.service,
          topic,
          period,
          ...(statistic === undefined ? {} : { statistic }),
        }).with({ label: label ?? name });
      this.dashboard.addWidgets(
        new cloudwatch.TextWidget({
          markdown: `## Consumer ${fn.node.id}, topic \`${topic}\``,
          width: FULL_WIDTH,
          height: 1,
        }),
      );
      this.dashboard.addWidgets(
        this.#graph(`${fn.node.id} ${topic}: outcomes`, [
          metric(OutboxMetricName.MESSAGES_APPLIED),
          metric(OutboxMetricName.DUPLICATES_SUPPRESSED),
          metric(OutboxMetricName.BUSINESS_REJECTIONS),
          metric(OutboxMetricName.DEAD_LETTERED),
          metric(OutboxMetricName.REQUEUED),
        ]),
        this.#graph(`${fn.node.id} ${topic}: created → confirmed (ms)`, [
          metric(OutboxMetricName.CONFIRM_LATENCY_MS, cloudwatch.Stats.p(50), 'p50'),
          metric(OutboxMetricName.CONFIRM_LATENCY_MS, cloudwatch.Stats.p(99), 'p99'),
        ]),
      );
    }
  }

  #alarm(
    name: string,
    options: { metric: cloudwatch.IMetric; threshold: number; description: string; admin?: boolean },
  ): cloudwatch.Alarm {
    const alarmName = `${this.#props.alarmNamePrefix}-${name.replaceAll('/', '-')}`;
    const alarm = new cloudwatch.Alarm(this, name.replaceAll('/', ':'), {
      alarmName,
      alarmDescription: options.description,
      metric: options.metric,
      threshold: options.threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: ALARM_DEFAULTS.evaluationPeriods,
      datapointsToAlarm: ALARM_DEFAULTS.evaluationPeriods,
      // No datapoint means nothing happened: an empty queue, a function that did not run, a topic with no
      // traffic.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const action = new actions.SnsAction(this.alarmTopic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.#alarms[name] = alarm;
    // By name rather than by the alarm's Arn attribute: an emulator that does not model alarms (moto) refuses a
    // template whose dashboard reads an attribute of one.
    this.#alarmList.add(
      cloudwatch.Alarm.fromAlarmName(this, `${alarm.node.id}Status`, alarmName),
      options.admin === true,
    );
    return alarm;
  }

  #graph(title: string, metrics: cloudwatch.IMetric[] = [], width = FULL_WIDTH / 3): cloudwatch.GraphWidget {
    return new cloudwatch.GraphWidget({ title, left: metrics, width, height: GRAPH_HEIGHT });
  }

  #newAlarmTopic(): sns.Topic {
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the outbox alarm topic',
      enableKeyRotation: true,
      removalPolicy: this.#props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    // CloudWatch publishes to an encrypted topic only when the key lets it encrypt; AWS's managed SNS key
    // cannot be given that permission.
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    const topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'Outbox alarms',
      masterKey: key,
      enforceSSL: true,
    });
    markOutboxRole(topic, OutboxResourceRole.ALARM_TOPIC);
    return topic;
  }
}

/** CloudWatch dashboard names: letters, digits, `-` and `_`, at most 255. */
const DASHBOARD_NAME = /^[A-Za-z0-9_-]{1,255}$/;

/** What an outbox's monitoring is built from, and what it watches from the start. */
export interface OutboxMonitoringOptions {
  /** @default - a new topic encrypted with a new KMS key */
  readonly alarmTopic?: sns.ITopic;
  /** @default - ALARM_DEFAULTS */
  readonly alarmThresholds?: OutboxAlarmThresholds;
  /** @default - `<deployed stack name>-<outbox path in kebab case>` */
  readonly dashboardName?: string;
  /** The topic queues by name, each with its dead-letter queue. */
  readonly queues: Readonly<Record<string, { readonly deadLetterQueue: sqs.IQueue }>>;
  readonly failureQueue: sqs.IQueue;
  readonly relay: OutboxFunction;
  readonly sweeper: OutboxFunction;
  /** Every topic the outbox routes. */
  readonly topics: Iterable<string>;
  readonly orderedTopics: Readonly<Record<string, OrderedTopic>>;
  /** The outbox's subscribers, each watched over all its topics. @default - none */
  readonly subscribers?: WatchedSubscribers;
}

/** The subscribers an outbox declares, as its monitoring names them. */
export interface WatchedSubscribers {
  /** The outbox's name, which its subscribers' queue names and its receipt queue's start with. */
  readonly outboxName: string;
  /** Each subscriber as declared (`subscribers.<name>`): whether its queue is FIFO, where its stack is. */
  readonly declared: Readonly<
    Record<string, { readonly fifo?: boolean; readonly account?: string; readonly region?: string }>
  >;
}

/**
 * The outbox's alarms and dashboard (`Monitoring`, in the outbox), watching the dead-letter queues, the failure
 * queue, the relay, the sweeper, each topic and each subscriber; the archiver, the consumers and the admin API are
 * added to it when they are built.
 */
export function newOutboxMonitoring(outbox: OutboxScope, options: OutboxMonitoringOptions): OutboxMonitoring {
  const monitoring = newMonitoring(outbox, options);
  for (const [name, queue] of Object.entries(options.queues)) {
    monitoring.watchDeadLetters(name, queue.deadLetterQueue);
  }
  monitoring.watchFailureQueue(options.failureQueue);
  monitoring.watchRelay(options.relay);
  monitoring.watchFunction(options.sweeper);
  const publishers = { relay: options.relay.serviceName, sweeper: options.sweeper.serviceName };
  for (const topic of options.topics) {
    monitoring.watchTopic(topic, publishers);
    const ordering = options.orderedTopics[topic];
    if (ordering !== undefined) monitoring.watchOrderingGaps(topic, { ...publishers, ...ordering });
  }
  if (options.subscribers === undefined) return monitoring;
  const { outboxName, declared } = options.subscribers;
  for (const [name, subscriber] of Object.entries(declared)) {
    monitoring.watchSubscriber(name, {
      ...publishers,
      queueName: subscriberQueueName(outboxName, name, subscriber.fifo === true),
      receiptQueueName: receiptQueueName(outboxName),
      ...(subscriber.account === undefined ? {} : { account: subscriber.account }),
      ...(subscriber.region === undefined ? {} : { region: subscriber.region }),
    });
  }
  return monitoring;
}

/**
 * An empty {@link OutboxMonitoring} (`Monitoring`) in `outbox.scope`: its dashboard and alarms named after the
 * deployed stack and the scope's path (`<stack>-<path in kebab case>`), so two deployments of one template never
 * share a dashboard or an alarm.
 */
export function newMonitoring(
  outbox: OutboxScope,
  options: Pick<OutboxMonitoringOptions, 'alarmTopic' | 'alarmThresholds' | 'dashboardName'>,
): OutboxMonitoring {
  const { scope } = outbox;
  const scopes = scope.node.scopes;
  const path = scopes.slice(scopes.indexOf(Stack.of(scope)) + 1).map((parent) => parent.node.id);
  const dashboardName =
    options.dashboardName ?? `${Aws.STACK_NAME}-${kebabCase(path.join('-')).replace(/[^a-z0-9_-]/g, '-')}`;
  if (!Token.isUnresolved(dashboardName) && !DASHBOARD_NAME.test(dashboardName)) {
    outbox.report(`dashboardName must be 1–255 letters, digits, - or _, got '${dashboardName}'`);
  }
  return new OutboxMonitoring(scope, 'Monitoring', {
    namespace: outbox.metricsNamespace,
    ...(options.alarmTopic === undefined ? {} : { alarmTopic: options.alarmTopic }),
    ...(options.alarmThresholds === undefined ? {} : { thresholds: options.alarmThresholds }),
    dashboardName,
    alarmNamePrefix: [Aws.STACK_NAME, ...path].join('-'),
    ...(outbox.removalPolicy === undefined ? {} : { removalPolicy: outbox.removalPolicy }),
  });
}
