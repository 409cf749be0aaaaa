// Webhook deliveries over HTTP (W1, W2): what was sent to an endpoint and how each attempt went,
// and sending a delivery again. Bearer tokens with the webhooks scope; each route parses, calls its
// use case (deliveries.ts) and renders the answer.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { bearerAuth, tokenActorOf, type ApiTokens } from '../http/auth.ts';
import { BODY_ERRORS, errorResponses } from '../http/schemas.ts';
import { deliveryPage, redeliverDelivery, type DeliveryDeps } from './deliveries.ts';
import { DeliveriesQuery, Delivery, DeliveryList, DeliveryParams, EndpointParams, WEBHOOK_ERRORS } from './schemas.ts';
import { deliveryListView, deliveryView, nextPageLink } from './views.ts';

export interface WebhookRouteDeps extends DeliveryDeps {
  /** The bearer-token lookup the app shares between features (one cache). */
  apiTokens: ApiTokens;
}

const security = [{ bearerToken: [] }];
const tags = ['webhooks'];

export async function webhookRoutes(fastify: FastifyInstance, deps: WebhookRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = bearerAuth(deps.apiTokens, 'webhooks');

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      onRequest,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        security,
        summary: "A webhook endpoint's deliveries, newest first, each with its attempts",
        description:
          'Each delivery is one event sent to this endpoint: its state (pending, delivered, failed) and every attempt (time, status code, ' +
          'duration, error). No URL or secret is shown. Pages of `limit`; the next page is `cursor` = the id of the last delivery ' +
          "(a full page names it in its `Link` header). An endpoint of another organization (or outside the token's locations): 404.",
        params: EndpointParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...WEBHOOK_ERRORS, ...errorResponses({ 404: 'no such endpoint (for this token)' }) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const page = await deliveryPage(deps, tokenActorOf(request), id, request.query);
      const link = nextPageLink(id, request.query.limit, page);
      if (link !== null) void reply.header('link', link);
      return deliveryListView(page);
    },
  );

  app.post(
    '/api/webhooks/deliveries/:delivery_id/redeliver',
    {
      onRequest,
      schema: {
        operationId: 'redeliverWebhook',
        tags,
        security,
        summary: 'Send a delivery again',
        description:
          'The delivery becomes pending and due now, whatever its state, with 24 hours of retries from now; the answer is the delivery ' +
          "as W1 shows it. The receiver gets the same event (same `uuid`) again. A delivery of another organization's endpoint: 404.",
        params: DeliveryParams,
        response: { 202: Delivery, ...WEBHOOK_ERRORS, ...errorResponses({ ...BODY_ERRORS, 404: 'no such delivery (for this token)' }) },
      },
    },
    async (request, reply) => {
      const delivery = await redeliverDelivery(deps, tokenActorOf(request), request.params.delivery_id);
      return reply.code(202).send(deliveryView(delivery));
    },
  );
}
