import { describeError } from '../api/api-error.js';

/**
 * An error where it happened, announced at once (role="alert") and marked by an icon and the
 * word "Error", not by colour alone.
 */
export function ErrorBanner({ error, action, id }: { error: unknown; action?: string; id?: string }) {
  if (error === null || error === undefined) return null;
  return (
    <div class="banner banner-error" role="alert" id={id}>
      <span class="banner-icon" aria-hidden="true">
        ⚠
      </span>
      <span>
        <strong>Error: </strong>
        {describeError(error, action)}
      </span>
    </div>
  );
}
