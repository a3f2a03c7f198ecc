/* sift /ui: runs a search through this server's own API (same bearer keys), shows the
   progress events as they stream, then draws the finished trace with SiftTrace.render. */
(function () {
  "use strict";

  var KEY_STORE = "sift.apiKey";
  var COLLECTION_STORE = "sift.collection";
  var $ = function (id) { return document.getElementById(id); };
  var el = window.SiftTrace.el;
  var num = window.SiftTrace.num;

  var form = $("search-form");
  var keyInput = $("api-key");
  var select = $("collection");
  var statusBox = $("status");
  var progressBox = $("progress");
  var logBox = $("log");
  var liveChart = $("live-chart");
  var traceBox = $("sift-trace");
  var runButton = $("run");

  function status(text, isError) {
    statusBox.textContent = text;
    statusBox.className = "status" + (isError ? " error" : "");
    statusBox.setAttribute("data-state", isError ? "error" : "ok");
  }

  function headers(extra) {
    var out = Object.assign({}, extra || {});
    var key = keyInput.value.trim();
    if (key) out.Authorization = "Bearer " + key;
    return out;
  }

  // An error body is {"error_code", "error_msg"}; anything else is reported by status.
  function errorText(response) {
    return response.text().then(function (body) {
      try {
        var parsed = JSON.parse(body);
        if (parsed && parsed.error_msg) return parsed.error_msg + " (" + parsed.error_code + ")";
      } catch (ignored) { /* not JSON: fall through */ }
      return "HTTP " + response.status;
    });
  }

  function loadCollections() {
    status("Loading collections\u2026", false);
    return fetch("v1/collections", { headers: headers(), cache: "no-store" })
      .then(function (response) {
        if (!response.ok) {
          return errorText(response).then(function (text) {
            throw new Error("could not list collections: " + text);
          });
        }
        return response.json();
      })
      .then(function (body) {
        var names = body.collections || [];
        while (select.firstChild) select.removeChild(select.firstChild);
        names.forEach(function (name) { select.appendChild(el("option", { value: name }, name)); });
        var remembered = sessionStorage.getItem(COLLECTION_STORE);
        if (remembered && names.indexOf(remembered) >= 0) select.value = remembered;
        status(names.length ? names.length + " collection" + (names.length === 1 ? "" : "s") +
          " available." : "This key may use no collection.", !names.length);
        select.setAttribute("data-loaded", "true");
      })
      .catch(function (exc) { status(exc.message, true); });
  }

  // ------------------------------------------------------------------ progress

  function Progress() {
    this.tokens = {};      // rollout -> [{turn, tokens_after}]
    this.finished = {};    // rollout -> sift.finished event
    this.tiers = null;
    this.lines = 0;
  }

  Progress.prototype.log = function (text, cls) {
    logBox.appendChild(el("div", { class: cls || "" }, text));
    logBox.scrollTop = logBox.scrollHeight;
    this.lines += 1;
    logBox.setAttribute("data-lines", String(this.lines));
    $("progress-count").textContent = "(" + this.lines + " events)";
  };

  Progress.prototype.event = function (name, data) {
    var lane = data.rollout === undefined ? "" : "[rollout " + data.rollout + "] ";
    var key = String(data.rollout || 0);
    if (name === "sift.turn_started") {
      this.log(lane + "turn " + data.turn + " (" + num(data.tokens) + " tokens in context)");
      status("Turn " + data.turn + "\u2026", false);
    } else if (name === "sift.tool_call") {
      this.log(lane + "  " + data.tool + "(" + window.SiftTrace.argsText(data.arguments) + ")" +
        (data.error ? "  error: " + data.error : ""), data.error ? "err" : "");
    } else if (name === "sift.chunks_added") {
      this.log(lane + "    +" + (data.chunk_ids || []).length + " chunks from " + data.tool);
    } else if (name === "sift.chunks_pruned") {
      this.log(lane + "  pruned " + (data.chunk_ids || []).length + " chunks (by " + data.by + ")");
    } else if (name === "sift.token_usage") {
      this.tiers = { threshold: data.threshold, rejection: data.rejection, budget: data.budget };
      (this.tokens[key] = this.tokens[key] || []).push({ turn: data.turn, tokens_after: data.used });
      this.drawChart();
    } else if (name === "sift.finished") {
      this.finished[key] = data;
      this.log(lane + "finished: " + data.stopped_because + " after " + data.turns + " turns");
    }
  };

  Progress.prototype.drawChart = function () {
    var tokens = this.tokens;
    var keys = Object.keys(tokens).sort(function (a, b) { return a - b; });
    var lanes = keys.map(function (k) {
      return { index: Number(k), label: keys.length > 1 ? "rollout " + k : null, trace: tokens[k] };
    });
    while (liveChart.firstChild) liveChart.removeChild(liveChart.firstChild);
    liveChart.appendChild(window.SiftTrace.tokenChart(lanes, this.tiers));
  };

  // ------------------------------------------------------------------ the stream

  function parseFrame(frame) {
    var name = "message", data = [];
    frame.split("\n").forEach(function (line) {
      if (!line || line.charAt(0) === ":") return;
      var colon = line.indexOf(":");
      var field = colon < 0 ? line : line.slice(0, colon);
      var value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    });
    return data.length ? { name: name, data: JSON.parse(data.join("\n")) } : null;
  }

  function readStream(response, onFrame) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder("utf-8");
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          buffer += decoder.decode();
          if (buffer.trim()) onFrame(parseFrame(buffer.replace(/\r/g, "")));
          return;
        }
        buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r/g, "");
        var end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          var frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          var parsed = parseFrame(frame);
          if (parsed) onFrame(parsed);
        }
        return pump();
      });
    }
    return pump();
  }

  function optionalInt(id) {
    var raw = $(id).value.trim();
    return raw ? parseInt(raw, 10) : null;
  }

  function search(event) {
    event.preventDefault();
    var question = $("question").value.trim();
    if (!select.value) { status("Choose a collection first.", true); return; }
    if (!question) { status("Type a question.", true); return; }
    var body = { collection: select.value, question: question };
    var topK = optionalInt("top-k"), maxTurns = optionalInt("max-turns");
    var rollouts = optionalInt("rollouts");
    if (topK) body.top_k = topK;
    if (maxTurns) body.max_turns = maxTurns;
    if (rollouts) body.rollouts = rollouts;
    sessionStorage.setItem(COLLECTION_STORE, select.value);

    var progress = new Progress();
    while (logBox.firstChild) logBox.removeChild(logBox.firstChild);
    while (liveChart.firstChild) liveChart.removeChild(liveChart.firstChild);
    while (traceBox.firstChild) traceBox.removeChild(traceBox.firstChild);
    progressBox.hidden = false;
    progressBox.open = true;
    runButton.disabled = true;
    status("Searching\u2026", false);
    var outcome = null;

    fetch("v1/search", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify(body),
      cache: "no-store",
    })
      .then(function (response) {
        if (!response.ok) {
          return errorText(response).then(function (text) { throw new Error(text); });
        }
        return readStream(response, function (frame) {
          if (frame.name === "sift.result") {
            outcome = frame.data;
          } else if (frame.name === "sift.error") {
            throw new Error(frame.data.error_msg + " (" + frame.data.error_code + ")");
          } else {
            progress.event(frame.name, frame.data);
          }
        });
      })
      .then(function () {
        if (!outcome) throw new Error("the stream ended without a result");
        window.SiftTrace.render(traceBox, {
          result: outcome, rollouts: [], tiers: progress.tiers, finished: progress.finished,
        });
        status("Done: stopped because " + outcome.stopped_because + ", " +
          outcome.evidence.length + " evidence items.", false);
        traceBox.setAttribute("data-state", "done");
        progressBox.open = false;  // the finished trace below draws the same curve, whole
      })
      .catch(function (exc) {
        status("Search failed: " + exc.message, true);
      })
      .then(function () { runButton.disabled = false; });
  }

  keyInput.value = sessionStorage.getItem(KEY_STORE) || "";
  function keyChanged() {
    sessionStorage.setItem(KEY_STORE, keyInput.value.trim());
    if (keyInput.value.trim()) {
      loadCollections();
    } else {
      while (select.firstChild) select.removeChild(select.firstChild);
      status("Type your API key (on a server without keys, press Reload collections).", false);
    }
  }

  keyInput.addEventListener("change", keyChanged);
  $("reload").addEventListener("click", function () { loadCollections(); });
  form.addEventListener("submit", search);
  keyChanged();
})();
