// Wire formats of section 18's webhook endpoints: never a secret; a Slack or Teams URL (itself the
// secret) masked. A signed endpoint's secret is shown in the answer that makes it, only.
import { shownUrl } from '../endpoint-rules.ts';
import type { EndpointRow } from './endpoint-store.ts';

export function webhookView(row: EndpointRow) {
  return {
    id: row.id,
    organization_id: row.organization_id,
    location_id: row.location_id,
    url: shownUrl(row.url, row.format),
    format: row.format,
    events: row.events,
    enabled: row.enabled,
    version: row.version,
    managed_by: row.managed_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** What the audit log shows of an endpoint: a chat URL is a secret ("[secret]" when it changes). */
export const auditedEndpoint = (row: Pick<EndpointRow, 'location_id' | 'url' | 'format' | 'events' | 'enabled'>) => ({
  location_id: row.location_id,
  url: row.url,
  format: row.format,
  events: row.events,
  enabled: row.enabled,
});
