import type { EventSubject } from '../events';
import type { JsonSchema } from './schema';

/** One public webhook event type: what a receiver gets in `data`, and from which internal event. */
export interface WebhookEventType {
  /** The public type (`user.created`): the payload's `type`, what an endpoint subscribes to. */
  readonly type: string;
  /**
   * The version of `data`'s schema. Fields may be added within a version; a change that removes
   * or retypes a field is a new type (`user.created.v2`), published beside the old one.
   */
  readonly version: number;
  readonly description: string;
  /** The internal event it is made from (absent for `webhook.test`, which the API makes). */
  readonly subject?: EventSubject;
  /** JSON Schema (2020-12) of `data`. */
  readonly schema: JsonSchema;
  /** An example of `data`. */
  readonly example: Readonly<Record<string, unknown>>;
}

/** A catalog entry with its mapping: the internal event's payload → `data` (null: nothing to publish). */
export interface CatalogEntry extends WebhookEventType {
  readonly toData?: (payload: Uint8Array) => Record<string, unknown> | null;
}
