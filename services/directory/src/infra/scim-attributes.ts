/**
 * Which SCIM attributes can be filtered and sorted on, and the SQL expression each is (the
 * aliases of scim-resource-store.ts: `s` scim_users, `u` users, `g` organization_groups).
 */
import type { AttrMap, MultiAttr, ScalarAttr } from './scim-filter';

const scalar = (sql: string, type: ScalarAttr['type'] = 'ci'): ScalarAttr => ({ kind: 'scalar', sql, type });
const json = (path: string) => scalar(`s.attributes #>> '{${path}}'`);

/** A multi-valued attribute stored as a JSON array in `scim_users.attributes`. */
function jsonArray(name: string, subs: readonly string[]): MultiAttr {
  const e = `${name}_e`;
  return {
    kind: 'multi',
    from: `jsonb_array_elements(CASE WHEN jsonb_typeof(s.attributes -> '${name}') = 'array' THEN s.attributes -> '${name}' ELSE '[]'::jsonb END) AS ${e}`,
    subs: Object.fromEntries([...subs.map((k): [string, ScalarAttr] => [k.toLowerCase(), scalar(`${e} ->> '${k}'`)]), ['primary', scalar(`(${e} ->> 'primary')::boolean`, 'boolean')]]),
  };
}

export const USER_ATTRIBUTES: AttrMap = {
  id: scalar('u.id', 'uuid'),
  externalid: scalar('s.external_id', 'exact'),
  // Lower-cased in the column: equality uses the unique index (organization_id, user_name_key).
  username: scalar('s.user_name_key', 'email'),
  displayname: json('displayName'),
  nickname: json('nickName'),
  title: json('title'),
  usertype: json('userType'),
  preferredlanguage: json('preferredLanguage'),
  locale: json('locale'),
  timezone: json('timezone'),
  active: scalar('(u.disabled_at IS NULL)', 'boolean'),
  'name.givenname': scalar('u.first_name'),
  'name.familyname': scalar('u.last_name'),
  'name.formatted': json('name,formatted'),
  'meta.created': scalar('s.created_at', 'date'),
  'meta.lastmodified': scalar('greatest(s.updated_at, u.updated_at)', 'date'),
  emails: jsonArray('emails', ['value', 'type', 'display']),
  phonenumbers: jsonArray('phoneNumbers', ['value', 'type', 'display']),
  'enterprise:employeenumber': json('enterprise,employeeNumber'),
  'enterprise:costcenter': json('enterprise,costCenter'),
  'enterprise:organization': json('enterprise,organization'),
  'enterprise:division': json('enterprise,division'),
  'enterprise:department': json('enterprise,department'),
  'enterprise:manager.value': json('enterprise,manager,value'),
};

export const GROUP_ATTRIBUTES: AttrMap = {
  id: scalar('g.id', 'uuid'),
  externalid: scalar('g.external_id', 'exact'),
  displayname: scalar('g.display_name'),
  'meta.created': scalar('g.created_at', 'date'),
  'meta.lastmodified': scalar('g.updated_at', 'date'),
  members: {
    kind: 'multi',
    // Correlated with the group in the join itself.
    from: 'organization_group_members gm JOIN users mu ON mu.id = gm.user_id AND mu.deleted_at IS NULL AND gm.group_id = g.id',
    subs: { value: scalar('gm.user_id', 'uuid'), display: scalar('mu.email') },
  },
};
