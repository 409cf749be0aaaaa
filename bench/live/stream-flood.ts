// The streams a client without credentials can hold (issue: one address filling every stream slot):
// from one address, 500 C6 streams without a token on twenty of its own requests, then the store's
// C8 from that same address. Customers' streams are bounded per message_id and per address, apart
// from streams with a credential, so the flood gets a few and the store's stream still opens.
import { openStream, post } from './streams.ts';

export interface FloodFigures {
  attempts: number;
  accepted: number;
  refused: number;
  /** The store's C8, opened from the flooding address once the flood holds what it could get. */
  store_stream_opened: boolean;
  met: boolean;
}

export async function runStreamFlood(o: { base: string; token: string; locationId: number; optionId: number }): Promise<FloodFigures> {
  const from = { perAddress: 1_000_000, net: 2 }; // every stream from 127.2.0.2
  const requests: string[] = [];
  for (let i = 0; i < 20; i++) {
    const record = await post(o.base, o.token, '/api/callforhelp/requests', { location_id: o.locationId, option_id: o.optionId });
    requests.push(String(record.message_id));
  }
  const held: { close(): void }[] = [];
  let attempts = 0;
  let refused = 0;
  for (const messageId of requests) {
    for (let i = 0; i < 25; i++) {
      attempts++;
      try {
        held.push(await openStream(o.base, `/api/callforhelp/v1/tracking/stream?message_id=${messageId}`, 0, {}, () => {}, from));
      } catch {
        refused++;
      }
    }
  }
  let storeStreamOpened = false;
  try {
    const store = await openStream(
      o.base,
      `/api/callforhelp/requests/stream?location_id=${o.locationId}`,
      0,
      { authorization: `Bearer ${o.token}` },
      () => {},
      from,
    );
    storeStreamOpened = true;
    store.close();
  } catch {
    storeStreamOpened = false;
  }
  for (const stream of held) stream.close();
  const accepted = held.length;
  return { attempts, accepted, refused, store_stream_opened: storeStreamOpened, met: accepted <= 50 && storeStreamOpened };
}
