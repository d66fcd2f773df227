/**
 * The page's calls to the console's API: reads with the session cookie the browser holds, actions as POSTs that
 * carry the session's CSRF token, which the console put in the page.
 */

/** A refusal or failure of the API, with the console's own words. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** The session's CSRF token, from the page the console served. */
function csrfToken(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';
}

async function answerOf<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? String(response.status),
      error?.message ??
        (response.status === 401 ? 'not signed in: open the URL outbox console printed' : text),
    );
  }
  return body as T;
}

/** GETs `/api<path>`. */
export async function getJson<T>(path: string): Promise<T> {
  return answerOf<T>(await fetch(`/api${path}`, { headers: { accept: 'application/json' } }));
}

/** POSTs `body` to `/api<path>` as an action. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return answerOf<T>(
    await fetch(`/api${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': csrfToken(),
      },
      body: JSON.stringify(body),
    }),
  );
}

/** `/api` path with a query of the given values (empty ones left out). */
export function withQuery(path: string, query: Readonly<Record<string, string | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, value);
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}
