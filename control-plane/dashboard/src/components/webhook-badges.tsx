import type { DeliveryStatus } from '../api/types.js';

/**
 * The states of webhooks and their deliveries, each with an icon and a word as well as a colour
 * (as OutcomeBadge does for audit outcomes), so they read without colour vision.
 */
const DELIVERY_LOOK: Record<DeliveryStatus, { icon: string; label: string }> = {
  delivered: { icon: '✓', label: 'delivered' },
  pending: { icon: '◷', label: 'pending' },
  failed: { icon: '✕', label: 'failed' },
};

export function DeliveryStatusBadge({ status }: { status: DeliveryStatus }) {
  const look = DELIVERY_LOOK[status] ?? { icon: '?', label: status };
  return (
    <span class={`badge badge-${status}`}>
      <span aria-hidden="true">{look.icon}</span> {look.label}
    </span>
  );
}

export function WebhookStateBadge({ enabled }: { enabled: boolean }) {
  return enabled ? (
    <span class="badge badge-enabled">
      <span aria-hidden="true">●</span> enabled
    </span>
  ) : (
    <span class="badge badge-disabled">
      <span aria-hidden="true">○</span> disabled
    </span>
  );
}
