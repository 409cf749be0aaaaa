// HTTP side of the device channel: MQTT over WebSocket at /mqtt (embedded broker), and the
// authentication / authorization endpoints an external broker's HTTP auth plugin calls, so devices
// are checked against the same database and topic rules as on the embedded broker.
//   EMQX 5: HTTP authentication -> /internal/mqtt/emqx/authn, HTTP authorization -> /internal/mqtt/emqx/authz
//   Mosquitto + mosquitto-go-auth (HTTP backend): /internal/mqtt/mosquitto/{user,superuser,acl}
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DeviceGateway } from './gateway.ts';
import { header } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { BODY_ERRORS, errorResponse, errorResponses, SERVICE_ERRORS } from '../http/schemas.ts';
import { safeEqual } from '../http/secrets.ts';
import { mayAccess, parseDeviceUsername, type BrokerAccess } from './wire.ts';

const Field = (maxLength: number) => Type.String({ maxLength });

const EmqxAuthnBody = Type.Object({ username: Field(300), password: Field(1000), clientid: Type.Optional(Field(300)) });
const EmqxAuthzBody = Type.Object({
  username: Field(300),
  topic: Field(1000),
  action: Type.Union([Type.Literal('publish'), Type.Literal('subscribe'), Type.Literal('all')]),
  clientid: Type.Optional(Field(300)),
});
const EmqxResult = Type.Object({ result: Type.Union([Type.Literal('allow'), Type.Literal('deny')]), is_superuser: Type.Optional(Type.Boolean()) });

const GoAuthUserBody = Type.Object({ username: Field(300), password: Field(1000), clientid: Type.Optional(Field(300)) });
const GoAuthSuperuserBody = Type.Object({ username: Field(300) });
/** acc: 1 read (a message delivered to the client), 2 write (publish), 3 read and write, 4 subscribe. */
const GoAuthAclBody = Type.Object({
  username: Field(300),
  topic: Field(1000),
  acc: Type.Union([Type.Integer({ minimum: 1, maximum: 4 }), Type.String({ pattern: '^[1-4]$' })]),
  clientid: Type.Optional(Field(300)),
});
const GoAuthOk = Type.Object({ ok: Type.Boolean(), error: Type.String() });

const security = [{ brokerSecret: [] }];
const refusals = errorResponses({
  ...BODY_ERRORS,
  ...SERVICE_ERRORS,
  401: 'the broker secret (MQTT_AUTH_SECRET) is missing or wrong',
  404: 'MQTT_AUTH_SECRET is not set: broker authentication is disabled',
  422: 'the body is invalid',
  429: 'too many failed broker secrets from this client; see Retry-After',
});
/** mosquitto-go-auth sends JSON or a form, as its http_params_mode says. */
const FORM_OR_JSON = ['application/json', 'application/x-www-form-urlencoded'];
const deny = (what: string) => ({ 403: errorResponse(what) });

const GO_AUTH_ACCESS: Record<string, BrokerAccess | null> = { '1': 'read', '2': 'publish', '3': null, '4': 'subscribe' };

export interface DeviceRouteDeps {
  /** MQTT_AUTH_SECRET: what an external broker presents; null disables these endpoints. */
  mqttAuthSecret: string | null;
  devices: DeviceGateway;
}

export async function deviceRoutes(fastify: FastifyInstance, deps: DeviceRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const gateway = deps.devices;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (gateway.handleUpgrade(req, socket, head)) return;
    // No one else takes upgrades: refuse rather than leave the socket hanging.
    if (app.server.listenerCount('upgrade') === 1) socket.destroy();
  };
  app.server.on('upgrade', onUpgrade);
  app.addHook('preClose', async () => gateway.closeWebSockets());
  app.addHook('onClose', async () => {
    app.server.off('upgrade', onUpgrade);
  });

  // The broker presents MQTT_AUTH_SECRET as a bearer token (EMQX: a request header in the
  // authenticator's settings) or as its User-Agent (mosquitto-go-auth sets no other header).
  const brokerSecret = async (request: FastifyRequest) => {
    const secret = deps.mqttAuthSecret;
    if (secret === null) throw new AppError(404, 'not_found', 'broker authentication is disabled: set MQTT_AUTH_SECRET');
    const bearer = /^Bearer[ ]+(\S+)\s*$/i.exec(header(request, 'authorization') ?? '')?.[1];
    const presented = bearer ?? header(request, 'user-agent');
    if (presented === undefined || !safeEqual(presented, secret)) throw new AppError(401, 'unauthorized', 'the broker secret is missing or wrong');
  };

  /** Who is logging in: the service itself (its MQTT_URL credentials), a device, or nobody. */
  const login = async (username: string, password: string) => {
    if (gateway.isServiceLogin(username, password)) return 'service' as const;
    return (await gateway.authenticateDevice(username, password)) === null ? null : ('device' as const);
  };

  /** An authorization decision; the service may do anything (it only publishes commands and reads acks). */
  const decide = (username: string, access: BrokerAccess, topic: string): boolean => {
    if (gateway.isServiceLogin(username, null)) return true;
    const device = parseDeviceUsername(username);
    if (device === null || !mayAccess(device, access, topic)) return false;
    if (access === 'subscribe') gateway.deviceSubscribing(device);
    return true;
  };

  const denied = (what: string) => new AppError(403, 'forbidden', what);

  app.post(
    '/internal/mqtt/emqx/authn',
    {
      onRequest: brokerSecret,
      schema: {
        operationId: 'mqttEmqxAuthenticate',
        tags: ['devices'],
        security,
        body: EmqxAuthnBody,
        description: "EMQX HTTP authentication: a device's MQTT username and key. Always 200; the decision is `result`.",
        summary: 'Broker authentication (EMQX): may this MQTT client connect?',
        response: { 200: EmqxResult, ...refusals },
      },
    },
    async (request) => {
      const who = await login(request.body.username, request.body.password);
      return who === null ? { result: 'deny' as const } : { result: 'allow' as const, is_superuser: who === 'service' };
    },
  );

  app.post(
    '/internal/mqtt/emqx/authz',
    {
      onRequest: brokerSecret,
      schema: {
        operationId: 'mqttEmqxAuthorize',
        tags: ['devices'],
        security,
        body: EmqxAuthzBody,
        description: 'EMQX HTTP authorization: may this client publish on / subscribe to this topic? Always 200; the decision is `result`.',
        summary: 'Broker authorization (EMQX): may this client use this topic?',
        response: { 200: EmqxResult, ...refusals },
      },
    },
    async (request) => {
      const { username, topic, action } = request.body;
      const allowed = action === 'all' ? decide(username, 'subscribe', topic) && decide(username, 'publish', topic) : decide(username, action, topic);
      return { result: allowed ? ('allow' as const) : ('deny' as const) };
    },
  );

  // A 403 below is the broker's answer about a device, not a failure of the broker's own credential:
  // counted by the brute-force guard, a few refused devices would lock every device out.
  const answer = { refusalIsAnswer: true };

  app.post(
    '/internal/mqtt/mosquitto/user',
    {
      onRequest: brokerSecret,
      config: answer,
      schema: {
        operationId: 'mqttMosquittoUser',
        tags: ['devices'],
        security,
        body: GoAuthUserBody,
        consumes: FORM_OR_JSON,
        description: "mosquitto-go-auth HTTP backend, user check: 200 when the username and key are a device's (or the service's), else 403.",
        summary: 'Broker user check (mosquitto-go-auth)',
        response: { 200: GoAuthOk, ...deny('unknown device or wrong key'), ...refusals },
      },
    },
    async (request) => {
      if ((await login(request.body.username, request.body.password)) === null) throw denied('unknown device or wrong key');
      return { ok: true, error: '' };
    },
  );

  app.post(
    '/internal/mqtt/mosquitto/superuser',
    {
      onRequest: brokerSecret,
      config: answer,
      schema: {
        operationId: 'mqttMosquittoSuperuser',
        tags: ['devices'],
        security,
        body: GoAuthSuperuserBody,
        consumes: FORM_OR_JSON,
        description: 'mosquitto-go-auth HTTP backend, superuser check: only the service itself (the user of MQTT_URL) is one.',
        summary: 'Broker superuser check (mosquitto-go-auth)',
        response: { 200: GoAuthOk, ...deny('not a superuser'), ...refusals },
      },
    },
    async (request) => {
      if (!gateway.isServiceLogin(request.body.username, null)) throw denied('not a superuser');
      return { ok: true, error: '' };
    },
  );

  app.post(
    '/internal/mqtt/mosquitto/acl',
    {
      onRequest: brokerSecret,
      config: answer,
      schema: {
        operationId: 'mqttMosquittoAcl',
        tags: ['devices'],
        security,
        body: GoAuthAclBody,
        consumes: FORM_OR_JSON,
        description: 'mosquitto-go-auth HTTP backend, ACL check (acc 1 read, 2 publish, 3 both, 4 subscribe): 200 allowed, 403 denied.',
        summary: 'Broker topic check (mosquitto-go-auth)',
        response: { 200: GoAuthOk, ...deny('not allowed on this topic'), ...refusals },
      },
    },
    async (request) => {
      const { username, topic, acc } = request.body;
      const access = GO_AUTH_ACCESS[String(acc)] ?? null;
      // acc 3 (read and write) is never one device's right: it reads one topic and writes another.
      const allowed = access === null ? gateway.isServiceLogin(username, null) : decide(username, access, topic);
      if (!allowed) throw denied('not allowed on this topic');
      return { ok: true, error: '' };
    },
  );
}
