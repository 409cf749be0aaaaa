// The wire views of the locker operations: which fields each answer has and how its flags are
// typed (contract section 4: L3 sends enabled/occupied as 1/0, L5 as booleans).
import { orderStatus } from './rules.ts';
import type { CabinetRow, CreatedOrderRow, OrderRecordRow } from './types.ts';

const flag01 = (b: boolean): 0 | 1 => (b ? 1 : 0);

function cabinetCommon(c: CabinetRow) {
  return {
    id: c.id,
    key: c.key,
    created_at: c.created_at,
    updated_at: c.updated_at,
    name: c.name,
    locker_id: c.locker_id,
    state: c.state,
    size: c.size,
    released_at: c.released_at,
    thermal_mode: c.thermal_mode,
    rear_load_status: c.rear_load_status,
    tag: c.tag,
  };
}

/** L3's cabinet: enabled and occupied as 1/0. */
export function commandedCabinetView(c: CabinetRow) {
  return { ...cabinetCommon(c), enabled: flag01(c.enabled), occupied: flag01(c.occupied) };
}

/** L5's cabinet: enabled and occupied as booleans. */
export function customerCabinetView(c: CabinetRow) {
  return { ...cabinetCommon(c), enabled: c.enabled, occupied: c.occupied };
}

/** L2's 201 body: exactly these ten fields. */
export function createdOrderView(o: CreatedOrderRow) {
  return {
    order_id: o.order_id,
    cabinet_id: o.cabinet_id,
    open_code: o.open_code,
    locker_id: o.locker_id,
    organization_id: o.organization_id,
    location_id: o.location_id,
    app_owner_id: o.app_owner_id,
    updated_at: o.updated_at,
    created_at: o.created_at,
    id: o.id,
  };
}

/** L4, L6 and L8: the full order record. */
export function orderRecordView(o: OrderRecordRow) {
  return {
    ...createdOrderView(o),
    completed_at: o.completed_at,
    completed_by: o.completed_by,
    completed_device_id: o.completed_device_id,
    canceled_at: o.canceled_at,
    application: o.application,
    status: orderStatus(o),
    pickup_deadline: o.pickup_deadline,
  };
}

/** L7's answer once a report is applied. */
export const statusReportView = () => ({ message: 'Locker status updated' });
