// The world of the version 2 soak (bench/soak/v2.ts): two stores with every kind of device and every
// timer shortened to seconds, so that escalations, reminders, timeouts, automatic completions and
// pickup deadlines all happen many times within a few minutes.
import crypto from 'node:crypto';

const key = () => crypto.randomBytes(18).toString('base64url');

export interface SoakLocation {
  id: number;
  lockerId: number;
  lockerKey: string;
  cabinetIds: number[];
  optionId: number;
  /** An option whose staff action is `none`: recorded and closed at once. */
  recordOnlyOptionId: number;
  buttons: { id: number; deviceKey: string }[];
  displayKey: string;
  edgeId: string;
  edgeKey: string;
}

export interface SoakWorld {
  file: Record<string, unknown>;
  token: string;
  /** The console's person (an org_admin): provisioned here, their password set by the soak (bench/harness/people.ts). */
  person: { email: string; password: string };
  hubToken: string;
  secret: string;
  accountSid: string;
  authToken: string;
  webhookSecret: string;
  locations: SoakLocation[];
}

export const CABINETS_PER_LOCKER = 24;
export const BUTTONS_PER_LOCATION = 12;

/** Two locations (10 and 11) of one organization; `receiverUrl` gets the webhooks, `deadUrl` refuses them. */
export function makeSoakWorld(receiverUrl: string, deadUrl: string): SoakWorld {
  const locations: SoakLocation[] = [10, 11].map((id, n) => ({
    id,
    lockerId: 100 + n,
    lockerKey: key(),
    cabinetIds: Array.from({ length: CABINETS_PER_LOCKER }, (_, i) => (100 + n) * 100 + i + 1),
    optionId: 50 + n * 2,
    recordOnlyOptionId: 51 + n * 2,
    buttons: Array.from({ length: BUTTONS_PER_LOCATION }, (_, i) => ({
      id: 700 + n * 100 + i,
      deviceKey: `AA:BB:CC:00:${n.toString(16).padStart(2, '0')}:${i.toString(16).padStart(2, '0')}`.toUpperCase(),
    })),
    displayKey: key(),
    edgeId: `soak-edge-${id}`,
    edgeKey: key(),
  }));
  const w = {
    token: key(),
    person: { email: 'soak.console@example.com', password: `soak-pw-${key()}` },
    hubToken: key(),
    secret: key(),
    webhookSecret: key(),
    accountSid: `AC${crypto.randomBytes(16).toString('hex')}`,
    authToken: key(),
    locations,
  };
  const file = {
    organizations: [{ id: 1, name: 'Soak Grocery' }],
    locations: locations.map((l) => ({
      id: l.id,
      organization_id: 1,
      name: `Store ${l.id}`,
      store_number: String(l.id).padStart(3, '0'),
      time_zone: 'America/Toronto',
      cfh_timeout_seconds: 90,
      cfh_escalation_seconds: 20,
      cfh_reminder_seconds: 15,
      cfh_reminder_claimed_seconds: 20,
      cfh_reminder_cap_seconds: 75,
      cfh_auto_complete_seconds: 45,
      call_button_cooldown_seconds: 5,
      staff_name_format: 'first',
      // 90 s to pick up, a reminder every 30 s.
      locker_pickup_hours: 0.025,
      locker_reminder_hours: 30 / 3600,
      language: l.id === 10 ? 'en' : 'fr',
    })),
    lockers: locations.map((l) => ({
      id: l.lockerId,
      location_id: l.id,
      name: `Lockers ${l.id}`,
      version: 2,
      rear_loading_available: true,
      timer: 2,
      api_key: l.lockerKey,
      cabinets: l.cabinetIds.map((id, i) => ({ id, key: i + 1, size: 'medium', thermal_mode: 'ambient' })),
    })),
    cfh_options: locations.flatMap((l) => [
      {
        id: l.optionId,
        organization_id: 1,
        location_id: l.id,
        text_en: 'Paint counter',
        text_fr: 'Peinture',
        prompt_en: 'Someone is coming',
        prompt_fr: "Quelqu'un arrive",
      },
      {
        id: l.recordOnlyOptionId,
        organization_id: 1,
        location_id: l.id,
        text_en: 'Feedback',
        text_fr: 'Avis',
        prompt_en: 'Thanks',
        prompt_fr: 'Merci',
        staff_action: 'none',
      },
    ]),
    cfh_outcomes: locations.map((l, i) => ({ id: 1 + i, location_id: l.id, key: 'sale', text_en: 'Made a sale', text_fr: 'Vente' })),
    call_buttons: locations.flatMap((l) =>
      l.buttons.map((b, i) => ({ id: b.id, location_id: l.id, name: `Aisle ${i + 1}`, device_key: b.deviceKey, option_id: l.optionId })),
    ),
    cfh_displays: locations.map((l, i) => ({
      id: 30 + i,
      location_id: l.id,
      name: 'Entrance QR',
      key: l.displayKey,
      option_ids: [l.optionId, l.recordOnlyOptionId],
      allow_custom_text: true,
    })),
    radio_edges: locations.map((l) => ({
      edge_id: l.edgeId,
      location_id: l.id,
      name: `Radio ${l.id}`,
      device_key: l.edgeKey,
      voice_handlers: ['transcript'],
      announce_cfh: ['created', 'escalated', 'cancelled'],
      voice_actions: true,
    })),
    messaging_accounts: [{ account_sid: w.accountSid, organization_id: 1, auth_token: w.authToken }],
    webhooks: [
      { id: 1, organization_id: 1, url: receiverUrl, secret: w.webhookSecret, events: ['callforhelp', 'locker', 'radio', 'device'] },
      { id: 2, organization_id: 1, location_id: 10, url: deadUrl, secret: key(), events: ['callforhelp'] },
    ],
    people: [{ email: w.person.email, name: 'Soak Console', organization_id: 1, memberships: [{ role: 'org_admin' }] }],
    api_tokens: [
      { name: 'soak', organization_id: 1, scopes: ['cfh', 'radio', 'reports', 'devices', 'webhooks'], token: w.token },
      { name: 'soak-hub', organization_id: 1, scopes: ['buttons'], token: w.hubToken },
    ],
  };
  return { ...w, file };
}
