/**
 * Who may use the console: the browser that opened the one URL it printed. The URL carries a random one-time token;
 * the console trades it for a session cookie (HttpOnly, SameSite=Strict, never readable by a page's script) and
 * spends it. Every request needs the cookie; every action (a POST) needs the console's own Origin and the session's
 * CSRF token as well, which only a page the console served can read. Pure but for the random secrets.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A request as the rules read it: its headers (lower-case names) and method. */
export interface RequestFacts {
  readonly method?: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** A signed-in browser. */
export interface ConsoleSession {
  readonly id: string;
  /** Sent by the page in `x-csrf-token` with every action. */
  readonly csrfToken: string;
}

/** Why a request is refused: 401 without a session, 403 when the session is there but the request is not the page's own. */
export interface Refusal {
  readonly status: 401 | 403;
  readonly reason: string;
}

/** The header a page sends its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/** Bytes of randomness of the token, the session id and the CSRF token: 256 bits each. */
const SECRET_BYTES = 32;

/** A new random secret, URL-safe. */
export function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/**
 * The console's sign-in rules for one port of 127.0.0.1.
 * @example
 * const auth = new ConsoleAuth({ port: 4100 });
 * console.log(`http://127.0.0.1:4100/?token=${auth.loginToken}`);
 */
export class ConsoleAuth {
  /** The one-time token of the printed URL; spent by the first sign-in. */
  readonly loginToken: string;
  /** The cookie's name: one per port, so that two consoles on one machine never take each other's sessions. */
  readonly cookieName: string;
  readonly #port: number;
  readonly #newSecret: () => string;
  readonly #sessions = new Map<string, ConsoleSession>();
  #tokenSpent = false;

  constructor(options: { readonly port: number; readonly newSecret?: () => string }) {
    this.#port = options.port;
    this.#newSecret = options.newSecret ?? newSecret;
    this.loginToken = this.#newSecret();
    this.cookieName = `outbox_console_${options.port}`;
  }

  /** The hosts the console answers as: a page served under any other name (DNS rebinding) is refused. */
  get hosts(): readonly string[] {
    return [`127.0.0.1:${this.#port}`, `localhost:${this.#port}`];
  }

  /**
   * Trades the one-time token for a session: the `Set-Cookie` value to answer with, or a refusal (a wrong token, a
   * spent one, or a request to another host name).
   */
  signIn(request: RequestFacts, token: string): { readonly setCookie: string } | Refusal {
    if (!this.#ownHost(request)) return { status: 403, reason: 'the console answers on 127.0.0.1 only' };
    if (this.#tokenSpent || !sameSecret(token, this.loginToken)) {
      return {
        status: 401,
        reason: this.#tokenSpent
          ? 'this sign-in link was used already: it works once. Restart outbox console for a new one'
          : 'wrong sign-in token',
      };
    }
    this.#tokenSpent = true;
    const session: ConsoleSession = { id: this.#newSecret(), csrfToken: this.#newSecret() };
    this.#sessions.set(session.id, session);
    return {
      setCookie: `${this.cookieName}=${session.id}; HttpOnly; SameSite=Strict; Path=/`,
    };
  }

  /** The session a request's cookie names, if any. */
  sessionOf(request: RequestFacts): ConsoleSession | undefined {
    const id = cookieValue(headerText(request.headers.cookie), this.cookieName);
    if (id === undefined) return undefined;
    for (const session of this.#sessions.values()) {
      if (sameSecret(id, session.id)) return session;
    }
    return undefined;
  }

  /**
   * Whether a request may read: it needs the session cookie (401 otherwise) and the console's own host name (403).
   */
  checkRead(request: RequestFacts): ConsoleSession | Refusal {
    const session = this.sessionOf(request);
    if (session === undefined) {
      return { status: 401, reason: 'no console session: open the URL outbox console printed' };
    }
    if (!this.#ownHost(request)) return { status: 403, reason: 'the console answers on 127.0.0.1 only' };
    return session;
  }

  /**
   * Whether a request may act: a POST with the session cookie (401), sent by a page of the console itself — its
   * Origin the console's, no cross-site fetch metadata — carrying the session's CSRF token (403).
   */
  checkAction(request: RequestFacts): ConsoleSession | Refusal {
    const session = this.checkRead(request);
    if ('status' in session) return session;
    if (request.method !== 'POST') return { status: 403, reason: 'an action is a POST' };
    const host = headerText(request.headers.host);
    const origin = headerText(request.headers.origin);
    if (origin === undefined || origin !== `http://${host}`) {
      return {
        status: 403,
        reason: `an action must come from the console's own page (Origin ${origin ?? 'none'})`,
      };
    }
    const site = headerText(request.headers['sec-fetch-site']);
    if (site !== undefined && site !== 'same-origin') {
      return { status: 403, reason: `an action must come from the console's own page (${site})` };
    }
    const csrf = headerText(request.headers[CSRF_HEADER]);
    if (csrf === undefined || !sameSecret(csrf, session.csrfToken)) {
      return { status: 403, reason: 'missing or wrong CSRF token: reload the page' };
    }
    return session;
  }

  #ownHost(request: RequestFacts): boolean {
    const host = headerText(request.headers.host);
    return host !== undefined && this.hosts.includes(host);
  }
}

/** Compares two secrets in time independent of where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A header's value as one text (the first when repeated). */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
