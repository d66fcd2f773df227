/** The console of `npm start`: log lines above a status line that redraws in place on a terminal. */

/** A status line that redraws in place on a terminal and prints plain lines (on change) otherwise. */
export interface StatusConsole {
  /** Prints a log line above the status line. */
  log(line: string): void;
  /** Shows the current status. */
  status(text: string): void;
  /** Leaves the status line as it is and moves to a new line. */
  end(): void;
}

/**
 * A {@link StatusConsole} on `stream`. On a terminal it also takes over `stream.write`, so that output from
 * elsewhere (the handlers' Powertools loggers write JSON lines to stdout) lands above the status line
 * instead of being glued to it.
 */
export function statusConsole(stream: NodeJS.WriteStream): StatusConsole {
  const tty = stream.isTTY === true;
  let shown: string | undefined;
  const write = stream.write.bind(stream) as (chunk: string) => boolean;
  if (tty) {
    const foreign = (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
      const done = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
      const result = write(`\r\x1b[2K${text}${text.endsWith('\n') ? '' : '\n'}${shown ?? ''}`);
      done?.();
      return result;
    };
    stream.write = foreign as NodeJS.WriteStream['write'];
  }
  return {
    log(line) {
      // On a terminal, clear the status line, print the log line, and redraw the status below it.
      if (tty && shown !== undefined) write(`\r\x1b[2K${line}\n${shown}`);
      else write(`${line}\n`);
    },
    status(text) {
      if (tty) write(`\r\x1b[2K${text}`);
      else if (text !== shown) write(`${text}\n`);
      shown = text;
    },
    end() {
      if (tty && shown !== undefined) write('\n');
      shown = undefined;
    },
  };
}
