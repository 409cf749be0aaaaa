-- The device channel: redelivery and acks of the device outbox.

-- For a message not yet published: when the next try may run after a failed publish (NULL: now).
-- For a published, unacknowledged message on an external broker: when it is published again.
ALTER TABLE device_outbox ADD COLUMN next_attempt_at timestamptz;
-- Why the last publish failed, for operators.
ALTER TABLE device_outbox ADD COLUMN last_error text;
-- The device's ack as it sent it (it may carry a status or an error of its own).
ALTER TABLE device_outbox ADD COLUMN ack jsonb;

-- A device's messages in order: redelivery to one device, and "a later message was acked".
CREATE INDEX device_outbox_topic ON device_outbox (topic, id);
-- Published messages waiting for an ack whose redelivery time is set (external broker only).
CREATE INDEX device_outbox_redelivery ON device_outbox (next_attempt_at)
  WHERE published_at IS NOT NULL AND acked_at IS NULL AND next_attempt_at IS NOT NULL;
