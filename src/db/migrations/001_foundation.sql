-- The provisioned world (organizations, locations, lockers and cabinets, CFH options, radio edge
-- devices, messaging accounts, API tokens), the service's own settings, the durable job table and
-- the device outbox. Keep to PostgreSQL 15: PGlite is newer, production may not be.

CREATE TABLE organizations (
  id integer PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE locations (
  id integer PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  cfh_timeout_seconds integer CHECK (cfh_timeout_seconds > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX locations_organization ON locations (organization_id);

CREATE TABLE lockers (
  id integer PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  name text NOT NULL,
  version integer NOT NULL DEFAULT 2,
  rear_loading_available boolean NOT NULL DEFAULT false,
  timer integer NOT NULL DEFAULT 30,
  -- The seed returns api_key in the location listing (L1), so it is kept as given; lookups go
  -- through its SHA-256 so the header never has to be compared against every locker.
  api_key text NOT NULL,
  api_key_hash text NOT NULL UNIQUE,
  ip text,
  firmware text,
  last_seen_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lockers_location ON lockers (location_id);

CREATE TABLE cabinets (
  id integer PRIMARY KEY,
  locker_id integer NOT NULL REFERENCES lockers (id),
  key integer NOT NULL,
  name text,
  state text NOT NULL DEFAULT 'closed' CHECK (state IN ('open', 'closed')),
  enabled boolean NOT NULL DEFAULT true,
  size text NOT NULL DEFAULT 'medium',
  occupied boolean NOT NULL DEFAULT false,
  released_at timestamptz,
  thermal_mode text NOT NULL DEFAULT 'ambient' CHECK (thermal_mode IN ('ambient', 'heat', 'freeze', 'chill')),
  rear_load_status text NOT NULL DEFAULT 'closed' CHECK (rear_load_status IN ('open', 'closed')),
  tag text,
  cool_off_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (locker_id, key)
);

CREATE TABLE cfh_options (
  id integer PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer REFERENCES locations (id),
  text_en text NOT NULL,
  text_fr text NOT NULL,
  prompt_en text NOT NULL,
  prompt_fr text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE radio_edges (
  edge_id text PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  name text NOT NULL,
  device_key_hash text NOT NULL UNIQUE,
  voice_handlers text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The provider's auth token is the HMAC key of its webhook signatures, so it cannot be hashed.
CREATE TABLE messaging_accounts (
  account_sid text PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  auth_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
  id serial PRIMARY KEY,
  name text NOT NULL UNIQUE,
  organization_id integer NOT NULL REFERENCES organizations (id),
  scopes text[] NOT NULL,
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE service_settings (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Delayed work: picked with FOR UPDATE SKIP LOCKED and run in the transaction that marks it done.
CREATE TABLE jobs (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  run_at timestamptz NOT NULL,
  dedupe_key text,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  done_at timestamptz,
  failed boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE done_at IS NULL;
CREATE UNIQUE INDEX jobs_pending_key ON jobs (dedupe_key) WHERE done_at IS NULL;

-- Messages for devices, written in the transaction of the change that causes them.
CREATE TABLE device_outbox (
  id bigserial PRIMARY KEY,
  topic text NOT NULL,
  payload jsonb NOT NULL,
  message_key text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  publish_attempts integer NOT NULL DEFAULT 0,
  acked_at timestamptz
);
CREATE INDEX device_outbox_unpublished ON device_outbox (id) WHERE published_at IS NULL;
