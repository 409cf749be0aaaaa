-- Voice actions (contract section 12): what an edge device heard on the channel, and what the
-- service did about it. Every heard message is kept (R3), including those refused.

CREATE TABLE radio_heard (
  id bigserial PRIMARY KEY,
  edge_id text NOT NULL REFERENCES radio_edges (edge_id),
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  -- The device's own id of the utterance (QoS 1 may bring it twice: recorded once).
  heard_id text NOT NULL,
  text text NOT NULL,
  speaker text,
  heard_at timestamptz,
  received_at timestamptz NOT NULL,
  -- claim, on_the_way, none; what came of it: claimed, on_the_way, nothing_waiting, refused, ignored, disabled, invalid.
  intent text NOT NULL,
  outcome text NOT NULL,
  cfh_request_id bigint,
  -- The confirmation played on the air, if any.
  reply_message_id text,
  UNIQUE (edge_id, heard_id)
);
CREATE INDEX radio_heard_edge ON radio_heard (edge_id, received_at, id);
-- R3 lists played messages of an edge device by time.
CREATE INDEX radio_messages_edge_created ON radio_messages (edge_id, created_at, id);
