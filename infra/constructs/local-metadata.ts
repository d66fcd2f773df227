/**
 * Template metadata the local runtime reads: a Lambda function's handler module, so the runtime can run the
 * function in-process from the synthesized template alone (as `sam local` reads a template).
 */

/** CloudFormation resource metadata key whose value is the handler module's path, relative to the project root. */
export const LOCAL_ENTRY_METADATA = 'serverless-outbox:entry';
