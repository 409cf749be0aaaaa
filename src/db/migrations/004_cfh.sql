-- Call for Help: a customer's request for staff help, and every step of its life as an event.
-- The flags and times are the wire record's own; the checks keep them consistent with each other
-- whatever path writes them.

CREATE TABLE cfh_requests (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The address of the request on the wire: random, so a customer's page cannot guess another's.
  message_id text NOT NULL UNIQUE,
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  option_id integer NOT NULL REFERENCES cfh_options (id),
  device_id integer,
  display_id integer,
  callbutton_id integer,
  chat_channel_id text,
  is_claimed boolean NOT NULL DEFAULT false,
  claimed_at timestamptz,
  claimed_by text,
  -- Who claimed it, as the provider knows them: on-the-way is allowed to that same person.
  claimed_by_user_id text,
  claimed_from text,
  is_timeout boolean NOT NULL DEFAULT false,
  timeout_at timestamptz,
  is_on_the_way boolean NOT NULL DEFAULT false,
  staff_on_the_way_at timestamptz,
  is_completed boolean NOT NULL DEFAULT false,
  completed_at timestamptz,
  completion_reason text,
  is_canceled boolean NOT NULL DEFAULT false,
  customer_canceled_at timestamptz,
  is_closed boolean NOT NULL DEFAULT false,
  closed_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (is_closed = (closed_at IS NOT NULL)),
  CHECK (is_completed = (completed_at IS NOT NULL)),
  CHECK (is_canceled = (customer_canceled_at IS NOT NULL)),
  CHECK (is_timeout = (timeout_at IS NOT NULL)),
  CHECK (NOT (is_completed AND is_canceled)),
  CHECK (is_closed = (is_completed OR is_canceled)),
  CHECK (NOT is_on_the_way OR staff_on_the_way_at IS NOT NULL)
);
-- Every operation finds its request through the unique index on message_id alone (the organization
-- is a filter on that one row); no other index, so the planner has no worse path to pick on a
-- young table and inserts stay cheap. Reports that scan by store and time add their own.

-- One row per step (created, claimed, on_the_way, completed, canceled, timed_out): who, when, from
-- which provider, so response times can be reported later. Only steps that took effect are kept.
CREATE TABLE cfh_request_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id bigint NOT NULL REFERENCES cfh_requests (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('created', 'claimed', 'on_the_way', 'completed', 'canceled', 'timed_out')),
  at timestamptz NOT NULL,
  -- The API token that made the call (null for the timeout, which the service makes itself).
  token_id integer REFERENCES api_tokens (id) ON DELETE SET NULL,
  actor_name text,
  actor_user_id text,
  channel_id text,
  request_from text CHECK (request_from IN ('provider_a', 'provider_b', 'provider_c', 'web_interface')),
  -- The completion's customer_status.
  detail text
);
CREATE INDEX cfh_request_events_request ON cfh_request_events (request_id, at, id);
