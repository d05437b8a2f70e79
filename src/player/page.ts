/**
 * The player page's HTML (and the friendly "link invalid or expired" page). Styles are inline; the
 * script is the esbuild bundle under /assets/player/. Works in a frame on any site and from phone
 * to desktop sizes.
 */
import type { PageStill } from '../faces/stills.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const STYLE = `
:root{color-scheme:dark;--fg:#f3f4f6;--muted:#aab0ba;--panel:rgba(17,19,23,.72)}
*{box-sizing:border-box}
html,body{margin:0;height:100%;background:#1c1e22;color:var(--fg);font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow:hidden;-webkit-tap-highlight-color:transparent}
#stage{position:fixed;inset:0;width:100%;height:100%;display:block;touch-action:manipulation}
#backdrop{position:fixed;inset:0;overflow:hidden;pointer-events:none}
#still{position:fixed;pointer-events:none;user-select:none;--k:max(calc(100vh * var(--a)),min(calc(100vh * var(--b)),calc(100vw * var(--c))));left:calc(50% + var(--k) * var(--x0));top:calc(50% - var(--k) * var(--y1));width:calc(var(--k) * (var(--x1) - var(--x0)));height:calc(var(--k) * (var(--y1) - var(--y0)))}
body[data-still=gone] #still{display:none}
body[data-still][data-state=loading] [data-for=loading]{background:transparent;justify-content:flex-end;padding-bottom:max(28px,env(safe-area-inset-bottom))}
#backdrop canvas{position:absolute;left:0;top:0;transform-origin:0 0;will-change:transform,opacity}
.overlay{position:fixed;inset:0;display:none;align-items:center;justify-content:center;flex-direction:column;gap:12px;text-align:center;padding:24px}
.overlay p{margin:0;max-width:28em}
.overlay .detail{color:var(--muted);font-size:13px}
.card{background:var(--panel);backdrop-filter:blur(8px);-webkit-backdrop-filter:blur(8px);border-radius:14px;padding:20px 24px;display:flex;flex-direction:column;gap:8px;align-items:center}
body[data-state=loading] [data-for=loading],body[data-state=ended] [data-for=ended],body[data-state=invalid] [data-for=invalid]{display:flex}
body[data-state=loading] [data-for=loading]{background:#1c1e22}
body[data-state=ended] #stage,body[data-state=invalid] #stage,body[data-state=ended] #still,body[data-state=invalid] #still,body[data-state=ended] #backdrop,body[data-state=invalid] #backdrop{filter:blur(6px) brightness(.6)}
.pill{position:fixed;top:12px;left:50%;transform:translateX(-50%);display:none;align-items:center;gap:8px;background:var(--panel);border-radius:999px;padding:6px 14px;font-size:13px;backdrop-filter:blur(6px);-webkit-backdrop-filter:blur(6px)}
body[data-state=reconnecting] [data-for=reconnecting]{display:flex}
.spin{width:22px;height:22px;border-radius:50%;border:2.5px solid rgba(255,255,255,.2);border-top-color:#fff;animation:spin 0.9s linear infinite}
.pill .spin{width:12px;height:12px;border-width:2px}
@keyframes spin{to{transform:rotate(360deg)}}
#sound{position:fixed;left:50%;bottom:max(18px,env(safe-area-inset-bottom));transform:translateX(-50%);border:0;border-radius:999px;padding:12px 20px;font:600 15px system-ui,-apple-system,sans-serif;color:#111;background:#fff;box-shadow:0 6px 24px rgba(0,0,0,.35);cursor:pointer;display:flex;gap:8px;align-items:center}
#sound[hidden]{display:none}
body[data-state=ended] #sound,body[data-state=invalid] #sound{display:none}
#conversation{position:fixed;left:0;right:0;bottom:0;display:flex;flex-direction:column;gap:8px;padding:10px 12px max(12px,env(safe-area-inset-bottom));pointer-events:none}
#conversation[hidden],body[data-state=ended] #conversation,body[data-state=invalid] #conversation,body[data-state=loading] #conversation{display:none}
#conversation>*{pointer-events:auto}
#indicator{position:fixed;top:12px;left:12px;display:flex;align-items:center;gap:8px;background:var(--panel);border-radius:999px;padding:6px 12px;font-size:13px;backdrop-filter:blur(6px);-webkit-backdrop-filter:blur(6px)}
#indicator[data-state=idle]{display:none}
#indicator .dot{width:10px;height:10px;border-radius:50%;background:#9ca3af}
#indicator[data-state=listening] .dot{background:#34d399;animation:pulse 1.4s ease-in-out infinite}
#indicator[data-state=thinking] .dot{background:#fbbf24;animation:pulse .7s ease-in-out infinite}
#indicator[data-state=speaking] .dot{background:#60a5fa}
#indicator[data-state=muted] .dot{background:#f87171}
@keyframes pulse{50%{opacity:.35;transform:scale(.8)}}
#captions{align-self:center;max-width:min(36em,100%);text-align:center;display:flex;flex-direction:column;gap:4px}
#captions[hidden]{display:none}
#captions p{margin:0;padding:4px 10px;border-radius:8px;background:rgba(0,0,0,.62);font-size:15px;line-height:1.35;text-shadow:0 1px 2px #000}
#captions p:empty{display:none}
#caption-visitor{color:#d1d5db;font-style:italic}
#caption-visitor[data-final=true]{font-style:normal}
#typebox{display:flex;gap:6px;align-items:center;background:var(--panel);border-radius:999px;padding:5px;backdrop-filter:blur(8px);-webkit-backdrop-filter:blur(8px)}
#typebox input{flex:1;min-width:0;border:0;outline:0;background:transparent;color:var(--fg);font:inherit;padding:7px 8px}
#typebox button{flex:none;border:0;border-radius:999px;width:36px;height:36px;display:flex;align-items:center;justify-content:center;background:rgba(255,255,255,.12);color:var(--fg);cursor:pointer;font:700 12px system-ui,sans-serif}
#typebox button[hidden]{display:none}
#typebox button:focus-visible,#typebox input:focus-visible{outline:2px solid #60a5fa;outline-offset:1px}
#mute[aria-pressed=true]{background:#f87171;color:#111}
#cc[aria-pressed=false]{opacity:.55;text-decoration:line-through}
body[data-mode=conversation] #sound{bottom:calc(max(18px,env(safe-area-inset-bottom)) + 64px)}
@media (max-width:420px){html,body{font-size:14px}.card{padding:16px 18px}}
@media (prefers-reduced-motion:reduce){.spin{animation-duration:3s}#indicator .dot{animation:none!important}}
`;

const MIC =
  '<svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1A7 7 0 0 0 19 11h-2z"/></svg>';
const SEND = '<svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M3 20.5 21 12 3 3.5v6.6l12 1.9-12 1.9z"/></svg>';

const SPEAKER =
  '<svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M3 9v6h4l5 5V4L7 9H3zm13.5 3A4.5 4.5 0 0 0 14 8v8a4.5 4.5 0 0 0 2.5-4zM14 3.2v2.1a7 7 0 0 1 0 13.4v2.1a9 9 0 0 0 0-17.6z"/></svg>';

export interface PageOptions {
  wsPath: string;
  scriptUrl: string;
  workletUrl: string;
  faceUrl?: string | null;
  /** The face's still picture (stills.ts), shown under the 3D canvas until the live head has drawn. */
  still?: PageStill | null;
  title?: string;
}

/** The document head both pages share; `extra` adds page-specific tags. */
function head(title: string, extra = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${esc(title)}</title>${extra}
<style>${STYLE}</style>
</head>`;
}

export function playerPage(o: PageOptions): string {
  // JSON inside <script type="application/json">: escape "<" so no tag can close it.
  const config = JSON.stringify({ ws: o.wsPath, worklet: o.workletUrl, face: o.faceUrl ?? null }).replace(/</g, '\\u003c');
  const preload = o.faceUrl ? `<link rel="preload" href="${esc(o.faceUrl)}" as="fetch" crossorigin="anonymous">` : '';
  // The still first: the one thing the first paint needs. Its place is the camera rig's rule in CSS
  // (faces/still.ts, StillPlacement), so it paints where the live head will be before any script runs.
  const s = o.still;
  const stillPreload = s ? `\n<link rel="preload" href="${esc(s.url)}" as="image" fetchpriority="high">` : '';
  const stillImg = s
    ? `\n<img id="still" src="${esc(s.url)}" width="${s.width}" height="${s.height}" alt="" aria-hidden="true" fetchpriority="high" elementtiming="face-still" style="${Object.entries(
        s.placement,
      )
        .map(([k, v]) => `--${k}:${Number(v)}`)
        .join(';')}">`
    : '';
  return `${head(o.title ?? 'Presence', `${stillPreload}\n<link rel="preload" href="${esc(o.scriptUrl)}" as="script">\n${preload}`)}
<body data-state="loading"${s ? ' data-still="shown"' : ''}>
<div id="backdrop" aria-hidden="true"></div>${stillImg}
<canvas id="stage" aria-label="Live avatar"></canvas>
<div class="overlay" data-for="loading" role="status"><div class="spin"></div><p class="detail">Connecting…</p></div>
<div class="pill" data-for="reconnecting" role="status"><div class="spin"></div><span>Reconnecting…</span></div>
<div class="overlay" data-for="ended" role="status"><div class="card"><p><strong>The conversation has ended.</strong></p><p class="detail">Thanks for talking with us.</p></div></div>
<div class="overlay" data-for="invalid" role="alert"><div class="card"><p><strong>This link is invalid or has expired.</strong></p><p class="detail">Ask the site for a new one.</p></div></div>
<button id="sound" type="button" hidden>${SPEAKER}<span>Tap to turn on sound</span></button>
<div id="conversation" hidden>
<div id="indicator" role="status" aria-live="polite" data-state="idle"><span class="dot"></span><span class="label"></span></div>
<div id="captions"><p id="caption-visitor" aria-live="polite" aria-atomic="true" aria-label="What the agent hears you say"></p><p id="caption-agent" aria-live="polite" aria-atomic="true"></p></div>
<form id="typebox" autocomplete="off"><button id="mute" type="button" aria-pressed="false" aria-label="Mute microphone" hidden>${MIC}</button><input id="typed" name="typed" maxlength="1000" placeholder="Type instead…" aria-label="Type a message" enterkeyhint="send"><button id="send" type="submit" aria-label="Send">${SEND}</button><button id="cc" type="button" aria-pressed="true" aria-label="CC (captions)" title="Captions">CC</button></form>
</div>
<script id="presence-config" type="application/json">${config}</script>
<script src="${esc(o.scriptUrl)}" defer></script>
</body>
</html>`;
}

export function invalidPage(message = 'This link is invalid or has expired.', detail = 'Ask the site for a new one.'): string {
  return `${head('Presence')}
<body data-state="invalid">
<div class="overlay" data-for="invalid" role="alert"><div class="card"><p><strong>${esc(message)}</strong></p><p class="detail">${esc(detail)}</p></div></div>
</body>
</html>`;
}
