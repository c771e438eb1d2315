import type { AuditOutcome } from '../api/types.js';

/** Each outcome has its own icon and word as well as a colour, so failures stand out without colour vision. */
const LOOK: Record<AuditOutcome, { icon: string; label: string; failed: boolean }> = {
  success: { icon: '✓', label: 'success', failed: false },
  auth_failed: { icon: '✕', label: 'auth failed', failed: true },
  policy_blocked: { icon: '⊘', label: 'policy blocked', failed: true },
  error: { icon: '✕', label: 'error', failed: true },
  cancelled: { icon: '⊖', label: 'cancelled', failed: true },
};

export function isFailure(outcome: AuditOutcome): boolean {
  return LOOK[outcome]?.failed ?? true;
}

export function OutcomeBadge({ outcome }: { outcome: AuditOutcome }) {
  const look = LOOK[outcome] ?? { icon: '?', label: outcome, failed: true };
  return (
    <span class={`badge badge-${outcome}`}>
      <span aria-hidden="true">{look.icon}</span> {look.label}
    </span>
  );
}
