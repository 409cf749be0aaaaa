-- What the device outbox attaches to a message when it publishes it (a play's audio), by the
-- reference the message was queued with (device_outbox.audio_message_id). The dispatcher reads
-- this view, never a feature's own table: the feature that keeps the bytes says here where they
-- are (the radio: its stored WAVs); another feature with attachments would add a UNION ALL branch.
-- A plain view: the planner reads radio_audio through it by its primary key, as before.
CREATE VIEW device_attachments (ref, bytes) AS SELECT message_id, wav FROM radio_audio;
