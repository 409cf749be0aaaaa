-- Webhooks (contract section 11): endpoints from provisioning, one delivery per event and matching
-- endpoint (written by the event log's "webhooks" subscriber in the transaction that moves its
-- cursor), and every attempt logged. Locations get the store number their events carry.

ALTER TABLE locations ADD COLUMN store_number text;

-- The secret is the HMAC key of the signatures, so it is kept as given (it cannot be hashed).
CREATE TABLE webhook_endpoints (
  id integer PRIMARY KEY,
  organization_id integer NOT NULL REFERENCES organizations (id),
  -- null: every location of the organization.
  location_id integer REFERENCES locations (id),
  url text NOT NULL,
  secret text NOT NULL,
  -- The event types it receives (an empty list: none).
  events text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_organization ON webhook_endpoints (organization_id);

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  endpoint_id integer NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  -- The event's location (0: none): an endpoint's deliveries of one location go one at a time, in
  -- order, while those of other locations go in parallel.
  location_key integer NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  -- When the next attempt may start (pending only).
  next_attempt_at timestamptz,
  -- The attempt in flight: its claim's id, and until when no other instance may claim it.
  lease uuid,
  locked_until timestamptz,
  -- Attempts made (each has its row in webhook_attempts), and failed ones since retries started.
  attempts integer NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  -- Retries go on for 24 hours from here: the delivery's creation, or its last redelivery (W2).
  retry_since timestamptz NOT NULL,
  -- Moved by each redelivery (W2): an attempt claimed before it does not settle the delivery.
  generation integer NOT NULL DEFAULT 0,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (endpoint_id, event_id),
  CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE state = 'pending';
-- The attempts in flight, by endpoint and location (the claim leaves their heads alone).
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id, location_key) WHERE state = 'pending' AND lease IS NOT NULL;
-- W1: an endpoint's deliveries, newest first.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);
-- Retention deleting events finds their deliveries.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  -- null: no answer (refused target, connection error, timeout).
  status_code integer,
  duration_ms integer NOT NULL,
  error text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- The subscriber starts where the log is now (at the last event no running transaction can still
-- come before), so the events of every change from here on are delivered, even those written
-- before the first instance with webhooks ran its subscribers.
INSERT INTO event_cursors (subscriber, tx_id, event_id)
SELECT 'webhooks', coalesce(last.tx_id, '0'::xid8), coalesce(last.id, 0)
FROM (VALUES (1)) AS one LEFT JOIN (
  SELECT tx_id, id FROM events WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY tx_id DESC, id DESC LIMIT 1
) AS last ON true
ON CONFLICT (subscriber) DO NOTHING;
