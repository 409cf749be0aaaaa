// Section 18's radio edge devices: listRadioEdges, createRadioEdge, updateRadioEdge, deleteRadioEdge
// and rotateRadioEdgeKey, each one transaction with its rules and its audit entry. An edge device is
// its location's: that location's admins manage it. Live on every instance with nothing cached: a
// key is checked against the database at each request and MQTT connection (devices/credentials.ts),
// so a rotated key or a disabled device is refused at its next one, and a disabled device is no
// longer announced to (radio/announce-store.ts).
import { locationVerdict } from '../../access/locations.ts';
import type { OrganizationActor } from '../../access/actor.ts';
import { checkNotFileManaged, forbidden, scopeOf, type AdminScope } from '../../admin/rules.ts';
import { auditActorOf, changesBetween, SECRET_CHANGE, writeAudit, type AuditChanges, type AuditOrigin } from '../../audit/record.ts';
import type { Clock } from '../../clock.ts';
import type { Db, Queryable } from '../../db/db.ts';
import { AppError, invalid, notFound } from '../../http/errors.ts';
import { checkVersion, type ExpectedVersions } from '../../http/if-match.ts';
import { sha256hex } from '../../http/secrets.ts';
import { deleteEdge, edgeHasHistory, edgeOfOrganization, insertEdge, listVisibleEdges, updateEdge, type EdgeFields, type EdgeRow } from './edge-store.ts';
import { DEFAULT_ANNOUNCE_CFH, newDeviceKey, newEdgeId } from './edge-rules.ts';
import type { NewRadioEdge, RadioEdgeChange } from './schemas.ts';
import { auditedEdge } from './views.ts';

export interface RadioAdminDeps {
  db: Db;
  clock: Clock;
}

export interface Acting {
  actor: OrganizationActor;
  origin: AuditOrigin;
}

export async function listRadioEdges(deps: RadioAdminDeps, actor: OrganizationActor): Promise<EdgeRow[]> {
  return listVisibleEdges(deps.db, scopeOf(actor));
}

/** 404 out of the actor's reach (422 for a location named in a body), 403 seen but not administered. */
async function checkLocation(q: Queryable, actor: OrganizationActor, locationId: number, field?: string): Promise<void> {
  const verdict = await locationVerdict(q, actor, locationId, 'administer');
  if (verdict === 'unknown') {
    if (field !== undefined) throw invalid(field, `location ${locationId} not found`);
    throw notFound('edge device');
  }
  if (verdict === 'visible') throw forbidden(`you do not administer location ${locationId}`);
}

async function changeable(q: Queryable, actor: OrganizationActor, scope: AdminScope, edgeId: string): Promise<EdgeRow> {
  const row = await edgeOfOrganization(q, scope.organizationId, edgeId, true);
  if (row === undefined) throw notFound('edge device');
  await checkLocation(q, actor, row.location_id);
  return row;
}

function audit(q: Queryable, acting: Acting, now: Date) {
  return (action: string, row: EdgeRow, changes: AuditChanges) =>
    writeAudit(
      q,
      {
        actor: auditActorOf(acting.actor),
        action,
        target: { type: 'radio_edge', id: row.edge_id, name: row.name },
        organizationId: row.organization_id,
        locationId: row.location_id,
        changes,
        origin: acting.origin,
      },
      now,
    );
}

const taken = (what: string) => new AppError(409, 'id_taken', what);

/** A new edge device; its key (made when not given) is in the answer, once. */
export async function createRadioEdge(deps: RadioAdminDeps, acting: Acting, body: NewRadioEdge): Promise<{ row: EdgeRow; deviceKey: string }> {
  const scope = scopeOf(acting.actor);
  const deviceKey = body.device_key ?? newDeviceKey();
  const edgeId = body.edge_id ?? newEdgeId();
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    await checkLocation(q, acting.actor, body.location_id, 'location_id');
    const fields: EdgeFields = {
      organizationId: scope.organizationId,
      locationId: body.location_id,
      name: body.name,
      voiceHandlers: body.voice_handlers ?? [],
      announceCfh: body.announce_cfh ?? DEFAULT_ANNOUNCE_CFH,
      voiceActions: body.voice_actions ?? false,
      enabled: body.enabled ?? true,
    };
    const row = await insertEdge(q, edgeId, fields, sha256hex(deviceKey), now);
    // The id, or (a key given twice) the key: either way the answer tells nothing of another organization's devices.
    if (row === undefined) throw taken(`an edge device has this edge_id${body.device_key === undefined ? '' : ' or this device_key'}`);
    await audit(q, acting, now)('radio_edge.created', row, { ...changesBetween(null, auditedEdge(row)), device_key: { from: null, to: SECRET_CHANGE } });
    return { row, deviceKey };
  });
}

export async function updateRadioEdge(
  deps: RadioAdminDeps,
  acting: Acting,
  edgeId: string,
  body: RadioEdgeChange,
  expected: ExpectedVersions,
): Promise<EdgeRow> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const before = await changeable(q, acting.actor, scope, edgeId);
    checkNotFileManaged(before.managed_by, 'this edge device');
    checkVersion(expected, before.version);
    if (body.location_id !== undefined && body.location_id !== before.location_id) await checkLocation(q, acting.actor, body.location_id, 'location_id');
    const row = await updateEdge(
      q,
      edgeId,
      {
        organizationId: before.organization_id,
        locationId: body.location_id ?? before.location_id,
        name: body.name ?? before.name,
        voiceHandlers: body.voice_handlers ?? before.voice_handlers,
        announceCfh: body.announce_cfh ?? before.announce_cfh,
        voiceActions: body.voice_actions ?? before.voice_actions,
        enabled: body.enabled ?? before.enabled,
      },
      null,
      now,
    );
    // A disabled device's open MQTT session ends now, on every instance.
    if (row.enabled !== before.enabled) q.signal('device_keys');
    await audit(q, acting, now)('radio_edge.updated', row, changesBetween(auditedEdge(before), auditedEdge(row)));
    return row;
  });
}

/** A new key, shown once; the old one is refused from the device's next request or connection on. */
export async function rotateRadioEdgeKey(
  deps: RadioAdminDeps,
  acting: Acting,
  edgeId: string,
  expected: ExpectedVersions | null,
): Promise<{ row: EdgeRow; deviceKey: string }> {
  const scope = scopeOf(acting.actor);
  const deviceKey = newDeviceKey();
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const before = await changeable(q, acting.actor, scope, edgeId);
    checkNotFileManaged(before.managed_by, 'this edge device');
    if (expected !== null) checkVersion(expected, before.version);
    const row = await updateEdge(
      q,
      edgeId,
      {
        organizationId: before.organization_id,
        locationId: before.location_id,
        name: before.name,
        voiceHandlers: before.voice_handlers,
        announceCfh: before.announce_cfh,
        voiceActions: before.voice_actions,
        enabled: before.enabled,
      },
      sha256hex(deviceKey),
      now,
    );
    // The old key's open MQTT session ends now, on every instance.
    q.signal('device_keys');
    await audit(q, acting, now)('radio_edge.key_rotated', row, { device_key: { from: SECRET_CHANGE, to: SECRET_CHANGE } });
    return { row, deviceKey };
  });
}

/** Deletes an edge device that never played or heard anything; one with history is retired (enabled: false). */
export async function deleteRadioEdge(deps: RadioAdminDeps, acting: Acting, edgeId: string, expected: ExpectedVersions): Promise<void> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    const row = await changeable(q, acting.actor, scope, edgeId);
    checkNotFileManaged(row.managed_by, 'this edge device');
    checkVersion(expected, row.version);
    if (await edgeHasHistory(q, edgeId)) {
      throw new AppError(409, 'in_use', 'this edge device has played or heard messages: retire it with enabled: false instead (its transcripts stay)');
    }
    await deleteEdge(q, edgeId);
    await audit(q, acting, now)('radio_edge.deleted', row, changesBetween(auditedEdge(row), null));
  });
}
