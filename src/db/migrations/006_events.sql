-- The event log: every change that matters outside the service (contract section 11), written in
-- the transaction of the change. Subscribers (webhooks, announcements, live streams) read it in
-- commit order: tx_id is the writing transaction's id, and a reader only takes events of
-- transactions older than every transaction still running, so an event that commits late can
-- never fall behind a cursor that already passed it.

CREATE TABLE events (
  id bigserial PRIMARY KEY,
  -- The id receivers deduplicate by (x-event-id, the payload's uuid). Random, so unique without an
  -- index to keep (every write request writes events; each index is paid on each of them).
  uuid uuid NOT NULL DEFAULT gen_random_uuid(),
  tx_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  type text NOT NULL CHECK (type IN ('callforhelp', 'locker', 'radio', 'device')),
  status text NOT NULL,
  organization_id integer NOT NULL,
  location_id integer,
  -- The changed thing's own id (a request's id, an order's id, a radio message_id).
  internal_id text,
  details jsonb NOT NULL DEFAULT '{}',
  message text,
  created_at timestamptz NOT NULL
);
-- The one index: subscribers read in commit order from their cursor.
CREATE INDEX events_commit_order ON events (tx_id, id);

-- How far each durable subscriber has read; its row lock makes one instance at a time its reader.
CREATE TABLE event_cursors (
  subscriber text PRIMARY KEY,
  tx_id xid8 NOT NULL DEFAULT '0',
  event_id bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
