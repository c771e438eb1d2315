/**
 * On a phone the filters fold away behind one button, so the figures are on the first screen; on
 * a wide screen the button is hidden and the filters always show (record-views.css).
 */
export function FiltersToggle({ open, onToggle, controls, active }: { open: boolean; onToggle: () => void; controls: string; active: number }) {
  return (
    <button type="button" class="filters-toggle" aria-expanded={open} aria-controls={controls} onClick={onToggle}>
      <span aria-hidden="true">{open ? '▾' : '▸'}</span>
      Filters{active > 0 ? ` (${active} active)` : ''}
    </button>
  );
}
