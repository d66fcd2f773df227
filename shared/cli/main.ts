#!/usr/bin/env node
/** The `outbox` command (the package's bin): runs the CLI on this process's arguments and streams. */
import { awsClientConfig } from '../aws/clients.ts';
import { stsCallerIdentity } from './operator-identity.ts';
import { runCli } from './run-cli.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  // Asked only on AWS (against an emulator the actor is the local user), and only by commands that change state.
  clients: { callerIdentity: stsCallerIdentity(awsClientConfig(process.env)) },
});
