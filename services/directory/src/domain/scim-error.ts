/** A SCIM error (RFC 7644 §3.12): the HTTP status and, for a 400 or 409, its `scimType`. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
    this.name = 'ScimError';
  }

  static badRequest(scimType: ScimType, detail: string): ScimError {
    return new ScimError(400, detail, scimType);
  }

  static notFound(detail = 'The resource does not exist.'): ScimError {
    return new ScimError(404, detail);
  }
}
