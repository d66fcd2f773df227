import { describe, expect, it } from 'vitest';
import { appendHistory } from '../../../shared/aws/outbox-table/history-append.ts';
import { applyUpdate } from '../../../shared/memory/expressions.ts';
import { HistoryEvent, historyOf } from '../../../shared/outbox/history.ts';
import { FIXED_NOW } from '../../support/factories.ts';

const at = FIXED_NOW.toISOString();

describe('appendHistory', () => {
  it('creates the list with the first entry and appends after the earlier ones', () => {
    const append = (event: HistoryEvent) => appendHistory({ at, event });
    const apply = (item: Record<string, unknown>, event: HistoryEvent) => {
      const { set, names, values } = append(event);
      return applyUpdate(item, `SET ${set}`, { names, values });
    };

    const first = apply({ messageId: 'm' }, HistoryEvent.SENT);
    const second = apply(first, HistoryEvent.CONFIRMED);

    expect(first.history).toEqual([{ at, event: 'SENT' }]);
    expect(second.history).toEqual([
      { at, event: 'SENT' },
      { at, event: 'CONFIRMED' },
    ]);
  });

  it('drops fields left undefined or empty and cuts long reasons and outcomes', () => {
    const { values } = appendHistory({
      at,
      event: HistoryEvent.CANCELLED,
      by: '',
      reason: 'r'.repeat(2_000),
      outcome: 'o'.repeat(2_000),
    });

    const [entry] = values[':historyEntry'] as Record<string, string>[];
    expect(entry).not.toHaveProperty('by');
    expect(entry).not.toHaveProperty('from');
    expect(entry?.reason).toHaveLength(500);
    expect(entry?.outcome).toHaveLength(200);
  });
});

describe('historyOf', () => {
  it('reads the list, and anything else as no history', () => {
    expect(historyOf({ history: [{ at, event: 'SENT' }] })).toEqual([{ at, event: 'SENT' }]);
    expect(historyOf({})).toEqual([]);
    expect(historyOf({ history: 'damaged' })).toEqual([]);
  });
});
