import { MONTH_PRESET, RANGE_PRESETS, presetChoice, type RangeChoice, type RangePreset } from '../lib/record-query.js';
import { describeTimeZone } from '../lib/time-zone.js';

/**
 * A time range: a preset that follows the clock, or exact From and To (local time; From
 * included, To excluded, as the API counts them). Typing a date switches to "Custom". The dates
 * are typed and shown as the pages show every time (2026-11-23 14:05), not in the browser's
 * locale format that a date picker would use.
 */
const shown = (value: string) => value.replace('T', ' ');

export function RangeFields({ idPrefix, value, onChange }: { idPrefix: string; value: RangeChoice; onChange: (choice: RangeChoice) => void }) {
  const choose = (preset: RangePreset) => {
    if (preset === 'custom') onChange({ ...value, preset });
    else onChange(presetChoice(preset, Date.now()));
  };
  return (
    <fieldset class="range-fields">
      <legend>
        Time range <span class="muted small">· times in {describeTimeZone(Date.now())}</span>
      </legend>
      <div class="field">
        <label for={`${idPrefix}-preset`}>Range</label>
        <select id={`${idPrefix}-preset`} value={value.preset} onChange={(e) => choose(e.currentTarget.value as RangePreset)}>
          {Object.entries(RANGE_PRESETS).map(([key, preset]) => (
            <option value={key} key={key}>
              {preset.label}
            </option>
          ))}
          <option value={MONTH_PRESET.key}>{MONTH_PRESET.label}</option>
          <option value="custom">Custom</option>
        </select>
      </div>
      <div class="field">
        <label for={`${idPrefix}-from`}>From</label>
        <input
          id={`${idPrefix}-from`}
          type="text"
          inputMode="numeric"
          placeholder="YYYY-MM-DD HH:mm"
          autoComplete="off"
          aria-describedby={`${idPrefix}-range-format`}
          value={shown(value.from)}
          onInput={(e) => onChange({ ...value, preset: 'custom', from: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for={`${idPrefix}-to`}>To</label>
        <input
          id={`${idPrefix}-to`}
          type="text"
          inputMode="numeric"
          placeholder="YYYY-MM-DD HH:mm"
          autoComplete="off"
          aria-describedby={`${idPrefix}-range-format`}
          value={shown(value.to)}
          onInput={(e) => onChange({ ...value, preset: 'custom', to: e.currentTarget.value })}
        />
      </div>
      <p id={`${idPrefix}-range-format`} class="hint range-format">
        As YYYY-MM-DD HH:mm, 24-hour clock. From is included, To is not.
      </p>
    </fieldset>
  );
}
