// Getting an associate's attention (contract section 19): a short tone and a vibration for a new
// request, which browsers allow only once the person has touched the page, and "keep screen on"
// (the Screen Wake Lock API), asked for again whenever the page comes back into view.
let audio = null;
let touched = false;

addEventListener(
  'pointerdown',
  () => {
    touched = true;
    try {
      audio ??= new AudioContext();
      void audio.resume();
    } catch {
      audio = null;
    }
  },
  { once: false, passive: true },
);

/** A two-note chime and a short buzz; nothing before the page was touched. */
export function ring() {
  if (!touched) return false;
  if (audio !== null) {
    const now = audio.currentTime;
    for (const [i, freq] of [880, 1320].entries()) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(0.4, now + i * 0.18 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.18 + 0.16);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + i * 0.18);
      osc.stop(now + i * 0.18 + 0.17);
    }
  }
  navigator.vibrate?.([200, 100, 200]);
  return true;
}

let lock = null;
let wanted = false;

export const wakeLockAvailable = () => 'wakeLock' in navigator;

/** Keeps the screen on while `on` (and the page is shown); false when the browser refuses. */
export async function keepAwake(on) {
  wanted = on;
  if (!on) {
    await lock?.release();
    lock = null;
    return true;
  }
  try {
    lock = await navigator.wakeLock.request('screen');
    return true;
  } catch {
    wanted = false;
    return false;
  }
}

document.addEventListener('visibilitychange', () => {
  if (wanted && document.visibilityState === 'visible') void keepAwake(true);
});
