-- The audio of a play, stored once. Until now a play's WAV was kept twice: as bytea in its
-- transcript and as base64 inside its device outbox payload. Now it has a row of its own, which the
-- transcript audio endpoint reads and the dispatcher puts into the play message when it publishes,
-- so the audio can be deleted later (retention) without rewriting any other row.

CREATE TABLE radio_audio (
  message_id text PRIMARY KEY REFERENCES radio_messages (message_id),
  -- 16-bit PCM mono WAV, as the edge device receives it.
  wav bytea NOT NULL,
  created_at timestamptz NOT NULL
);

INSERT INTO radio_audio (message_id, wav, created_at)
SELECT message_id, audio, created_at FROM radio_transcripts;

ALTER TABLE radio_transcripts DROP COLUMN audio;

-- The audio the dispatcher adds to the payload (as "audio", base64) when it publishes the row.
-- Rows queued before this migration carry their audio in the payload and have none here.
ALTER TABLE device_outbox ADD COLUMN audio_message_id text REFERENCES radio_audio (message_id) ON DELETE SET NULL;
-- Deleting audio finds the rows that point at it without reading the whole outbox.
CREATE INDEX device_outbox_audio ON device_outbox (audio_message_id) WHERE audio_message_id IS NOT NULL;
