import { awsClientConfig, createDocumentClient, requireEnv } from 'serverless-outbox';
import { httpHandler } from '../../http/http-handler.ts';
import { LOYALTY_TABLE } from '../loyalty-table.ts';
import { getPoints } from '../points.ts';

/** `GET /loyalty/{customerId}`: LOYALTY_TABLE. */
export const handler = httpHandler('get-points', (env) => {
  const deps = {
    client: createDocumentClient(awsClientConfig(env)),
    loyaltyTable: requireEnv(env, LOYALTY_TABLE),
  };
  return (event) => getPoints(event, deps);
});
