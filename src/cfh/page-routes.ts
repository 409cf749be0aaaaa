// The customer pages over HTTP (docs/cfh.md): GET /help/{display_key} (also at the deployed system's
// QR path, /callforhelp/v1/display/CFH.{display_key}) and GET /help/t/{message_id}. Not API operations (hidden from the OpenAPI document): HTML for a phone,
// in the browser's language when English or French, else the location's (?lang=en|fr overrides), under a content security policy that runs only
// the page's own script (a file of web/, served here under /help-assets/, with the answer's nonce).
import crypto from 'node:crypto';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { customerActor } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import { AppError } from '../http/errors.ts';
import { loadWebFiles, sendWebFile } from '../http/web-files.ts';
import { displayPage } from './displays.ts';
import { notFoundPageHtml, displayPageHtml, PAGE_SCRIPTS_PATH, pageLanguage, trackingPageHtml } from './pages.ts';
import { requestStatus } from './requests.ts';
import { toStatusView } from './views.ts';

/** What the deployed system's QR codes put before a display's key. */
const DEPLOYED_PREFIX = 'CFH.';

const PageQuery = Type.Object({ lang: Type.Optional(Type.String({ maxLength: 10 })) });

function html(reply: FastifyReply, status: number, nonce: string, body: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    )
    .header('referrer-policy', 'no-referrer')
    .send(body);
}

/** A page's 404 is a page too (the customer's phone shows it), in the asked language. */
async function orNotFound(reply: FastifyReply, lang: 'en' | 'fr', nonce: string, render: () => Promise<FastifyReply>): Promise<FastifyReply> {
  try {
    return await render();
  } catch (err) {
    if (err instanceof AppError && err.status === 404) return html(reply, 404, nonce, notFoundPageHtml(lang, nonce));
    throw err;
  }
}

export async function cfhPageRoutes(fastify: FastifyInstance, deps: { db: Queryable }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scripts = loadWebFiles(path.join(import.meta.dirname, 'web'));

  app.get(`${PAGE_SCRIPTS_PATH}:file`, { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } }, async (request, reply) => {
    const file = scripts.get(request.params.file);
    if (file === undefined) return reply.code(404).send({ message: 'no such file', code: 'not_found' });
    return sendWebFile(request, reply.header('x-content-type-options', 'nosniff'), file);
  });

  /** The display's page for its key (null: no key, as the deployed path without its prefix). */
  async function displayAnswer(request: FastifyRequest, reply: FastifyReply, key: string | null, asked: string | undefined): Promise<FastifyReply> {
    const nonce = crypto.randomBytes(16).toString('base64');
    const accept = request.headers['accept-language'];
    return orNotFound(reply, pageLanguage(asked, accept, 'en'), nonce, async () => {
      if (key === null) throw new AppError(404, 'not_found', 'no such display');
      const { display, options } = await displayPage(deps, key);
      const lang = pageLanguage(asked, accept, display.language);
      return html(reply, 200, nonce, displayPageHtml(lang, nonce, key, display, options));
    });
  }

  app.get(
    '/help/:display_key',
    {
      config: { capabilityRoute: true },
      schema: { hide: true, params: Type.Object({ display_key: Type.String({ maxLength: 200 }) }), querystring: PageQuery },
    },
    async (request, reply) => displayAnswer(request, reply, request.params.display_key, request.query.lang),
  );

  // The deployed system's printed QR codes (docs/cfh.md): CFH.<key> is the display of that key.
  app.get(
    '/callforhelp/v1/display/:code',
    {
      config: { capabilityRoute: true },
      schema: { hide: true, params: Type.Object({ code: Type.String({ maxLength: 210 }) }), querystring: PageQuery },
    },
    async (request, reply) => {
      const { code } = request.params;
      return displayAnswer(request, reply, code.startsWith(DEPLOYED_PREFIX) ? code.slice(DEPLOYED_PREFIX.length) : null, request.query.lang);
    },
  );

  app.get(
    '/help/t/:message_id',
    {
      config: { capabilityRoute: true },
      schema: { hide: true, params: Type.Object({ message_id: Type.String({ maxLength: 64 }) }), querystring: PageQuery },
    },
    async (request, reply) => {
      const nonce = crypto.randomBytes(16).toString('base64');
      const asked = request.query.lang;
      const accept = request.headers['accept-language'];
      return orNotFound(reply, pageLanguage(asked, accept, 'en'), nonce, async () => {
        const row = await requestStatus(deps, customerActor('message_id'), request.params.message_id);
        const lang = pageLanguage(asked, accept, row.language);
        const optionText = row.custom_text ?? (lang === 'fr' ? row.option_text_fr : row.option_text_en);
        return html(reply, 200, nonce, trackingPageHtml(lang, nonce, toStatusView(row, 'customer'), optionText, row.store_name));
      });
    },
  );
}
