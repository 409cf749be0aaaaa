-- Chat cards (contract section 20): an endpoint is a signed webhook (section 11), a Slack incoming
-- webhook or a Teams Workflows webhook. Slack and Teams endpoints are not signed (their URL is the
-- secret); they keep a random secret nobody sees, so the secret stays required for every row and an
-- instance of the previous release, which signs every delivery, still can.
ALTER TABLE webhook_endpoints ADD COLUMN format text NOT NULL DEFAULT 'signed' CHECK (format IN ('signed', 'slack', 'teams'));
