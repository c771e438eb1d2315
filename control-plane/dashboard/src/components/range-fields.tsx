import { RANGE_PRESETS, presetChoice, type RangeChoice, type RangePreset } from '../lib/record-query.js';

/**
 * A time range: a preset that follows the clock, or exact From and To (local time; From
 * included, To excluded, as the API counts them). Typing a date switches to "Custom".
 */
export function RangeFields({ idPrefix, value, onChange }: { idPrefix: string; value: RangeChoice; onChange: (choice: RangeChoice) => void }) {
  const choose = (preset: RangePreset) => {
    if (preset === 'custom') onChange({ ...value, preset });
    else onChange(presetChoice(preset, Date.now()));
  };
  return (
    <fieldset class="range-fields">
      <legend>Time range</legend>
      <div class="field">
        <label for={`${idPrefix}-preset`}>Range</label>
        <select id={`${idPrefix}-preset`} value={value.preset} onChange={(e) => choose(e.currentTarget.value as RangePreset)}>
          {Object.entries(RANGE_PRESETS).map(([key, preset]) => (
            <option value={key} key={key}>
              {preset.label}
            </option>
          ))}
          <option value="custom">Custom</option>
        </select>
      </div>
      <div class="field">
        <label for={`${idPrefix}-from`}>From</label>
        <input
          id={`${idPrefix}-from`}
          type="datetime-local"
          value={value.from}
          onInput={(e) => onChange({ ...value, preset: 'custom', from: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for={`${idPrefix}-to`}>To</label>
        <input id={`${idPrefix}-to`} type="datetime-local" value={value.to} onInput={(e) => onChange({ ...value, preset: 'custom', to: e.currentTarget.value })} />
      </div>
    </fieldset>
  );
}
