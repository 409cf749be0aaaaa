// Scan to complete (contract section 19): the camera, decoded in the browser (its BarcodeDetector
// where it has one, else the jsqr decoder the service serves, loaded only now), or the code typed.
// A right code records the arrival and Complete is offered; a wrong one says so and changes nothing.
import { ApiError, post, toast } from '/console/assets/api.js';
import { h } from '/console/assets/dom.js';
import { t } from './words.js';
import { stepProblem } from './queue.js';

let decoderLoaded = null;

/** jsqr, as a classic script of the service's own (the page's policy runs nothing else). */
function loadDecoder() {
  decoderLoaded ??= new Promise((resolve, reject) => {
    const script = h('script', { src: '/staff/assets/jsqr.js' });
    script.addEventListener('load', () => resolve(window.jsQR));
    script.addEventListener('error', () => {
      decoderLoaded = null;
      reject(new Error('the decoder did not load'));
    });
    document.head.append(script);
  });
  return decoderLoaded;
}

/** A function that reads a QR code from the video's current frame, or null. */
async function makeReader(video) {
  if ('BarcodeDetector' in window) {
    try {
      const formats = await window.BarcodeDetector.getSupportedFormats();
      if (formats.includes('qr_code')) {
        const detector = new window.BarcodeDetector({ formats: ['qr_code'] });
        return async () => (await detector.detect(video))[0]?.rawValue ?? null;
      }
    } catch {
      // fall back to the decoder
    }
  }
  const jsQR = await loadDecoder();
  const canvas = document.createElement('canvas');
  const g = canvas.getContext('2d', { willReadFrequently: true });
  return async () => {
    if (video.videoWidth === 0) return null;
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    g.drawImage(video, 0, 0);
    const image = g.getImageData(0, 0, canvas.width, canvas.height);
    return jsQR(image.data, image.width, image.height, { inversionAttempts: 'dontInvert' })?.data ?? null;
  };
}

export function openScanner(app, r) {
  const message = h('p', { class: 'error', role: 'alert', id: 'scan-message' });
  const video = h('video', { class: 'camera', muted: true, playsinline: true, autoplay: true });
  const typed = h('input', { id: 'scan-code', type: 'text', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false', maxlength: 200 });
  let stream = null;
  let busy = false;
  let lastWrong = null;
  let closed = false;

  const submit = async (code, fromCamera) => {
    if (busy || app.offline || code.trim() === '') return;
    busy = true;
    try {
      await post(`/staff/api/cfh/${encodeURIComponent(r.message_id)}/scan`, { code: code.trim() });
      toast(t('scanned'));
      dialog.close();
      await app.refresh();
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) {
        message.textContent = t('wrong_code');
        if (fromCamera) lastWrong = code;
      } else if (!(err instanceof ApiError) || err.status !== 401) message.textContent = stepProblem(err);
    } finally {
      busy = false;
    }
  };

  const dialog = h(
    'dialog',
    { class: 'sheet scanner' },
    h(
      'form',
      {
        method: 'dialog',
        onsubmit: (e) => {
          e.preventDefault();
          void submit(typed.value, false);
        },
      },
      h('h2', {}, t('scan_title')),
      h('p', { class: 'muted' }, t('scan_note')),
      video,
      h('label', { for: 'scan-code' }, t('code')),
      typed,
      message,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, t('cancel')),
        h('button', { type: 'submit', class: 'primary', disabled: app.offline, dataset: { step: 'check-code' } }, t('check_code')),
      ),
    ),
  );
  dialog.addEventListener('close', () => {
    closed = true;
    for (const track of stream?.getTracks() ?? []) track.stop();
    dialog.remove();
  });
  document.body.append(dialog);
  dialog.showModal();

  void (async () => {
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
      if (closed) return void stream.getTracks().forEach((track) => track.stop());
      video.srcObject = stream;
      await video.play();
      const read = await makeReader(video);
      while (!closed) {
        const code = await read().catch(() => null);
        if (code !== null && code !== lastWrong) await submit(code, true);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    } catch {
      if (!closed) {
        video.remove();
        message.textContent = t('camera_off');
      }
    }
  })();
}
