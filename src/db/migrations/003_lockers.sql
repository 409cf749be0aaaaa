-- Locker orders, the log of cabinet commands, what customers did with an open code, and what
-- locker devices reported. Keep to PostgreSQL 15.

CREATE TABLE locker_orders (
  id serial PRIMARY KEY,
  -- The caller's own order number; JSON integers up to 2^53 fit.
  order_id bigint NOT NULL,
  cabinet_id integer NOT NULL REFERENCES cabinets (id),
  locker_id integer NOT NULL REFERENCES lockers (id),
  organization_id integer NOT NULL REFERENCES organizations (id),
  location_id integer NOT NULL REFERENCES locations (id),
  open_code text NOT NULL,
  -- Part of what makes a replayed creation identical to the first one.
  rearload boolean NOT NULL,
  app_owner_id integer,
  application text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  completed_by bigint,
  completed_device_id bigint,
  canceled_at timestamptz
);
CREATE UNIQUE INDEX locker_orders_open_code ON locker_orders (open_code);
-- The rule "at most one open order per cabinet", however many requests race.
CREATE UNIQUE INDEX locker_orders_one_open_per_cabinet ON locker_orders (cabinet_id)
  WHERE completed_at IS NULL AND canceled_at IS NULL;
-- The cabinet's latest order (a repeated completion by cabinet, the order_id check of L3).
CREATE INDEX locker_orders_cabinet_latest ON locker_orders (cabinet_id, id DESC);

-- Every command a cabinet was given (L3 by staff, an open by a customer's agree), with who gave it.
-- command_id is also the id of the device message that carries it.
CREATE TABLE cabinet_commands (
  id bigserial PRIMARY KEY,
  command_id uuid NOT NULL UNIQUE,
  cabinet_id integer NOT NULL REFERENCES cabinets (id),
  locker_id integer NOT NULL REFERENCES lockers (id),
  command text NOT NULL CHECK (command IN ('resize', 'set_thermal_mode', 'disable', 'enable', 'open', 'close')),
  door text NOT NULL CHECK (door IN ('front', 'rear')),
  source text NOT NULL CHECK (source IN ('staff', 'customer')),
  acted_by bigint,
  order_id text,
  reason text,
  size text,
  thermal_mode text,
  delay_seconds integer,
  created_at timestamptz NOT NULL,
  -- When it takes (or took) effect: created_at, or later for a delayed close.
  run_at timestamptz NOT NULL,
  executed_at timestamptz,
  -- A delayed close overtaken by another command on the same door before it ran.
  canceled_at timestamptz
);
CREATE INDEX cabinet_commands_cabinet ON cabinet_commands (cabinet_id, id);
CREATE INDEX cabinet_commands_pending ON cabinet_commands (cabinet_id, door)
  WHERE executed_at IS NULL AND canceled_at IS NULL;

-- What the customer did with the open code (L5).
CREATE TABLE locker_order_events (
  id bigserial PRIMARY KEY,
  locker_order_id integer NOT NULL REFERENCES locker_orders (id),
  kind text NOT NULL CHECK (kind IN ('here', 'agree', 'disagree')),
  created_at timestamptz NOT NULL
);
CREATE INDEX locker_order_events_order ON locker_order_events (locker_order_id, id);

-- Events a version 2 locker reported with its status (L7).
CREATE TABLE locker_status_events (
  id bigserial PRIMARY KEY,
  locker_id integer NOT NULL REFERENCES lockers (id),
  type text NOT NULL,
  event jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX locker_status_events_locker ON locker_status_events (locker_id, id);
