// Section 18's CFH options, outcomes, call buttons and displays over HTTP (admin/object-routes.ts
// gives each its list, read, create, update and delete), and a display's key: made with it or
// rotated (shown in that answer only), and its QR code (getDisplayQr) for the printed sheet.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import QRCode from 'qrcode';
import { adminAuth, administratorOf } from '../../admin/auth.ts';
import { rotateKeyOf } from '../../admin/keys.ts';
import { actingOf, objectRoutes, type ObjectRouteDeps } from '../../admin/object-routes.ts';
import { getOf, type Entry, type ObjectKind } from '../../admin/objects.ts';
import type { ObjectRow } from '../../admin/object-store.ts';
import { ADMIN_ERRORS, IdParams, security, tags, VERSION_ERRORS, VersionQuery } from '../../admin/schemas.ts';
import { sql } from '../../db/sql.ts';
import { invalid } from '../../http/errors.ts';
import { etagOf, expectedVersions } from '../../http/if-match.ts';
import { BODY_ERRORS, errorResponses } from '../../http/schemas.ts';
import { matchesDigest, sha256hex } from '../../http/secrets.ts';
import { makeKey } from '../../provisioning/entries.ts';
import { buttonKind, displayKind, optionKind, outcomeKind, type DisplayRow } from './kinds.ts';
import { createScanned, scanCodeRoutes } from './scan-code-routes.ts';
import { ButtonSchemas, DisplaySchemas, OptionSchemas, OutcomeSchemas, QrQuery } from './schemas.ts';

export interface CfhAdminDeps extends ObjectRouteDeps {
  publicBaseUrl: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const kindOf = <R extends ObjectRow>(kind: ObjectKind<R, any>) => kind as unknown as ObjectKind<R, Entry>;
const viewOf = (row: ObjectRow) => row as unknown as Record<string, unknown>;

export const cfhOptionRoutes = objectRoutes({
  path: '/api/admin/cfh_options',
  kind: kindOf(optionKind),
  plural: 'CFH options',
  operations: { list: 'listCfhOptions', create: 'createCfhOption', update: 'updateCfhOption', delete: 'deleteCfhOption' },
  schemas: OptionSchemas,
  view: viewOf,
  create: (deps, acting, body) => createScanned(deps, kindOf(optionKind), acting, body),
  descriptions: {
    create:
      'With `require_scan: true`, its `scan_code` is made and shown in this answer only (section 19). ' +
      'For the whole organization (`location_id` absent or null: organization admins only) or for one location (an override a location ' +
      'admin may make at its locations). Its texts and prompts in English and French; `staff_action` what staff do when they take it.',
    update: 'Changes the fields sent.',
    delete: 'An option requests or buttons refer to is kept.',
  },
});

export const cfhOutcomeRoutes = objectRoutes({
  path: '/api/admin/cfh_outcomes',
  kind: kindOf(outcomeKind),
  plural: 'CFH outcomes',
  operations: { list: 'listCfhOutcomes', create: 'createCfhOutcome', update: 'updateCfhOutcome', delete: 'deleteCfhOutcome' },
  schemas: OutcomeSchemas,
  view: viewOf,
  descriptions: { create: "One of a location's outcomes: its `key` (unique at the location) and texts.", update: 'Changes the fields sent.' },
});

export const callButtonRoutes = objectRoutes({
  path: '/api/admin/call_buttons',
  kind: kindOf(buttonKind),
  plural: 'call buttons',
  operations: { list: 'listCallButtons', get: 'getCallButton', create: 'createCallButton', update: 'updateCallButton', delete: 'deleteCallButton' },
  schemas: ButtonSchemas,
  view: viewOf,
  create: (deps, acting, body) => createScanned(deps, kindOf(buttonKind), acting, body),
  descriptions: {
    create:
      'With `require_scan: true`, its `scan_code` is made and shown in this answer only (section 19). ' +
      "Its first press (B1) works at once, on every instance. `device_key` is the button's MAC address as its hub sends it (one per " +
      'organization, any case): an identifier the hardware has, not a secret the service makes.',
    update: '`enabled: false` refuses its next press.',
    delete: 'A button that made requests is kept.',
  },
});

/** The customer page a display's QR code holds. */
export const displayUrl = (publicBaseUrl: string, key: string) => `${publicBaseUrl}/help/${encodeURIComponent(key)}`;

const withKey = (publicBaseUrl: string, row: DisplayRow, key: string) => ({ row, secret: { key, url: displayUrl(publicBaseUrl, key) } });

async function createDisplay(deps: ObjectRouteDeps & { publicBaseUrl: string }, acting: ReturnType<typeof actingOf>, body: Record<string, unknown>) {
  const key = typeof body.key === 'string' ? body.key : makeKey();
  const made = await createScanned(deps, kindOf(displayKind), acting, { ...body, key });
  const shown = withKey(deps.publicBaseUrl, made.row as DisplayRow, key);
  return { row: shown.row, secret: { ...shown.secret, ...made.secret } };
}

export function displayRoutes(publicBaseUrl: string) {
  return objectRoutes<DisplayRow>({
    path: '/api/admin/displays',
    kind: kindOf(displayKind),
    plural: 'displays',
    operations: { list: 'listDisplays', get: 'getDisplay', create: 'createDisplay', update: 'updateDisplay', delete: 'deleteDisplay' },
    schemas: DisplaySchemas,
    view: viewOf,
    descriptions: {
      create:
        'Its `key` (the customer page URL and credential) is made by the service when not given, and shown in this answer only, with its ' +
        'page `url`: print its QR code (getDisplayQr) now, or after a rotation (rotateDisplayKey).',
      update: "`option_ids` are options of the display's location (1 to 4). `enabled: false` closes its page at once.",
      delete: 'A display that made requests is kept.',
    },
    create: (deps, acting, body) => createDisplay({ ...deps, publicBaseUrl }, acting, body),
  });
}

/** rotateCfhOptionScanCode, rotateCallButtonScanCode, rotateDisplayScanCode. */
export const cfhScanCodeRoutes = scanCodeRoutes([
  {
    path: '/api/admin/cfh_options',
    kind: kindOf(optionKind),
    operationId: 'rotateCfhOptionScanCode',
    View: OptionSchemas.View,
    title: 'RotatedCfhOptionScanCode',
  },
  {
    path: '/api/admin/call_buttons',
    kind: kindOf(buttonKind),
    operationId: 'rotateCallButtonScanCode',
    View: ButtonSchemas.View,
    title: 'RotatedCallButtonScanCode',
  },
  {
    path: '/api/admin/displays',
    kind: kindOf(displayKind),
    operationId: 'rotateDisplayScanCode',
    View: DisplaySchemas.View,
    title: 'RotatedCfhDisplayScanCode',
  },
]);

/** rotateDisplayKey and getDisplayQr. */
export async function displayKeyRoutes(fastify: FastifyInstance, deps: CfhAdminDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = adminAuth(deps);
  const notFound = errorResponses({ 404: 'no such display (or one you do not administer)', 422: 'id is not valid' });

  app.post(
    '/api/admin/displays/:id/key',
    {
      onRequest,
      schema: {
        operationId: 'rotateDisplayKey',
        tags,
        security,
        summary: "Make a display's key anew",
        description:
          "A display's key is shown only when made or rotated (section 18): this makes a new one, shown in this answer only with its page `url`. " +
          'The old key (and its printed QR code) is refused at its next use on every instance. Send the version (`If-Match` or `?version=`).',
        params: IdParams,
        querystring: VersionQuery,
        response: {
          200: DisplaySchemas.Rotated,
          ...ADMIN_ERRORS,
          ...notFound,
          ...VERSION_ERRORS,
          ...errorResponses({ ...BODY_ERRORS, 409: { description: 'managed_by_file: the file holds its key', codes: ['managed_by_file'] } }),
        },
      },
    },
    async (request, reply) => {
      const expected = expectedVersions(request, request.query.version);
      const { row, key } = await rotateKeyOf(deps, kindOf(displayKind), actingOf(request), request.params.id, expected, async (tx, id, made) => {
        await tx.run(sql`UPDATE cfh_displays SET key_hash = ${sha256hex(made)} WHERE id = ${id}`);
      });
      void reply.header('etag', etagOf(row.version));
      return { ...(viewOf(row) as never as DisplayRow), key, url: displayUrl(deps.publicBaseUrl, key) } as never;
    },
  );

  app.get(
    '/api/admin/displays/:id/qr',
    {
      onRequest,
      schema: {
        operationId: 'getDisplayQr',
        tags,
        security,
        summary: "A display's QR code (SVG)",
        description:
          "The QR code of the display's customer page, `PUBLIC_BASE_URL/help/{key}`, as image/svg+xml. The key is kept only as its digest, so the " +
          "caller gives it (`display_key`, as shown when the display was made or its key rotated); a key that is not the display's is 422.",
        params: IdParams,
        querystring: QrQuery,
        response: {
          200: { description: 'the QR code', content: { 'image/svg+xml': { schema: Type.String() } } },
          ...ADMIN_ERRORS,
          ...errorResponses({ 404: 'no such display (or one you do not administer)', 422: 'display_key is not the display’s key' }),
        },
      },
    },
    async (request, reply) => {
      const row = await getOf(deps, kindOf(displayKind), administratorOf(request), request.params.id);
      const [stored] = await deps.db.query<{ key_hash: string }>('SELECT key_hash FROM cfh_displays WHERE id = $1', [row.id]);
      if (stored === undefined || !matchesDigest(request.query.display_key, stored.key_hash)) {
        throw invalid('display_key', "is not this display's key (it changes when rotated)");
      }
      const svg = await QRCode.toString(displayUrl(deps.publicBaseUrl, request.query.display_key), { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
      return reply.type('image/svg+xml').header('cache-control', 'no-store').send(svg);
    },
  );
}
