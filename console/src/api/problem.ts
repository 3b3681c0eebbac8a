/** problem+json, mapped to an error and to field errors in one place. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  traceId?: string;
  errors?: { field: string; message: string }[];
}

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title);
    this.name = 'ProblemError';
  }
  get status(): number {
    return this.problem.status;
  }
}

/** Anything thrown by a call → a Problem to show (network failures included). */
export function toProblem(err: unknown): Problem {
  if (err instanceof ProblemError) return err.problem;
  return { type: 'about:blank', title: 'Request failed', status: 0, detail: err instanceof Error ? err.message : String(err) };
}

/** `body.email` (or `/email`, `email`) → `email`; field errors by form field name. */
export function fieldErrors(err: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(err instanceof ProblemError)) return out;
  for (const e of err.problem.errors ?? []) {
    const name = e.field.replace(/^(body|input)\./, '').replace(/^\//, '').split(/[.[/]/)[0] ?? e.field;
    out[name] ??= e.message;
  }
  return out;
}

export function isProblem(x: unknown): x is Problem {
  return typeof x === 'object' && x !== null && typeof (x as Problem).title === 'string' && typeof (x as Problem).status === 'number';
}

/** A field error raised before a call (a value the form cannot even send), shown like the API's. */
export function inputProblem(field: string, message: string): ProblemError {
  return new ProblemError({ type: 'about:blank', title: 'The input is not valid', status: 400, errors: [{ field, message }] });
}
