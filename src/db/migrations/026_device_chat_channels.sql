-- Call buttons and displays carry the chat channel their requests go to (contract section 7,
-- version 3): copied to each request they create (chat_channel_id, also read as teams_channel_id),
-- so a chat integration can route it. Null: none, as before.
ALTER TABLE call_buttons ADD COLUMN chat_channel_id text;
ALTER TABLE cfh_displays ADD COLUMN chat_channel_id text;
