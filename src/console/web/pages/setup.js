// Setup (contract section 18): the shown store's administration, for its org_admins and
// location_admins (app.js offers the page to nobody else; the API refuses staff either way). One
// page with a tab per part of the setup (#/setup/<location>/<part>); each part is a few resources
// (resource.js) whose forms are forms.js's. The SSO mappings and messaging accounts belong to the
// whole organization: their tab is its org_admins'.
import { h, mount } from '../dom.js';
import { storeSection } from './setup-store.js';
import { equipmentSection } from './setup-equipment.js';
import { optionsSection } from './setup-options.js';
import { peopleSection, storeDevicesSection } from './setup-people.js';
import { accountsSection, messagingSection, ssoSection } from './setup-accounts.js';

const PARTS = [
  { id: 'store', title: 'Store settings', render: storeSection },
  { id: 'equipment', title: 'Equipment', render: equipmentSection },
  { id: 'options', title: 'Options & outcomes', render: optionsSection },
  { id: 'people', title: 'People', render: peopleSection },
  { id: 'accounts', title: 'Service accounts', render: accountsSection },
  { id: 'store-devices', title: 'Store devices', render: storeDevicesSection },
  { id: 'messaging', title: 'Messaging accounts', render: messagingSection, orgAdmins: true },
  { id: 'sso', title: 'Single sign-on', render: ssoSection, orgAdmins: true },
];

export function setupPage(container, { locationId, me, section, refreshSession }) {
  const roleAt = (id) => me.locations.find((l) => l.id === id)?.role;
  const ctx = {
    locationId,
    me,
    refreshSession,
    orgAdmin: roleAt(locationId) === 'org_admin',
    location: () => me.locations.find((l) => l.id === locationId),
    /** The stores the person administers (a role's choices of locations). */
    administered: () => me.locations.filter((l) => roleAt(l.id) === 'org_admin' || roleAt(l.id) === 'location_admin'),
  };
  const parts = PARTS.filter((p) => !p.orgAdmins || ctx.orgAdmin);
  const nav = h('nav', { class: 'tabs', 'aria-label': 'Setup' });
  const body = h('div', { class: 'setup-body' });
  mount(container, h('h1', { id: 'page-title' }, 'Setup'), nav, body);
  let shown = null;

  function show(id) {
    const part = parts.find((p) => p.id === id) ?? parts[0];
    if (id !== part.id) history.replaceState(null, '', `#/setup/${locationId}/${part.id}`);
    if (shown === part) return;
    shown = part;
    mount(
      nav,
      parts.map((p) => h('a', { href: `#/setup/${locationId}/${p.id}`, 'aria-current': p === part ? 'page' : null }, p.title)),
    );
    mount(body);
    part.render(body, ctx);
    document.title = `${part.title} · Setup · storeops console`;
  }

  show(section);
  return { show, refresh() {}, stop() {} };
}
