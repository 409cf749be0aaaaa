// Scan codes (contract section 19): the secret printed as a QR code on a call button or beside a
// display (or kept for an option), which an associate scans to prove they reached the customer
// before completing. The service makes each one, shows it once (provisioning's apply output, the
// `scan-code` command, section 18's create and rotate answers) and keeps only its SHA-256 digest.
// A code is typed as easily as scanned: 130 random bits in 26 letters and digits of Crockford's
// base 32 (no I, L, O, U), grouped by dashes; case, spaces and dashes do not matter when it is checked.
import crypto from 'node:crypto';
import { SECRET_CHANGE, writeAudit, type AuditActor, type AuditOrigin } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/db.ts';
import { sha256hex } from '../http/secrets.ts';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** What has a scan code, by its table. */
export const SCAN_TARGETS = { cfh_option: 'cfh_options', call_button: 'call_buttons', display: 'cfh_displays' } as const;
export type ScanTarget = keyof typeof SCAN_TARGETS;

/** A new scan code: `XXXXX-XXXXX-XXXXX-XXXXX-XXXXXX`. */
export function newScanCode(): string {
  const bytes = crypto.randomBytes(26);
  let code = '';
  for (let i = 0; i < 26; i++) code += ALPHABET[(bytes[i] as number) % 32];
  return code.replace(/^(.{5})(.{5})(.{5})(.{5})(.{6})$/, '$1-$2-$3-$4-$5');
}

/** A code as it is compared: what a person types or a camera reads, without case, spaces or dashes,
 * and with the letters Crockford's base 32 reads as digits (O as 0, I and L as 1). Null: not a code. */
export function normalizeScanCode(input: string): string | null {
  const code = input
    .toUpperCase()
    .replace(/[\s-]+/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
  return /^[0-9A-HJKMNP-TV-Z]{26}$/.test(code) ? code : null;
}

/** The digest a code is kept as. */
export function scanCodeDigest(code: string): string {
  return sha256hex(normalizeScanCode(code) ?? code);
}

/**
 * Makes a new scan code for an option, button or display and keeps its digest (the old code stops
 * working at once); the code, to be shown once, or null when there is no such object. Called in the
 * transaction of the operation that makes or rotates it, which writes its audit entry.
 */
export async function setScanCode(q: Queryable, target: ScanTarget, id: number, now: Date): Promise<string | null> {
  const code = newScanCode();
  const rows = await q.query(`UPDATE ${SCAN_TARGETS[target]} SET scan_code_hash = $2, updated_at = $3 WHERE id = $1 RETURNING id`, [
    id,
    scanCodeDigest(code),
    now,
  ]);
  return rows.length === 0 ? null : code;
}

/** The objects of these tables with require_scan and no code yet (provisioning makes theirs). */
export async function missingScanCodes(q: Queryable, ids: { target: ScanTarget; id: number }[]): Promise<{ target: ScanTarget; id: number }[]> {
  const missing: { target: ScanTarget; id: number }[] = [];
  for (const target of Object.keys(SCAN_TARGETS) as ScanTarget[]) {
    const wanted = ids.filter((x) => x.target === target).map((x) => x.id);
    if (wanted.length === 0) continue;
    const rows = await q.query<{ id: number }>(
      `SELECT id FROM ${SCAN_TARGETS[target]} WHERE id = ANY ($1::int[]) AND require_scan AND scan_code_hash IS NULL ORDER BY id`,
      [wanted],
    );
    for (const r of rows) missing.push({ target, id: r.id });
  }
  return missing;
}

/** The audit log's word for each target's rotation, and its target type. */
const AUDIT_TARGET: Record<ScanTarget, string> = { cfh_option: 'cfh_option', call_button: 'call_button', display: 'display' };

/**
 * Rotates an object's scan code (or gives it its first), in a transaction of its own, with its audit
 * entry (the code shows as "[secret]"): the new code, shown once, or null when there is no such
 * object. The `scan-code` command calls it; section 18's rotate operations can too.
 */
export async function rotateScanCode(
  deps: { db: Db; clock: Clock },
  actor: AuditActor,
  target: ScanTarget,
  id: number,
  origin?: AuditOrigin,
): Promise<string | null> {
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const [place] = await q.query<{ organization_id: number; location_id: number | null }>(
      `SELECT organization_id, location_id FROM ${SCAN_TARGETS[target]} WHERE id = $1`,
      [id],
    );
    if (place === undefined) return null;
    const code = await setScanCode(q, target, id, now);
    await writeAudit(
      q,
      {
        actor,
        action: `${AUDIT_TARGET[target]}.scan_code_rotated`,
        target: { type: AUDIT_TARGET[target], id },
        organizationId: place.organization_id,
        locationId: place.location_id,
        changes: { scan_code: { from: SECRET_CHANGE, to: SECRET_CHANGE } },
        ...(origin === undefined ? {} : { origin }),
      },
      now,
    );
    return code;
  });
}
