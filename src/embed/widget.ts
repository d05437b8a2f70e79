/**
 * `/embed.js`: the script of the embed config's snippet. It reads its `data-*` attributes, asks
 * the service for the widget's settings (from an allowed origin), draws the button (or the inline
 * frame) in a shadow root so the site's styles cannot reach it, and when the visitor opens it,
 * starts a conversation-mode session with the public embed key and shows its player in a frame.
 *
 * Attributes: `data-embed-key` (required); `data-position`, `data-button-text`, `data-color`
 * (fallbacks until the settings arrive); `data-visitor-id` (the site's own visitor id; otherwise a
 * random anonymous id kept in this site's localStorage, so it is stable per browser and site);
 * `data-visitor` (JSON `{"values": {...}, "timestamp": …, "signature": "…"}`: visitor values,
 * signed by the site's server as docs/decisions.md describes). `window.PresenceWidget` has `open()`
 * and `close()` for the site's own buttons.
 *
 * Plain ES2017 without dependencies: it runs on the business's site, so it stays small.
 */
export const WIDGET_SCRIPT = String.raw`/*! Presence embed widget */
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || !script.src) return;
  var key = script.getAttribute('data-embed-key') || '';
  var base = script.src.replace(/\/embed\.js(\?.*)?$/, '');
  var attr = function (name, fallback) { var v = script.getAttribute('data-' + name); return v == null || v === '' ? fallback : v; };
  var settings = {
    position: attr('position', 'bottom-right'), button_text: attr('button-text', 'Talk to us'),
    primary_color: attr('color', '#2f6fed'), auto_open: false, width: 400, height: 600
  };
  var state = { open: false, starting: false, frame: null, error: null, sessionId: null, starts: 0 };

  function visitorId() {
    var own = attr('visitor-id', '');
    if (own) return own.slice(0, 128);
    var storageKey = 'presence_visitor_' + key;
    try {
      var kept = window.localStorage.getItem(storageKey);
      if (kept && /^v_[0-9a-f]{32}$/.test(kept)) return kept;
    } catch (e) { /* storage blocked: an id for this page only */ }
    var bytes = new Uint8Array(16);
    (window.crypto || window.msCrypto).getRandomValues(bytes);
    var id = 'v_' + Array.prototype.map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
    try { window.localStorage.setItem(storageKey, id); } catch (e) { /* page only */ }
    return id;
  }
  var visitor = visitorId();
  var values = null;
  try { values = script.getAttribute('data-visitor') ? JSON.parse(script.getAttribute('data-visitor')) : null; } catch (e) { values = null; }

  var host = document.createElement('div');
  host.setAttribute('data-presence-widget', '');
  var root = host.attachShadow ? host.attachShadow({ mode: 'open' }) : host;
  var style = document.createElement('style');
  var panel = document.createElement('div');
  panel.className = 'panel';
  panel.hidden = true;
  var bar = document.createElement('div');
  bar.className = 'bar';
  var close = document.createElement('button');
  close.type = 'button';
  close.className = 'close';
  close.setAttribute('aria-label', 'Close');
  close.textContent = '\u00d7';
  var note = document.createElement('p');
  note.className = 'note';
  note.setAttribute('role', 'status');
  bar.appendChild(close);
  panel.appendChild(bar);
  panel.appendChild(note);
  var button = document.createElement('button');
  button.type = 'button';
  button.className = 'open';
  root.appendChild(style);
  root.appendChild(panel);
  root.appendChild(button);

  function draw() {
    var inline = settings.position === 'inline';
    var side = settings.position === 'bottom-left' ? 'left' : 'right';
    var w = Math.max(240, Math.min(1200, Number(settings.width) || 400));
    var h = Math.max(300, Math.min(1200, Number(settings.height) || 600));
    var color = /^#[0-9a-fA-F]{3,8}$/.test(settings.primary_color) ? settings.primary_color : '#2f6fed';
    style.textContent =
      ':host{all:initial}' +
      '.open{' + (inline ? '' : 'position:fixed;bottom:20px;' + side + ':20px;z-index:2147483000;') + 'border:0;border-radius:999px;padding:12px 20px;background:' + color + ';color:#fff;font:600 15px system-ui,-apple-system,sans-serif;box-shadow:0 6px 24px rgba(0,0,0,.25);cursor:pointer}' +
      '.open[hidden],.panel[hidden]{display:none}' +
      '.panel{' + (inline ? 'position:relative;' : 'position:fixed;bottom:20px;' + side + ':20px;z-index:2147483001;box-shadow:0 12px 48px rgba(0,0,0,.35);') + 'width:' + w + 'px;height:' + h + 'px;max-width:calc(100vw - 24px);max-height:calc(100vh - 40px);border-radius:14px;overflow:hidden;background:#1c1e22}' +
      '.panel iframe{border:0;width:100%;height:100%;display:block}' +
      '.bar{position:absolute;top:8px;right:8px;z-index:1}' +
      '.close{width:32px;height:32px;border:0;border-radius:50%;background:rgba(0,0,0,.55);color:#fff;font:20px/1 system-ui,sans-serif;cursor:pointer}' +
      '.note{margin:0;position:absolute;inset:auto 16px 45% 16px;text-align:center;color:#e5e7eb;font:14px/1.4 system-ui,sans-serif}' +
      '.note:empty{display:none}';
    button.textContent = settings.button_text;
  }

  function request(method, path, body) {
    return fetch(base + path, {
      method: method, mode: 'cors', credentials: 'omit',
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) { return { status: r.status, data: data }; });
    });
  }

  function open() {
    if (state.open || state.starting) return;
    state.starting = true;
    state.open = true;
    panel.hidden = false;
    if (settings.position !== 'inline') button.hidden = true;
    note.textContent = 'Connecting\u2026';
    var body = { embed_key: key, visitor_id: visitor };
    if (values && typeof values === 'object') body.visitor = values;
    request('POST', '/v1/embed/sessions', body).then(function (r) {
      state.starting = false;
      if (!state.open) return;
      if (r.status !== 201) {
        state.error = (r.data && r.data.detail && r.data.detail.code) || ('http_' + r.status);
        note.textContent = r.status === 429 ? 'Please wait a moment and try again.' : 'The assistant is not available right now.';
        return;
      }
      state.starts++;
      state.error = null;
      state.sessionId = r.data.session_id;
      note.textContent = '';
      var frame = document.createElement('iframe');
      frame.src = r.data.player_url;
      frame.allow = 'microphone; autoplay';
      frame.title = settings.button_text;
      state.frame = frame;
      panel.appendChild(frame);
    }, function () {
      state.starting = false;
      state.error = 'network';
      note.textContent = 'The assistant is not available right now.';
    });
  }

  function shut() {
    state.open = false;
    // Removing the frame closes the player: the conversation ends after its short grace.
    if (state.frame) panel.removeChild(state.frame);
    state.frame = null;
    state.sessionId = null;
    panel.hidden = true;
    button.hidden = false;
    note.textContent = '';
  }

  button.addEventListener('click', open);
  close.addEventListener('click', shut);
  draw();

  request('GET', '/v1/embed/config?embed_key=' + encodeURIComponent(key)).then(function (r) {
    if (r.status !== 200) {
      // Unknown key or a site that is not allowed: draw nothing.
      state.error = (r.data && r.data.detail && r.data.detail.code) || ('http_' + r.status);
      window.PresenceWidget.error = state.error;
      return;
    }
    for (var k in settings) if (Object.prototype.hasOwnProperty.call(r.data, k)) settings[k] = r.data[k];
    draw();
    if (settings.position === 'inline' && script.parentNode) script.parentNode.insertBefore(host, script.nextSibling);
    else document.body.appendChild(host);
    if (settings.auto_open) open();
  }, function () { state.error = 'network'; });

  window.PresenceWidget = {
    open: open, close: shut, visitorId: visitor, error: null,
    get state() { return { open: state.open, starting: state.starting, error: state.error, sessionId: state.sessionId, starts: state.starts, drawn: host.isConnected }; }
  };
})();
`;
