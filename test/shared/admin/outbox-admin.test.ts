import { describe, expect, it } from 'vitest';
import { AdminError, AdminErrorCode } from '../../../shared/admin/admin-errors.ts';
import { OutboxAdmin } from '../../../shared/admin/outbox-admin.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { testMessageId } from '../../support/factories.ts';
import { adminFixture, storeMessage } from './admin-fixture.ts';

describe('OutboxAdmin', () => {
  it('finds a FAILED message, shows it, replays it, and counts the change', async () => {
    const fixture = adminFixture();
    await storeMessage(fixture, { messageId: testMessageId(1), status: MessageStatus.FAILED });
    const admin = new OutboxAdmin(fixture.deps);

    const { items } = await admin.listMessages({ status: 'FAILED' });
    const before = await admin.stats();
    const shown = await admin.showMessage(items[0]?.messageId ?? '');
    const replayed = await admin.replay({ messageId: testMessageId(1), reason: 'fixed', actor: 'local:ana' });
    const after = await admin.stats();

    expect(items.map((item) => item.messageId)).toEqual([testMessageId(1)]);
    expect(shown.message.status).toBe('FAILED');
    expect(replayed).toMatchObject({ from: 'FAILED', to: 'PENDING' });
    expect([before.totals.FAILED, after.totals.FAILED, after.totals.PENDING]).toEqual([1, 0, 1]);
    expect(admin.canUseMoveTask({ ratePerSecond: 1, dryRun: false, actor: 'a' })).toBe(true);
  });

  it('refuses with AdminErrors that carry the HTTP status to answer', async () => {
    const admin = new OutboxAdmin(adminFixture().deps);
    const refusals = await Promise.all([
      admin.listMessages({}).catch((e: unknown) => e),
      admin.showMessage(testMessageId(9)).catch((e: unknown) => e),
      admin.cancel({ messageId: testMessageId(9), reason: '', actor: 'a' }).catch((e: unknown) => e),
      admin.erase({ aggregateId: '', reason: 'r', actor: 'a' }).catch((e: unknown) => e),
    ]);

    expect(refusals.every((error) => error instanceof AdminError)).toBe(true);
    expect(refusals.map((error) => [(error as AdminError).code, (error as AdminError).httpStatus])).toEqual([
      [AdminErrorCode.LIST_FILTER_REQUIRED, 400],
      [AdminErrorCode.MESSAGE_NOT_FOUND, 404],
      [AdminErrorCode.REASON_REQUIRED, 400],
      [AdminErrorCode.INVALID_REQUEST, 400],
    ]);
    expect(refusals.map((error) => (error as Error).name)).toEqual([
      'ListFilterRequiredError',
      'MessageNotFoundError',
      'ReasonRequiredError',
      'InvalidAdminRequestError',
    ]);
  });
});
