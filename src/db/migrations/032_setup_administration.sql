-- Section 18: the store's setup administered live. Each object of locations, lockers, CFH options,
-- outcomes, call buttons and displays carries its version (each change increases it), its owner
-- (the provisioning file or administration) and whether it is in service (enabled: false retires
-- it and keeps its history). Every row here came from a provisioning file, so it is the file's.
-- A locker's `version` is its protocol version (section 7), so its object version is `object_version`.
ALTER TABLE locations
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin'));
ALTER TABLE lockers
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN object_version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin'));
ALTER TABLE cfh_options
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin'));
ALTER TABLE cfh_outcomes
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin'));
ALTER TABLE call_buttons
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin'));
ALTER TABLE cfh_displays
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN managed_by text NOT NULL DEFAULT 'file' CHECK (managed_by IN ('file', 'admin'));

-- Ids administration gives when a body names none. The file names its own ids, so these only
-- propose one: an insert takes the larger of the proposal and the table's highest id plus one.
CREATE SEQUENCE locations_admin_id OWNED BY locations.id;
CREATE SEQUENCE lockers_admin_id OWNED BY lockers.id;
CREATE SEQUENCE cabinets_admin_id OWNED BY cabinets.id;
CREATE SEQUENCE cfh_options_admin_id OWNED BY cfh_options.id;
CREATE SEQUENCE cfh_outcomes_admin_id OWNED BY cfh_outcomes.id;
CREATE SEQUENCE call_buttons_admin_id OWNED BY call_buttons.id;
CREATE SEQUENCE cfh_displays_admin_id OWNED BY cfh_displays.id;
