-- Single sign-on flows in progress (contract section 17): what startSsoSignIn sent to the identity
-- provider (state, nonce, the PKCE verifier, where to go back), kept until the provider sends the
-- browser back, on whichever instance. A flow is found by the SHA-256 of the browser's flow cookie,
-- so only the browser that started it can finish it, and it is deleted as it is read: used once.
CREATE TABLE sso_flows (
  browser_hash text PRIMARY KEY,
  state text NOT NULL,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  return_to text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX sso_flows_created ON sso_flows (created_at);
