-- Voice actions: when the service last started acting on a heard message still "pending". A row
-- left pending by a crash is acted on when the device brings the message again (QoS 1), once this
-- is old enough that no other delivery can still be acting on it (src/radio/heard.ts).
ALTER TABLE radio_heard ADD COLUMN acting_at timestamptz;
UPDATE radio_heard SET acting_at = received_at WHERE outcome = 'pending';
