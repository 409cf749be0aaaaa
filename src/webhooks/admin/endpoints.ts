// Section 18's webhook endpoints: listWebhooks, createWebhook, updateWebhook, deleteWebhook and
// testWebhook, each one transaction with its rules and its audit entry. An endpoint of the whole
// organization is an organization administrator's; one of a location, that location's admins'.
// Changes are live on every instance: the fan-out and the deliverer read endpoints at each batch.
import { locationVerdict } from '../../access/locations.ts';
import type { OrganizationActor } from '../../access/actor.ts';
import { checkNotFileManaged, checkOrganization, forbidden, scopeOf, type AdminScope } from '../../admin/rules.ts';
import { auditActorOf, changesBetween, SECRET_CHANGE, writeAudit, type AuditChanges, type AuditOrigin } from '../../audit/record.ts';
import type { Clock } from '../../clock.ts';
import type { Db, Queryable } from '../../db/db.ts';
import { EVENT_TYPES } from '../../events/log.ts';
import { AppError, notFound } from '../../http/errors.ts';
import { checkVersion, type ExpectedVersions } from '../../http/if-match.ts';
import { refuseProblems } from '../../admin/field-problems.ts';
import { endpointProblems, isChatFormat, secretFor, shownUrl } from '../endpoint-rules.ts';
import type { TestOutcome, TestTarget } from '../test-send.ts';
import {
  deleteEndpoint,
  endpointHasHistory,
  endpointOfOrganization,
  endpointSecret,
  insertEndpoint,
  listVisibleEndpoints,
  locationLanguage,
  updateEndpoint,
  type EndpointFields,
  type EndpointRow,
} from './endpoint-store.ts';
import type { NewWebhook, WebhookChange } from './schemas.ts';
import { auditedEndpoint } from './views.ts';

export interface EndpointAdminDeps {
  db: Db;
  clock: Clock;
  /** Sends one test event to an endpoint now, through the delivery pipeline's POST and formats. */
  sendTest: (target: TestTarget) => Promise<TestOutcome>;
}

export interface Acting {
  actor: OrganizationActor;
  origin: AuditOrigin;
}

export async function listWebhooks(deps: EndpointAdminDeps, actor: OrganizationActor): Promise<EndpointRow[]> {
  return listVisibleEndpoints(deps.db, scopeOf(actor));
}

/** 404 when the location is out of the actor's reach; 403 when it sees it but may not administer it
 * there, or for an organization-wide endpoint when it administers only some locations. */
async function checkPlace(q: Queryable, actor: OrganizationActor, scope: AdminScope, locationId: number | null, field?: string): Promise<void> {
  if (locationId === null) {
    if (scope.locationIds !== null) throw forbidden("an endpoint of the whole organization is for the organization's administrators");
    return;
  }
  const verdict = await locationVerdict(q, actor, locationId, 'administer');
  if (verdict === 'unknown') {
    if (field !== undefined)
      throw new AppError(422, 'validation_failed', `${field}: location ${locationId} not found`, { errors: { [field]: [`location ${locationId} not found`] } });
    throw notFound('webhook endpoint');
  }
  if (verdict === 'visible') throw forbidden(`you do not administer location ${locationId}`);
}

/** The endpoint the actor may change: 404 out of its reach, 403 visible but not its to change. */
async function changeable(q: Queryable, acting: Acting, scope: AdminScope, id: number): Promise<EndpointRow> {
  const row = await endpointOfOrganization(q, scope.organizationId, id, true);
  if (row === undefined) throw notFound('webhook endpoint');
  await checkPlace(q, acting.actor, scope, row.location_id);
  return row;
}

function audit(q: Queryable, acting: Acting, scope: AdminScope, now: Date) {
  return (action: string, row: EndpointRow, changes: AuditChanges) =>
    writeAudit(
      q,
      {
        actor: auditActorOf(acting.actor),
        action,
        target: { type: 'webhook', id: row.id, name: shownUrl(row.url, row.format) },
        organizationId: scope.organizationId,
        locationId: row.location_id,
        changes,
        origin: acting.origin,
      },
      now,
    );
}

/** A new endpoint; a signed one's secret (made when not given) is in the answer, once. */
export async function createWebhook(deps: EndpointAdminDeps, acting: Acting, body: NewWebhook): Promise<{ row: EndpointRow; secret: string | null }> {
  const scope = scopeOf(acting.actor);
  checkOrganization(scope, body.organization_id);
  const format = body.format ?? 'signed';
  refuseProblems(endpointProblems({ url: body.url, format, secret: body.secret }, { secretRequired: false }));
  const fields: EndpointFields = {
    organizationId: scope.organizationId,
    locationId: body.location_id ?? null,
    url: body.url,
    format,
    events: body.events ?? EVENT_TYPES,
    enabled: body.enabled ?? true,
  };
  const secret = secretFor(body.secret);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    await checkPlace(q, acting.actor, scope, fields.locationId, 'location_id');
    const row = await insertEndpoint(q, body.id ?? null, fields, secret, now);
    if (row === undefined) throw new AppError(409, 'id_taken', `webhook endpoint ${body.id} exists already`);
    const chat = isChatFormat(format);
    await audit(
      q,
      acting,
      scope,
      now,
    )('webhook.created', row, {
      ...changesBetween(null, auditedEndpoint(row), chat ? ['url'] : []),
      ...(chat ? {} : { secret: { from: null, to: SECRET_CHANGE } }),
    });
    return { row, secret: chat ? null : secret };
  });
}

export async function updateWebhook(
  deps: EndpointAdminDeps,
  acting: Acting,
  id: number,
  body: WebhookChange,
  expected: ExpectedVersions,
): Promise<EndpointRow> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const before = await changeable(q, acting, scope, id);
    checkNotFileManaged(before.managed_by, 'this webhook endpoint');
    checkVersion(expected, before.version);
    const format = body.format ?? before.format;
    // The masked URL a read showed, sent back as it was, is the URL unchanged.
    const url = body.url === undefined || body.url === shownUrl(before.url, before.format) ? before.url : body.url;
    const problems = endpointProblems({ url, format, secret: body.secret }, { secretRequired: false });
    // A signed endpoint turned from a chat one needs the secret its receiver will check.
    if (isChatFormat(before.format) && !isChatFormat(format) && body.secret === undefined) {
      problems.push({ field: 'secret', problem: 'is required when a slack or teams endpoint becomes signed' });
    }
    refuseProblems(problems);
    const locationId = body.location_id === undefined ? before.location_id : body.location_id;
    if (locationId !== before.location_id) await checkPlace(q, acting.actor, scope, locationId, 'location_id');
    const fields: EndpointFields = {
      organizationId: before.organization_id,
      locationId,
      url,
      format,
      events: body.events ?? before.events,
      enabled: body.enabled ?? before.enabled,
    };
    // A chat endpoint keeps (or gets) a secret of the service's own, never used.
    const secret = isChatFormat(format) ? (isChatFormat(before.format) ? undefined : secretFor(undefined)) : body.secret;
    const row = await updateEndpoint(q, id, fields, secret, now);
    const chat = isChatFormat(before.format) || isChatFormat(format);
    const changes = changesBetween(auditedEndpoint(before), auditedEndpoint(row), chat ? ['url'] : []);
    if (body.secret !== undefined) changes.secret = { from: SECRET_CHANGE, to: SECRET_CHANGE };
    await audit(q, acting, scope, now)('webhook.updated', row, changes);
    return row;
  });
}

/** Deletes an endpoint that never delivered anything; one with deliveries is retired (enabled: false). */
export async function deleteWebhook(deps: EndpointAdminDeps, acting: Acting, id: number, expected: ExpectedVersions): Promise<void> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    const row = await changeable(q, acting, scope, id);
    checkNotFileManaged(row.managed_by, 'this webhook endpoint');
    checkVersion(expected, row.version);
    if (await endpointHasHistory(q, id)) {
      throw new AppError(409, 'in_use', 'this endpoint has deliveries: retire it with enabled: false instead (its deliveries stay listed)');
    }
    await deleteEndpoint(q, id);
    await audit(q, acting, scope, now)('webhook.deleted', row, changesBetween(auditedEndpoint(row), null, isChatFormat(row.format) ? ['url'] : []));
  });
}

/** Sends one test event to the endpoint now and says what came back. Changes nothing. */
export async function testWebhook(deps: EndpointAdminDeps, actor: OrganizationActor, id: number): Promise<TestOutcome> {
  const scope = scopeOf(actor);
  const row = await endpointOfOrganization(deps.db, scope.organizationId, id);
  if (row === undefined) throw notFound('webhook endpoint');
  await checkPlace(deps.db, actor, scope, row.location_id);
  const secret = (await endpointSecret(deps.db, id)) ?? '';
  const language = await locationLanguage(deps.db, row.location_id);
  return deps.sendTest({ url: row.url, format: row.format, secret, organizationId: row.organization_id, locationId: row.location_id, language });
}
