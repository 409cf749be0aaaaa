-- storeops: stop earlier releases first
-- People, roles and sign-in (contract section 17). Every bearer token belongs to a service account;
-- people hold memberships (a role over a location, or over the whole organization for org_admin)
-- and sign in to sessions; store devices are enrolled browsers where badges and PINs work; every
-- change and sign-in is an audit entry. The console's token sessions end here: people sign in.

-- A location is reached with its organization (memberships and store devices name both, so a
-- location of another organization can never be joined by mistake).
CREATE UNIQUE INDEX locations_id_organization ON locations (id, organization_id);

CREATE TABLE service_accounts (
  id serial PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  managed_by text NOT NULL DEFAULT 'admin' CHECK (managed_by IN ('file', 'admin')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, name)
);

-- Each existing token becomes the token of a service account of its own name (provisioning made them).
INSERT INTO service_accounts (organization_id, name, managed_by, created_at, updated_at)
SELECT organization_id, name, 'file', created_at, updated_at FROM api_tokens;
ALTER TABLE api_tokens ADD COLUMN service_account_id integer REFERENCES service_accounts (id);
UPDATE api_tokens t SET service_account_id = s.id FROM service_accounts s WHERE s.organization_id = t.organization_id AND s.name = t.name;
ALTER TABLE api_tokens ALTER COLUMN service_account_id SET NOT NULL;
ALTER TABLE api_tokens ADD COLUMN last_used_at timestamptz;
CREATE INDEX api_tokens_service_account ON api_tokens (service_account_id);

CREATE TABLE people (
  id serial PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  email text NOT NULL CHECK (email <> ''),
  name text NOT NULL CHECK (name <> ''),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  -- PHC strings of a memory-hard hash (people/passwords.ts); never a password or PIN itself.
  password_hash text,
  must_change_password boolean NOT NULL DEFAULT false,
  pin_hash text,
  -- A badge is looked up by its keyed digest, so it is unique within the organization.
  badge_digest text,
  language text CHECK (language IN ('en', 'fr')),
  version integer NOT NULL DEFAULT 1,
  managed_by text NOT NULL DEFAULT 'admin' CHECK (managed_by IN ('file', 'admin')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (id, organization_id)
);
CREATE UNIQUE INDEX people_email ON people (lower(email));
CREATE UNIQUE INDEX people_badge ON people (organization_id, badge_digest) WHERE badge_digest IS NOT NULL;

-- One row per role and location (location NULL: org_admin, the whole organization), and per way it
-- was granted: a mapping's grant is recomputed at every single sign-on, an administrator's or the
-- file's never is.
CREATE TABLE memberships (
  id serial PRIMARY KEY,
  person_id integer NOT NULL,
  organization_id integer NOT NULL,
  role text NOT NULL CHECK (role IN ('org_admin', 'location_admin', 'staff')),
  location_id integer,
  granted_by text NOT NULL CHECK (granted_by IN ('admin', 'sso', 'file')),
  created_at timestamptz NOT NULL,
  FOREIGN KEY (person_id, organization_id) REFERENCES people (id, organization_id) ON DELETE CASCADE,
  FOREIGN KEY (location_id, organization_id) REFERENCES locations (id, organization_id),
  CHECK ((role = 'org_admin') = (location_id IS NULL))
);
CREATE UNIQUE INDEX memberships_grant ON memberships (person_id, role, coalesce(location_id, 0), granted_by);

CREATE TABLE sso_role_mappings (
  id serial PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  claim_value text NOT NULL CHECK (claim_value <> ''),
  role text NOT NULL CHECK (role IN ('org_admin', 'location_admin', 'staff')),
  location_ids integer[] CHECK ((role = 'org_admin') = (location_ids IS NULL)),
  version integer NOT NULL DEFAULT 1,
  managed_by text NOT NULL DEFAULT 'admin' CHECK (managed_by IN ('file', 'admin')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, claim_value, role)
);

CREATE TABLE store_devices (
  id serial PRIMARY KEY,
  organization_id integer NOT NULL,
  location_id integer NOT NULL,
  name text NOT NULL CHECK (name <> ''),
  -- SHA-256 of the device cookie's 256 random bits.
  device_hash text NOT NULL UNIQUE,
  enrolled_by integer REFERENCES people (id),
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz,
  revoked_at timestamptz,
  FOREIGN KEY (location_id, organization_id) REFERENCES locations (id, organization_id)
);
CREATE INDEX store_devices_location ON store_devices (location_id);

DROP TABLE console_sessions;
CREATE TABLE sessions (
  id bigserial PRIMARY KEY,
  -- SHA-256 of the cookie's 256 random bits.
  session_hash text NOT NULL UNIQUE,
  person_id integer NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  -- Set for a shift session on a store device (badge or PIN): it ends when the device is revoked.
  store_device_id integer REFERENCES store_devices (id),
  method text NOT NULL CHECK (method IN ('password', 'sso', 'pin', 'badge')),
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  -- The most a session may last: 7 days, or 12 hours for a shift.
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX sessions_person ON sessions (person_id) WHERE ended_at IS NULL;
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);

-- Failed passwords (by email) and PINs (by person and device), counted over the throttle's window.
CREATE TABLE sign_in_failures (
  id bigserial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('password', 'pin')),
  subject text NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_subject ON sign_in_failures (kind, subject, at);
CREATE INDEX sign_in_failures_at ON sign_in_failures (at);

CREATE TABLE audit_entries (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  organization_id integer,
  location_id integer,
  actor_type text NOT NULL CHECK (actor_type IN ('person', 'service_account', 'provisioning', 'system')),
  actor_id text,
  actor_name text,
  action text NOT NULL,
  target_type text,
  target_id text,
  target_name text,
  changes jsonb NOT NULL DEFAULT '{}',
  ip text,
  user_agent text
);
CREATE INDEX audit_entries_organization ON audit_entries (organization_id, at, id);
CREATE INDEX audit_entries_at ON audit_entries (at);
