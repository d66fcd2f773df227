/** The admin API's Lambda entry point, as `TransactionalOutbox.addAdminApi` deploys it. */
import { createAdminHandler } from '../admin-handler.ts';

/** Lambda entry point (API Gateway proxy events of the `/admin` routes). */
export const handler = createAdminHandler();
