-- Call for Help version 2 (contract sections 9 and 10): call buttons, displays, outcomes, the
-- workflow's timers and the request's new fields. Keep to PostgreSQL 15.

-- A location's Call for Help settings. NULL: the default (escalation CFH_ESCALATION_SECONDS,
-- reminders off, automatic completion after 3600 s, staff names "full", button cooldown 120 s,
-- language "en"). 0 turns escalation, a reminder, the reminder cap or automatic completion off.
ALTER TABLE locations ADD COLUMN cfh_escalation_seconds integer CHECK (cfh_escalation_seconds >= 0);
ALTER TABLE locations ADD COLUMN cfh_reminder_seconds integer CHECK (cfh_reminder_seconds >= 0);
ALTER TABLE locations ADD COLUMN cfh_reminder_claimed_seconds integer CHECK (cfh_reminder_claimed_seconds >= 0);
ALTER TABLE locations ADD COLUMN cfh_reminder_cap_seconds integer CHECK (cfh_reminder_cap_seconds >= 0);
ALTER TABLE locations ADD COLUMN cfh_auto_complete_seconds integer CHECK (cfh_auto_complete_seconds >= 0);
ALTER TABLE locations ADD COLUMN staff_name_format text CHECK (staff_name_format IN ('full', 'first', 'generic'));
ALTER TABLE locations ADD COLUMN call_button_cooldown_seconds integer CHECK (call_button_cooldown_seconds >= 0);
ALTER TABLE locations ADD COLUMN language text CHECK (language IN ('en', 'fr'));

ALTER TABLE cfh_options ADD COLUMN staff_action text NOT NULL DEFAULT 'claim_and_on_the_way'
  CHECK (staff_action IN ('claim_and_on_the_way', 'on_the_way', 'acknowledge', 'done', 'none'));

-- When a location has outcomes, a completion's customer_status must be one of their keys.
CREATE TABLE cfh_outcomes (
  id integer PRIMARY KEY,
  location_id integer NOT NULL REFERENCES locations (id),
  key text NOT NULL,
  text_en text NOT NULL,
  text_fr text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (location_id, key)
);

-- Physical call buttons, known by their MAC address (device_key), compared case-insensitively.
-- last_press_at is the last ACCEPTED press: the cooldown is a conditional update of this row, so
-- concurrent presses queue on its lock and only the first passes.
CREATE TABLE call_buttons (
  id integer PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  option_id integer NOT NULL REFERENCES cfh_options (id),
  name text NOT NULL,
  device_key text NOT NULL,
  last_press_at timestamptz,
  voltage double precision,
  voltage_at timestamptz,
  -- Set when a voltage below 2.4 V emitted battery_low; cleared when it rises again.
  battery_low boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX call_buttons_device_key ON call_buttons (organization_id, upper(device_key));

-- Digital call buttons (QR codes): the key is the page's credential, kept only as its SHA-256.
CREATE TABLE cfh_displays (
  id integer PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  option_ids integer[] NOT NULL DEFAULT '{}',
  allow_custom_text boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- C9's one request per display and client address per cooldown: an upsert whose update is conditional.
CREATE TABLE cfh_display_presses (
  display_id integer NOT NULL REFERENCES cfh_displays (id) ON DELETE CASCADE,
  client text NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (display_id, client)
);

ALTER TABLE cfh_requests ADD COLUMN source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'call_button', 'display'));
ALTER TABLE cfh_requests ADD COLUMN is_escalated boolean NOT NULL DEFAULT false;
ALTER TABLE cfh_requests ADD COLUMN escalated_at timestamptz;
ALTER TABLE cfh_requests ADD COLUMN custom_text text;
ALTER TABLE cfh_requests ADD COLUMN reminder_count integer NOT NULL DEFAULT 0;
ALTER TABLE cfh_requests ADD CONSTRAINT cfh_requests_escalated CHECK (is_escalated = (escalated_at IS NOT NULL));

-- A timeout now closes the request (version 1 kept it open and claimable). Requests that timed out
-- under version 1 and are still open and unclaimed are closed at their timeout, as version 2 would have.
ALTER TABLE cfh_requests DROP CONSTRAINT cfh_requests_check5;
UPDATE cfh_requests SET is_closed = true, closed_at = timeout_at WHERE is_timeout AND NOT is_closed AND NOT is_claimed;
ALTER TABLE cfh_requests ADD CONSTRAINT cfh_requests_closed CHECK (is_closed = (is_completed OR is_canceled OR (is_timeout AND NOT is_claimed)));

ALTER TABLE cfh_request_events DROP CONSTRAINT cfh_request_events_kind_check;
ALTER TABLE cfh_request_events ADD CONSTRAINT cfh_request_events_kind_check
  CHECK (kind IN ('created', 'claimed', 'on_the_way', 'completed', 'canceled', 'timed_out', 'escalated', 'reminder'));
ALTER TABLE cfh_request_events DROP CONSTRAINT cfh_request_events_request_from_check;
ALTER TABLE cfh_request_events ADD CONSTRAINT cfh_request_events_request_from_check
  CHECK (request_from IN ('provider_a', 'provider_b', 'provider_c', 'web_interface', 'radio', 'call_button'));
-- The API token is null for steps taken without one (a hub's is kept; a customer, the service's timers).

-- C7's default listing (a location's open requests, newest first) reads this index only.
CREATE INDEX cfh_requests_location_open ON cfh_requests (location_id, created_at DESC, id DESC) WHERE NOT is_closed;
