import ParleyProtocol

/// The caption page: plain HTML, CSS and JavaScript, kept in the binary so an installed parleyd
/// serves it with nothing beside it and no internet (no build step, no CDN).
///
/// The page connects to `/ws`, shows what the `hello` message and the events say, and
/// reconnects by itself (docs/protocol.md, "The caption page"). Its words come from
/// `PageText`, in the language of its view; the English in the HTML is only what shows before
/// the script runs.
enum WebPage {
    static let html = ##"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>Parley</title>
        <link rel="stylesheet" href="/app.css">
        </head>
        <body>
        <header>
          <span id="link" class="dot" title="Connection"></span>
          <span id="who">Connecting…</span>
          <meter id="level" min="-60" max="0" low="-45" high="-12" optimum="-20" value="-60" title="Microphone level"></meter>
          <span id="langs" role="group" aria-label="Show the page in"></span>
        </header>
        <main>
          <section id="live" aria-live="polite">
            <p id="heard" class="big"></p>
            <p id="said" class="big translation"></p>
          </section>
          <section id="history">
            <h2 id="turns-title">Last turns</h2>
            <ol id="turns"></ol>
          </section>
        </main>
        <footer>
          <p id="notice" role="status"></p>
          <form id="pair" hidden>
            <input id="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}" placeholder="Pairing code" aria-label="Pairing code">
            <button type="submit" id="pair-button">Pair</button>
          </form>
          <form id="reply" hidden>
            <textarea id="text" rows="2" maxlength="\##(SayRequest.maxCharacters)" aria-label="Your reply"></textarea>
            <div class="actions">
              <button type="submit" id="send">Say</button>
              <button type="button" id="repeat">Repeat</button>
              <button type="button" id="swap">Swap languages</button>
            </div>
          </form>
        </footer>
        <script src="/app.js"></script>
        </body>
        </html>
        """##

    static let style = ##"""
        :root { color-scheme: dark; --fg: #f4f4f4; --dim: #9a9a9a; --accent: #7fd1ff; --doubt: #ffcc4d; --bg: #111; }
        * { box-sizing: border-box; }
        /* One screen: the header and the reply box stay in reach, the turns scroll in their own area. */
        body { margin: 0; background: var(--bg); color: var(--fg); font: 18px/1.35 system-ui, sans-serif;
          display: flex; flex-direction: column; height: 100vh; height: 100dvh; overflow: hidden; }
        header, footer { flex: none; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: .5em; padding: .5em .75em; background: #1c1c1c; }
        #who { flex: 1; font-weight: 600; }
        .dot { width: .8em; height: .8em; border-radius: 50%; background: #c33; display: inline-block; }
        .dot.on { background: #3c6; }
        meter { width: 5em; height: 1em; }
        #langs button { font-size: 1em; padding: .3em .7em; margin-left: .2em; border-radius: .4em; border: 1px solid #555;
          background: #222; color: var(--fg); }
        #langs button[aria-pressed="true"] { background: var(--accent); color: #000; border-color: var(--accent); }
        main { flex: 1; min-height: 0; display: flex; flex-direction: column; padding: .5em .75em 0; }
        #live { flex: none; max-height: 45%; overflow-y: auto; }
        #history { flex: 1; min-height: 0; overflow-y: auto; padding-bottom: .5em; }
        .big { font-size: 2em; line-height: 1.2; margin: .2em 0; min-height: 1.2em; word-wrap: break-word; }
        #heard.partial { color: var(--dim); }
        #heard.guess { font-style: italic; opacity: .6; }
        .translation { color: var(--accent); }
        .doubtful { color: var(--doubt); text-decoration: underline dotted; }
        h2 { font-size: 1em; color: var(--dim); margin: 1em 0 .3em; font-weight: normal; }
        ol { list-style: none; padding: 0; margin: 0; }
        li { border-top: 1px solid #2a2a2a; padding: .4em 0; }
        li .first { font-size: 1.2em; }
        li .tag { font-size: .75em; color: var(--dim); margin-right: .4em; text-transform: uppercase; }
        footer { padding: .5em .75em; background: #1c1c1c; }
        #notice { margin: 0 0 .3em; color: var(--doubt); min-height: 1em; }
        #notice.ok { color: #3c6; }
        textarea, input { width: 100%; font-family: inherit; font-size: 1.1em; padding: .4em; background: #000; color: var(--fg); border: 1px solid #555; border-radius: .4em; }
        #pair { display: flex; flex-direction: column; gap: .4em; } #pair[hidden], #reply[hidden] { display: none; }
        .actions { display: flex; gap: .5em; margin-top: .4em; }
        .actions button, #pair button { flex: 1; font-size: 1.05em; padding: .5em; border-radius: .4em; border: 0; background: #333; color: var(--fg); }
        #send { background: var(--accent); color: #000; }
        """##

    /// app.js: the page's logic, with `PageText`'s table in it.
    static let script = ##"""
        "use strict";
        (function () {
          const $ = (id) => document.getElementById(id);
          // Every word the page shows, by language (PageText.swift).
          const text = \##(PageText.json);
          const state = { a: "", b: "", shown: localStorage.getItem("parley.lang") || "", ui: "en", minimum: 0.5, paired: false,
            pairing: "code", turns: [], socket: null, retry: 500, nextId: 1, who: null, connected: false,
            // The live area shows one turn: `current` is true once the words of the turn under way
            // are in it (speech_start, transcript); `typed` is what this page asked to say or repeat.
            current: false, typed: null, codeGiven: false };
          // How many turns the list shows (the hello brings as many).
          const shownTurns = 10;
          // A code in the address pairs (`#code=`, as `parley web` and its QR code give it; the
          // fragment is never sent to a server): it is kept for this browser and taken out of the address bar.
          function takeCode() {
            const given = new URLSearchParams(location.hash.slice(1)).get("code") || new URLSearchParams(location.search).get("code");
            if (!given) return null;
            localStorage.setItem("parley.code", given);
            history.replaceState(null, "", location.pathname);
            return given;
          }
          state.codeGiven = Boolean(takeCode());

          // The browser's languages, most wanted first, as bare codes ("es-MX" is "es").
          function wanted() {
            const list = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || ""];
            return list.map((tag) => String(tag).toLowerCase().split("-")[0]);
          }
          // A word of the page in the view's language (English where the table has none).
          function t(key, values) {
            const table = text[state.ui] || text.en;
            let phrase = table[key] !== undefined ? table[key] : (text.en[key] !== undefined ? text.en[key] : key);
            Object.keys(values || {}).forEach((name) => { phrase = phrase.split("{" + name + "}").join(values[name]); });
            return phrase;
          }
          // A language inside a sentence of the view's language ("inglés"); on its own button, its own name ("English").
          function languageName(code) { return t("lang_" + code, {}) !== "lang_" + code ? t("lang_" + code) : code.toUpperCase(); }
          function ownName(code) { return (text[code] && text[code].name) || code.toUpperCase(); }
          function notice(key, ok) { $("notice").textContent = key ? t(key) : ""; $("notice").className = ok ? "ok" : ""; }
          function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

          // The page's own words, in the view's language.
          function localize() {
            state.ui = text[state.shown] ? state.shown : "en";
            document.documentElement.lang = state.shown || state.ui;
            $("link").title = t("connection");
            $("level").title = t("level");
            $("langs").setAttribute("aria-label", t("show_in"));
            $("turns-title").textContent = t("last_turns");
            $("code").placeholder = t("pairing_code");
            $("code").setAttribute("aria-label", t("pairing_code"));
            $("pair-button").textContent = t("pair");
            $("text").setAttribute("aria-label", t("typed_reply"));
            $("repeat").textContent = t("repeat");
            $("swap").textContent = t("swap");
            if (state.shown) {
              $("send").textContent = t("say_in", { language: languageName(state.shown) });
              $("text").placeholder = t("reply_hint", { language: languageName(state.shown) });
            }
            showWho();
          }
          // Before the daemon names the two languages: the choice made here before, or the browser's language.
          if (!text[state.shown]) state.shown = wanted().find((code) => text[code]) || "";
          localize();

          // Words less sure than min_confidence are marked.
          function words(node, said, list) {
            clear(node);
            const split = (said || "").split(" ");
            const usable = Array.isArray(list) && list.length === split.length && list.every((w, i) => w.text === split[i]);
            if (!usable) { node.textContent = said || ""; return; }
            list.forEach((w, i) => {
              if (i > 0) node.appendChild(document.createTextNode(" "));
              const span = document.createElement("span");
              span.textContent = w.text;
              if (w.confidence < state.minimum) { span.className = "doubtful"; span.title = t("not_sure", { percent: Math.round(w.confidence * 100) }); }
              node.appendChild(span);
            });
          }

          // The view: the side chosen on this page before, else the browser's language if it is one
          // of the two, else the second side's (the person who is not at the device).
          function languages(a, b) {
            state.a = a; state.b = b;
            if (state.shown !== a && state.shown !== b) state.shown = wanted().find((code) => code === a || code === b) || b;
            const box = $("langs");
            clear(box);
            [a, b].forEach((code) => {
              const button = document.createElement("button");
              button.type = "button";
              button.lang = code;
              button.textContent = ownName(code);
              button.setAttribute("aria-pressed", String(code === state.shown));
              button.onclick = () => { state.shown = code; localStorage.setItem("parley.lang", code); languages(state.a, state.b); };
              box.appendChild(button);
            });
            localize();
            renderTurns();
          }

          function renderTurns() {
            const list = $("turns");
            clear(list);
            // As in the live area: the speaker's words, then the translation; each line tagged with its own language.
            state.turns.slice(0, shownTurns).forEach((turn) => {
              const item = document.createElement("li");
              const line = (className, language) => {
                const row = document.createElement("div");
                row.className = className;
                row.lang = language;
                const tag = document.createElement("span");
                tag.className = "tag";
                tag.textContent = language;
                row.appendChild(tag);
                item.appendChild(row);
                return row;
              };
              const source = document.createElement("span");
              words(source, turn.source_text, turn.words);
              line("first", turn.source_lang).appendChild(source);
              const target = document.createElement("span");
              target.textContent = turn.translated_text || t("not_translated");
              target.className = "translation";
              line("second", turn.target_lang).appendChild(target);
              list.appendChild(item);
            });
          }

          // A turn in the big area at the top: its words and their translation.
          function showTurn(turn) {
            $("heard").className = "big";
            $("heard").title = "";
            words($("heard"), turn.source_text, turn.words);
            $("said").textContent = turn.translated_text || "";
          }

          // What Parley is doing, in words: "echo_guard" is the end of speaking for the reader.
          function showWho() {
            if (!state.connected) { $("who").textContent = t(state.who ? "reconnecting" : "connecting"); return; }
            if (!state.who || !state.who.state) return;
            const code = state.who.speaker === "a" ? state.a : state.who.speaker === "b" ? state.b : "";
            // Auto mode has not decided who speaks: no language is claimed.
            if (state.who.decided === false && (state.who.state === "listening" || state.who.state === "hearing")) {
              $("who").textContent = t("state_" + state.who.state + "_any");
              return;
            }
            const name = state.who.state === "echo_guard" ? "speaking" : state.who.state;
            const known = ["listening", "hearing", "recognizing", "translating", "speaking", "paused", "idle", "device_lost"];
            $("who").textContent = t(known.includes(name) ? "state_" + name : "state_other", { language: code ? languageName(code) : "…" });
          }
          function who(data) { state.who = { state: data.state, speaker: data.speaker, decided: data.decided }; showWho(); }

          function showPairing() {
            const acting = state.pairing === "code";
            $("pair").hidden = !acting || state.paired;
            $("reply").hidden = !acting || !state.paired;
          }

          function send(type, data) {
            if (!state.socket || state.socket.readyState !== WebSocket.OPEN) { notice("not_connected"); return false; }
            state.socket.send(JSON.stringify({ type: type, id: state.nextId++, data: data || {} }));
            return true;
          }
          // A turn's live words: dimmed while they come; a guess (auto mode not yet sure who speaks) dimmed more, in italics.
          function live(text, guessed) {
            $("heard").className = "big partial" + (guessed ? " guess" : "");
            $("heard").title = guessed ? t("guessed_words") : "";
            $("heard").textContent = text;
          }

          function onMessage(message) {
            let event;
            try { event = JSON.parse(message.data); } catch (e) { return; }
            const data = event.data || {};
            switch (event.type) {
              case "hello":
                state.minimum = data.min_confidence;
                state.paired = data.paired;
                state.pairing = data.pairing;
                state.turns = data.turns || [];
                // After a reload the top shows the last turn until the next one comes.
                if (state.turns.length > 0 && !$("heard").textContent) showTurn(state.turns[0]);
                // Paired by the code in the address just opened: said once.
                if (data.paired && state.codeGiven) notice("paired", true);
                state.codeGiven = false;
                languages(data.status.a.language, data.status.b.language);
                who({ state: data.status.state, speaker: data.status.speaker, decided: data.status.decided });
                showPairing();
                break;
              case "state":
                // Between turns: the next translation is a new turn's (a replay is stored as no turn).
                if (["listening", "paused", "idle"].includes(data.state)) state.current = false;
                who(data);
                break;
              case "level": $("level").value = Math.max(-60, Math.min(0, data.rms_db)); break;
              case "speech_start": state.current = true; live("...", data.decided === false); $("said").textContent = ""; break;
              case "partial": state.current = true; live(data.text, data.decided === false); break;
              case "transcript":
                state.current = true;
                $("heard").className = "big"; $("heard").title = "";
                words($("heard"), data.text, data.words); $("said").textContent = "";
                break;
              case "translation":
                // A typed or repeated turn has no words heard: the last turn's must not stay above its translation.
                if (!state.current) { $("heard").className = "big"; $("heard").title = ""; $("heard").textContent = state.typed || ""; }
                state.current = true;
                $("said").textContent = data.text;
                break;
              case "turn":
                state.current = false; state.typed = null;
                state.turns = [data].concat(state.turns.filter((t) => t.id !== data.id)).slice(0, shownTurns);
                if (data.source_text) showTurn(data); else $("said").textContent = data.translated_text || "";
                renderTurns();
                break;
              case "error":
                if (data.code === "wrong_code" || data.code === "pairing_required") {
                  localStorage.removeItem("parley.code"); state.paired = false; showPairing();
                  // A wrong code is not left in the field: it is emptied for the next try.
                  if (data.code === "wrong_code") { $("code").value = ""; $("code").focus(); }
                }
                state.typed = null;
                // The reader's language, not the daemon's English message (which is for the CLI and logs).
                notice(text.en["error_" + data.code] !== undefined ? "error_" + data.code : "error_other");
                if (data.code === "too_many_clients") state.retry = 10000;
                break;
              case "result":
                notice("");
                state.typed = null;
                if (data.paired) { state.paired = true; showPairing(); notice("paired", true); }
                if (data.speaker_a && data.speaker_b) languages(data.speaker_a, data.speaker_b);
                break;
            }
          }

          function connect() {
            const code = localStorage.getItem("parley.code");
            const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws" + (code ? "?code=" + encodeURIComponent(code) : "");
            const socket = new WebSocket(url);
            state.socket = socket;
            socket.onopen = () => { $("link").className = "dot on"; state.connected = true; state.retry = 500; notice(""); showWho(); };
            socket.onmessage = onMessage;
            socket.onclose = () => {
              $("link").className = "dot";
              state.connected = false;
              state.who = state.who || { state: "", speaker: null };
              showWho();
              setTimeout(connect, state.retry);
              state.retry = Math.min(state.retry * 2, 10000);
            };
          }

          $("pair").onsubmit = (e) => {
            e.preventDefault();
            const code = $("code").value.trim();
            localStorage.setItem("parley.code", code);
            send("pair", { code: code });
          };
          $("reply").onsubmit = (e) => {
            e.preventDefault();
            const text = $("text").value.trim();
            if (!text) return;
            if (send("say", { language: state.shown, text: text })) state.typed = text;
            $("text").value = "";
          };
          // The code given to a page that is open already (its address opened again): it pairs at once.
          window.addEventListener("hashchange", () => { const code = takeCode(); if (code) send("pair", { code: code }); });
          $("repeat").onclick = () => {
            const last = state.turns.find((turn) => turn.translated_text);
            if (send("replay") && last) state.typed = last.source_text;
          };
          $("swap").onclick = () => send("swap");
          connect();
        })();
        """##
}
