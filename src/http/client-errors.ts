// What Node's HTTP parser refuses before a request reaches Fastify (headers too large, a request
// that took too long to arrive, bytes that are no HTTP), answered in the contract's error body
// like every other refusal. Passed to Fastify as its clientErrorHandler.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

const REFUSALS: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', message: 'the request headers are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', message: 'the request took too long to arrive' },
};
const MALFORMED = { status: 400, code: 'bad_request', message: 'the request is not valid HTTP' };

export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = REFUSALS[err.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ message: refusal.message, code: refusal.code });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * An answer sent before its request's body has arrived (a refusal by a credential hook, a 415)
 * closes the connection. Node's request timeout stops applying once the answer is out, so a
 * client trickling the rest of a body would otherwise hold the socket as long as it liked.
 */
export function closeAfterEarlyAnswers(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.raw.complete) void reply.header('connection', 'close');
    return payload;
  });
}
