-- Scan to complete (contract section 19): an option, call button or display with require_scan has a
-- scan code (a secret the service makes, printed as a QR code on the button or beside the display),
-- kept only as its SHA-256 digest. A request of such an object records when the associate scanned it
-- (employee_arrived_at, its `arrived` step); before that, a person's session cannot complete it.
-- Earlier releases run beside it: they know none of these columns and complete as before.
ALTER TABLE cfh_options ADD COLUMN require_scan boolean NOT NULL DEFAULT false, ADD COLUMN scan_code_hash text;
ALTER TABLE call_buttons ADD COLUMN require_scan boolean NOT NULL DEFAULT false, ADD COLUMN scan_code_hash text;
ALTER TABLE cfh_displays ADD COLUMN require_scan boolean NOT NULL DEFAULT false, ADD COLUMN scan_code_hash text;
ALTER TABLE cfh_requests ADD COLUMN employee_arrived_at timestamptz;

ALTER TABLE cfh_request_events DROP CONSTRAINT cfh_request_events_kind_check;
ALTER TABLE cfh_request_events ADD CONSTRAINT cfh_request_events_kind_check
  CHECK (kind IN ('created', 'claimed', 'on_the_way', 'completed', 'canceled', 'timed_out', 'escalated', 'reminder', 'arrived'));
