import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { messagesToDelete, toLambdaSqsRecord } from '../local/events/sqs-event.ts';
import type { LocalRuntime } from '../local/host/runtime.ts';

/** Where the extra consumers read and what they invoke. */
export interface ScaleOutOptions {
  /** The consumer's name in the template (`Outbox/InventoryConsumer`). */
  readonly functionName: string;
  readonly queueUrl: string;
  /** Invocations running beside the runtime's own poller. */
  readonly instances: number;
}

/** Extra consumers running until stopped; `invocations` counts the batches they handled. */
export interface ScaleOut {
  invocations(): number;
  stop(): Promise<void>;
}

const SQS = {
  // ReceiveMessage and DeleteMessageBatch take at most 10 messages per call.
  maxMessagesPerCall: 10,
} as const;
const IDLE_WAIT_MS = 200;

/**
 * More invocations of a queue's consumer at once, as Lambda scales an SQS mapping out: the local runtime's poller
 * invokes one batch at a time, so on its own two orders for one SKU never meet in concurrent transactions. Each
 * instance receives a batch, invokes the function through the runtime, and deletes what the partial batch
 * response does not report as failed (a failed invocation deletes nothing), as the runtime's poller does.
 */
export async function scaleOutConsumer(runtime: LocalRuntime, options: ScaleOutOptions): Promise<ScaleOut> {
  const sqs = new SQSClient(runtime.clientConfig);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const source = { queueArn: Attributes?.QueueArn ?? '', region: runtime.clientConfig.region };
  let running = true;
  let invocations = 0;

  const cycle = async (): Promise<boolean> => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: SQS.maxMessagesPerCall,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return false;
    const records = Messages.map((message) => toLambdaSqsRecord(message, source));
    const invocation = await runtime.invoke(options.functionName, { Records: records });
    invocations += 1;
    const done = invocation.ok ? (messagesToDelete(records, invocation.result) ?? []) : [];
    if (done.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
    }
    return true;
  };
  const loop = async () => {
    while (running) {
      // A failed receive or delete is the emulator being busy: what was not deleted comes back, as on AWS.
      const busy = await cycle().catch(() => false);
      if (!busy) await sleep(IDLE_WAIT_MS);
    }
  };
  const loops = Array.from({ length: options.instances }, loop);
  return {
    invocations: () => invocations,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      sqs.destroy();
    },
  };
}
