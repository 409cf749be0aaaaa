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

-- The open CFH requests of each location as the radio knows them from the event log (its
-- "radio-requests" subscriber keeps it): what a voice action can name and claim, without reading
-- another feature's tables. A request leaves it when it closes.
CREATE TABLE radio_open_requests (
  request_id bigint PRIMARY KEY,
  organization_id integer NOT NULL,
  location_id integer NOT NULL,
  message_id text NOT NULL,
  status text NOT NULL,
  -- The call button's or display's name, and the option's text, as the events name them.
  name text,
  option_text text,
  claimed_by text,
  opened_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX radio_open_requests_location ON radio_open_requests (location_id, opened_at, request_id);

-- Requests open at the upgrade.
INSERT INTO radio_open_requests (request_id, organization_id, location_id, message_id, status, name, option_text, claimed_by, opened_at, updated_at)
SELECT r.id, r.organization_id, r.location_id, r.message_id,
  CASE WHEN r.is_on_the_way THEN 'on_the_way' WHEN r.is_claimed THEN 'claimed' ELSE 'created' END,
  NULL, o.text_en, r.claimed_by, r.created_at, r.updated_at
FROM cfh_requests r JOIN cfh_options o ON o.id = r.option_id
WHERE NOT r.is_closed;
