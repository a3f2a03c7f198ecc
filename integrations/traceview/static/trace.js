/* sift trace viewer: draws one episode from the JSON a trace page embeds (and that /ui
   receives from the API). Everything from the data becomes text nodes or known attribute
   values: nothing in a question, a chunk or an error message is ever parsed as HTML. */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var LANE_COLOURS = ["#2456c9", "#0f8b8d", "#8e44ad", "#c0392b", "#2e7d32", "#6d4c41",
    "#00838f", "#ad1457"];
  var STOP_TEXT = {
    final: "the policy concluded",
    max_turns: "the turn limit was reached",
    budget: "the token budget ran out",
    deadline: "the deadline passed",
    error: "the episode failed",
  };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, children) {
    var node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) return;
      if (name === "href" && !/^(#|[\w.\-\/]+\.html$)/.test(String(value))) {
        // Only in-page anchors and sibling pages: the data never picks a link target.
        return;
      }
      node.setAttribute(name, String(value));
    });
  }

  function append(node, children) {
    if (children === null || children === undefined) return;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    });
  }

  function num(value) {
    return Number(value || 0).toLocaleString("en-US");
  }

  function ms(value) {
    var v = Number(value || 0);
    return (v >= 1000 ? (v / 1000).toFixed(2) + " s" : v.toFixed(v >= 100 ? 0 : 1) + " ms");
  }

  // The one argument a call is known by (its query, pattern or document id), to match
  // an evidence item's found_by against the calls.
  function argText(args) {
    if (!args || typeof args !== "object") return String(args === undefined ? "" : args);
    var keys = Object.keys(args);
    if (keys.length === 1) {
      var only = args[keys[0]];
      return typeof only === "string" ? only : JSON.stringify(only);
    }
    return JSON.stringify(args);
  }

  // A value as a person reads it: a string between plain quotes exactly as written (no
  // JSON escapes: a grep pattern's \w stays \w, Japanese stays Japanese), lists and
  // objects spelled out the same way. Always drawn as text, never as markup.
  function valueText(value) {
    if (typeof value === "string") return "\"" + value + "\"";
    if (value === null || value === undefined) return "null";
    if (Array.isArray(value)) return "[" + value.map(valueText).join(", ") + "]";
    if (typeof value === "object") {
      return "{" + Object.keys(value).map(function (k) {
        return k + ": " + valueText(value[k]);
      }).join(", ") + "}";
    }
    return String(value);
  }

  // A call's arguments as `name: value` pairs (`query: "金閣寺"`), not a JSON repr.
  function argsText(args) {
    if (args === null || args === undefined) return "";
    if (typeof args !== "object" || Array.isArray(args)) return valueText(args);
    return Object.keys(args).map(function (k) { return k + ": " + valueText(args[k]); })
      .join(", ");
  }

  function argsView(args) {
    var parts = ["("];
    if (args && typeof args === "object" && !Array.isArray(args)) {
      Object.keys(args).forEach(function (k, i) {
        if (i) parts.push(", ");
        parts.push(el("span", { class: "arg", "data-arg": k }, [
          el("span", { class: "arg-name" }, k + ": "),
          el("span", { class: "arg-value" }, valueText(args[k])),
        ]));
      });
    } else {
      parts.push(argsText(args));
    }
    parts.push(")");
    return el("span", { class: "args", "data-role": "args" }, parts);
  }

  // The argument each tool's found_by names (FoundBy.argument is its bare value).
  var FOUND_BY_ARGUMENT = { search_corpus: "query", grep_corpus: "pattern",
    read_document: "doc_id" };

  function foundByText(found) {
    var name = FOUND_BY_ARGUMENT[found.tool];
    return found.tool + "(" + (name ? name + ": " : "") + valueText(found.argument) + ")";
  }

  function docOf(chunkId) {
    return String(chunkId).replace(/_\d+$/, "");
  }

  function pageOf(value) {
    if (typeof value === "number" && Number.isInteger(value)) return value;
    if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) return Number(value);
    return null;
  }

  // Where a passage sits: "p. 3" (or "pp. 3-4") and "\u00a7 Results > Revenue", joined by
  // " \u00b7 "; empty when its metadata has neither, and no section that is only the
  // title. The same label as the CLI's (sift.integrations.stores.locations.location_label).
  function locationLabel(metadata, title) {
    var meta = metadata || {};
    var pages = [meta.page].concat(Array.isArray(meta.pages) ? meta.pages : [])
      .map(pageOf).filter(function (p) { return p !== null; });
    var parts = [];
    if (pages.length) {
      var first = Math.min.apply(null, pages), last = Math.max.apply(null, pages);
      parts.push(first === last ? "p. " + first : "pp. " + first + "-" + last);
    }
    var section = typeof meta.section === "string" ? meta.section.trim() : "";
    if (section && section !== String(title || "").trim()) parts.push("\u00a7 " + section);
    return parts.join(" \u00b7 ");
  }

  function stopBadge(reason, small) {
    return el("span", {
      class: "stop " + (reason || ""),
      title: STOP_TEXT[reason] || "",
      "data-stop": reason,
    }, (small ? "" : "stopped because: ") + reason);
  }

  // ------------------------------------------------------------------ lanes (rollouts)

  function lanesOf(data) {
    var result = data.result;
    var rollouts = data.rollouts || [];
    if (rollouts.length > 1) {
      return rollouts.map(function (r, i) {
        return { index: i, label: "rollout " + i, trace: r.trace || [],
          stopped_because: r.stopped_because, error: r.error, evidence: r.evidence || [] };
      });
    }
    // A fused result without its rollouts (the API's answer): its trace notes say which
    // rollout each turn belongs to.
    var groups = {};
    var order = [];
    var split = (result.trace || []).length > 0;
    (result.trace || []).forEach(function (turn) {
      var m = /^rollout (\d+)(?:: ([\s\S]*))?$/.exec(turn.note || "");
      if (!m) { split = false; return; }
      if (!(m[1] in groups)) { groups[m[1]] = []; order.push(m[1]); }
      groups[m[1]].push(Object.assign({}, turn, { note: m[2] || null }));
    });
    if (split && order.length > 1) {
      var finished = data.finished || {};
      return order.map(function (key) {
        var end = finished[key] || {};
        return { index: Number(key), label: "rollout " + key, trace: groups[key],
          stopped_because: end.stopped_because || null, error: end.error || null,
          evidence: null };
      });
    }
    return [{ index: 0, label: null, trace: result.trace || [],
      stopped_because: result.stopped_because, error: result.error, evidence: null }];
  }

  function callId(lane, turn, index) {
    return "c-" + lane.index + "-" + turn.turn + "-" + index;
  }

  // Every tool call, so that evidence can point at the call that surfaced it.
  function indexCalls(lanes) {
    var calls = [];
    lanes.forEach(function (lane) {
      lane.trace.forEach(function (turn) {
        (turn.calls || []).forEach(function (call, k) {
          calls.push({ lane: lane, turn: turn.turn, id: callId(lane, turn, k), tool: call.tool,
            argument: argText(call.arguments), added: call.added || [] });
        });
      });
    });
    return calls;
  }

  function callsThatFound(calls, chunkId, found) {
    var same = calls.filter(function (c) { return c.turn === found.turn && c.tool === found.tool; });
    var surfaced = same.filter(function (c) { return c.added.indexOf(chunkId) >= 0; });
    if (surfaced.length) return surfaced;
    return same.filter(function (c) { return c.argument === found.argument; });
  }

  // ------------------------------------------------------------------ token chart

  function niceStep(max) {
    var raw = max / 5;
    var power = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    var step = [1, 2, 2.5, 5, 10].map(function (f) { return f * power; })
      .find(function (s) { return s >= raw; });
    return step || power * 10;
  }

  function tokenChart(lanes, tiers) {
    var W = 760, H = 250, L = 62, R = 118, T = 12, B = 34;
    var series = lanes.map(function (lane) {
      return lane.trace.filter(function (t) { return t.tokens_after !== undefined; });
    });
    var points = [].concat.apply([], series);
    var box = el("div", { class: "chart card", "data-role": "token-chart" });
    box.appendChild(el("h3", null, "Context tokens after each turn"));
    if (!points.length) {
      box.appendChild(el("p", { class: "muted" }, "No turn ran: nothing to plot."));
      return box;
    }
    var tierLines = [];
    if (tiers) {
      [["threshold", "var(--threshold)"], ["rejection", "var(--rejection)"],
        ["budget", "var(--budget)"]].forEach(function (pair) {
        if (tiers[pair[0]]) tierLines.push({ name: pair[0], value: tiers[pair[0]], colour: pair[1] });
      });
    }
    var maxY = Math.max.apply(null, points.map(function (p) { return p.tokens_after; })
      .concat(tierLines.map(function (t) { return t.value; })).concat([1]));
    maxY *= 1.06;
    var turns = points.map(function (p) { return p.turn; });
    var minX = Math.min.apply(null, turns), maxX = Math.max.apply(null, turns);
    if (maxX === minX) { minX -= 1; maxX += 1; }
    function x(turn) { return L + (turn - minX) / (maxX - minX) * (W - L - R); }
    function y(tokens) { return T + (1 - tokens / maxY) * (H - T - B); }

    var chart = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-label": "context tokens per turn against the budget tiers" });
    var step = niceStep(maxY);
    for (var v = 0; v <= maxY; v += step) {
      chart.appendChild(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#e3e7ee" }));
      chart.appendChild(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end",
        "font-size": 11, fill: "#5d6678" }, num(v)));
    }
    var xStep = Math.max(1, Math.ceil((maxX - minX) / 20));
    for (var t = Math.ceil(minX); t <= maxX; t += xStep) {
      chart.appendChild(svg("text", { x: x(t), y: H - B + 16, "text-anchor": "middle",
        "font-size": 11, fill: "#5d6678" }, String(t)));
    }
    chart.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle",
      "font-size": 11, fill: "#5d6678" }, "turn"));
    chart.appendChild(svg("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), stroke: "#9aa3b2" }));
    tierLines.forEach(function (tier) {
      var line = svg("line", { x1: L, x2: W - R, y1: y(tier.value), y2: y(tier.value),
        stroke: tier.colour, "stroke-width": 1.5, "stroke-dasharray": "6 4",
        "data-tier": tier.name });
      line.appendChild(svg("title", null, tier.name + " " + num(tier.value) + " tokens"));
      chart.appendChild(line);
      chart.appendChild(svg("text", { x: W - R + 6, y: y(tier.value) + 4, "font-size": 11,
        fill: tier.colour }, tier.name + " " + num(tier.value)));
    });
    series.forEach(function (turnsOfLane, i) {
      var colour = LANE_COLOURS[i % LANE_COLOURS.length];
      var path = turnsOfLane.map(function (p) { return x(p.turn) + "," + y(p.tokens_after); });
      chart.appendChild(svg("polyline", { points: path.join(" "), fill: "none", stroke: colour,
        "stroke-width": 2, "data-lane": i }));
      turnsOfLane.forEach(function (p) {
        var dot = svg("circle", { cx: x(p.turn), cy: y(p.tokens_after), r: 3.5, fill: colour });
        var label = (lanes[i].label ? lanes[i].label + ", " : "") + "turn " + p.turn + ": " +
          num(p.tokens_after) + " tokens" + (p.wall_ms !== null && p.wall_ms !== undefined ?
          ", " + ms(p.wall_ms) : "");
        dot.appendChild(svg("title", null, label));
        chart.appendChild(dot);
      });
    });
    box.appendChild(chart);
    var legend = el("div", { class: "legend" });
    if (lanes.length > 1) {
      lanes.forEach(function (lane, i) {
        legend.appendChild(el("span", null, [el("span", { class: "swatch",
          "data-colour": LANE_COLOURS[i % LANE_COLOURS.length] }), lane.label]));
      });
    }
    if (!tierLines.length) legend.appendChild(el("span", { class: "muted" },
      "budget tiers unknown for this result"));
    box.appendChild(legend);
    legend.querySelectorAll(".swatch").forEach(function (s) {
      s.style.background = s.getAttribute("data-colour");
    });
    return box;
  }

  // ------------------------------------------------------------------ turns and calls

  function chip(chunkId, ctx, extra) {
    var rank = ctx.finalRank[chunkId];
    var classes = ["chip"];
    if (rank) classes.push("final");
    if (ctx.gold && ctx.gold.has(docOf(chunkId))) classes.push("gold");
    if (extra) classes.push(extra);
    var title = rank ? "in the final evidence at rank " + rank : "not in the final evidence";
    var node = el(rank ? "a" : "span", { class: classes.join(" "), title: title,
      href: rank ? "#e-" + rank : null, "data-chunk": chunkId }, chunkId);
    return node;
  }

  function chipList(ids, ctx, label, cls, extra) {
    var chips = el("div", { class: "chips" }, ids.map(function (c) { return chip(c, ctx, extra); }));
    var kept = ids.filter(function (c) { return ctx.finalRank[c]; }).length;
    var gold = ctx.gold ? ids.filter(function (c) { return ctx.gold.has(docOf(c)); }).length : 0;
    var summary = label + (kept ? " \u00b7 " + kept + " in the evidence" : "") +
      (gold ? " \u00b7 " + gold + " gold" : "");
    var box = el("details", { class: cls }, [el("summary", null, summary), chips]);
    // Side by side, lanes stay readable with the lists folded.
    if (ids.length <= 10 && !ctx.several) box.open = true;
    return box;
  }

  function callView(lane, turn, call, k, ctx) {
    var harness = call.tool === "prune_chunks" && call.arguments && call.arguments.by === "harness";
    var node = el("div", { class: "call" + (call.error ? " failed" : ""),
      id: callId(lane, turn, k), "data-tool": call.tool });
    var head = el("div", null, [
      el("span", { class: "tool" }, harness ? "prune_chunks (by the harness)" : call.tool),
      " ",
      harness ? null : argsView(call.arguments),
    ]);
    node.appendChild(head);
    var added = call.added || [], pruned = call.pruned || [];
    node.appendChild(el("div", { class: "counts muted" }, [
      el("span", { class: "added" }, "+" + added.length + " added"), "  ",
      el("span", { class: "pruned" }, "\u2212" + pruned.length + " pruned"), "  ",
      num(call.tokens) + " tokens",
    ]));
    if (call.error) node.appendChild(el("div", { class: "err", "data-role": "call-error" },
      "error: " + call.error));
    if (added.length) node.appendChild(chipList(added, ctx, "added chunks", "added-list"));
    if (pruned.length) node.appendChild(chipList(pruned, ctx, "pruned chunks", "pruned-list", "gone"));
    return node;
  }

  function laneView(lane, ctx, maxWall, showLabel) {
    var box = el("div", { class: "lane card", "data-lane": lane.index });
    if (showLabel) {
      box.appendChild(el("h3", null, [
        el("span", { class: "swatch", "data-colour": LANE_COLOURS[lane.index % LANE_COLOURS.length] }),
        lane.label,
        lane.stopped_because ? stopBadge(lane.stopped_because, true) : null,
      ]));
      if (lane.error) box.appendChild(el("div", { class: "stop-error" }, lane.error));
    }
    if (!lane.trace.length) box.appendChild(el("p", { class: "muted" }, "No turns."));
    lane.trace.forEach(function (turn) {
      var wall = Number(turn.wall_ms || 0);
      var node = el("div", { class: "turn", "data-turn": turn.turn });
      node.appendChild(el("div", { class: "turn-head" }, [
        el("b", null, "Turn " + turn.turn),
        el("span", { class: "tokens muted" }, num(turn.tokens_after) + " tokens after"),
        el("span", { class: "muted", "data-role": "wall" }, ms(wall)),
        (turn.calls || []).length ? el("span", { class: "muted" }, turn.calls.length +
          (turn.calls.length === 1 ? " call" : " calls")) : null,
      ]));
      var bar = el("div", { class: "wallbar", title: "wall time " + ms(wall) });
      bar.style.width = (maxWall > 0 ? Math.max(1, 100 * wall / maxWall) : 1) + "%";
      node.appendChild(bar);
      if (turn.note) node.appendChild(el("div", { class: "note" }, turn.note));
      (turn.calls || []).forEach(function (call, k) {
        node.appendChild(callView(lane, turn, call, k, ctx));
      });
      box.appendChild(node);
    });
    if (lane.evidence) {
      box.appendChild(el("h3", null, "Its evidence (" + lane.evidence.length + ")"));
      box.appendChild(compactEvidence(lane.evidence, ctx));
    }
    return box;
  }

  function compactEvidence(items, ctx) {
    return el("ol", { class: "compact" }, items.map(function (item) {
      var rank = ctx.finalRank[item.chunk_id];
      return el("li", null, [
        el(rank ? "a" : "span", { href: rank ? "#e-" + rank : null }, item.title || item.doc_id),
        " ", chip(item.chunk_id, ctx),
      ]);
    }));
  }

  // ------------------------------------------------------------------ evidence

  function evidenceView(result, calls, ctx) {
    var box = el("section", { "data-role": "evidence" });
    box.appendChild(el("h2", null, "Evidence (" + (result.evidence || []).length + ")"));
    if (!(result.evidence || []).length) {
      box.appendChild(el("p", { class: "muted" }, "The episode returned no evidence."));
    }
    (result.evidence || []).forEach(function (item, i) {
      var rank = i + 1;
      var gold = ctx.gold && ctx.gold.has(item.doc_id);
      var place = locationLabel(item.metadata, item.title);
      var node = el("div", { class: "evidence-item card", id: "e-" + rank,
        "data-chunk": item.chunk_id });
      node.appendChild(el("div", null, [
        el("span", { class: "rank" }, rank + "."),
        el("span", { class: "title" }, item.title || item.doc_id), "  ",
        place ? el("span", { class: "place", "data-role": "place" }, place) : null,
        place ? "  " : null,
        el("code", { class: "muted" }, item.chunk_id), "  ",
        el("span", { class: "muted" }, "score " + Number(item.score || 0).toFixed(4)),
        gold ? el("span", { class: "gold-badge" }, "  \u2605 gold") : null,
      ]));
      if (item.justification) node.appendChild(el("div", { class: "just" }, item.justification));
      var found = el("div", { class: "found" }, [el("span", { class: "muted" }, "found by ")]);
      (item.found_by || []).forEach(function (f) {
        if (f.tool === "entity_graph") {
          // The planner's graph reorders its final list (no call of its own: a mark);
          // single_shot's walk is a call in the trace, and the mark links to it.
          var label = "entity graph via " + valueText(f.argument) + "  ";
          var walks = calls.filter(function (c) {
            return c.turn === f.turn && c.tool === "entity_graph" &&
              c.added.indexOf(item.chunk_id) >= 0;
          });
          found.appendChild(walks.length
            ? el("a", { href: "#" + walks[0].id, class: "found-graph",
              "data-entity": f.argument, "data-call": walks[0].id }, label)
            : el("span", { class: "found-graph", "data-entity": f.argument }, label));
          return;
        }
        var text = foundByText(f) + " turn " + f.turn;
        var targets = callsThatFound(calls, item.chunk_id, f);
        if (!targets.length) { found.appendChild(el("span", null, text + "  ")); return; }
        targets.forEach(function (c) {
          found.appendChild(el("a", { href: "#" + c.id, class: "found-by",
            "data-call": c.id }, text + (c.lane.label ? " (" + c.lane.label + ")" : "")));
        });
      });
      node.appendChild(found);
      var text = el("details", { class: "text-box" }, [
        el("summary", { class: "muted" }, "text (" + String(item.text || "").length + " characters)"),
        el("div", { class: "text" }, item.text || ""),
      ]);
      if (rank <= 3) text.open = true;
      node.appendChild(text);
      box.appendChild(node);
    });
    return box;
  }

  // ------------------------------------------------------------------ gold (evaluation)

  function goldView(gold, result, lanes, ctx) {
    var box = el("section", { class: "card", "data-role": "gold" });
    box.appendChild(el("h3", null, "Gold passages"));
    var list = el("ul", { class: "goldlist" });
    gold.forEach(function (entry) {
      var aliases = new Set(entry.aliases);
      var isGold = function (chunkId) { return aliases.has(docOf(chunkId)); };
      var ranks = (result.evidence || []).map(function (e, i) {
        return aliases.has(e.doc_id) ? i + 1 : 0;
      }).filter(Boolean);
      var surfaced = [], pruned = [];
      lanes.forEach(function (lane) {
        lane.trace.forEach(function (turn) {
          (turn.calls || []).forEach(function (call, k) {
            if ((call.added || []).some(isGold)) {
              surfaced.push({ id: callId(lane, turn, k), text: (lane.label ? lane.label + " " : "") +
                "turn " + turn.turn + " " + call.tool });
            }
            if ((call.pruned || []).some(isGold)) {
              pruned.push("turn " + turn.turn);
            }
          });
        });
      });
      var item = el("li", { "data-gold": entry.id }, [el("code", null, entry.id),
        entry.aliases.length > 1 ? el("span", { class: "muted" }, " (or its near-duplicate " +
          entry.aliases.slice(1).join(", ") + ")") : null, " "]);
      if (ranks.length) {
        item.appendChild(el("a", { href: "#e-" + ranks[0] }, "in the evidence at rank " + ranks.join(", ")));
      } else {
        item.appendChild(el("span", { class: "miss" }, surfaced.length ?
          "surfaced but not in the final evidence" : "never surfaced by any call"));
      }
      surfaced.slice(0, 3).forEach(function (s) {
        item.appendChild(document.createTextNode(" \u00b7 "));
        item.appendChild(el("a", { href: "#" + s.id }, s.text));
      });
      if (pruned.length) item.appendChild(el("span", { class: "pruned" }, " \u00b7 pruned in " +
        pruned.join(", ")));
      list.appendChild(item);
    });
    box.appendChild(list);
    return box;
  }

  // ------------------------------------------------------------------ the page

  function headerView(data, lanes) {
    var result = data.result;
    var usage = result.usage || {};
    var box = el("section", { class: "card", "data-role": "summary" });
    if (data.back_link) box.appendChild(el("a", { href: data.back_link }, "\u2190 all questions"));
    box.appendChild(el("h1", { "data-role": "question" }, result.question));
    var head = el("div", { class: "header" }, [stopBadge(result.stopped_because, false),
      el("span", { class: "muted" }, (STOP_TEXT[result.stopped_because] || "") + " \u00b7 " +
        result.mode + (lanes.length > 1 ? " \u00b7 " + lanes.length + " rollouts fused by RRF" : ""))]);
    box.appendChild(head);
    if (result.error) box.appendChild(el("div", { class: "stop-error", "data-role": "error" },
      result.error));
    var wall = lanes.reduce(function (sum, lane) {
      return sum + lane.trace.reduce(function (s, t) { return s + Number(t.wall_ms || 0); }, 0);
    }, 0);
    var figures = [["turns", num(usage.turns)], ["tool calls", num(usage.tool_calls)],
      ["calls per turn", Number(usage.calls_per_turn || 0).toFixed(2)],
      ["peak context tokens", num(usage.peak_context_tokens)],
      ["evidence tokens", num(usage.final_evidence_tokens)],
      ["evidence", num((result.evidence || []).length)], ["wall time of the turns", ms(wall)]];
    if (usage.prompt_tokens || usage.completion_tokens) {
      figures.push(["model prompt / completion tokens", num(usage.prompt_tokens) + " / " +
        num(usage.completion_tokens)]);
    }
    box.appendChild(el("div", { class: "figures" }, figures.map(function (f) {
      return el("span", { class: "figure" }, [f[0] + " ", el("b", null, f[1])]);
    })));
    if ((result.flags || []).length) {
      box.appendChild(el("div", null, result.flags.map(function (f) {
        return el("span", { class: "flag" }, f);
      })));
    }
    return box;
  }

  function render(container, data) {
    var result = data.result;
    var lanes = lanesOf(data);
    var ctx = { finalRank: {}, gold: null };
    if (data.gold) {
      ctx.gold = new Set([].concat.apply([], data.gold.map(function (g) { return g.aliases; })));
    }
    (result.evidence || []).forEach(function (e, i) {
      if (!(e.chunk_id in ctx.finalRank)) ctx.finalRank[e.chunk_id] = i + 1;
    });
    var calls = indexCalls(lanes);
    var maxWall = 0;
    lanes.forEach(function (lane) {
      lane.trace.forEach(function (t) { maxWall = Math.max(maxWall, Number(t.wall_ms || 0)); });
    });
    while (container.firstChild) container.removeChild(container.firstChild);
    container.appendChild(headerView(data, lanes));
    if (data.gold) container.appendChild(goldView(data.gold, result, lanes, ctx));
    container.appendChild(tokenChart(lanes, data.tiers));
    var several = lanes.length > 1;
    ctx.several = several;
    container.appendChild(el("h2", null, several ? "Rollouts side by side" : "Turns"));
    var grid = el("div", { class: several ? "lanes" : "", "data-role": "lanes" });
    lanes.forEach(function (lane) { grid.appendChild(laneView(lane, ctx, maxWall, several)); });
    if (several) {
      var fusedBox = el("div", { class: "lane card", "data-role": "fused" }, [
        el("h3", null, ["Fused result ", stopBadge(result.stopped_because, true)]),
        compactEvidence(result.evidence || [], ctx),
      ]);
      grid.appendChild(fusedBox);
    }
    container.appendChild(grid);
    grid.querySelectorAll(".swatch").forEach(function (s) {
      s.style.background = s.getAttribute("data-colour");
    });
    container.appendChild(evidenceView(result, calls, ctx));
    highlightTarget();
  }

  // Re-reading :target after the page is built: the anchor may not have existed at load.
  function highlightTarget() {
    if (!location.hash) return;
    var target = document.getElementById(location.hash.slice(1));
    if (target) target.scrollIntoView();
  }

  window.SiftTrace = { render: render, tokenChart: tokenChart, el: el, num: num,
    locationLabel: locationLabel, argsText: argsText };

  var holder = document.getElementById("sift-trace-data");
  var container = document.getElementById("sift-trace");
  if (holder && container) {
    try {
      render(container, JSON.parse(holder.textContent));
    } catch (exc) {
      container.textContent = "This trace could not be drawn: " + exc;
      console.error("sift trace viewer:", exc);
    }
  }
})();
