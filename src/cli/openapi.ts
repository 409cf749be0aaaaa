// npm run openapi: writes the OpenAPI document the service serves to docs/openapi.json (the
// committed copy; tests/http/openapi.test.ts checks they match). `-- --stdout` prints it instead.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compose } from '../compose.ts';
import { loadConfig } from '../config.ts';
import { openEmbeddedDb } from '../db/embedded/open.ts';
import { migrate } from '../db/migrate.ts';

export const OPENAPI_FILE = path.resolve(import.meta.dirname, '../../docs/openapi.json');

/** The document as JSON text, formatted as committed. */
export const formatDocument = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

async function main(): Promise<void> {
  // A throwaway service: a database in a temporary directory, no ports, quiet. The document
  // depends on no setting.
  const config = loadConfig({ PORT: '0', MQTT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SPEECH_WORKERS: '1' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-openapi-'));
  const db = await openEmbeddedDb(dataDir);
  await migrate(db);
  const service = await compose({ config, db, secretDigest: '0'.repeat(64), manualJobs: true });
  try {
    await service.app.ready();
    const text = formatDocument(service.app.swagger());
    if (process.argv.includes('--stdout')) process.stdout.write(text);
    else {
      fs.writeFileSync(OPENAPI_FILE, text);
      console.log(`storeops: wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
    }
  } finally {
    await service.app.close();
    await db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
