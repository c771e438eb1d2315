import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

/**
 * The page's h1, which also names the browser tab. It can take focus (tabIndex -1) because the
 * app moves focus to it after every in-app navigation: screen readers then announce the new
 * page, and Tab continues from the top of its content.
 */
export function PageHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Model gateway`;
  }, [title]);
  return (
    <div class="page-heading">
      <h1 tabIndex={-1}>{title}</h1>
      {children}
    </div>
  );
}
