/**
 * Limits on a GraphQL document, checked after parsing and before validation, in one linear walk
 * (fragments are measured once), so an oversized document costs milliseconds, not the quadratic
 * work of validating it:
 *
 *   tokens        at most MAX_TOKENS (the parser stops there): bounds parsing and validation
 *   root fields   at most MAX_ROOT_FIELDS top-level fields per operation (each is a service call;
 *                 aliases count): no alias fan-out
 *   depth         data fields nested at most `maxDepth` deep (introspection is bounded by the
 *                 complexity instead: its standard query is 15 deep)
 *   complexity    an upper bound of the fields the operation resolves: every field counts 1, and
 *                 a list multiplies its selection by its largest size (a page by its pageSize:
 *                 its default when absent, the maximum when a variable; order and cart lines by
 *                 50; introspection lists by their sizes in this schema), at most `maxComplexity`
 *
 * A document that breaks one is refused with a GraphQL error (code BAD_USER_INPUT) before any
 * resolver runs.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  Kind,
  OperationTypeNode,
  type SelectionSetNode,
  Source,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  isUnionType,
} from 'graphql';
import { PAGE_SIZE_MAX } from '../../../schemas/common';

/** Tokens in a document: ample for real queries (the standard introspection query has ~200). */
export const MAX_TOKENS = 1_000;
export const MAX_ROOT_FIELDS = 10;
/** Lines of a cart or an order (commerce's limit). */
const LINES_MAX = 50;

export interface DocumentLimits {
  readonly maxDepth: number;
  readonly maxComplexity: number;
}

interface Measure {
  cost: number;
  depth: number;
}

const refused = (message: string): GraphQLError => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** Sizes of the introspection lists in this schema: their largest, and their average (a list of every type's). */
function introspectionSizes(schema: GraphQLSchema) {
  const types = Object.values(schema.getTypeMap());
  const fields = types.flatMap((t) => (isObjectType(t) || isInterfaceType(t) ? Object.values(t.getFields()) : []));
  const directives = schema.getDirectives();
  const sizes = (counts: number[], of = counts.length) => ({
    max: Math.max(1, ...counts),
    avg: Math.max(1, Math.ceil(counts.reduce((a, b) => a + b, 0) / Math.max(1, of))),
  });
  const perType = (f: (t: GraphQLNamedType) => number) => sizes(types.map(f));
  return {
    '__Schema.types': { max: types.length, avg: types.length },
    '__Schema.directives': { max: directives.length, avg: directives.length },
    '__Type.fields': perType((t) => (isObjectType(t) || isInterfaceType(t) ? Object.keys(t.getFields()).length : 0)),
    '__Type.inputFields': perType((t) => (isInputObjectType(t) ? Object.keys(t.getFields()).length : 0)),
    '__Type.enumValues': perType((t) => (isEnumType(t) ? t.getValues().length : 0)),
    '__Type.interfaces': perType((t) => (isObjectType(t) || isInterfaceType(t) ? t.getInterfaces().length : 0)),
    '__Type.possibleTypes': perType((t) => (isUnionType(t) || isInterfaceType(t) ? schema.getPossibleTypes(t).length : 0)),
    '__Field.args': sizes(fields.map((f) => f.args.length)),
    '__Directive.args': sizes(directives.map((d) => d.args.length)),
  } as Record<string, { max: number; avg: number }>;
}

/** Lists of the edge schema whose size is known (a page's list is multiplied by its field's pageSize). */
const LIST_SIZES: Record<string, number> = {
  'Cart.lines': LINES_MAX,
  'Order.lines': LINES_MAX,
  'ProductConnection.products': 1,
  'OrderConnection.orders': 1,
};

/** The checker for one schema: the document's violations, none when it may be validated and run. */
export function documentChecker(schema: GraphQLSchema, limits: DocumentLimits): (document: DocumentNode) => GraphQLError[] {
  const introspection = introspectionSizes(schema);
  const schemaType = schema.getType('__Schema');
  const typeType = schema.getType('__Type');

  return (document) => {
    // mercurius accepts a JSON AST in place of a query that does not parse: only parsed text runs here.
    if (!(document.loc?.source instanceof Source)) return [refused('The query is not a GraphQL document.')];
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    const memo = new Map<string, Measure>();
    const visiting = new Set<string>();

    const fieldDef = (parent: GraphQLNamedType | undefined, node: FieldNode): GraphQLField<unknown, unknown> | { type: GraphQLNamedType; args: [] } | undefined => {
      const name = node.name.value;
      if (name === '__schema' && schemaType) return { type: schemaType, args: [] };
      if (name === '__type' && typeType) return { type: typeType, args: [] };
      return parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
    };

    /** How many times a field's selection is resolved. */
    const multiplier = (parent: GraphQLNamedType | undefined, node: FieldNode, def: ReturnType<typeof fieldDef>, aggregate: boolean): number => {
      if (!def) return 1;
      const paged = def.args.find((a) => a.name === 'pageSize');
      if (paged) {
        const arg = node.arguments?.find((a) => a.name.value === 'pageSize');
        if (!arg) return typeof paged.defaultValue === 'number' ? paged.defaultValue : PAGE_SIZE_MAX;
        return arg.value.kind === Kind.INT ? Math.min(PAGE_SIZE_MAX, Math.max(1, Number(arg.value.value))) : PAGE_SIZE_MAX;
      }
      if (!isListType(getNullableType(def.type))) return 1;
      const key = `${parent?.name ?? ''}.${node.name.value}`;
      const sizes = introspection[key];
      if (sizes) return aggregate ? sizes.avg : sizes.max;
      return LIST_SIZES[key] ?? PAGE_SIZE_MAX;
    };

    /**
     * Cost and depth of a selection set on `type`. `aggregate`: the set is resolved for every
     * element of a list of all the schema's types (or all their fields...), where an
     * introspection list's average size, times their number, is its true total.
     */
    const measure = (set: SelectionSetNode, type: GraphQLNamedType | undefined, introspecting: boolean, aggregate: boolean): Measure => {
      let cost = 0;
      let depth = 0;
      for (const s of set.selections) {
        let m: Measure;
        if (s.kind === Kind.FIELD) {
          const def = fieldDef(type, s);
          const inIntrospection = introspecting || s.name.value === '__schema' || s.name.value === '__type';
          const isList = def !== undefined && isListType(getNullableType(def.type));
          // Every type, every directive, or a list inside one of those: the average applies below.
          const everyOne = inIntrospection && isList && (aggregate || type?.name === '__Schema');
          const child = s.selectionSet ? measure(s.selectionSet, def ? getNamedType(def.type) : undefined, inIntrospection, everyOne) : { cost: 0, depth: 0 };
          m = { cost: 1 + multiplier(type, s, def, aggregate) * child.cost, depth: inIntrospection ? 0 : 1 + child.depth };
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          const on = s.typeCondition ? schema.getType(s.typeCondition.name.value) : type;
          m = measure(s.selectionSet, on ?? undefined, introspecting, aggregate);
        } else {
          m = spread(s.name.value, introspecting, aggregate);
        }
        cost += m.cost;
        depth = Math.max(depth, m.depth);
      }
      return { cost, depth };
    };

    const spread = (name: string, introspecting: boolean, aggregate: boolean): Measure => {
      const fragment = fragments.get(name);
      // An unknown fragment is validation's to report.
      if (!fragment) return { cost: 0, depth: 0 };
      const key = `${name}/${introspecting}/${aggregate}`;
      const known = memo.get(key);
      if (known) return known;
      if (visiting.has(name)) throw refused(`Cannot spread fragment "${name}" within itself.`);
      visiting.add(name);
      const m = measure(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? undefined, introspecting, aggregate);
      visiting.delete(name);
      memo.set(key, m);
      return m;
    };

    /** Top-level fields of an operation (fragments spread at the top level included) that reach a service. */
    const rootMemo = new Map<string, number>();
    const rootFields = (set: SelectionSetNode): number => {
      let n = 0;
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) n += s.name.value.startsWith('__') ? 0 : 1;
        else if (s.kind === Kind.INLINE_FRAGMENT) n += rootFields(s.selectionSet);
        else n += rootFragment(s.name.value);
      }
      return n;
    };
    const rootFragment = (name: string): number => {
      const fragment = fragments.get(name);
      if (!fragment) return 0;
      const known = rootMemo.get(name);
      if (known !== undefined) return known;
      if (visiting.has(name)) throw refused(`Cannot spread fragment "${name}" within itself.`);
      visiting.add(name);
      const n = rootFields(fragment.selectionSet);
      visiting.delete(name);
      rootMemo.set(name, n);
      return n;
    };

    const errors: GraphQLError[] = [];
    try {
      for (const d of document.definitions) {
        if (d.kind !== Kind.OPERATION_DEFINITION) continue;
        const label = d.name ? `Operation "${d.name.value}"` : 'The operation';
        const root = d.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : d.operation === OperationTypeNode.SUBSCRIPTION ? schema.getSubscriptionType() : schema.getQueryType();
        const roots = rootFields(d.selectionSet);
        if (roots > MAX_ROOT_FIELDS) errors.push(refused(`${label} has ${roots} top-level fields; at most ${MAX_ROOT_FIELDS} are allowed.`));
        const m = measure(d.selectionSet, root ?? undefined, false, false);
        if (m.depth > limits.maxDepth) errors.push(refused(`${label} is ${m.depth} levels deep; at most ${limits.maxDepth} are allowed.`));
        if (m.cost > limits.maxComplexity) {
          errors.push(refused(`${label} may resolve up to ${m.cost} fields; at most ${limits.maxComplexity} are allowed (ask for smaller pages or fewer fields).`));
        }
      }
    } catch (err) {
      if (err instanceof GraphQLError) return [err];
      throw err;
    }
    return errors;
  };
}
