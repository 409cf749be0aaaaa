// TypeBox for section 18's people, service accounts and SSO role mappings: validation, types and the
// OpenAPI document. Fields are the provisioning file's (section 7) plus `version` and `managed_by`;
// secrets are write-only (a PIN, a badge code) or shown once (a one-time password, a token).
import { Type, type Static } from 'typebox';
import { ROLES } from '../../access/actor.ts';
import {
  JSON_STORABLE_CHAR,
  JsonStorableText,
  nullable,
  NullableTimestamp,
  oneOf,
  oneOfOrNull,
  RowId,
  INT32_MAX,
  StorableText,
  Timestamp,
} from '../../http/schemas.ts';
import { RoleGrant, TOKEN_SCOPES } from '../../provisioning/schema.ts';
import { ManagedBy, Version } from '../../admin/schemas.ts';

const LocationIds = nullable(Type.Array(Type.Integer(), { description: 'null: the whole organization' }));
// Names, emails and claim values also go into the audit log's jsonb: no NUL, no lone surrogate.
const Name = JsonStorableText({ minLength: 1, maxLength: 200, description: 'a name' });
/** A person's email: the provisioning file's address form, and text the audit log can keep. */
const EMAIL_CHAR = `(?![\\s@])${JSON_STORABLE_CHAR}`;
const Email = Type.String({ minLength: 3, maxLength: 320, pattern: `^${EMAIL_CHAR}+@${EMAIL_CHAR}+$`, examples: ['ann@example.com'] });
const Language = oneOfOrNull(['en', 'fr'] as const);

export const TokenParams = Type.Object({ id: RowId, token_id: RowId });

// --- people ----------------------------------------------------------------------------------

export const PersonMembership = Type.Object(
  {
    role: oneOf(ROLES),
    location_ids: LocationIds,
    granted_by: oneOf(['admin', 'file', 'sso'] as const, {
      description: 'admin: by administration; file: by the provisioning file; sso: by a mapping at sign-in',
    }),
  },
  { title: 'PersonMembership' },
);

const personFields = {
  id: Type.Integer(),
  organization_id: Type.Integer(),
  email: Type.String({ examples: ['ann@example.com'] }),
  name: Type.String({ examples: ['Ann Lee'] }),
  status: oneOf(['active', 'disabled'] as const),
  language: Language,
  memberships: Type.Array(PersonMembership),
  has_password: Type.Boolean(),
  must_change_password: Type.Boolean({ description: 'a one-time password: changed at the next sign-in' }),
  has_pin: Type.Boolean(),
  has_badge: Type.Boolean(),
  version: Version,
  managed_by: ManagedBy,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const PersonView = Type.Object(personFields, { title: 'Person', description: 'a person; never their password, PIN or badge code' });

export const ChangedPerson = Type.Object(
  { ...personFields, one_time_password: Type.Optional(Type.String({ description: 'made by `password: true`: shown in this answer only' })) },
  { title: 'ChangedPerson' },
);

const Membership = Type.Object(RoleGrant.properties, {
  title: 'MembershipGrant',
  description: 'a role; location_ids: the locations of a location_admin or staff, left out for an org_admin',
  examples: [{ role: 'staff', location_ids: [10] }],
});

const personInput = {
  email: Email,
  name: Name,
  organization_id: Type.Optional(RowId),
  status: Type.Optional(oneOf(['active', 'disabled'] as const)),
  language: Type.Optional(Language),
  password: Type.Optional(
    Type.Boolean({ description: 'true: a new one-time password, shown once in the answer and changed at the next sign-in; false: no password' }),
  ),
  pin: Type.Optional(nullable(Type.String({ maxLength: 32, description: '6 to 12 digits, for store devices; null: none' }))),
  badge_code: Type.Optional(nullable(StorableText({ minLength: 1, maxLength: 256, description: 'scanned on store devices; null: none' }))),
};

export const NewPerson = Type.Object(
  { ...personInput, memberships: Type.Array(Membership, { minItems: 1, maxItems: 50 }) },
  { title: 'NewPerson', examples: [{ email: 'ann@example.com', name: 'Ann Lee', memberships: [{ role: 'staff', location_ids: [10] }], password: true }] },
);
export type NewPerson = Static<typeof NewPerson>;

export const PersonChange = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Name),
    organization_id: personInput.organization_id,
    status: personInput.status,
    language: personInput.language,
    password: personInput.password,
    pin: personInput.pin,
    badge_code: personInput.badge_code,
    memberships: Type.Optional(
      Type.Array(Membership, { maxItems: 50, description: "replaces the memberships administration granted (a location admin's: at their locations)" }),
    ),
    version: Type.Optional(Version),
  },
  { title: 'PersonChange', examples: [{ status: 'disabled', version: 3 }] },
);
export type PersonChange = Static<typeof PersonChange>;

export const PeopleQuery = Type.Object({
  location_id: Type.Optional(
    Type.Integer({ minimum: 1, maximum: INT32_MAX, description: 'only the people with a role there (org_admins hold every location)' }),
  ),
});

export const EndedSessions = Type.Object(
  { person_id: Type.Integer(), sessions_ended: Type.Integer({ minimum: 0, description: 'how many live sessions were ended' }) },
  { title: 'EndedSessions' },
);

// --- service accounts --------------------------------------------------------------------------

const tokenFields = {
  id: Type.Integer(),
  name: Type.String({ examples: ['chat-bot'] }),
  scopes: Type.Array(oneOf(TOKEN_SCOPES)),
  location_ids: nullable(Type.Array(Type.Integer(), { description: 'null: every location of the organization' })),
  expires_at: NullableTimestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
  managed_by: ManagedBy,
  created_at: Timestamp,
};

export const TokenView = Type.Object(tokenFields, { title: 'ServiceAccountToken', description: 'a token; never its value' });

export const CreatedToken = Type.Object(
  { ...tokenFields, service_account_id: Type.Integer(), token: Type.String({ description: 'the bearer token: shown in this answer only' }) },
  { title: 'CreatedServiceAccountToken' },
);

export const ServiceAccountView = Type.Object(
  {
    id: Type.Integer(),
    organization_id: Type.Integer(),
    name: Type.String({ examples: ['chat-bot'] }),
    version: Version,
    managed_by: ManagedBy,
    created_at: Timestamp,
    updated_at: Timestamp,
    tokens: Type.Array(TokenView),
  },
  { title: 'ServiceAccount' },
);

export const NewServiceAccount = Type.Object(
  { name: Name, organization_id: Type.Optional(RowId) },
  { title: 'NewServiceAccount', examples: [{ name: 'chat-bot' }] },
);

/** A token made here may carry any scope but `console`, which version 3 retired. */
export const ADMIN_TOKEN_SCOPES = TOKEN_SCOPES.filter((s) => s !== 'console');

export const NewToken = Type.Object(
  {
    name: Name,
    scopes: Type.Array(oneOf(ADMIN_TOKEN_SCOPES), { minItems: 1, uniqueItems: true }),
    location_ids: Type.Optional(nullable(Type.Array(RowId, { minItems: 1, maxItems: 1000, uniqueItems: true }))),
    expires_at: Type.Optional(nullable(Type.String({ format: 'date-time', description: 'absent or null: never' }))),
  },
  { title: 'NewServiceAccountToken', examples: [{ name: 'store 10 chat', scopes: ['cfh', 'radio'], location_ids: [10] }] },
);
export type NewToken = Static<typeof NewToken>;

// --- SSO role mappings ---------------------------------------------------------------------------

export const SsoRoleMappingView = Type.Object(
  {
    id: Type.Integer(),
    organization_id: Type.Integer(),
    claim_value: Type.String({ examples: ['store-10-staff'] }),
    role: oneOf(ROLES),
    location_ids: LocationIds,
    version: Version,
    managed_by: ManagedBy,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SsoRoleMapping' },
);

export const NewSsoRoleMapping = Type.Object(
  {
    claim_value: JsonStorableText({ minLength: 1, maxLength: 500, description: 'a value of the OIDC_ROLES_CLAIM claim, compared exactly' }),
    organization_id: Type.Optional(RowId),
    ...RoleGrant.properties,
  },
  { title: 'NewSsoRoleMapping', examples: [{ claim_value: 'store-10-staff', role: 'staff', location_ids: [10] }] },
);
export type NewSsoRoleMapping = Static<typeof NewSsoRoleMapping>;

// --- error answers -------------------------------------------------------------------------------
