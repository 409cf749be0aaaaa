// Types of the part of @echogarden/espeak-ng-emscripten (eSpeak NG compiled to WebAssembly) that
// the speech worker uses. The package ships no declarations.
declare module '@echogarden/espeak-ng-emscripten' {
  export interface EspeakEvent {
    type: string;
    text_position: number;
    word_length: number;
    audio_position: number;
    id?: string | number;
  }
  export interface EspeakVoice {
    identifier: string;
    name: string;
    languages: { priority: number; name: string }[];
  }
  export interface ESpeakNGWorker {
    /** 0 on success, an eSpeak error code otherwise (e.g. 2: voice not found). */
    set_voice(voice: string): number;
    set_rate(wordsPerMinute: number): number;
    set_pitch(pitch: number): number;
    list_voices(): EspeakVoice[];
    /**
     * Synthesizes synchronously, handing over audio in chunks. The input is read as SSML. The
     * callback returning true aborts the synthesis.
     */
    synthesize(text: string, onChunk: (samples: Int16Array | null, events: EspeakEvent[]) => boolean | void): void;
  }
  export interface EspeakModule {
    eSpeakNGWorker: new () => ESpeakNGWorker;
  }
  const initialize: () => Promise<EspeakModule>;
  export default initialize;
}
