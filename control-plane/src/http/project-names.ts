import { Errors } from '@gateway/shared';

/**
 * The 409 of a project name an account already uses (db/projects.ts projectNamedLike): names are
 * unique among the projects an account owns, whatever their case.
 */
export function refuseTakenName(taken: { id: string; name: string } | null, whose = 'this account'): void {
  if (taken === null) return;
  throw Errors.projectNameTaken(taken.name, taken.id, whose);
}
