-- The locker pickup lifecycle (contract section 13) and device health (section 14).
-- Keep to PostgreSQL 15.

-- Per location: hours an order waits for its customer, and between pickup reminders (NULL: the
-- defaults, 72 and 24). Fractions are allowed (a test store may want minutes).
ALTER TABLE locations ADD COLUMN locker_pickup_hours numeric CHECK (locker_pickup_hours > 0);
ALTER TABLE locations ADD COLUMN locker_reminder_hours numeric CHECK (locker_reminder_hours > 0);

-- An order's status is read from these (canceled_at, completed_at, expired_at, ready_at: the first
-- set of them wins; none: open). reminders counts pickup reminders sent, and names the pending
-- pickup job (lockers:pickup:<id>:<reminders>).
ALTER TABLE locker_orders ADD COLUMN pickup_deadline timestamptz;
ALTER TABLE locker_orders ADD COLUMN ready_at timestamptz;
ALTER TABLE locker_orders ADD COLUMN expired_at timestamptz;
ALTER TABLE locker_orders ADD COLUMN reminders integer NOT NULL DEFAULT 0;
UPDATE locker_orders SET pickup_deadline = created_at + interval '72 hours' WHERE pickup_deadline IS NULL;
-- Orders open at the upgrade get their pickup job, as new orders get it at creation (the first
-- reminder a day after creation, or the deadline if it comes first).
INSERT INTO jobs (kind, payload, run_at, dedupe_key)
SELECT 'lockers.pickup', jsonb_build_object('order', o.id, 'step', 0),
  least(o.created_at + interval '24 hours', o.pickup_deadline), 'lockers:pickup:' || o.id || ':0'
FROM locker_orders o
WHERE o.completed_at IS NULL AND o.canceled_at IS NULL
ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO NOTHING;

-- When each device was last seen (an MQTT connection, a message, a status report) and whether it
-- counts as online. One row per device of any kind (locker, edge, and call buttons when they come):
-- written in batches by the health tracker, and flipped offline by the sweep. `flipped` tells
-- whether the write that made the row so changed `online` (judged on the latest row version, so
-- each transition is one event however many instances write).
CREATE TABLE device_presence (
  kind text NOT NULL CHECK (kind IN ('locker', 'edge', 'call_button')),
  device_id text NOT NULL,
  organization_id integer NOT NULL,
  location_id integer NOT NULL,
  last_seen_at timestamptz NOT NULL,
  online boolean NOT NULL,
  flipped boolean NOT NULL DEFAULT false,
  PRIMARY KEY (kind, device_id)
);
CREATE INDEX device_presence_location ON device_presence (location_id);
CREATE INDEX device_presence_online ON device_presence (last_seen_at) WHERE online;

