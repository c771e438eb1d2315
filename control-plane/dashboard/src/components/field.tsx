import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { fieldErrorFrom, withoutField, type FieldErrors } from '../lib/field-errors.js';

/**
 * A labelled form field with its hint and its problem tied to it (aria-describedby), the problem
 * announced when it appears (role="alert") and marked by an icon and words as well as colour.
 */
export interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error?: string | undefined;
  hint?: ComponentChildren;
  type?: 'text' | 'email' | 'password' | 'search';
  autocomplete?: string;
  required?: boolean;
  class?: string;
  inputClass?: string;
  autofocus?: boolean;
}

export function TextField({ id, label, value, onInput, error, hint, type = 'text', autocomplete, required, class: className, inputClass, autofocus }: TextFieldProps) {
  const describedBy = [hint ? `${id}-hint` : null, error ? `${id}-problem` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${className ? ` ${className}` : ''}`}>
      <label for={id}>{label}</label>
      <input
        id={id}
        class={inputClass}
        // Preact's types pair each input type with its own attributes; all four are plain text boxes here.
        type={type as 'text'}
        value={value}
        required={required}
        autocomplete={autocomplete}
        autofocus={autofocus}
        spellcheck={type === 'email' || type === 'password' ? false : undefined}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
      />
      {hint && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
      <FieldProblem id={`${id}-problem`} message={error} />
    </div>
  );
}

/** The problem line on its own, for fields that are not text inputs (selects, checkboxes). */
export function FieldProblem({ id, message }: { id: string; message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p id={id} class="field-problem" role="alert">
      <span aria-hidden="true">⚠ </span>
      {message}
    </p>
  );
}

/**
 * A form's field problems: set from a refused request (the API's `param` mapped to the form's
 * fields by `fields`), set by the form's own checks, cleared per field as it changes.
 * `fromApi` answers whether the error was placed on a field, so the form shows a banner otherwise.
 */
export function useFieldErrors(fields: Record<string, string>) {
  const [errors, setErrors] = useState<FieldErrors>({});
  return {
    errors,
    set: (field: string, message: string) => setErrors((e) => ({ ...e, [field]: message })),
    clear: (field: string) => setErrors((e) => withoutField(e, field)),
    reset: () => setErrors({}),
    fromApi: (err: unknown): boolean => {
      const found = fieldErrorFrom(err, fields);
      if (found === null) return false;
      setErrors({ [found.field]: found.message });
      return true;
    },
  };
}

/** The aria-describedby of a field with a hint and maybe a problem. */
export function describedBy(hintId: string | null, problemId: string, problem: string | null | undefined): string | undefined {
  const ids = [hintId, problem ? problemId : null].filter((x): x is string => x !== null);
  return ids.length === 0 ? undefined : ids.join(' ');
}
