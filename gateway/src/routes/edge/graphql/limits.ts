/**
 * Limits on a GraphQL document, checked after parsing and before validation, in one linear walk
 * (fragments are measured once), so an oversized document costs milliseconds, not the quadratic
 * work of validating it:
 *
 *   tokens        at most MAX_TOKENS (the parser stops there): bounds parsing and validation
 *   root fields   at most MAX_ROOT_FIELDS top-level fields per operation (each is a service call;
 *                 aliases count): no alias fan-out
 *   checkouts     at most MAX_CHECKOUTS `checkout`/`createOrder` fields in the whole document
 *                 (every operation; aliases, inline fragments and each fragment spread count), so
 *                 one request places at most one order and the checkout limit counts orders
 *   names         no alias, field or variable named like a property of Object.prototype
 *                 (`__proto__`, `constructor`, ...: PROTOTYPE_NAMES)
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
  type ASTNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  Kind,
  type NameNode,
  type OperationDefinitionNode,
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
/** `checkout` and its alias `createOrder`: each places an order. */
export const MAX_CHECKOUTS = 1;
const CHECKOUT_FIELDS: ReadonlySet<string> = new Set(['checkout', 'createOrder']);
/**
 * Names refused for response keys (aliases, fields) and variables: every own property name of
 * Object.prototype (`__proto__`, `constructor`, `hasOwnProperty`, `toString`, `valueOf`,
 * `__defineGetter__`, ...), read from the running engine so that none is missed. graphql-jit
 * keeps answers and variables in plain objects: an answer's `__proto__` sets its prototype
 * instead of a field (the field vanished from compiled answers), and a variable `$constructor`
 * left out reads Object's own `constructor`. Refusing every such name is the safe choice; no
 * field of the schema has one.
 */
const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));
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

const refused = (message: string, node?: ASTNode): GraphQLError => new GraphQLError(message, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } });

const fragmentsOf = (document: DocumentNode): Map<string, FragmentDefinitionNode> =>
  new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));

const isMutation = (d: DocumentNode['definitions'][number]): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.operation === OperationTypeNode.MUTATION;

interface Roots {
  /** Top-level fields that reach a service (not `__typename`). */
  fields: number;
  checkouts: number;
}

/**
 * Counts an operation's top-level fields, through inline fragments and fragment spreads (each
 * spread counts again; a fragment is walked once). A fragment that spreads itself is refused.
 */
function rootCounter(fragments: ReadonlyMap<string, FragmentDefinitionNode>): (set: SelectionSetNode) => Roots {
  const memo = new Map<string, Roots>();
  const visiting = new Set<string>();
  const count = (set: SelectionSetNode): Roots => {
    const n: Roots = { fields: 0, checkouts: 0 };
    for (const s of set.selections) {
      let m: Roots;
      if (s.kind === Kind.FIELD) m = { fields: s.name.value.startsWith('__') ? 0 : 1, checkouts: CHECKOUT_FIELDS.has(s.name.value) ? 1 : 0 };
      else if (s.kind === Kind.INLINE_FRAGMENT) m = count(s.selectionSet);
      else m = spread(s.name.value);
      n.fields += m.fields;
      n.checkouts += m.checkouts;
    }
    return n;
  };
  const spread = (name: string): Roots => {
    const fragment = fragments.get(name);
    if (!fragment) return { fields: 0, checkouts: 0 };
    const known = memo.get(name);
    if (known) return known;
    if (visiting.has(name)) throw refused(`Cannot spread fragment "${name}" within itself.`);
    visiting.add(name);
    const n = count(fragment.selectionSet);
    visiting.delete(name);
    memo.set(name, n);
    return n;
  };
  return count;
}

/** The `checkout`/`createOrder` fields of a document's mutations (the checker refuses more than MAX_CHECKOUTS). */
export function checkoutCount(document: DocumentNode): number {
  const count = rootCounter(fragmentsOf(document));
  return document.definitions.reduce((n, d) => n + (isMutation(d) ? count(d.selectionSet).checkouts : 0), 0);
}

/** Every response key (operations and fragments, each walked once) and variable of the document in PROTOTYPE_NAMES. */
function prototypeNames(document: DocumentNode): GraphQLError[] {
  const errors: GraphQLError[] = [];
  const check = (name: NameNode, what: string): void => {
    if (PROTOTYPE_NAMES.has(name.value)) errors.push(refused(`"${name.value}" may not name ${what}: it names a property of every JavaScript object.`, name));
  };
  const walk = (set: SelectionSetNode): void => {
    for (const s of set.selections) {
      if (s.kind === Kind.FRAGMENT_SPREAD) continue;
      if (s.kind === Kind.FIELD) check(s.alias ?? s.name, 'a field of the answer (choose another alias)');
      if (s.selectionSet) walk(s.selectionSet);
    }
  };
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) for (const v of d.variableDefinitions ?? []) check(v.variable.name, 'a variable');
    if ('selectionSet' in d && d.selectionSet) walk(d.selectionSet);
  }
  return errors;
}

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
    // mercurius accepts a JSON AST in place of a query that does not parse (`null` and `42` too):
    // only parsed text runs here.
    const parsed: unknown = document;
    if (typeof parsed !== 'object' || parsed === null || !(document.loc?.source instanceof Source)) return [refused('The query is not a GraphQL document.')];
    const fragments = fragmentsOf(document);
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

    const errors = prototypeNames(document);
    const rootFields = rootCounter(fragments);
    let checkouts = 0;
    try {
      for (const d of document.definitions) {
        if (d.kind !== Kind.OPERATION_DEFINITION) continue;
        const label = d.name ? `Operation "${d.name.value}"` : 'The operation';
        const root = d.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : d.operation === OperationTypeNode.SUBSCRIPTION ? schema.getSubscriptionType() : schema.getQueryType();
        const roots = rootFields(d.selectionSet);
        if (roots.fields > MAX_ROOT_FIELDS) errors.push(refused(`${label} has ${roots.fields} top-level fields; at most ${MAX_ROOT_FIELDS} are allowed.`));
        if (isMutation(d)) checkouts += roots.checkouts;
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
    if (checkouts > MAX_CHECKOUTS) {
      errors.push(refused(`The document has ${checkouts} checkout fields (checkout, createOrder); at most ${MAX_CHECKOUTS} checkout is allowed per request.`));
    }
    return errors;
  };
}
