-- Reports (contract section 16) and retention. Keep to PostgreSQL 15.

-- A location's own day boundaries for reports (an IANA name, checked by provisioning); NULL: UTC.
ALTER TABLE locations ADD COLUMN time_zone text;

-- P1, P2 and P3 read one location's rows of a time range; the id makes P2's keyset pages exact.
CREATE INDEX cfh_requests_location_created ON cfh_requests (location_id, created_at, id);
CREATE INDEX locker_orders_location_created ON locker_orders (location_id, created_at, id);

-- Retention finds old announcement audio without reading the table (old device messages, webhook
-- deliveries and events are found at the head of their primary key).
CREATE INDEX radio_audio_created ON radio_audio (created_at);
-- ...and jobs that ran long ago (pending ones are in jobs_due).
CREATE INDEX jobs_done ON jobs (done_at) WHERE done_at IS NOT NULL;
