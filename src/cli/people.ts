// npm run people -- add-admin EMAIL --organization ID [--name NAME]: makes (or resets) the
// break-glass administrator, an org_admin with a one-time password printed this once, to be changed
// at the first sign-in. Works while the service runs.
import { parseArgs } from 'node:util';
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { openConfiguredDb } from '../db/open.ts';
import { addBreakGlassAdmin, BreakGlassError } from '../people/break-glass.ts';

const USAGE = 'usage: npm run people -- add-admin EMAIL --organization ID [--name "NAME"]';

try {
  const { positionals, values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { organization: { type: 'string' }, name: { type: 'string' } },
  });
  const [command, email] = positionals;
  const organizationId = Number(values.organization);
  if (command !== 'add-admin' || email === undefined || !Number.isInteger(organizationId) || organizationId < 1) {
    console.error(USAGE);
    process.exitCode = 2;
  } else {
    const config = loadConfig(process.env);
    const db = await openConfiguredDb(config, { attach: true });
    try {
      await migrate(db);
      const made = await addBreakGlassAdmin({ db, clock: systemClock }, { email, organizationId, ...(values.name === undefined ? {} : { name: values.name }) });
      console.log(
        `\n  ${made.created ? 'Made' : 'Reset'} ${email}, org_admin of organization ${organizationId}. Its one-time password, shown this once:\n\n` +
          `    ${made.password}\n\n  Sign in at ${config.publicBaseUrl}/console with it; you will be asked for a new password.\n`,
      );
    } finally {
      await db.close();
    }
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof BreakGlassError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    console.error(`storeops: ${(err as Error).message}`);
    process.exitCode = 2;
  } else {
    throw err;
  }
}
