// Single sign-on's SQL: the flows in progress (this file is the one writer of `sso_flows`) and the
// SSO role mappings a sign-in's claim values match.
import type { Queryable } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import type { Role } from '../access/actor.ts';
import type { OidcFlow } from './oidc.ts';

/** A flow is good for this long: a person at the provider's login page takes minutes, not hours. */
export const SSO_FLOW_SECONDS = 10 * 60;

export async function storeFlow(q: Queryable, browserHash: string, flow: OidcFlow, now: Date): Promise<void> {
  await q.run(sql`
    INSERT INTO sso_flows (browser_hash, state, nonce, code_verifier, return_to, created_at)
    VALUES (${browserHash}, ${flow.state}, ${flow.nonce}, ${flow.codeVerifier}, ${flow.returnTo}, ${now})
    ON CONFLICT (browser_hash) DO UPDATE SET state = EXCLUDED.state, nonce = EXCLUDED.nonce, code_verifier = EXCLUDED.code_verifier,
      return_to = EXCLUDED.return_to, created_at = EXCLUDED.created_at`);
  // Abandoned flows (a closed tab at the login page) are forgotten by later ones.
  await q.run(sql`DELETE FROM sso_flows WHERE browser_hash IN (
    SELECT browser_hash FROM sso_flows WHERE created_at < ${now}::timestamptz - ${SSO_FLOW_SECONDS} * interval '1 second' LIMIT 20)`);
}

/** The browser's flow, deleted as it is read (a replayed callback finds none); undefined when it expired. */
export async function takeFlow(q: Queryable, browserHash: string, now: Date): Promise<OidcFlow | undefined> {
  const [row] = await q.run<{ state: string; nonce: string; code_verifier: string; return_to: string; fresh: boolean }>(sql`
    DELETE FROM sso_flows WHERE browser_hash = ${browserHash}
    RETURNING state, nonce, code_verifier, return_to, created_at > ${now}::timestamptz - ${SSO_FLOW_SECONDS} * interval '1 second' AS fresh`);
  if (row === undefined || !row.fresh) return undefined;
  return { state: row.state, nonce: row.nonce, codeVerifier: row.code_verifier, returnTo: row.return_to };
}

export interface MatchedMapping {
  organization_id: number;
  role: Role;
  location_ids: number[] | null;
}

/** The mappings whose claim value the person's claim holds, over locations that still exist. */
export function matchingMappings(q: Queryable, claimValues: readonly string[]): Promise<MatchedMapping[]> {
  return q.run<MatchedMapping>(sql`
    SELECT m.organization_id, m.role,
      (SELECT array_agg(l.id ORDER BY l.id) FROM locations l WHERE l.id = ANY (m.location_ids) AND l.organization_id = m.organization_id) AS location_ids
    FROM sso_role_mappings m WHERE m.claim_value = ANY (${[...claimValues]}::text[])
    ORDER BY m.organization_id, m.id`);
}
