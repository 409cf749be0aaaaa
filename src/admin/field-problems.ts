// A rule written once for the provisioning file and section 18's operations says what is wrong by
// field (webhooks/endpoint-rules.ts, radio/admin/edge-rules.ts); administration answers it as the
// contract's 422 with errors by field, the file as a refusal naming the entry's path.
import { AppError, type FieldErrors } from '../http/errors.ts';

export interface FieldProblem {
  field: string;
  problem: string;
}

/** 422 with every problem by field, when there is any. */
export function refuseProblems(problems: readonly FieldProblem[]): void {
  if (problems.length === 0) return;
  const errors: FieldErrors = {};
  for (const { field, problem } of problems) (errors[field] ??= []).push(problem);
  const message = problems.map((p) => `${p.field}: ${p.problem}`).join('; ');
  throw new AppError(422, 'validation_failed', message, { errors });
}

/** The provisioning file's words for the same problems: `where.field: problem`. */
export const fileProblems = (where: string, problems: readonly FieldProblem[]): string => problems.map((p) => `${where}.${p.field}: ${p.problem}`).join('; ');
