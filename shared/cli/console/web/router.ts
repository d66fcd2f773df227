/**
 * The page's own addresses: each view has a URL (pasted into an incident channel, it opens that view), and moving
 * between views changes the URL without reloading the page.
 */
import { useEffect, useState } from 'preact/hooks';

/** Where the page is: its path and query. */
export interface PageLocation {
  readonly path: string;
  readonly query: URLSearchParams;
}

const listeners = new Set<() => void>();

function current(): PageLocation {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

/** Goes to `href` (a path of the console) as a link would, without a reload. */
export function navigate(href: string, options: { readonly replace?: boolean } = {}): void {
  if (options.replace === true) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

/** The current location, re-rendering on every move. */
export function useLocation(): PageLocation {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return location;
}

/**
 * Lets links to the console's own pages move within the page: a plain click (no modifier key, no new tab) on an
 * `<a href="/…">` is handled here; anything else the browser handles as usual.
 */
export function interceptLinks(): void {
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.('a');
    const href = anchor?.getAttribute('href');
    if (anchor === null || anchor === undefined || href === null || href === undefined) return;
    if (!href.startsWith('/') || href.startsWith('//') || anchor.target !== '') return;
    event.preventDefault();
    navigate(href);
  });
}
