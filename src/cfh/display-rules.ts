// C9's limits (contract section 9, version 3), as pure decisions over what the store read under the
// display's lock. The client of the cooldown is the customer's browser (an id its page keeps); the
// address only bounds how many browsers it brings, so one person on a store's guest network cannot
// keep a display closed to the other customers on it, nor by rotating browser ids flood it; the
// display as a whole takes a number of requests a minute from everyone.
/** Browsers (or requests without a browser id) one address may bring to one display per window. */
export const DISPLAY_BROWSERS_PER_ADDRESS = 5;
/** Requests one display takes from everyone together in a minute (the contract's figure). */
export const DISPLAY_REQUESTS_PER_MINUTE = 10;
export const DISPLAY_MINUTE_MS = 60_000;

/**
 * The address window: the cooldown, but at least a minute, so that one address alone (5 browsers)
 * can never use up a display's minute (10 requests) even where the cooldown is short or 0.
 */
export const addressWindowMs = (cooldownSeconds: number) => Math.max(cooldownSeconds * 1000, DISPLAY_MINUTE_MS);

/** What the store read under the display's lock, for one press. */
export interface DisplayPressFigures {
  /** This client's last accepted press at this display, if within the address window. */
  clientLastAt: Date | null;
  /** Accepted presses of the clients of this address bound within the address window, oldest first. */
  addressPresses: Date[];
  /** The display's requests (C9) of the last minute, oldest first. */
  displayRequests: Date[];
}

export type DisplayPressDecision = { accepted: true } | { accepted: false; code: 'display_cooldown' | 'display_busy'; secondsLeft: number };

/** Accept, or refuse with the seconds until the first limit in the way lets a press through. */
export function decideDisplayPress(now: Date, cooldownSeconds: number, seen: DisplayPressFigures): DisplayPressDecision {
  const t = now.getTime();
  const secondsUntil = (ms: number) => Math.max(1, Math.ceil((ms - t) / 1000));
  if (seen.clientLastAt !== null && seen.clientLastAt.getTime() > t - cooldownSeconds * 1000) {
    return { accepted: false, code: 'display_cooldown', secondsLeft: secondsUntil(seen.clientLastAt.getTime() + cooldownSeconds * 1000) };
  }
  // Over a limit, the press that must leave the window first is the (n - limit)th oldest.
  const over = (list: Date[], limit: number) => list[list.length - limit]?.getTime() ?? t;
  if (seen.addressPresses.length >= DISPLAY_BROWSERS_PER_ADDRESS) {
    const leaves = over(seen.addressPresses, DISPLAY_BROWSERS_PER_ADDRESS) + addressWindowMs(cooldownSeconds);
    return { accepted: false, code: 'display_cooldown', secondsLeft: secondsUntil(leaves) };
  }
  if (seen.displayRequests.length >= DISPLAY_REQUESTS_PER_MINUTE) {
    const leaves = over(seen.displayRequests, DISPLAY_REQUESTS_PER_MINUTE) + DISPLAY_MINUTE_MS;
    return { accepted: false, code: 'display_busy', secondsLeft: secondsUntil(leaves) };
  }
  return { accepted: true };
}
