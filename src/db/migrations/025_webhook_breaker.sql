-- Webhooks: a dead endpoint's circuit breaker (docs/webhooks.md). After failed attempts in a row,
-- the endpoint's deliveries wait together until a probe time (the retry schedule's doubling, from
-- when the failures began), and then one of them probes it; a delivered probe makes them all due.

CREATE TABLE webhook_endpoint_health (
  endpoint_id integer PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  -- Failed attempts in a row (any of its deliveries), and when the first of them was made.
  failures integer NOT NULL DEFAULT 0,
  failing_since timestamptz,
  -- Set while the breaker is open: its deliveries are due no sooner, and one at a time probes it.
  open_until timestamptz
);


-- The claim finds each endpoint's stores with pending deliveries, and each store's oldest, by this
-- index (a probe per store), so its cost does not grow with the queue behind them.
CREATE INDEX webhook_deliveries_stores ON webhook_deliveries (endpoint_id, location_key, id) WHERE state = 'pending';
