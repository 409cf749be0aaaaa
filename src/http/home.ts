// GET /: where a person who opens the service's address lands. A browser, not a client, asks for
// it, so it is a small page of links rather than the API's JSON 404 (and left out of the document).
import type { FastifyInstance } from 'fastify';

const LINKS: [href: string, text: string, what: string][] = [
  ['/console', 'Console', "the store's screen: the Call for Help queue, lockers, radio, devices, reports, webhooks"],
  ['/docs', 'API reference', 'every operation, interactive'],
  ['/openapi.json', 'OpenAPI document', 'to generate clients from'],
  ['/healthz', 'Health', 'the process answers'],
  ['/readyz', 'Readiness', 'the database answers'],
];

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>storeops</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}li{margin:.5rem 0}</style></head>
<body><h1>storeops</h1><p>This service runs. Where to go:</p><ul>
${LINKS.map(([href, text, what]) => `<li><a href="${href}">${text}</a>: ${what}</li>`).join('\n')}
</ul></body></html>
`;

export async function homeRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
}
