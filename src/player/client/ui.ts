/**
 * What the visitor sees around the avatar: loading, live, reconnecting, ended, invalid link, and
 * the one-tap "start sound" button when the browser blocks autoplay. The markup is in the page;
 * this only switches `data-state` on <body> and the sound button.
 */
export type PageState = 'loading' | 'live' | 'reconnecting' | 'ended' | 'invalid';

export class Ui {
  state: PageState = 'loading';
  private readonly sound = document.getElementById('sound') as HTMLButtonElement | null;

  set(state: PageState, detail?: string): void {
    if (this.state === 'ended' || this.state === 'invalid') return; // final
    this.state = state;
    document.body.dataset.state = state;
    const msg = document.querySelector(`[data-for="${state}"] .detail`);
    if (msg && detail) msg.textContent = detail;
  }

  /** Shows the sound button; `onTap` runs inside the user gesture. */
  askForSound(onTap: () => void, label?: string): void {
    if (!this.sound) return;
    this.sound.hidden = false;
    const text = this.sound.querySelector('span');
    if (text && label) text.textContent = label;
    this.sound.onclick = (e) => {
      e.stopPropagation();
      onTap();
    };
  }

  /** Relabels the sound button (conversation mode: the tap also starts the microphone). */
  soundLabel(label: string): void {
    const text = this.sound?.querySelector('span');
    if (text) text.textContent = label;
  }

  soundOn(): void {
    if (this.sound) this.sound.hidden = true;
  }
}
