/**
 * Public list prices in US East (N. Virginia), in USD, as the bench's cost model uses them. They are list prices
 * without free tiers, savings plans or volume tiers, as published on the pages below; they were not read live by
 * the bench, so check them before budgeting.
 */
export const AWS_PRICES = {
  /** Lambda, arm64, per GB-second (first 7.5 billion GB-s a month). */
  lambdaArmPerGbSecond: 0.000_013_333_4,
  lambdaPerMillionRequests: 0.2,
  /** DynamoDB on demand, standard table class (the rates since the November 2024 reduction). */
  dynamoPerMillionWriteUnits: 0.625,
  dynamoPerMillionReadUnits: 0.125,
  dynamoStoragePerGbMonth: 0.25,
  dynamoPitrPerGbMonth: 0.2,
  /** SQS standard queues, per million requests (each 64 KB of a request counts as one). */
  sqsPerMillionRequests: 0.4,
  /** API Gateway REST APIs, first 333 million requests a month. */
  apiGatewayRestPerMillion: 3.5,
  /** CloudWatch Logs, standard ingestion per GB. */
  logsIngestionPerGb: 0.5,
  /** X-Ray, per million traces recorded. */
  xrayPerMillionTraces: 5,
  /** EventBridge Pipes, per million requests after filtering (each 64 KB counts as one). */
  pipesPerMillionRequests: 0.4,
  /** SQS FIFO queues, per million requests. */
  sqsFifoPerMillionRequests: 0.5,
  /**
   * SNS standard topics, per million Publish or PublishBatch requests (a PublishBatch of up to 10 messages is one
   * request per 64 KB of its payload).
   */
  snsPublishPerMillionRequests: 0.5,
  /** SNS standard topics: deliveries to SQS queues are not charged (only data transfer out of the region is). */
  snsToSqsDeliveryPerMillion: 0,
  /** SNS FIFO topics: per million publish requests, plus per GB of payload published. */
  snsFifoPublishPerMillionRequests: 0.3,
  snsFifoPublishPerGb: 0.017,
  /** SNS FIFO topics: per million messages delivered to a subscription, plus per GB of payload delivered. */
  snsFifoDeliveryPerMillion: 0.01,
  snsFifoDeliveryPerGb: 0.001,
} as const;

/** When these prices were taken, and where from. */
export const AWS_PRICE_SOURCES = {
  asOf: '2026-11-30',
  pages: [
    'https://aws.amazon.com/lambda/pricing/',
    'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    'https://aws.amazon.com/sqs/pricing/',
    'https://aws.amazon.com/api-gateway/pricing/',
    'https://aws.amazon.com/cloudwatch/pricing/',
    'https://aws.amazon.com/xray/pricing/',
    'https://aws.amazon.com/eventbridge/pricing/',
    'https://aws.amazon.com/sns/pricing/',
  ],
  /** When the SNS prices were added, from its page above (not read live either: check them before budgeting). */
  snsAsOf: '2026-12-07',
} as const;
