import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseStartOptions, StartOptionsError, statusConsole } from '../../infra/local/start.ts';
import { formatStatusCounts } from '../../infra/local/status-counts.ts';

describe('parseStartOptions', () => {
  it('defaults to port 3000 with seeding on', () => {
    expect(parseStartOptions([], {})).toEqual({
      port: 3000,
      seed: true,
      endpoint: undefined,
      refreshMs: 1_500,
    });
  });

  it('reads PORT and AWS_ENDPOINT_URL from the environment and lets flags override them', () => {
    const env = { PORT: '0', AWS_ENDPOINT_URL: 'http://localhost:4566' };
    expect(parseStartOptions([], env)).toMatchObject({ port: 0, endpoint: 'http://localhost:4566' });
    expect(parseStartOptions(['--port', '8080', '--no-seed'], env)).toMatchObject({
      port: 8080,
      seed: false,
    });
  });

  it('names the setting when PORT is malformed', () => {
    expect(() => parseStartOptions([], { PORT: 'eighty' })).toThrow(StartOptionsError);
    expect(() => parseStartOptions([], { PORT: 'eighty' })).toThrow(/PORT/);
  });
});

/** A stream that records what is written, as a terminal or a pipe. */
function captured(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, { isTTY });
  return { stream, text: () => text };
}

describe('statusConsole', () => {
  it('redraws the status line in place on a terminal and keeps log lines above it', () => {
    const { stream, text } = captured(true);
    const out = statusConsole(stream);
    out.status('orders 1');
    out.log('a failure');
    out.status('orders 2');
    expect(text()).toBe('\r\x1b[2Korders 1\r\x1b[2Ka failure\norders 1\r\x1b[2Korders 2');
  });

  it('puts output written by others (handler loggers) above the status line on a terminal', () => {
    const { stream, text } = captured(true);
    const out = statusConsole(stream);
    out.status('orders 1');
    stream.write('{"level":"WARN"}\n');
    expect(text()).toBe('\r\x1b[2Korders 1\r\x1b[2K{"level":"WARN"}\norders 1');
  });

  it('prints plain lines, only when the status changes, when not on a terminal', () => {
    const { stream, text } = captured(false);
    const out = statusConsole(stream);
    out.status('orders 1');
    out.status('orders 1');
    out.log('note');
    out.status('orders 2');
    expect(text()).toBe('orders 1\nnote\norders 2\n');
  });
});

describe('formatStatusCounts', () => {
  it('shows orders and messages by status on one line', () => {
    expect(
      formatStatusCounts({
        orders: 3,
        messages: { PENDING: 1, SENT: 0, CONFIRMED: 2, FAILED: 0, CANCELLED: 0 },
      }),
    ).toBe('orders 3 · pending 1 · sent 0 · confirmed 2 · failed 0');
  });
});
