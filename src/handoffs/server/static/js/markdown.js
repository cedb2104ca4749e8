// A safe Markdown subset for agents' answers, rendered straight to DOM nodes.
//
// Nothing is ever parsed as HTML: every piece of text becomes a text node, so `<script>`,
// `<img onerror>` or an `&lt;` entity in a model's answer show as the characters they are.
// Elements come from a fixed list (p, br, hr, strong, em, del, code, pre, a, ul, ol, li,
// blockquote, a div around each table, table, thead, tbody, tr, th, td, and a strong
// paragraph for a heading), and the only attributes set are a link's href (http, https or
// mailto only; anything else stays text), rel="noopener noreferrer" and target="_blank",
// a list's start, and classes (a heading's level, a table cell's alignment).
//
// Blocks: paragraphs (a single newline is a line break), `#` headings, fenced code
// (```), `-`/`*`/`+` and `1.` lists (one level), `>` quotes, and pipe tables with a
// `---` separator row. Inline: `code`, **strong**, __strong__, *em*, _em_, ~~del~~,
// [text](url), <url> and bare http(s) URLs.

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s\u0000-\u001f]*$/i;
const FENCE = /^\s{0,3}(```|~~~)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function node(tag, ...children) {
  const n = document.createElement(tag);
  for (const c of children) n.append(c);
  return n;
}

/** A link for `href` if its scheme is safe, else null. */
export function safeLink(href) {
  const url = href.trim();
  if (!SAFE_URL.test(url)) return null;
  const a = document.createElement("a");
  a.setAttribute("href", url);
  a.setAttribute("rel", "noopener noreferrer");
  a.setAttribute("target", "_blank");
  return a;
}

const PAIRS = [["**", "strong"], ["__", "strong"], ["~~", "del"], ["*", "em"], ["_", "em"]];

/** Inline Markdown of `text` as an array of nodes. */
export function inline(text) {
  const out = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push(document.createTextNode(plain));
    plain = "";
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length && /[\\`*_~[\]()<>#|!-]/.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      let ticks = 1;
      while (text[i + ticks] === "`") ticks++;
      const fence = "`".repeat(ticks);
      const end = text.indexOf(fence, i + ticks);
      if (end > 0) {
        flush();
        out.push(node("code", text.slice(i + ticks, end).replace(/^ (.*) $/, "$1")));
        i = end + ticks;
        continue;
      }
      plain += fence;
      i += ticks;
      continue;
    }
    if (ch === "[") {
      const link = readLink(text, i);
      if (link) {
        const a = safeLink(link.href);
        flush();
        if (a) {
          a.append(...inline(link.label));
          out.push(a);
        } else {
          out.push(...inline(link.label));
        }
        i = link.end;
        continue;
      }
    }
    if (ch === "<") {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
      const a = m && safeLink(m[1]);
      if (a) {
        flush();
        a.append(m[1]);
        out.push(a);
        i += m[0].length;
        continue;
      }
    }
    if ((ch === "h" || ch === "H") && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      const m = /^https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"*_~]/i.exec(text.slice(i));
      const a = m && safeLink(m[0]);
      if (a) {
        flush();
        a.append(m[0]);
        out.push(a);
        i += m[0].length;
        continue;
      }
    }
    const pair = PAIRS.find(([mark]) => text.startsWith(mark, i));
    if (pair) {
      const [mark, tag] = pair;
      const end = closing(text, mark, i + mark.length);
      if (end > 0) {
        flush();
        out.push(node(tag, ...inline(text.slice(i + mark.length, end))));
        i = end + mark.length;
        continue;
      }
      plain += mark;
      i += mark.length;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return out;
}

/** Where the emphasis opened at `from` closes (-1: it does not). The content may not
 * start or end with a space, and `_` does not open or close inside a word. */
function closing(text, mark, from) {
  if (from >= text.length || /\s/.test(text[from])) return -1;
  if (mark[0] === "_" && from - mark.length > 0 && /\w/.test(text[from - mark.length - 1])) return -1;
  let j = from;
  while ((j = text.indexOf(mark, j + 1)) > 0) {
    if (/\s/.test(text[j - 1])) continue;
    if (mark === "*" && text[j + 1] === "*" && text[j - 1] !== "*") {
      j++; // the start of a ** inside: not this * (unless it closes right after)
      continue;
    }
    if (mark[0] === "_" && /\w/.test(text[j + mark.length] || "")) continue;
    return j;
  }
  return -1;
}

/** A `[label](href)` starting at `i`, or null. */
function readLink(text, i) {
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    if (text[j] === "\\") { j++; continue; }
    if (text[j] === "[") depth++;
    else if (text[j] === "]" && --depth === 0) break;
  }
  if (j >= text.length || text[j + 1] !== "(") return null;
  const close = text.indexOf(")", j + 2);
  if (close < 0) return null;
  const href = text.slice(j + 2, close).trim().split(/\s+/)[0] || "";
  return { label: text.slice(i + 1, j), href, end: close + 1 };
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const out = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && s[i + 1] === "|") { cur += "|"; i++; continue; }
    if (s[i] === "|") { out.push(cur.trim()); cur = ""; continue; }
    cur += s[i];
  }
  out.push(cur.trim());
  return out;
}

function table(header, sep, rows) {
  const align = cells(sep).map((c) => (c.startsWith(":") && c.endsWith(":") ? "center"
    : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : ""));
  const cell = (tag, text, k) => {
    const c = node(tag, ...inline(text));
    if (align[k]) c.className = `align-${align[k]}`;
    return c;
  };
  const width = cells(header).length;
  const row = (line, tag) => {
    const values = cells(line).slice(0, width);
    while (values.length < width) values.push("");
    return node("tr", ...values.map((v, k) => cell(tag, v, k)));
  };
  const t = node("table", node("thead", row(header, "th")),
    node("tbody", ...rows.map((r) => row(r, "td"))));
  const box = node("div", t);
  box.className = "md-table";
  return box;
}

function paragraph(lines) {
  const p = document.createElement("p");
  lines.forEach((line, k) => {
    if (k) p.append(document.createElement("br"));
    p.append(...inline(line));
  });
  return p;
}

/** The Markdown `text` as a DocumentFragment of safe nodes. */
export function render(text) {
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  const frag = document.createDocumentFragment();
  let para = [];
  const endPara = () => {
    if (para.length) frag.append(paragraph(para));
    para = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { endPara(); i++; continue; }
    const fence = FENCE.exec(line);
    if (fence) {
      endPara();
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++; // the closing fence (or the end)
      frag.append(node("pre", node("code", body.join("\n"))));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endPara();
      const p = node("p", node("strong", ...inline(heading[2])));
      p.className = `md-heading md-h${heading[1].length}`;
      frag.append(p);
      i++;
      continue;
    }
    if (RULE.test(line) && !para.length) {
      frag.append(document.createElement("hr"));
      i++;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])
        && lines[i + 1].includes("-") && (lines[i + 1].includes("|") || line.trim().startsWith("|"))) {
      endPara();
      const rows = [];
      let j = i + 2;
      while (j < lines.length && lines[j].trim() && lines[j].includes("|")) rows.push(lines[j++]);
      frag.append(table(line, lines[i + 1], rows));
      i = j;
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    if (bullet || numbered) {
      endPara();
      const ordered = !bullet;
      const list = document.createElement(ordered ? "ol" : "ul");
      if (ordered && numbered[1] !== "1") list.setAttribute("start", String(Number(numbered[1])));
      while (i < lines.length) {
        const m = ordered ? NUMBERED.exec(lines[i]) : BULLET.exec(lines[i]);
        if (!m) {
          // A line indented under an item continues it; anything else ends the list.
          const last = list.lastElementChild;
          if (last && /^\s{2,}\S/.test(lines[i])) {
            last.append(document.createElement("br"), ...inline(lines[i].trim()));
            i++;
            continue;
          }
          break;
        }
        list.append(node("li", ...inline(ordered ? m[2] : m[1])));
        i++;
      }
      frag.append(list);
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote) {
      endPara();
      const body = [];
      while (i < lines.length) {
        const q = QUOTE.exec(lines[i]);
        if (!q) break;
        body.push(q[1]);
        i++;
      }
      frag.append(node("blockquote", render(body.join("\n"))));
      continue;
    }
    para.push(line);
    i++;
  }
  endPara();
  return frag;
}
