-- C9's limits of contract section 9, version 3 (issue 36, item 4): the cooldown is the customer's
-- browser's (an id the page keeps), the address only bounds how many browsers it brings, a display
-- takes a number of requests a minute from everyone, and a browser's open request is answered
-- again instead of a second one. Additive: earlier releases run beside it (they write neither
-- column, and their presses keep the address as the client).

-- The SHA-256 of the browser id a display request came with (never the id itself); one open
-- request per display and browser, whatever runs at once.
ALTER TABLE cfh_requests ADD COLUMN browser_digest text;
CREATE UNIQUE INDEX cfh_requests_open_per_browser ON cfh_requests (display_id, browser_digest)
  WHERE browser_digest IS NOT NULL AND NOT is_closed;
-- A display's requests of the last minute (the limit over everyone).
CREATE INDEX cfh_requests_display_created ON cfh_requests (display_id, created_at) WHERE source = 'display';

-- A press's client is now `browser:<digest>`, or the address bound when no browser id came; the
-- bound (IPv4 whole, IPv6 by its /64) is kept beside it to count the browsers of one address.
ALTER TABLE cfh_display_presses ADD COLUMN address text;
