"""The Markdown subset agents' answers are shown in (static/js/markdown.js), rendered by
the page's own module in the browser: what each construct becomes, and that nothing a
model writes can become markup, a script or an unsafe link."""

from __future__ import annotations

import random
from typing import Any

import pytest

from .pages import assert_accessible, chat, pick, say, turn_done

RENDER = """async (texts) => {
  const md = await import(new URL("static/js/markdown.js", document.baseURI).href);
  return texts.map((t) => { const d = document.createElement("div"); d.append(md.render(t));
                            return d.innerHTML; });
}"""


@pytest.fixture
def render(context: Any, server: str, errors: list[str]) -> Any:
    page = chat(context, server, errors)

    def run(*texts: str) -> list[str]:
        out: list[str] = page.evaluate(RENDER, list(texts))
        return out

    run.page = page  # type: ignore[attr-defined]
    return run


LINK = 'rel="noopener noreferrer" target="_blank"'


@pytest.mark.parametrize("text, html", [
    ("**bold**, __strong__, *em*, _em_ and ~~gone~~",
     "<p><strong>bold</strong>, <strong>strong</strong>, <em>em</em>, <em>em</em> and "
     "<del>gone</del></p>"),
    ("`**not bold** <b>`", "<p><code>**not bold** &lt;b&gt;</code></p>"),
    ("**bold *and em* inside**", "<p><strong>bold <em>and em</em> inside</strong></p>"),
    ("2 * 3 = 6 and **open", "<p>2 * 3 = 6 and **open</p>"),
    ("snake_case_name stays", "<p>snake_case_name stays</p>"),
    ("one\ntwo\n\nthree", "<p>one<br>two</p><p>three</p>"),
    ("[the docs](https://example.com/a?b=1)",
     f'<p><a href="https://example.com/a?b=1" {LINK}>the docs</a></p>'),
    ("see https://example.com/x. or <mailto:help@example.com>",
     f'<p>see <a href="https://example.com/x" {LINK}>https://example.com/x</a>. or '
     f'<a href="mailto:help@example.com" {LINK}>mailto:help@example.com</a></p>'),
    ("## Refunds", '<p class="md-heading md-h2"><strong>Refunds</strong></p>'),
    ("- one\n- **two**\n  more", "<ul><li>one</li><li><strong>two</strong><br>more</li></ul>"),
    ("3. three\n4. four", '<ol start="3"><li>three</li><li>four</li></ol>'),
    ("> quoted *text*", "<blockquote><p>quoted <em>text</em></p></blockquote>"),
    ("```\n<script>x</script>\n**raw**\n```", "<pre><code>&lt;script&gt;x&lt;/script&gt;\n"
     "**raw**</code></pre>"),
    ("| a | b |\n| :-- | --: |\n| 1 | **2** |\n| 3 |",
     '<div class="md-table"><table><thead><tr><th class="align-left">a</th>'
     '<th class="align-right">b</th></tr></thead><tbody><tr><td class="align-left">1</td>'
     '<td class="align-right"><strong>2</strong></td></tr><tr><td class="align-left">3</td>'
     '<td class="align-right"></td></tr></tbody></table></div>'),
    ("a \\*literal\\* star", "<p>a *literal* star</p>"),
    ("---", "<hr>"),
])
def test_each_construct_becomes_its_element(render: Any, text: str, html: str) -> None:
    assert render(text) == [html]


@pytest.mark.parametrize("text", [
    "[x](javascript:alert(1))", "[x](JaVaScRiPt:alert(1))", "[x]( javascript:alert(1))",
    "[x](data:text/html,<script>alert(1)</script>)", "[x](vbscript:msgbox)",
    "[x](//evil.example/path)", "[x](/relative)", "<javascript:alert(1)>",
])
def test_a_link_to_anything_but_http_https_or_mailto_stays_text(render: Any, text: str) -> None:
    [html] = render(text)
    assert "<a" not in html


def test_html_in_an_answer_is_shown_as_text(render: Any) -> None:
    [html] = render('<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> '
                    '<svg onload="window.pwned=3"> &lt;b&gt; <a href="javascript:x">a</a>')
    assert html.startswith("<p>&lt;img src=x onerror=\"window.pwned=1\"&gt;")
    assert "<img" not in html and "<script" not in html and "<svg" not in html
    assert "&amp;lt;b&amp;gt;" in html  # an entity is the characters it is written with
    assert render.page.evaluate("window.pwned") is None


ALLOWED = """(htmls) => {
  const tags = new Set(["P", "BR", "HR", "STRONG", "EM", "DEL", "CODE", "PRE", "A", "UL", "OL",
    "LI", "BLOCKQUOTE", "DIV", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD"]);
  const attrs = new Set(["href", "rel", "target", "start", "class"]);
  const bad = [];
  for (const html of htmls) {
    const box = document.createElement("template");
    box.innerHTML = html;  // parsed inert (a template), only to walk what was rendered
    for (const el of box.content.querySelectorAll("*")) {
      if (!tags.has(el.tagName)) bad.push(["tag", el.tagName, html]);
      for (const a of el.attributes) {
        if (!attrs.has(a.name)) bad.push(["attribute", a.name, html]);
        if (a.name === "href" && !/^(https?:\\/\\/|mailto:)/i.test(a.value))
          bad.push(["href", a.value, html]);
        if (a.name === "class" && !/^(md-[a-z0-9 -]+|align-(left|right|center))$/.test(a.value))
          bad.push(["class", a.value, html]);
      }
    }
  }
  return bad;
}"""

PIECES = ["**", "*", "__", "_", "~~", "`", "```\n", "[", "](", ")", "<", ">", "\\", "|",
          "\n", "\n\n", "- ", "1. ", "> ", "# ", "---\n", "| --- |\n", "javascript:",
          "https://x.example/", "mailto:a@b.c", "data:text/html,", "<img src=x onerror=alert(1)>",
          "<script>alert(1)</script>", "\" onmouseover=\"x", "&lt;", "word", " ", "é", "سلام",
          "'", "(", "\u202e", "\u0000"]


def test_no_input_makes_an_element_or_attribute_outside_the_subset(render: Any) -> None:
    rng = random.Random(27)
    texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))
             for _ in range(600)]
    htmls = render(*texts)
    assert render.page.evaluate(ALLOWED, htmls) == []
    assert render.page.evaluate("window.pwned") is None


def test_an_agents_answer_is_rendered_safely_in_the_chat(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    pick(page, "notes")
    page.wait_for_selector("#active-agent [data-agent=notes]")
    say(page, "Where are my orders?")
    turn_done(page, 1)
    answer = page.locator(".msg.agent[data-agent=notes] .text")
    assert answer.locator("strong", has_text="Your order").count() == 1
    assert answer.locator("table tbody tr").count() == 2
    link = answer.locator("a", has_text="the carrier's page")
    assert link.get_attribute("href") == "https://example.com/track?id=A-1002"
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert answer.locator("a[href^='javascript']").count() == 0
    assert answer.locator("img, script").count() == 0
    assert answer.locator("code").inner_text() == "**not bold**"
    assert "<img src=x" in answer.inner_text()
    assert page.evaluate("window.pwned") is None
    assert_accessible(page, "the chat with a Markdown answer")
    assert not errors
