import { describe, expect, it } from 'vitest';
import { ConsoleAuth, CSRF_HEADER, cookieValue } from '../../../../shared/cli/console/console-auth.ts';

/** `prefix1`, `prefix2`, … on each call. */
function counter(prefix: string): () => string {
  let n = 0;
  return () => {
    n += 1;
    return `${prefix}${n}`;
  };
}

const PORT = 4100;
const host = `127.0.0.1:${PORT}`;
const origin = `http://${host}`;

/** An auth whose secrets are predictable: token-1 (the sign-in token), then the session id, then its CSRF token. */
function auth(): ConsoleAuth {
  return new ConsoleAuth({ port: PORT, newSecret: counter('secret-') });
}

/** Signs in with the token and answers the cookie header a browser would send from then on. */
function signedIn(rules: ConsoleAuth): string {
  const answer = rules.signIn({ method: 'GET', headers: { host } }, rules.loginToken);
  if ('status' in answer) throw new Error(answer.reason);
  return answer.setCookie.split(';')[0] ?? '';
}

describe('the sign-in token', () => {
  it('becomes an HttpOnly, SameSite=Strict session cookie named for the port', () => {
    const rules = auth();
    const answer = rules.signIn({ method: 'GET', headers: { host } }, rules.loginToken);

    expect(answer).toEqual({
      setCookie: `outbox_console_${PORT}=secret-2; HttpOnly; SameSite=Strict; Path=/`,
    });
  });

  it('works once: a second sign-in with it is refused with 401', () => {
    const rules = auth();
    signedIn(rules);

    expect(rules.signIn({ method: 'GET', headers: { host } }, rules.loginToken)).toMatchObject({
      status: 401,
      reason: expect.stringMatching(/used already/),
    });
  });

  it('is refused when wrong, and then still works', () => {
    const rules = auth();

    expect(rules.signIn({ method: 'GET', headers: { host } }, 'secret-9')).toMatchObject({ status: 401 });
    expect(rules.signIn({ method: 'GET', headers: { host } }, rules.loginToken)).toHaveProperty('setCookie');
  });

  it('is refused on another host name (a page rebinding its name to 127.0.0.1)', () => {
    const rules = auth();

    expect(
      rules.signIn({ method: 'GET', headers: { host: `evil.example:${PORT}` } }, rules.loginToken),
    ).toMatchObject({
      status: 403,
    });
  });
});

describe('reads', () => {
  it('need the session cookie: none, or another one, is a 401', () => {
    const rules = auth();
    const cookie = signedIn(rules);

    expect(rules.checkRead({ method: 'GET', headers: { host } })).toMatchObject({ status: 401 });
    expect(
      rules.checkRead({ method: 'GET', headers: { host, cookie: `outbox_console_${PORT}=secret-1` } }),
    ).toMatchObject({
      status: 401,
    });
    expect(
      rules.checkRead({ method: 'GET', headers: { host, cookie: `outbox_console_4101=secret-2` } }),
    ).toMatchObject({
      status: 401,
    });
    expect(rules.checkRead({ method: 'GET', headers: { host, cookie: `theme=dark; ${cookie}` } })).toEqual({
      id: 'secret-2',
      csrfToken: 'secret-3',
    });
  });
});

describe('actions', () => {
  const action = (headers: Record<string, string>, method = 'POST') => ({
    method,
    headers: { host, ...headers },
  });

  it('pass with the cookie, the console as Origin and the CSRF token', () => {
    const rules = auth();
    const cookie = signedIn(rules);

    expect(rules.checkAction(action({ cookie, origin, [CSRF_HEADER]: 'secret-3' }))).toHaveProperty(
      'id',
      'secret-2',
    );
    expect(
      rules.checkAction(
        action({ cookie, origin, [CSRF_HEADER]: 'secret-3', 'sec-fetch-site': 'same-origin' }),
      ),
    ).toHaveProperty('id');
  });

  it('are refused with 401 without the cookie, whatever else they carry', () => {
    const rules = auth();
    signedIn(rules);

    expect(rules.checkAction(action({ origin, [CSRF_HEADER]: 'secret-3' }))).toMatchObject({ status: 401 });
  });

  it('are refused with 403 from another origin, without an Origin, from another site, or as a GET', () => {
    const rules = auth();
    const cookie = signedIn(rules);
    const csrf = { [CSRF_HEADER]: 'secret-3' };

    expect(rules.checkAction(action({ cookie, ...csrf, origin: 'http://127.0.0.1:3000' }))).toMatchObject({
      status: 403,
    });
    expect(rules.checkAction(action({ cookie, ...csrf, origin: 'null' }))).toMatchObject({ status: 403 });
    expect(rules.checkAction(action({ cookie, ...csrf }))).toMatchObject({ status: 403 });
    expect(
      rules.checkAction(action({ cookie, ...csrf, origin, 'sec-fetch-site': 'same-site' })),
    ).toMatchObject({
      status: 403,
    });
    expect(rules.checkAction(action({ cookie, ...csrf, origin }, 'GET'))).toMatchObject({ status: 403 });
  });

  it('are refused with 403 without the CSRF token, or with another one', () => {
    const rules = auth();
    const cookie = signedIn(rules);

    expect(rules.checkAction(action({ cookie, origin }))).toMatchObject({
      status: 403,
      reason: expect.stringMatching(/CSRF/),
    });
    expect(rules.checkAction(action({ cookie, origin, [CSRF_HEADER]: 'secret-2' }))).toMatchObject({
      status: 403,
    });
  });
});

describe('cookieValue', () => {
  it('finds a cookie among others, and nothing in an empty header', () => {
    expect(cookieValue('a=1; outbox_console_1=x=y; b=2', 'outbox_console_1')).toBe('x=y');
    expect(cookieValue(undefined, 'a')).toBeUndefined();
    expect(cookieValue('ab=1', 'a')).toBeUndefined();
  });
});
