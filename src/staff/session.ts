// What the staff app needs of the session: the console's answer (sessionView: the ways to sign in
// here, or the person, their locations and the store device) with the languages its words follow,
// the person's own, else each store's (contract section 19).
import type { FastifyRequest } from 'fastify';
import { sessionView } from '../console/routes.ts';
import type { ConsoleRouteDeps } from '../console/routes.ts';
import { locationLanguages, personLanguage } from './store.ts';

export async function staffSession(deps: Pick<ConsoleRouteDeps, 'db' | 'clock' | 'signInWays' | 'storeDevices'>, request: FastifyRequest) {
  const view = await sessionView(deps, request);
  if (!view.signed_in) {
    const device = view.sign_in.store_device;
    const languages = await locationLanguages(deps.db, device === null ? [] : [device.location_id]);
    return { ...view, language: device === null ? null : (languages.get(device.location_id) ?? 'en') };
  }
  const languages = await locationLanguages(
    deps.db,
    view.locations.map((l) => l.id),
  );
  return {
    ...view,
    language: await personLanguage(deps.db, view.person.id),
    locations: view.locations.map((l) => ({ ...l, language: languages.get(l.id) ?? 'en' })),
  };
}
