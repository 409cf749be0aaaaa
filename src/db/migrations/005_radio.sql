-- Radio: every message played on an edge device (R1, R2), and the transcripts kept for edge
-- devices with the "transcript" voice handler. The audio travels to the device in the outbox row
-- of the message; it is kept here only as a transcript.

CREATE TABLE radio_messages (
  id bigserial PRIMARY KEY,
  message_id text NOT NULL UNIQUE,
  edge_id text NOT NULL REFERENCES radio_edges (edge_id),
  organization_id integer NOT NULL REFERENCES organizations (id),
  -- 'generic' (R1) or 'messaging' (R2)
  source text NOT NULL CHECK (source IN ('generic', 'messaging')),
  actor text NOT NULL,
  -- As received, and as spoken (after the voice handlers).
  text text NOT NULL,
  spoken_text text NOT NULL,
  processed boolean NOT NULL,
  handlers text[] NOT NULL DEFAULT '{}',
  -- Who asked: the edge device's own key, or an API token.
  credential text NOT NULL CHECK (credential IN ('edge_key', 'token', 'messaging_signature')),
  api_token_id integer REFERENCES api_tokens (id),
  -- R2 only: the messaging provider's fields.
  account_sid text,
  from_number text,
  to_number text,
  audio_bytes integer NOT NULL,
  duration_ms integer NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX radio_messages_edge ON radio_messages (edge_id, created_at DESC);

CREATE TABLE radio_transcripts (
  id bigserial PRIMARY KEY,
  message_id text NOT NULL UNIQUE REFERENCES radio_messages (message_id),
  edge_id text NOT NULL REFERENCES radio_edges (edge_id),
  audio bytea NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX radio_transcripts_edge ON radio_transcripts (edge_id, created_at DESC, id DESC);
