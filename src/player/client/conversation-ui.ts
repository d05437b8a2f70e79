/**
 * The visitor's controls in conversation mode: the listening / thinking / speaking indication, the
 * mute button, the "type instead" box (also for visitors who refuse the microphone), and captions
 * of what the agent says (on by default; the choice is remembered per browser) with the visitor's
 * own words as the recogniser hears them. The markup is in the page (src/player/page.ts).
 */
export type Indication = 'idle' | 'listening' | 'thinking' | 'speaking' | 'muted' | 'typing-only';

const LABELS: Record<Indication, string> = {
  idle: '',
  listening: 'Listening…',
  thinking: 'Thinking…',
  speaking: 'Speaking',
  muted: 'Microphone muted',
  'typing-only': 'Type your message below',
};

const CAPTIONS_KEY = 'presence.captions';
export const MAX_TYPED_CHARS = 1000;

export interface ConversationUiHandlers {
  typed(text: string): void;
  mute(muted: boolean): void;
}

export class ConversationUi {
  indication: Indication = 'idle';
  captionsOn = true;
  agentCaption = '';
  visitorCaption = '';
  private readonly root = document.getElementById('conversation');
  private readonly indicator = document.getElementById('indicator');
  private readonly label = document.querySelector('#indicator .label');
  private readonly captions = document.getElementById('captions');
  private readonly agentLine = document.getElementById('caption-agent');
  private readonly visitorLine = document.getElementById('caption-visitor');
  private readonly muteButton = document.getElementById('mute') as HTMLButtonElement | null;
  private readonly ccButton = document.getElementById('cc') as HTMLButtonElement | null;
  private readonly form = document.getElementById('typebox') as HTMLFormElement | null;
  private readonly input = document.getElementById('typed') as HTMLInputElement | null;
  private visitorTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly on: ConversationUiHandlers) {
    try {
      this.captionsOn = localStorage.getItem(CAPTIONS_KEY) !== 'off';
    } catch {
      /* storage blocked in this frame: captions stay on */
    }
    this.form?.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = (this.input?.value ?? '').trim();
      if (!text) return;
      this.on.typed(text.slice(0, MAX_TYPED_CHARS));
      if (this.input) this.input.value = '';
      this.showVisitor(text, true);
    });
    this.muteButton?.addEventListener('click', (e) => {
      e.stopPropagation();
      this.on.mute(this.muteButton?.getAttribute('aria-pressed') !== 'true');
    });
    this.ccButton?.addEventListener('click', (e) => {
      e.stopPropagation();
      this.setCaptions(!this.captionsOn);
    });
    this.setCaptions(this.captionsOn);
  }

  /** Shows the controls (conversation mode) or hides them (render mode). */
  show(on: boolean): void {
    if (this.root) this.root.hidden = !on;
    document.body.dataset.mode = on ? 'conversation' : 'render';
  }

  indicate(state: Indication): void {
    this.indication = state;
    if (this.indicator) this.indicator.dataset.state = state;
    if (this.label) this.label.textContent = LABELS[state];
  }

  setMuted(muted: boolean, available: boolean): void {
    if (!this.muteButton) return;
    this.muteButton.hidden = !available;
    this.muteButton.setAttribute('aria-pressed', String(muted));
    this.muteButton.setAttribute('aria-label', muted ? 'Unmute microphone' : 'Mute microphone');
  }

  setCaptions(on: boolean): void {
    this.captionsOn = on;
    this.ccButton?.setAttribute('aria-pressed', String(on));
    if (this.captions) this.captions.hidden = !on;
    try {
      localStorage.setItem(CAPTIONS_KEY, on ? 'on' : 'off');
    } catch {
      /* not remembered */
    }
  }

  showAgent(text: string): void {
    this.agentCaption = text;
    if (this.agentLine) this.agentLine.textContent = text;
    // The agent answering replaces the visitor's last words.
    if (text) this.showVisitor('', true);
  }

  showVisitor(text: string, final: boolean): void {
    this.visitorCaption = text;
    if (this.visitorLine) {
      this.visitorLine.textContent = text;
      this.visitorLine.dataset.final = String(final);
    }
    if (this.visitorTimer) clearTimeout(this.visitorTimer);
    this.visitorTimer = text && final ? setTimeout(() => this.showVisitor('', true), 8000) : null;
  }

  /**
   * Focuses the text box (the visitor refused the microphone), but only when the player already has
   * the focus: framed in a page where someone is typing, taking it would send their keystrokes here.
   */
  focusText(): void {
    if (document.hasFocus()) this.input?.focus({ preventScroll: true });
  }
}
