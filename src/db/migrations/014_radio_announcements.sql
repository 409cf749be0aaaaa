-- Radio version 2 (contract section 12): announcements of CFH, no late plays, voice actions.

-- What an edge device announces of its location's CFH requests, and whether it acts on what staff say.
ALTER TABLE radio_edges ADD COLUMN announce_cfh text[] NOT NULL DEFAULT '{created,escalated,cancelled}';
ALTER TABLE radio_edges ADD COLUMN voice_actions boolean NOT NULL DEFAULT false;
-- The language announcements are made in (en, fr). The CFH workflow may add it too: one column.
ALTER TABLE locations ADD COLUMN IF NOT EXISTS language text;

-- Plays that the service makes itself: CFH announcements and the confirmations of voice actions.
ALTER TABLE radio_messages DROP CONSTRAINT radio_messages_source_check;
ALTER TABLE radio_messages ADD CONSTRAINT radio_messages_source_check
  CHECK (source IN ('generic', 'messaging', 'announcement', 'confirmation'));
ALTER TABLE radio_messages DROP CONSTRAINT radio_messages_credential_check;
ALTER TABLE radio_messages ADD CONSTRAINT radio_messages_credential_check
  CHECK (credential IN ('edge_key', 'token', 'messaging_signature', 'service'));
ALTER TABLE radio_messages ADD COLUMN priority text NOT NULL DEFAULT 'normal' CHECK (priority IN ('normal', 'urgent'));
ALTER TABLE radio_messages ADD COLUMN expires_at timestamptz;
-- R2: the provider's id of the text message; a second webhook with it is a replay.
ALTER TABLE radio_messages ADD COLUMN message_sid text;
CREATE UNIQUE INDEX radio_messages_message_sid ON radio_messages (edge_id, message_sid) WHERE message_sid IS NOT NULL;
-- R2 speaks the first 500 characters of a longer text (text keeps the whole).
ALTER TABLE radio_messages ADD COLUMN truncated boolean NOT NULL DEFAULT false;
-- The announcement's CFH request and status (source 'announcement').
ALTER TABLE radio_messages ADD COLUMN cfh_request_id bigint;
ALTER TABLE radio_messages ADD COLUMN cfh_status text;
-- Duplicate suppression looks for the same text on the same edge device in the last seconds.
CREATE INDEX radio_messages_edge_text ON radio_messages (edge_id, md5(text), created_at);

-- Play messages expire and are given a priority; a message the service gave up (expired, or
-- dropped beyond the edge device's queue bound) is never published or published again.
ALTER TABLE device_outbox ADD COLUMN expires_at timestamptz;
ALTER TABLE device_outbox ADD COLUMN priority smallint NOT NULL DEFAULT 0;
ALTER TABLE device_outbox ADD COLUMN discarded_at timestamptz;
ALTER TABLE device_outbox ADD COLUMN discard_reason text CHECK (discard_reason IN ('expired', 'dropped'));
