/**
 * Validates a response against the gateway's own OpenAPI documents: the operation for the path
 * and method, the schema for the status (an undocumented success status is an error), and the
 * content type. The end-to-end tests run every response through it, so the documents cannot
 * drift from what the gateway does.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: { schemas: Record<string, unknown> } };

export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<unknown, ValidateFunction>();
  private readonly ops: Array<{ re: RegExp; method: string; op: Doc['paths'][string][string] }> = [];

  constructor(docs: Doc[]) {
    addFormats(this.ajv);
    for (const doc of docs) {
      for (const [name, schema] of Object.entries(doc.components.schemas)) {
        if (!this.ajv.getSchema(name)) this.ajv.addSchema(schema as object, name);
      }
      for (const [path, methods] of Object.entries(doc.paths)) {
        const re = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
        for (const [method, op] of Object.entries(methods)) this.ops.push({ re, method, op });
      }
    }
  }

  /** Problems with the response, or [] when it matches the documents. */
  check(method: string, url: string, status: number, contentType: string | null, body: unknown): string[] {
    const path = new URL(url).pathname;
    const hit = this.ops.find((o) => o.method === method.toLowerCase() && o.re.test(path));
    if (!hit) return status === 404 || status === 405 ? [] : [`${method} ${path} is not in the OpenAPI documents`];
    const declared = hit.op.responses[String(status)];
    if (!declared && status < 400) return [`${method} ${path} answered ${status}, which its document does not declare`];
    const response = declared ?? hit.op.responses.default!;
    if (!response.content) return body === null || body === '' ? [] : [`${method} ${path} ${status} must have no body`];
    const type = (contentType ?? '').split(';')[0]!.trim();
    const media = response.content[type];
    if (!media) return [`${method} ${path} ${status}: content type ${type} is not documented (${Object.keys(response.content).join(', ')})`];
    if (type === 'text/plain') return [];
    let validate = this.cache.get(media.schema);
    if (!validate) {
      const schema = JSON.parse(JSON.stringify(media.schema).replace(/"#\/components\/schemas\/([^"]+)"/g, '"$1"')) as object;
      validate = this.ajv.compile(schema);
      this.cache.set(media.schema, validate);
    }
    return validate(body) ? [] : [`${method} ${path} ${status} does not match its schema: ${this.ajv.errorsText(validate.errors)}`];
  }
}
