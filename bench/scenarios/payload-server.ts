// The same-payload ceiling: a bare Fastify server answering each captured request with the bytes
// and content type the service answered it with (PAYLOAD_FILE, written by bench/scenarios/payload.ts).
import fs from 'node:fs';
import Fastify from 'fastify';

const captured = JSON.parse(fs.readFileSync(process.env.PAYLOAD_FILE as string, 'utf8')) as Record<string, { type: string; body: string }>;
const answers = new Map(Object.entries(captured));
const app = Fastify({ logger: false });
app.get('/*', async (request, reply) => {
  const answer = answers.get(request.url);
  if (request.url === '/') return 'ready';
  if (answer === undefined) return reply.code(404).send();
  return reply.type(answer.type).send(answer.body);
});
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
