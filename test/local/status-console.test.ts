import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { statusConsole } from '../../infra/dev/local/host/status-console.ts';

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
