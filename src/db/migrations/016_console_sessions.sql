-- Console sessions (contract section 15): a sign-in with an API token of the console scope keeps a
-- session whose cookie value is stored only as its SHA-256. A session ends when signed out, after
-- 12 hours without a request, or when its token is revoked or expires (checked on every request).
CREATE TABLE console_sessions (
  id bigserial PRIMARY KEY,
  session_hash text NOT NULL UNIQUE,
  api_token_id integer NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  organization_id integer NOT NULL REFERENCES organizations (id),
  -- The name staff gave at sign-in: it is who claims and completes requests from this session.
  staff_name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  ended_at timestamptz
);
-- Retention of ended and idle sessions reads by age.
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
