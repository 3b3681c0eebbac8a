/**
 * The forms' fields. A resource declares once how its fields are shown (label, input type,
 * autocomplete), by the names of the API's input: a name the generated body or input type does
 * not have does not compile. Whether a field is required and its lengths come from the API's own
 * schema (limits.generated.ts, written by scripts/gen-api.mjs), never from here.
 */
import { bodyLimits, inputLimits } from './limits.generated';
import { inputProblem } from './problem';
import type { paths } from './schema';

/** What the API's schema says of one input field (limits.generated.ts, from the gateway's schemas). */
export interface FieldLimits {
  readonly required?: boolean;
  readonly nullable?: boolean;
  readonly type?: string;
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxItems?: number;
}

/** How a field is shown. */
export interface FieldView {
  readonly label: string;
  readonly type?: 'text' | 'email' | 'password' | 'tel';
  readonly autoComplete?: string;
}

/** A form's field: how it is shown and what the API's schema allows in it. */
export interface FieldSpec<N extends string = string> extends FieldView {
  readonly name: N;
  readonly required: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  /** A number field (the API takes an integer): the phone's keypad on a phone. */
  readonly inputMode?: 'numeric';
}

/** A resource's fields by name, as its forms show them (`satisfies FieldViews<Body>`). */
export type FieldViews<B> = { readonly [K in keyof B & string]?: FieldView };

type Bodies = typeof bodyLimits;
type Inputs = typeof inputLimits;
type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON body that `method` on `path` takes, from the generated OpenAPI types. */
export type BodyOf<P extends keyof Bodies & keyof paths, M extends keyof Bodies[P] & keyof paths[P]> = JsonBody<paths[P][M]>;

function spec<N extends string>(name: N, view: FieldView, limits: FieldLimits | undefined): FieldSpec<N> {
  if (!limits) throw new Error(`the API's schema has no input field ${name}`);
  // An integer with a maximum (a phone number): typed as digits, as many as the maximum has.
  const digits = limits.type === 'integer' && limits.maximum !== undefined ? String(limits.maximum).length : undefined;
  return {
    ...view,
    name,
    // A form sends every field it shows: an empty one that the schema needs one character in is refused too.
    required: limits.required === true || (limits.minLength ?? 0) > 0,
    ...(limits.minLength ? { minLength: limits.minLength } : {}),
    ...(limits.maxLength ? { maxLength: limits.maxLength } : {}),
    ...(digits ? { maxLength: digits, inputMode: 'numeric' as const } : {}),
  };
}

/** A form's text → an integer for an integer input (empty: undefined), or a field error beside that field. */
export function integer(field: string, text: string | undefined): number | undefined {
  const t = (text ?? '').trim();
  if (t === '') return undefined;
  if (!/^-?\d{1,15}$/.test(t)) throw inputProblem(field, 'must be a whole number');
  return Number(t);
}

/** The fields `names` of the JSON body `method` on `path` takes, in that order, shown as `views` says. */
export function bodyFields<P extends keyof Bodies & keyof paths, M extends keyof Bodies[P] & keyof paths[P], N extends keyof BodyOf<P, M> & string>(
  path: P,
  method: M,
  views: { readonly [K in NoInfer<N>]: FieldView },
  names: readonly N[],
): Array<FieldSpec<N>> {
  const limits = bodyLimits[path][method] as Readonly<Record<string, FieldLimits>>;
  return names.map((n) => spec(n, views[n], limits[n]));
}

/** The fields `names` of the edge GraphQL input object `type`, in that order, shown as `views` says. */
export function inputFields<T extends keyof Inputs, N extends keyof Inputs[T] & string>(type: T, views: { readonly [K in NoInfer<N>]: FieldView }, names: readonly N[]): Array<FieldSpec<N>> {
  const limits = inputLimits[type] as Readonly<Record<string, FieldLimits>>;
  return names.map((n) => spec(n, views[n], limits[n]));
}
