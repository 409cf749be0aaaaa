// The OpenAPI 3.1 document: generated from the routes' TypeBox schemas, published at /openapi.json.
import type { SwaggerOptions } from '@fastify/swagger';
import { VERSION } from '../version.ts';
import { refineDocument } from './openapi-refine.ts';

/** The document does not depend on the configuration: docs/openapi.json is the same as any
 * instance serves. Its server is "/", the host that served it (PUBLIC_BASE_URL from outside). */
export function openApiOptions(): SwaggerOptions {
  return {
    transformObject: (document) => refineDocument('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'storeops',
        // The release's version (CHANGELOG.md): one number for the service and its API document.
        version: VERSION,
        description:
          'Pickup lockers, Call for Help and radio announcements for stores. Errors are `{ message, code }`; validation failures are 422 and add `errors` by field. ' +
          'The rules of each operation, in words: docs/api.md of the project.',
        license: { name: 'GPL-3.0-or-later', identifier: 'GPL-3.0-or-later' },
      },
      servers: [{ url: '/', description: 'the service that serves this document (PUBLIC_BASE_URL)' }],
      tags: [
        { name: 'lockers', description: 'Pickup lockers: orders, cabinets, open codes, locker devices' },
        { name: 'callforhelp', description: 'Call for Help requests' },
        { name: 'radio', description: 'Text to speech on the store radio' },
        { name: 'reports', description: 'Reports over a location and a time range' },
        { name: 'webhooks', description: 'Signed webhooks of store events: deliveries and their attempts' },
        { name: 'service', description: 'Health of the service' },
        { name: 'devices', description: "Device channel: an external MQTT broker's HTTP auth plugin asks these" },
        { name: 'console', description: 'The operations console at /console (its session cookie)' },
        { name: 'people', description: "People's sessions: signing in and out (section 17)" },
        { name: 'staff', description: 'The staff app at /staff (section 19; a person’s session cookie)' },
        {
          name: 'administration',
          description: "The store's setup under /api/admin/ (section 18): a person's session with its CSRF token, or a token with the admin scope",
        },
      ],
      components: {
        securitySchemes: {
          secretToken: { type: 'apiKey', in: 'query', name: 'secret_token' },
          lockerApiKey: { type: 'apiKey', in: 'header', name: 'api-key', description: "The locker's own api_key" },
          edgeApiKey: { type: 'apiKey', in: 'header', name: 'api-key', description: "The radio edge device's key" },
          bearerToken: { type: 'http', scheme: 'bearer' },
          hubToken: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'A call button hub: `<any scheme word> <token>`, a token with the buttons scope',
          },
          messagingSignature: { type: 'apiKey', in: 'header', name: 'X-Messaging-Signature' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'storeops_session',
            description: "A person's session (section 17), from signing in; state-changing calls also send its CSRF token in x-csrf-token",
          },
          brokerSecret: { type: 'http', scheme: 'bearer', description: 'MQTT_AUTH_SECRET (mosquitto-go-auth may send it as its User-Agent instead)' },
        },
      },
    },
  };
}
