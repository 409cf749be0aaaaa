// Refusals made by Node's HTTP parser before a request reaches a route (headers too large, a
// request trickled past REQUEST_TIMEOUT_SECONDS, bytes that are no HTTP) in the contract's body.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { makeWorld, testApp, testConfig, type Teardown } from '../support/world.ts';

async function listening(t: Teardown, env: Record<string, string> = {}): Promise<number> {
  const ctx = await testApp({ t, config: testConfig(env) });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return (ctx.app.server.address() as net.AddressInfo).port;
}

/** Sends `parts` (with a pause between them) and reads what comes back until the server closes. */
function exchange(port: number, parts: string[], pauseMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let stop = false;
    socket.on('data', (d) => {
      answer += d.toString();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      stop = true;
      resolve(answer);
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close; got: ${answer}`));
    }, 20_000);
    void (async () => {
      for (const part of parts) {
        if (stop) return;
        socket.write(part);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  });
}

function parse(answer: string): { status: number; body: { message: string; code: string } } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) as { message: string; code: string } };
}

test('headers over the limit are refused with 431 in the contract body', async (t) => {
  const port = await listening(t);
  const answer = await exchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`]);
  const { status, body } = parse(answer);
  assert.equal(status, 431, answer);
  assert.equal(body.code, 'headers_too_large');
  assert.equal(typeof body.message, 'string');
});

test('a body trickled past REQUEST_TIMEOUT_SECONDS gets 408 and its socket is closed', async (t) => {
  const ctx = await testApp({ t, config: testConfig({ REQUEST_TIMEOUT_SECONDS: '1' }) });
  const w = await makeWorld(ctx.db, ctx.clock);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (ctx.app.server.address() as net.AddressInfo).port;
  const head = `POST /webhooks/incoming/messaging/${w.edgeId} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n`;
  const answer = await exchange(port, [head, ...Array.from({ length: 150 }, () => 'a')], 100);
  const { status, body } = parse(answer);
  assert.equal(status, 408, answer);
  assert.equal(body.code, 'request_timeout');
});

test('an answer sent before the body arrived closes the connection, so a trickling client cannot hold it', async (t) => {
  const port = await listening(t);
  const head = 'POST /api/callforhelp/requests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
  const answer = await exchange(port, [head, ...Array.from({ length: 150 }, () => 'a')], 100);
  assert.match(answer, /^HTTP\/1\.1 401 /, 'refused for its missing token before its body came');
  assert.match(answer, /connection: close/i);
});

test('bytes that are no HTTP get 400 in the contract body', async (t) => {
  const port = await listening(t);
  const { status, body } = parse(await exchange(port, ['\x16\x03\x01 not http at all\r\n\r\n']));
  assert.equal(status, 400);
  assert.equal(body.code, 'bad_request');
});
