-- A token may be limited to some of its organization's locations (contract section 2): a location
-- outside them is treated as another organization's. NULL: every location of the organization.
ALTER TABLE api_tokens ADD COLUMN location_ids integer[];
