-- Retention of what heard speech, voice actions and displays' cooldowns leave behind (src/retention):
-- each sweep finds the oldest rows by these columns without reading the whole table.
CREATE INDEX radio_open_requests_opened ON radio_open_requests (opened_at);
CREATE INDEX cfh_display_presses_last_at ON cfh_display_presses (last_at);
