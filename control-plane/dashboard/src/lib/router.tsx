import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { toQueryString, type QueryValues } from './record-query.js';

/**
 * History-API routing for a handful of flat pages: a library would cost more than these lines.
 * The server answers any page URL with index.html, so reloads and bookmarks land here too.
 */
export interface Location {
  path: string;
  query: URLSearchParams;
}

const NAVIGATED = 'dashboard:navigated';

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === window.location.pathname + window.location.search) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATED));
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return location;
}

export function href(path: string, query: QueryValues = {}): string {
  return path + toQueryString(query);
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | undefined;
}

/** A real link (middle-click, copy address, open in new tab all work) that navigates in place on a plain click. */
export function Link({ href: to, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={to} onClick={onClick}>
      {children}
    </a>
  );
}
