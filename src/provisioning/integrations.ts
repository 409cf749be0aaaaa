// The provisioning file's radio edge devices, messaging accounts and webhook endpoints: checked by
// the rules section 18's operations use (webhooks/endpoint-rules.ts), written by the stores those
// operations use, each made the file's. An object administration made that the file names is taken
// over by the file, with an audit entry saying so (section 18).
import { fileProblems, type FieldProblem } from '../admin/field-problems.ts';
import { provisioningActor, writeAudit } from '../audit/record.ts';
import type { Queryable, Tx } from '../db/db.ts';
import { EVENT_TYPES } from '../events/log.ts';
import { sha256hex } from '../http/secrets.ts';
import { upsertFileAccount, upsertFileEdge } from '../radio/admin/edge-store.ts';
import { DEFAULT_ANNOUNCE_CFH } from '../radio/admin/edge-rules.ts';
import { upsertFileEndpoint } from '../webhooks/admin/endpoint-store.ts';
import { endpointProblems, secretFor, shownUrl } from '../webhooks/endpoint-rules.ts';
import { entry, organizationOfLocation, ProvisioningError, type ProvisioningSummary } from './apply.ts';
import type { ProvisioningFile } from './schema.ts';

type Target = { type: string; id: string | number; name: string };

/** The audit entry of an administration-made object the file now manages. */
async function takenOver(q: Queryable, source: string | null, organizationId: number, locationId: number | null, target: Target, now: Date) {
  await writeAudit(
    q,
    {
      actor: provisioningActor(source),
      action: `${target.type}.taken_over`,
      target,
      organizationId,
      locationId,
      changes: { managed_by: { from: 'admin', to: 'file' } },
    },
    now,
  );
}

function refuse(where: string, problems: readonly FieldProblem[]): void {
  if (problems.length > 0) throw new ProvisioningError(fileProblems(where, problems));
}

export async function applyIntegrations(q: Tx, file: ProvisioningFile, summary: ProvisioningSummary, source: string | null, now: Date): Promise<void> {
  for (const [i, e] of (file.radio_edges ?? []).entries()) {
    const where = `radio_edges[${i}]`;
    await entry(where, async () => {
      const organizationId = await organizationOfLocation(q, where, e.location_id);
      const fields = {
        organizationId,
        locationId: e.location_id,
        name: e.name,
        voiceHandlers: e.voice_handlers ?? [],
        announceCfh: e.announce_cfh ?? DEFAULT_ANNOUNCE_CFH,
        voiceActions: e.voice_actions ?? false,
        enabled: e.enabled ?? true,
      };
      const before = await upsertFileEdge(q, e.edge_id, fields, sha256hex(e.device_key), now);
      // A key or enabled the file changed ends the device's open MQTT session, on every instance.
      if (before !== undefined) q.signal('device_keys');
      if (before?.managed_by === 'admin') await takenOver(q, source, organizationId, e.location_id, { type: 'radio_edge', id: e.edge_id, name: e.name }, now);
    });
    summary.radio_edges++;
  }
  for (const [i, a] of (file.messaging_accounts ?? []).entries()) {
    await entry(`messaging_accounts[${i}]`, async () => {
      const before = await upsertFileAccount(q, a.account_sid, a.organization_id, a.auth_token, a.enabled ?? true, now);
      if (before?.managed_by === 'admin') {
        await takenOver(q, source, a.organization_id, null, { type: 'messaging_account', id: a.account_sid, name: a.account_sid }, now);
      }
    });
    summary.messaging_accounts++;
  }
  for (const [i, w] of (file.webhooks ?? []).entries()) {
    const where = `webhooks[${i}]`;
    await entry(where, async () => {
      const format = w.format ?? 'signed';
      refuse(where, endpointProblems({ url: w.url, format, secret: w.secret }, { secretRequired: true }));
      const locationId = w.location_id ?? null;
      if (locationId !== null && (await organizationOfLocation(q, where, locationId)) !== w.organization_id) {
        throw new ProvisioningError(`${where}.location_id: location ${locationId} is not of organization ${w.organization_id}`);
      }
      const fields = { organizationId: w.organization_id, locationId, url: w.url, format, events: w.events ?? EVENT_TYPES, enabled: w.enabled ?? true };
      const { before } = await upsertFileEndpoint(q, w.id, fields, { given: w.secret, ifNew: secretFor(w.secret) }, now);
      if (before?.managed_by === 'admin') {
        await takenOver(q, source, w.organization_id, locationId, { type: 'webhook', id: w.id, name: shownUrl(w.url, format) }, now);
      }
    });
    summary.webhooks = (summary.webhooks ?? 0) + 1;
  }
}
