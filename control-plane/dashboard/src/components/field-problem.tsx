/**
 * A problem with one field, tied to it by id (the field names it in aria-describedby) and marked
 * by an icon and words, not colour alone.
 */
export function FieldProblem({ id, problem }: { id: string; problem: string | null | undefined }) {
  if (!problem) return null;
  return (
    <p id={id} class="field-problem" role="alert">
      <span aria-hidden="true">⚠ </span>
      {problem}
    </p>
  );
}

/** The aria-describedby of a field with a hint and maybe a problem. */
export function describedBy(hintId: string | null, problemId: string, problem: string | null | undefined): string | undefined {
  const ids = [hintId, problem ? problemId : null].filter((x): x is string => x !== null);
  return ids.length === 0 ? undefined : ids.join(' ');
}
