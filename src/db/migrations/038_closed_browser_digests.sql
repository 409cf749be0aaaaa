-- A closed display request no longer needs its browser's digest (only open ones are answered
-- again, and the cooldown reads cfh_display_presses): retention forgets it, so a customer's
-- requests are not linkable over time. This index finds the closed ones that still have one.
CREATE INDEX cfh_requests_closed_browser ON cfh_requests (id) WHERE browser_digest IS NOT NULL AND is_closed;
