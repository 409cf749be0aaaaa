-- A person's single sign-on identity (contract section 17): the provider's issuer and `sub`, kept at
-- the first sign-in. Later sign-ins find the person by it; another provider account that claims the
-- same email address is refused instead of taking the person over.
ALTER TABLE people ADD COLUMN sso_subject text;
CREATE UNIQUE INDEX people_sso_subject ON people (sso_subject) WHERE sso_subject IS NOT NULL;
