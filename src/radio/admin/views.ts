// Wire formats of section 18's radio edge devices and messaging accounts: never a key or an auth
// token (a device key is shown in the answer that makes or rotates it, only).
import type { AccountRow, EdgeRow } from './edge-store.ts';

export function edgeView(row: EdgeRow) {
  return {
    edge_id: row.edge_id,
    organization_id: row.organization_id,
    location_id: row.location_id,
    name: row.name,
    voice_handlers: row.voice_handlers,
    announce_cfh: row.announce_cfh,
    voice_actions: row.voice_actions,
    enabled: row.enabled,
    version: row.version,
    managed_by: row.managed_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** What the audit log shows of an edge device (its key only as "[secret]", by the use case). */
export const auditedEdge = (row: EdgeRow) => ({
  location_id: row.location_id,
  name: row.name,
  voice_handlers: row.voice_handlers,
  announce_cfh: row.announce_cfh,
  voice_actions: row.voice_actions,
  enabled: row.enabled,
});

export function accountView(row: AccountRow) {
  return {
    account_sid: row.account_sid,
    organization_id: row.organization_id,
    enabled: row.enabled,
    version: row.version,
    managed_by: row.managed_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
