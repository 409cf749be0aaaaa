-- Section 18's administration of webhook endpoints, radio edge devices and messaging accounts: each
-- carries its version (If-Match), its owner (the provisioning file or administration) and whether it
-- is enabled (a retired object keeps its history: deliveries, played messages, transcripts).
-- Rows that exist were made by the provisioning file. The default owner is the file too, so a file
-- applied by an instance of the previous release (which does not name the owner) still makes its
-- objects the file's; administration names 'admin' itself.

ALTER TABLE webhook_endpoints
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin')),
  ADD COLUMN enabled boolean NOT NULL DEFAULT true;

-- Administration makes endpoints without an id; the file names its own ids (provisioning moves the
-- sequence past them).
CREATE SEQUENCE webhook_endpoints_id_seq OWNED BY webhook_endpoints.id;
SELECT setval('webhook_endpoints_id_seq', coalesce((SELECT max(id) FROM webhook_endpoints), 0) + 1, false);
ALTER TABLE webhook_endpoints ALTER COLUMN id SET DEFAULT nextval('webhook_endpoints_id_seq');

ALTER TABLE radio_edges
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin')),
  ADD COLUMN enabled boolean NOT NULL DEFAULT true;

ALTER TABLE messaging_accounts
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin')),
  ADD COLUMN enabled boolean NOT NULL DEFAULT true;
-- A location admin's radio edges are found by location.
CREATE INDEX IF NOT EXISTS radio_edges_location ON radio_edges (location_id);
